"""Import cost of each agentic package, in fresh processes, against a pydantic + structlog floor.

Run: ``uv run python benches/imports.py [--rounds N]``. Prints one table: median import time
(ms) and peak RSS (MiB) after the import, and the ratios to the floor measured in the same run.
Target (BENCHMARKS.md): ``import agentic_core`` within 1.3x the time and +4 MiB of the floor.
"""

from __future__ import annotations

import argparse
import statistics
import sys

from _common import run_probe

PROBE = """
import resource, sys, time
t0 = time.perf_counter()
{imports}
elapsed = time.perf_counter() - t0
rss_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
sys.stdout.write(f'{{{{"ms": {{elapsed * 1e3}}, "rss_mib": {{rss_kib / 1024}}}}}}')
"""

SUBJECTS: dict[str, str] = {
    "python (nothing)": "pass",
    "floor: pydantic + structlog": "import pydantic, structlog",
    "agentic_core": "import agentic_core",
    "agentic_llm": "import agentic_llm",
    "agentic_sandbox": "import agentic_sandbox",
    "agentic_mcp": "import agentic_mcp",
    "agentic_bus": "import agentic_bus",
    "agentic_storage": "import agentic_storage",
    "agentic_orchestrator": "import agentic_orchestrator",
}
FLOOR = "floor: pydantic + structlog"


def measure(imports: str) -> dict[str, float]:
    """Import cost of ``imports`` in one fresh interpreter."""
    return run_probe(PROBE.format(imports=imports))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    results: dict[str, tuple[float, float]] = {}
    for name, imports in SUBJECTS.items():
        measure(imports)  # warm-up: file system caches, .pyc files
        samples = [measure(imports) for _ in range(args.rounds)]
        results[name] = (
            statistics.median(s["ms"] for s in samples),
            statistics.median(s["rss_mib"] for s in samples),
        )
    floor_ms, floor_rss = results[FLOOR]
    print(f"import cost, median of {args.rounds} fresh processes (Python {sys.version.split()[0]})")
    print(f"{'subject':<30} {'ms':>8} {'x floor':>8} {'RSS MiB':>8} {'+MiB':>7}")
    for name, (ms, rss) in results.items():
        print(f"{name:<30} {ms:>8.1f} {ms / floor_ms:>8.2f} {rss:>8.1f} {rss - floor_rss:>+7.1f}")


if __name__ == "__main__":
    main()
