"""Every benchmark in ``benches/`` still runs: its quickest mode, in a fresh process.

A smoke test so the benchmarks cannot rot as the APIs change: each one runs with one round and
tiny sizes, must exit 0 and print its table's columns. It asserts nothing about the figures
(benchmarks are never timed assertions in tests). A bench whose server binary is missing skips,
or fails under ``AGENTIC_REQUIRE_SERVICES=1``, as the suite's fixtures do. The peers
(LangGraph, Microsoft Agent Framework) are left out (``--no-peers``): they live in the optional
``bench`` dependency group. ``benches/serve.py`` has its own smoke test (test_bench_serve.py).
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.fixtures.servers import missing_service, nats_server_binary, redis_server_binary

pytestmark = pytest.mark.slow  # fresh processes, servers and sandboxes: seconds each

BENCHES = Path(__file__).resolve().parents[1] / "benches"
TIMEOUT_S = 120


@dataclass(frozen=True)
class Bench:
    script: str
    args: list[str]
    columns: list[str]  # what the output must contain: its table's headers and rows
    needs: Callable[[], str | None] = lambda: None  # why it cannot run here, or None


def _no_redis() -> str | None:
    return None if redis_server_binary() is not None else "no redis-server (run `uv sync`)"


def _no_nats() -> str | None:
    return None if nats_server_binary() is not None else "no nats-server (run `uv sync`)"


BENCHES_TO_RUN = {
    "imports": Bench(
        "imports.py", ["--rounds", "1"], ["subject", "x floor", "agentic_core", "agentic_bus"]
    ),
    "engine": Bench(
        "engine.py",
        ["--rounds", "1", "--target-s", "0.002", "--no-peers"],
        [
            "median (min-max)",
            "x floor",
            "x probe",
            "asyncio floor",
            "superstep probe",
            "agentic_core",
            "chain",
            "import",
        ],
    ),
    "storage": Bench(
        "storage.py",
        ["--rounds", "1", "--points", "1000"],
        ["raw+pydantic", "ours/raw+pyd", "numpy brute force", "InMemoryVectorStore"],
        _no_redis,
    ),
    "sandbox": Bench(
        "sandbox.py",
        ["--rounds", "1", "--no-engines"],
        ["floor: subprocess.run", "ProcessSandbox (bwrap)", "ProcessSandbox (no bwrap)"],
    ),
    "llm": Bench(
        "llm.py",
        ["--rounds", "1", "--target-s", "0.002", "--no-local"],
        ["x floor", "agentic_llm", "httpx floor", "openai: stream", "ollama: generate"],
    ),
    "mcp latency": Bench(
        "mcp.py",
        ["--rounds", "1", "--calls", "3", "--only", "latency"],
        ["raw median (min-max)", "| stdio |", "| http |"],
    ),
    "mcp codemode": Bench(
        "mcp.py",
        ["--rounds", "1", "--only", "codemode", "--no-engines"],
        ["fixed cost per execution", "ProcessSandbox (no bwrap)"],
    ),
    "distributed": Bench(
        "distributed.py",
        ["--rounds", "1", "--steps", "3", "--width", "8"],
        ["LocalRuntime", "NatsRuntime, 4 workers", "Throughput", "Local vs distributed"],
        _no_nats,
    ),
    "agents": Bench(
        "agents.py",
        ["--rounds", "1", "--memory-rounds", "1", "--target-s", "0.002", "--no-peers"],
        ["min-max", "turn: agent overhead", "task: agent overhead", "memory: per idle agent"],
    ),
    "patterns": Bench(
        "patterns.py",
        ["--rounds", "1", "--no-peers"],
        [
            "model alone",
            "overhead",
            "sequential",
            "concurrent",
            "group_chat",
            "handoff",
            "magentic",
        ],
    ),
}


@pytest.mark.parametrize("name", list(BENCHES_TO_RUN))
def test_bench_runs_and_prints_its_columns(name: str) -> None:
    bench = BENCHES_TO_RUN[name]
    if (why := bench.needs()) is not None:
        missing_service(f"benches/{bench.script}: {why}")
    done = subprocess.run(
        [sys.executable, str(BENCHES / bench.script), *bench.args],
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        cwd=BENCHES.parent,
        check=False,
    )
    assert done.returncode == 0, f"{bench.script} exited {done.returncode}:\n{done.stderr[-4000:]}"
    for column in bench.columns:
        assert column in done.stdout, f"{bench.script}: no {column!r} in:\n{done.stdout}"
