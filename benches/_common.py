"""Helpers shared by the benchmarks in this directory (not a benchmark itself)."""

from __future__ import annotations

import gc
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any, Protocol


def fmt(value: float) -> str:
    """A figure with about three significant digits (thousands separated from 100 up)."""
    if value >= 100:
        return f"{value:,.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def spread(samples: list[float]) -> str:
    """(max - min) / median of ``samples``, as a percentage ("" when the median is not > 0)."""
    median = statistics.median(samples)
    return f"{(max(samples) - min(samples)) / median:.0%}" if median > 0 else ""


def run_probe(code: str, *args: str) -> dict[str, Any]:
    """Run ``code`` in a fresh interpreter (``args`` as its ``sys.argv[1:]``); its stdout is JSON.

    Raises ``subprocess.CalledProcessError`` when the probe fails.
    """
    out = subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return json.loads(out)


class TimedCase(Protocol):
    """What ``calibrate`` and ``time_round`` time: ``build()`` makes a fresh run (untimed)."""

    build: Callable[[], Callable[[], Awaitable[Any]]]
    check: Callable[[Any], None]
    units: int  # units of work per run: the samples are µs per unit
    samples: list[float]
    reps: int


async def calibrate(case: TimedCase, target_s: float) -> Any:
    """Warm up ``case``, set its runs per round; returns the value of the timed run."""
    await case.build()()  # imports, lazy caches, first-call costs
    run = case.build()
    t0 = time.perf_counter()
    value = await run()
    first = time.perf_counter() - t0
    case.check(value)
    case.reps = max(1, min(10_000, round(target_s / first)))
    return value


async def time_round(case: TimedCase) -> None:
    """One round: ``reps`` fresh runs, built before the clock starts; appends µs per unit."""
    gc.collect()
    runs = [case.build() for _ in range(case.reps)]
    gc.collect()
    value: Any = None
    t0 = time.perf_counter()
    for run in runs:
        value = await run()
    elapsed = time.perf_counter() - t0
    case.check(value)
    case.samples.append(elapsed / case.reps / case.units * 1e6)
