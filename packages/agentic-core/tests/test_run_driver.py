"""A runtime that drives whole runs (``drive_run``/``drive_run_stream``, as agentic-bus's
``NatsRuntime`` does) gets ``workflow.run``/``run_stream`` with their keywords; answers to a run
paused in its store go back through it; the built-in runtimes keep the engine's own path."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any, Never

import pytest

from agentic_core import (
    CheckpointStore,
    Durability,
    Executor,
    InMemoryCheckpointStore,
    Invocation,
    InvocationResult,
    LocalRuntime,
    Workflow,
    WorkflowBuilder,
    WorkflowContext,
    WorkflowEvent,
    WorkflowGraph,
    WorkflowOutputEvent,
    WorkflowRunResult,
    WorkflowRunState,
    executor,
    handler,
    response_handler,
)


class OwnedStore(InMemoryCheckpointStore):
    """A checkpoint store that belongs to a driver (``run_driver``)."""

    def __init__(self, driver: RecordingDriver) -> None:
        super().__init__()
        self.run_driver = driver


class RecordingDriver:
    """Drives each run on ``LocalRuntime`` with its own store, recording the keywords it got."""

    def __init__(self) -> None:
        self.store = OwnedStore(self)
        self.calls: list[dict[str, Any]] = []

    async def execute(
        self, workflow: WorkflowGraph, invocations: Sequence[Invocation]
    ) -> list[InvocationResult]:
        raise AssertionError("a driver's runs execute on the runtime it chooses")

    async def drive_run(
        self,
        workflow: Workflow,
        message: Any,
        *,
        checkpoint_id: str | None,
        checkpoint_store: CheckpointStore | None,
        responses: Mapping[str, Any] | None,
        max_supersteps: int | None,
        fork: bool,
        update_state: Mapping[str, Any] | None,
        durability: Durability | None = None,
    ) -> WorkflowRunResult:
        self.calls.append({"form": "run", "checkpoint_id": checkpoint_id,
                           "checkpoint_store": checkpoint_store, "responses": responses,
                           "max_supersteps": max_supersteps, "durability": durability})  # fmt: skip
        return await workflow.run(
            message, runtime=LocalRuntime(), checkpoint_store=self.store,
            checkpoint_id=checkpoint_id, responses=responses, max_supersteps=max_supersteps,
            fork=fork, update_state=update_state, durability=durability,
        )  # fmt: skip

    async def drive_run_stream(
        self,
        workflow: Workflow,
        message: Any,
        *,
        checkpoint_id: str | None,
        checkpoint_store: CheckpointStore | None,
        responses: Mapping[str, Any] | None,
        max_supersteps: int | None,
        fork: bool,
        update_state: Mapping[str, Any] | None,
        durability: Durability | None = None,
    ) -> AsyncIterator[WorkflowEvent]:
        self.calls.append(
            {"form": "run_stream", "checkpoint_id": checkpoint_id, "durability": durability}
        )
        async for event in workflow.run_stream(
            message, runtime=LocalRuntime(), checkpoint_store=self.store,
            checkpoint_id=checkpoint_id, responses=responses, max_supersteps=max_supersteps,
            fork=fork, update_state=update_state, durability=durability,
        ):  # fmt: skip
            yield event


class DriverBeforeDurability(RecordingDriver):
    """A driver written before ``durability=`` existed: its methods do not take it."""

    async def drive_run(  # pyright: ignore[reportIncompatibleMethodOverride]
        self,
        workflow: Workflow,
        message: Any,
        *,
        checkpoint_id: str | None,
        checkpoint_store: CheckpointStore | None,
        responses: Mapping[str, Any] | None,
        max_supersteps: int | None,
        fork: bool,
        update_state: Mapping[str, Any] | None,
    ) -> WorkflowRunResult:
        return await super().drive_run(
            workflow, message, checkpoint_id=checkpoint_id, checkpoint_store=checkpoint_store,
            responses=responses, max_supersteps=max_supersteps, fork=fork,
            update_state=update_state,
        )  # fmt: skip


def chain() -> Workflow:
    @executor
    async def double(value: int, ctx: WorkflowContext[int, int]) -> None:
        await ctx.yield_output(value * 2)
        if value < 8:
            await ctx.send_message(value * 2)

    return WorkflowBuilder("double").set_start_executor(double).add_edge(double, double).build()


class Ask(Executor):
    @handler
    async def ask(self, text: str, ctx: WorkflowContext[Never, str]) -> None:
        await ctx.request_info(text, bool)

    @response_handler
    async def answered(self, text: str, ok: bool, ctx: WorkflowContext[Never, str]) -> None:
        await ctx.yield_output(text if ok else "no")


def asking() -> Workflow:
    return WorkflowBuilder("ask").set_start_executor(Ask("ask")).build()


async def test_workflow_run_and_run_stream_hand_the_run_to_a_driving_runtime() -> None:
    workflow, driver = chain(), RecordingDriver()
    local = await workflow.run(1)

    result = await workflow.run(1, runtime=driver, max_supersteps=10)
    streamed = [e async for e in workflow.run_stream(1, runtime=driver)]

    assert result.outputs == local.outputs
    assert [e.data for e in streamed if isinstance(e, WorkflowOutputEvent)] == local.outputs
    assert [c["form"] for c in driver.calls] == ["run", "run_stream"]
    assert driver.calls[0]["max_supersteps"] == 10
    assert await driver.store.latest(result.run_id) is not None  # the driver's own store


async def test_answers_to_a_run_paused_in_a_drivers_store_go_back_through_it() -> None:
    workflow, driver = asking(), RecordingDriver()
    paused = await workflow.run("ship", runtime=driver)
    answer = {paused.pending_requests[0].request_id: True}

    done = await workflow.send_responses(answer)  # no runtime named: the store's driver

    assert paused.status is WorkflowRunState.IDLE_WITH_PENDING_REQUESTS
    assert done.status is WorkflowRunState.COMPLETED
    assert done.outputs == ["ship"]
    second = driver.calls[1]
    assert second["checkpoint_id"] == paused.last_checkpoint_id
    assert second["checkpoint_store"] is driver.store
    assert second["responses"] == answer


async def test_a_run_paused_without_a_checkpoint_is_not_lost_to_a_driver() -> None:
    workflow, driver = asking(), RecordingDriver()
    paused = await workflow.run("ship")  # local, no store: kept whole in this process
    answer = {paused.pending_requests[0].request_id: False}

    with pytest.raises(ValueError, match="paused without a checkpoint"):
        await workflow.run(responses=answer, runtime=driver)
    done = await workflow.send_responses(answer)  # still paused here

    assert done.outputs == ["no"]
    assert driver.calls == []


async def test_keywords_no_runtime_accepts_fail_before_the_driver_is_called() -> None:
    workflow, driver = chain(), RecordingDriver()
    with pytest.raises(ValueError, match="not both"):
        await workflow.run(1, checkpoint_id="c", runtime=driver)
    with pytest.raises(ValueError, match="fork=True"):
        await workflow.run(update_state={"k": 1}, runtime=driver)
    assert driver.calls == []


@pytest.mark.parametrize("durability", ["sync", "async", "exit"])
async def test_a_driver_gets_the_durability_the_caller_chose(durability: Durability) -> None:
    workflow, driver = chain(), RecordingDriver()

    result = await workflow.run(1, runtime=driver, durability=durability)
    streamed = [e async for e in workflow.run_stream(1, runtime=driver, durability=durability)]

    assert [c["durability"] for c in driver.calls] == [durability, durability]
    assert result.outputs == [2, 4, 8, 16]
    assert [e.data for e in streamed if isinstance(e, WorkflowOutputEvent)] == result.outputs
    written = await driver.store.list(run_id=result.run_id)
    assert len(written) == (1 if durability == "exit" else result.superstep_count)


async def test_a_driver_written_before_durability_still_runs_calls_without_it() -> None:
    workflow, driver = chain(), DriverBeforeDurability()

    result = await workflow.run(1, runtime=driver)

    assert result.outputs == [2, 4, 8, 16]
    assert driver.calls[0]["durability"] is None


async def test_an_unknown_durability_fails_before_the_driver_is_called() -> None:
    workflow, driver = chain(), RecordingDriver()
    bad: Any = "later"

    with pytest.raises(ValueError, match="'sync', 'async' or 'exit'"):
        await workflow.run(1, runtime=driver, durability=bad)
    assert driver.calls == []
