"""Import cost of each agentic package, in fresh processes, against a pydantic + structlog floor.

Run: ``uv run python benches/imports.py [--rounds N]``. Prints one table: import time (ms,
median and min-max) and median peak RSS (MiB) after the import, and the ratios to the floor
computed round by round (bytecode cached, as users run: one warm-up process per subject first).
Every round starts one process per subject in turn, so load on the shared machine hits every
subject alike.
Targets (BENCHMARKS.md, issue 10): ``import agentic_core`` and ``from agentic_core import
WorkflowBuilder`` within 1.3x the time and +4 MiB of the floor. Two reference lines put them in
context: ``from pydantic import BaseModel`` alone (what any pydantic model costs), and a whole
first workflow (import, two executors, build, one run), which loads pydantic's models for real.
"""

from __future__ import annotations

import argparse
import statistics
import sys

from _common import alternate_sync, ratio_summary, run_probe, summary

PROBE = """
import resource, sys, time
t0 = time.perf_counter()
{imports}
elapsed = time.perf_counter() - t0
rss_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
sys.stdout.write(f'{{{{"ms": {{elapsed * 1e3}}, "rss_mib": {{rss_kib / 1024}}}}}}')
"""

FIRST_WORKFLOW = """
from typing import Never
import asyncio
from agentic_core import WorkflowBuilder, WorkflowContext, executor
@executor
async def a(n: int, ctx: WorkflowContext[int]) -> None:
    await ctx.send_message(n + 1)
@executor
async def b(n: int, ctx: WorkflowContext[Never, int]) -> None:
    await ctx.yield_output(n)
workflow = WorkflowBuilder().set_start_executor(a).add_edge(a, b).build()
assert asyncio.run(workflow.run(1)).outputs == [2]
"""

SUBJECTS: dict[str, str] = {
    "python (nothing)": "pass",
    "floor: pydantic + structlog": "import pydantic, structlog",
    "ref: pydantic BaseModel": "import structlog\nfrom pydantic import BaseModel",
    "agentic_core": "import agentic_core",
    "agentic_core: WorkflowBuilder": "from agentic_core import WorkflowBuilder",
    "agentic_core: first workflow run": FIRST_WORKFLOW,
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
    parser.add_argument("--rounds", type=int, default=10, help="fresh processes per subject")
    args = parser.parse_args()
    for imports in SUBJECTS.values():
        measure(imports)  # warm-up: file system caches, .pyc files
    samples: dict[str, list[dict[str, float]]] = {name: [] for name in SUBJECTS}

    def one(name: str) -> None:
        samples[name].append(measure(SUBJECTS[name]))

    alternate_sync(list(SUBJECTS), args.rounds, one)  # every subject once per round
    floor_ms = [s["ms"] for s in samples[FLOOR]]
    floor_rss = statistics.median(s["rss_mib"] for s in samples[FLOOR])
    print(
        f"import cost, {args.rounds} rounds of fresh processes, subjects alternated "
        f"(Python {sys.version.split()[0]}): median (min-max)"
    )
    print(f"{'subject':<34} {'ms':>20} {'x floor':>20} {'RSS MiB':>8} {'+MiB':>7}")
    for name, subject in samples.items():
        ms = [s["ms"] for s in subject]
        rss = statistics.median(s["rss_mib"] for s in subject)
        x_floor = ratio_summary(ms, floor_ms) if name != FLOOR else ""
        print(f"{name:<34} {summary(ms):>20} {x_floor:>20} {rss:>8.1f} {rss - floor_rss:>+7.1f}")
    print("x floor: the ratio to the floor's process of the same round, then its median (min-max)")


if __name__ == "__main__":
    main()
