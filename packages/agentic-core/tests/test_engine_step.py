"""The pure superstep (graph/_step.py) without an event loop, and the bugs a close read found."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import Any, Never

import pytest

from agentic_core import (
    Executor,
    ExecutorErrorInfo,
    ExecutorFailedEvent,
    InMemoryCheckpointStore,
    InvocationResult,
    MaxSuperstepsExceededError,
    RequestInfoEvent,
    RetryPolicy,
    Runtime,
    WorkflowBuilder,
    WorkflowContext,
    WorkflowExecutionError,
    WorkflowRequestError,
    executor,
    handler,
    response_handler,
)
from agentic_core.graph._paused import PausedRuns
from agentic_core.graph._run_state import start_run
from agentic_core.graph._step import plan_retries, plan_superstep


@executor
async def fan(n: int, ctx: WorkflowContext[int]) -> None:
    await ctx.send_message(n)


@executor
async def leaf(n: int, ctx: WorkflowContext[Never, int]) -> None:
    await ctx.yield_output(n)


def _failure(executor_id: str, message: str) -> InvocationResult:
    error = ExecutorErrorInfo(
        executor_id=executor_id, superstep=0, attempt=1, error_type="ValueError", message=message
    )
    return InvocationResult(executor_id, error=error)


def test_plan_superstep_moves_the_inboxes_into_invocations_in_id_order() -> None:
    workflow = WorkflowBuilder().set_start_executor(fan).add_edge(fan, leaf).build()
    run = start_run(workflow, 5, max_supersteps=None)
    run.inboxes["leaf"] = [1]
    [first, second] = plan_superstep(run)
    assert (first.executor_id, first.messages) == ("fan", [5])
    assert (second.executor_id, second.messages) == ("leaf", [1])
    assert first.invocation_id == f"{run.run_id}.0.fan.1"
    assert run.inboxes == {}


def test_plan_superstep_maps_a_stateless_executors_messages_to_separate_invocations() -> None:
    workflow = WorkflowBuilder().set_start_executor(fan).add_edge(fan, leaf).build()
    run = start_run(workflow, 0, max_supersteps=None)
    run.inboxes = {"leaf": [1, 2, 3]}
    invocations = plan_superstep(run)
    assert [(i.index, i.messages) for i in invocations] == [(0, [1]), (1, [2]), (2, [3])]
    assert invocations[2].invocation_id == f"{run.run_id}.0.leaf[2].1"


def test_plan_superstep_spends_the_runs_budget() -> None:
    workflow = WorkflowBuilder().set_start_executor(fan).add_edge(fan, leaf).build()
    run = start_run(workflow, 0, max_supersteps=2)
    run.superstep = 2
    with pytest.raises(
        MaxSuperstepsExceededError, match=r"max_supersteps=2 \(still pending: fan\)"
    ):
        plan_superstep(run)


def test_plan_retries_retries_by_policy_and_raises_once_attempts_are_out() -> None:
    @executor(retry=RetryPolicy(max_attempts=2, backoff_s=0.5))
    async def flaky(n: int, ctx: WorkflowContext) -> None:
        del n, ctx

    workflow = WorkflowBuilder().set_start_executor(flaky).build()
    run = start_run(workflow, 1, max_supersteps=None)
    invocations = plan_superstep(run)
    plan = plan_retries(run, invocations, [_failure("flaky", "first")])
    assert plan.positions == [0]
    assert plan.delay_s == 0.5
    [retry] = plan.invocations
    assert retry.attempt == 2
    assert [e.message for e in retry.previous_errors] == ["first"]
    assert [type(e) for e in run.events] == [ExecutorFailedEvent]
    with pytest.raises(WorkflowExecutionError, match="after 2 attempts: ValueError: second"):
        plan_retries(run, plan.invocations, [_failure("flaky", "second")])


async def test_previous_errors_is_an_immutable_sequence_no_executor_can_corrupt(
    runtime: Runtime,
) -> None:
    seen: list[Sequence[ExecutorErrorInfo]] = []

    @executor(retry=RetryPolicy(max_attempts=3))
    async def meddler(n: int, ctx: WorkflowContext[Never, int]) -> None:
        seen.append(ctx.previous_errors)
        if ctx.attempt < 3:
            with contextlib.suppress(AttributeError, IndexError):
                ctx.previous_errors.append(ctx.previous_errors[0])  # type: ignore[attr-defined]
            raise RuntimeError(f"attempt {ctx.attempt}")
        await ctx.yield_output(n)

    workflow = WorkflowBuilder().set_start_executor(meddler).build()
    assert (await workflow.run(1, runtime=runtime)).outputs == [1]
    assert [len(errors) for errors in seen] == [0, 1, 2]
    assert all(not isinstance(errors, list) for errors in seen)
    # A second run starts clean: nothing leaked into a shared default.
    seen.clear()
    await workflow.run(2, runtime=runtime)
    assert len(seen[0]) == 0


async def test_a_handlers_own_timeout_error_is_not_reported_as_the_policy_timeout(
    runtime: Runtime,
) -> None:
    class ProviderTimeoutError(TimeoutError):
        pass

    @executor(retry=RetryPolicy(timeout_s=30))
    async def calls_a_model(n: int, ctx: WorkflowContext) -> None:
        raise ProviderTimeoutError("the model server did not answer in 5 s")

    workflow = WorkflowBuilder().set_start_executor(calls_a_model).build()
    with pytest.raises(WorkflowExecutionError) as info:
        await workflow.run(1, runtime=runtime)
    assert "ProviderTimeoutError: the model server did not answer in 5 s" in str(info.value)
    assert "timed out after" not in str(info.value)


async def test_the_policy_timeout_is_still_reported_as_a_timeout(runtime: Runtime) -> None:
    import asyncio

    @executor(retry=RetryPolicy(timeout_s=0.01))
    async def slow(n: int, ctx: WorkflowContext) -> None:
        await asyncio.sleep(10)

    workflow = WorkflowBuilder().set_start_executor(slow).build()
    with pytest.raises(WorkflowExecutionError, match=r"timed out after 0\.01 s"):
        await workflow.run(1, runtime=runtime)


# --- paused runs are bounded ---------------------------------------------------------------


class Asker(Executor):
    """Asks a question; yields the answer."""

    @handler
    async def ask(self, question: str, ctx: WorkflowContext[Never, str]) -> None:
        await ctx.request_info(question, str)

    @response_handler
    async def answered(self, question: str, answer: str, ctx: WorkflowContext[Never, str]) -> None:
        await ctx.yield_output(f"{question}: {answer}")


asker = Asker("asker")


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _with_paused(workflow: Any, paused: PausedRuns) -> None:
    workflow._paused = paused


async def test_a_workflow_keeps_at_most_max_runs_paused_runs_and_names_a_dropped_request() -> None:
    workflow = WorkflowBuilder().set_start_executor(asker).build()
    _with_paused(workflow, PausedRuns(max_runs=3))
    results = [await workflow.run(f"q{i}") for i in range(5)]
    assert len(workflow._paused) == 3
    [dropped] = results[0].pending_requests
    with pytest.raises(WorkflowRequestError) as info:
        await workflow.send_responses({dropped.request_id: "late"})
    message = str(info.value)
    assert dropped.request_id in message
    assert "more than 3 runs were paused" in message
    assert "no checkpoint store was set" in message
    [kept] = results[4].pending_requests
    assert (await workflow.send_responses({kept.request_id: "ok"})).status == "completed"


async def test_an_old_paused_run_expires_and_a_checkpointed_one_says_how_to_resume() -> None:
    clock = _Clock()
    store = InMemoryCheckpointStore()
    workflow = WorkflowBuilder().set_start_executor(asker).with_checkpointing(store).build()
    _with_paused(workflow, PausedRuns(max_age_s=60, clock=clock))
    paused = await workflow.run("q")
    clock.now = 61
    await workflow.run("another")  # any later pause sweeps the expired ones
    [request] = paused.pending_requests
    with pytest.raises(WorkflowRequestError, match="waited longer than 60 s") as info:
        await workflow.send_responses({request.request_id: "late"})
    assert f"run(checkpoint_id={paused.last_checkpoint_id!r}" in str(info.value)
    # The checkpoint still resumes it.
    done = await workflow.run(
        checkpoint_id=paused.last_checkpoint_id, responses={request.request_id: "late"}
    )
    assert done.status == "completed"


async def test_a_checkpointed_paused_run_is_kept_as_its_checkpoint_id_only() -> None:
    store = InMemoryCheckpointStore()
    workflow = WorkflowBuilder().set_start_executor(asker).with_checkpointing(store).build()
    paused = await workflow.run("q")
    entry = next(iter(workflow._paused._runs.values()))
    assert entry.kept == (paused.last_checkpoint_id, store)
    [request] = paused.pending_requests
    assert (await workflow.send_responses({request.request_id: "yes"})).status == "completed"


async def test_a_wrong_answer_to_a_paused_run_loses_nothing() -> None:
    workflow = WorkflowBuilder().set_start_executor(asker).build()
    paused = await workflow.run("q")
    [request] = paused.pending_requests
    with pytest.raises(WorkflowRequestError, match="must be str"):
        await workflow.send_responses({request.request_id: 42})
    assert (await workflow.send_responses({request.request_id: "fine"})).status == "completed"


async def test_requests_carry_the_run_they_belong_to(runtime: Runtime) -> None:
    workflow = WorkflowBuilder().set_start_executor(asker).build()
    paused = await workflow.run("q", runtime=runtime)
    [request] = paused.pending_requests
    assert isinstance(request, RequestInfoEvent)
    assert request.run_id == paused.run_id
