"""``benches/serve.py`` still runs: one tiny round of every column, each printed in the table.

A smoke test so the benchmark cannot rot as the serving APIs change; it asserts nothing about
the figures (benchmarks are never timed assertions in tests).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # serves five apps on loopback: a few seconds

BENCH = Path(__file__).resolve().parents[1] / "benches" / "serve.py"


def test_the_serving_bench_prints_every_column(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The bench puts benches/ on sys.path (last) to import its helpers: undone after the test.
    monkeypatch.setattr(sys, "path", list(sys.path))
    spec = importlib.util.spec_from_file_location("bench_serve", BENCH)
    assert spec is not None
    assert spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "bench_serve", bench)  # its dataclass looks itself up
    spec.loader.exec_module(bench)

    bench.main(["--rounds", "1", "--target-s", "0.002", "--session-requests", "2"])

    out = capsys.readouterr().out
    rows = {line.split("  ")[0].strip() for line in out.splitlines()}
    protocols = ["openai", "openai stream", "mcp"]
    references = {"mcp": "mcp sdk alone"}  # each protocol's SDK serving the agent on its own
    if bench.a2a_unavailable() is None:
        protocols.append("a2a")
        references["a2a"] = "a2a-sdk alone"
    else:
        assert "a2a: skipped" in out
    for column in [
        "in-process",
        "in-process, thread",
        "bare route",
        *protocols,
        *references.values(),
    ]:
        assert column in rows, f"no row for {column!r} in:\n{out}"
    for protocol in protocols:
        assert f"  {protocol}: overhead" in out, f"no verdict for {protocol!r} in:\n{out}"
    for protocol, reference in references.items():
        assert f"{protocol}: its SDK alone ({reference}) costs" in out, out
        assert f"  {reference}: overhead" not in out, "a reference gets no verdict of its own"
