"""JSON log lines name the run, superstep and executor they come from, and the current trace."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from typing import Any, Never

import pytest
import structlog

from agentic_core import (
    Runtime,
    WorkflowBuilder,
    WorkflowContext,
    add_run_context,
    configure_logging,
    executor,
)

Telemetry = Any
"""The ``telemetry`` fixture (conftest.py): spans(), span(name), points(metric), exporter."""

_log = structlog.get_logger("agentic.test.run_context")


@pytest.fixture(autouse=True)
def _reset_structlog() -> Iterator[None]:
    yield
    structlog.reset_defaults()
    logging.getLogger().handlers.clear()


def _lines(capsys: pytest.CaptureFixture[str]) -> dict[str, dict[str, Any]]:
    """The JSON lines written so far, by event."""
    records = [json.loads(line) for line in capsys.readouterr().err.splitlines() if line]
    return {record["event"]: record for record in records}


@executor(id="worker")
async def worker(n: int, ctx: WorkflowContext[int]) -> None:
    _log.info("working", n=n)
    await ctx.send_message(n + 1)


@executor(id="reporter")
async def reporter(n: int, ctx: WorkflowContext[Never, int]) -> None:
    _log.info("reporting", executor_id="chosen by the line")
    await ctx.yield_output(n)


async def test_lines_logged_by_executors_carry_run_superstep_and_executor(
    capsys: pytest.CaptureFixture[str], runtime: Runtime
) -> None:
    configure_logging(json=True)
    workflow = WorkflowBuilder().set_start_executor(worker).add_edge(worker, reporter).build()

    result = await workflow.run(1, runtime=runtime)
    _log.info("after the run")

    lines = _lines(capsys)
    working = lines["working"]
    assert (working["run_id"], working["superstep"], working["executor_id"]) == (
        result.run_id,
        0,
        "worker",
    )
    assert lines["reporting"]["superstep"] == 1
    assert lines["reporting"]["executor_id"] == "chosen by the line"  # what a line binds wins
    assert "trace_id" not in working  # telemetry is off
    assert "run_id" not in lines["after the run"]


async def test_with_telemetry_lines_carry_the_trace_and_span_of_the_executor(
    capsys: pytest.CaptureFixture[str], telemetry: Telemetry, runtime: Runtime
) -> None:
    configure_logging(json=True)

    await WorkflowBuilder().set_start_executor(worker).build().run(1, runtime=runtime)

    working = _lines(capsys)["working"]
    span = telemetry.span("executor.process worker")
    assert working["trace_id"] == format(span.context.trace_id, "032x")
    assert working["span_id"] == format(span.context.span_id, "016x")
    assert working["executor_id"] == "worker"


def test_add_run_context_leaves_a_line_outside_any_run_alone() -> None:
    assert add_run_context(None, "info", {"event": "x"}) == {"event": "x"}
