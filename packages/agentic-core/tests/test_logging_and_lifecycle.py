"""Logging setup, warnings the engine logs, and the lifecycle corners of runs."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Never

import pytest
import structlog
from structlog.testing import capture_logs

from agentic_core import (
    Executor,
    InMemoryCheckpointStore,
    WorkflowBuilder,
    WorkflowContext,
    WorkflowRunState,
    configure_logging,
    executor,
    handler,
    response_handler,
)


@pytest.fixture(autouse=True)
def _reset_structlog() -> object:
    yield None
    structlog.reset_defaults()
    logging.getLogger().handlers.clear()


def test_configure_logging_json_writes_one_json_object_per_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    configure_logging(json=True, level="DEBUG")
    structlog.get_logger("agentic.test").info("hello", answer=42)
    line = capsys.readouterr().err.strip().splitlines()[-1]
    record = json.loads(line)
    assert record["event"] == "hello"
    assert record["answer"] == 42
    assert record["level"] == "info"


def test_configure_logging_filters_below_the_level(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging(level="WARNING")
    structlog.get_logger("agentic.test").info("quiet")
    structlog.get_logger("agentic.test").warning("loud", key="value")
    err = capsys.readouterr().err
    assert "quiet" not in err
    assert "loud" in err
    assert "key=value" in err


def test_configure_logging_rejects_an_unknown_level() -> None:
    with pytest.raises(ValueError, match="unknown log level 'LOUD'"):
        configure_logging(level="LOUD")


async def test_an_incomplete_fan_in_is_logged_as_a_warning() -> None:
    @executor
    async def start(n: int, ctx: WorkflowContext[int]) -> None:
        await ctx.send_message(n, target_id="yes")

    @executor
    async def yes(n: int, ctx: WorkflowContext[int]) -> None:
        await ctx.send_message(n)

    @executor
    async def no(n: int, ctx: WorkflowContext[int]) -> None:
        await ctx.send_message(n)

    @executor
    async def join(ns: list[int], ctx: WorkflowContext[Never, int]) -> None:
        await ctx.yield_output(sum(ns))

    workflow = (
        WorkflowBuilder("partial").set_start_executor(start).add_fan_out_edge(start, [yes, no])
        .add_fan_in_edge([yes, no], join).build()
    )  # fmt: skip
    with capture_logs() as logs:
        await workflow.run(1)
    [warning] = [entry for entry in logs if entry["event"] == "fan_in_incomplete"]
    assert warning["log_level"] == "warning"
    assert warning["missing_source_ids"] == ["no"]


async def test_cancelling_a_checkpointed_run_leaves_the_last_checkpoint_usable() -> None:
    gate = asyncio.Event()

    @executor
    async def step(n: int, ctx: WorkflowContext[int, int]) -> None:
        await ctx.yield_output(n)
        if n == 3 and not gate.is_set():
            gate.set()
            await asyncio.sleep(30)  # cancelled here
        if n < 5:
            await ctx.send_message(n + 1)

    store = InMemoryCheckpointStore()
    workflow = WorkflowBuilder("cancel").set_start_executor(step).add_edge(step, step).build()
    task = asyncio.create_task(workflow.run(0, checkpoint_store=store))
    await asyncio.wait_for(gate.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    [meta] = [m for m in await store.list() if m.superstep == 2]
    resumed = await workflow.run(checkpoint_id=meta.id, checkpoint_store=store)
    assert resumed.outputs == [3, 4, 5]


class Asker(Executor):
    @handler
    async def ask(self, question: str, ctx: WorkflowContext[Never, str]) -> None:
        await ctx.request_info(question, str)

    @response_handler
    async def answer(self, question: str, reply: str, ctx: WorkflowContext[Never, str]) -> None:
        await ctx.yield_output(f"{question} -> {reply}")


async def test_run_with_responses_resumes_the_paused_run_in_this_process() -> None:
    workflow = WorkflowBuilder().set_start_executor(Asker("asker")).build()
    first, second = await asyncio.gather(workflow.run("a?"), workflow.run("b?"))
    assert {first.status, second.status} == {WorkflowRunState.IDLE_WITH_PENDING_REQUESTS}
    done = await workflow.run(responses={second.pending_requests[0].request_id: "B"})
    assert done.run_id == second.run_id
    assert done.outputs == ["b? -> B"]
    with pytest.raises(ValueError, match="either a message or responses"):
        await workflow.run("c?", responses={first.pending_requests[0].request_id: "A"})
    done = await workflow.send_responses({first.pending_requests[0].request_id: "A"})
    assert done.outputs == ["a? -> A"]


async def test_answering_the_same_request_twice_is_an_error() -> None:
    from agentic_core import WorkflowRequestError

    workflow = WorkflowBuilder().set_start_executor(Asker("asker")).build()
    paused = await workflow.run("q?")
    request_id = paused.pending_requests[0].request_id
    await workflow.send_responses({request_id: "yes"})
    with pytest.raises(WorkflowRequestError, match=request_id):
        await workflow.send_responses({request_id: "again"})
