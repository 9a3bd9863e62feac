"""Helpers shared by the benchmarks in this directory (not a benchmark itself)."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from typing import Any


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
