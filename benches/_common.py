"""Helpers shared by the benchmarks in this directory (not a benchmark itself).

Every benchmark times the sides it compares (floor, ours, peers) round robin: ``alternate``
runs one sample of each case per round, so load on the shared machine hits every side alike;
``summary`` prints a column's median with its min-max over rounds, and ``ratio_summary`` the
median and min-max of ratios computed round by round (``per_round``).
"""

from __future__ import annotations

import gc
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol, TypeVar

T = TypeVar("T")


def fmt(value: float) -> str:
    """A figure with about three significant digits (thousands separated from 100 up)."""
    if abs(value) >= 100:
        return f"{value:,.0f}"
    if abs(value) >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def spread(samples: list[float]) -> str:
    """(max - min) / median of ``samples``, as a percentage ("" when the median is not > 0)."""
    median = statistics.median(samples)
    return f"{(max(samples) - min(samples)) / median:.0%}" if median > 0 else ""


def summary(values: Sequence[float], scale: Callable[[float], str] = fmt) -> str:
    """``median (min-max)`` of ``values``, each figure written by ``scale`` ("to" between a
    negative minimum and the maximum)."""
    low, high = min(values), max(values)
    between = "-" if low >= 0 else " to "
    return f"{scale(statistics.median(values))} ({scale(low)}{between}{scale(high)})"


def times(value: float) -> str:
    """A ratio: two decimals below 10, one below 100, none above (``summary(ratios, times)``)."""
    if abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:.1f}" if abs(value) >= 10 else f"{value:.2f}"


def per_round(numerators: Sequence[float], denominators: Sequence[float]) -> list[float]:
    """The ratios of two columns round by round (rounds both have; a zero denominator skipped).

    Ratios computed per round, then summarised, hold on a shared machine: load that slows one
    round slows every column of that round alike.
    """
    return [n / d for n, d in zip(numerators, denominators, strict=False) if d]


def ratio_summary(numerators: Sequence[float], denominators: Sequence[float]) -> str:
    """``median (min-max)`` of the per-round ratios, e.g. ``1.23x (1.10-1.40)``; "" if none."""
    ratios = per_round(numerators, denominators)
    if not ratios:
        return ""
    low, high = times(min(ratios)), times(max(ratios))
    return f"{times(statistics.median(ratios))}x ({low}-{high})"


def progress(message: str) -> None:
    """A progress line on stderr (the table goes to stdout)."""
    print(f"  ... {message}", file=sys.stderr, flush=True)


async def alternate(
    cases: Sequence[T],
    rounds: int,
    time_one: Callable[[T], Awaitable[None]],
    *,
    label: str = "round",
) -> None:
    """Time ``cases`` round robin: every round times each case once, in the order given.

    So the floor, ours and the peers of one round run back to back, and load on a shared
    machine hits every side alike (one side after the other would give one side the quiet
    minutes and another the busy ones). ``time_one`` appends one sample to its case.
    """
    for number in range(rounds):
        progress(f"{label} {number + 1}/{rounds}")
        for case in cases:
            await time_one(case)


def alternate_sync(
    cases: Sequence[T], rounds: int, time_one: Callable[[T], None], *, label: str = "round"
) -> None:
    """``alternate`` for synchronous timings (fresh processes, blocking calls)."""
    for number in range(rounds):
        progress(f"{label} {number + 1}/{rounds}")
        for case in cases:
            time_one(case)


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


async def run_rounds(cases: Sequence[TimedCase], rounds: int, target_s: float) -> None:
    """Warm up and calibrate every case, then time them round robin (``alternate``)."""
    for case in cases:
        await calibrate(case, target_s)
    await alternate(cases, rounds, time_round)


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
