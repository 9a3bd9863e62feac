"""Live events, what a resumed stream says it waits for, and the superstep budget of a run."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Never

import pytest

from agentic_core import (
    Executor,
    ExecutorCompletedEvent,
    ExecutorInvokedEvent,
    InMemoryCheckpointStore,
    MaxSuperstepsExceededError,
    RequestInfoEvent,
    Runtime,
    SuperstepStartedEvent,
    WorkflowBuilder,
    WorkflowCompletedEvent,
    WorkflowContext,
    WorkflowFailedEvent,
    WorkflowOutputEvent,
    WorkflowRunState,
    WorkflowStartedEvent,
    executor,
    handler,
    response_handler,
)


async def test_executor_invoked_reaches_the_stream_while_the_executor_runs(
    runtime: Runtime,
) -> None:
    seen_invoked = asyncio.Event()

    @executor
    async def waits_for_the_consumer(n: int, ctx: WorkflowContext[Never, int]) -> None:
        # Blocks until the stream's consumer has seen this executor start: if the invoked
        # event were held until the barrier, this would never finish.
        async with asyncio.timeout(10):
            await seen_invoked.wait()
        await ctx.yield_output(n)

    workflow = WorkflowBuilder().set_start_executor(waits_for_the_consumer).build()
    kinds: list[str] = []
    async for event in workflow.run_stream(1, runtime=runtime):
        kinds.append(type(event).__name__)
        if isinstance(event, ExecutorInvokedEvent):
            seen_invoked.set()
    assert kinds == [
        "WorkflowStartedEvent",
        "SuperstepStartedEvent",
        "ExecutorInvokedEvent",
        "WorkflowOutputEvent",
        "ExecutorCompletedEvent",
        "SuperstepCompletedEvent",
        "WorkflowCompletedEvent",
    ]


async def test_invoked_events_come_first_in_id_order_then_each_executors_results(
    runtime: Runtime,
) -> None:
    @executor
    async def start(n: int, ctx: WorkflowContext[int]) -> None:
        await ctx.send_message(n)

    @executor
    async def b_fast(n: int, ctx: WorkflowContext[Never, str]) -> None:
        await ctx.yield_output("b")

    @executor
    async def a_slow(n: int, ctx: WorkflowContext[Never, str]) -> None:
        await asyncio.sleep(0.01)
        await ctx.yield_output("a")

    workflow = (
        WorkflowBuilder().set_start_executor(start).add_fan_out_edge(start, [b_fast, a_slow])
    ).build()
    events = [e async for e in workflow.run_stream(1, runtime=runtime)]
    second = [e for e in events if getattr(e, "superstep", None) == 1]
    assert [(type(e).__name__, getattr(e, "executor_id", None)) for e in second] == [
        ("SuperstepStartedEvent", None),
        ("ExecutorInvokedEvent", "a_slow"),
        ("ExecutorInvokedEvent", "b_fast"),
        ("ExecutorCompletedEvent", "a_slow"),
        ("ExecutorCompletedEvent", "b_fast"),
        ("SuperstepCompletedEvent", None),
    ]


class Approver(Executor):
    """Asks for approval of each draft; yields the verdict."""

    @handler
    async def review(self, draft: str, ctx: WorkflowContext[Never, str]) -> None:
        await ctx.request_info(draft, bool)

    @response_handler
    async def decided(self, draft: str, ok: bool, ctx: WorkflowContext[Never, str]) -> None:
        await ctx.yield_output(f"{draft}: {'approved' if ok else 'rejected'}")


async def test_a_resumed_stream_says_what_it_waits_for_and_ends_paused(runtime: Runtime) -> None:
    store = InMemoryCheckpointStore()
    workflow = WorkflowBuilder().set_start_executor(Approver("approver")).build()
    paused = await workflow.run("draft", checkpoint_store=store, runtime=runtime)
    [request] = paused.pending_requests
    events = [
        e
        async for e in workflow.run_stream(
            checkpoint_id=paused.last_checkpoint_id, checkpoint_store=store, runtime=runtime
        )
    ]
    assert isinstance(events[0], WorkflowStartedEvent)
    [again] = [e for e in events if isinstance(e, RequestInfoEvent)]
    assert again.request_id == request.request_id
    assert again.run_id == paused.run_id
    last = events[-1]
    assert isinstance(last, WorkflowCompletedEvent)
    assert last.status is WorkflowRunState.IDLE_WITH_PENDING_REQUESTS
    # run() reports the same.
    result = await workflow.run(
        checkpoint_id=paused.last_checkpoint_id, checkpoint_store=store, runtime=runtime
    )
    assert result.status is WorkflowRunState.IDLE_WITH_PENDING_REQUESTS
    assert [e.request_id for e in result.events if isinstance(e, RequestInfoEvent)] == [
        request.request_id
    ]


async def test_a_stream_that_pauses_and_one_that_completes_say_so(runtime: Runtime) -> None:
    workflow = WorkflowBuilder().set_start_executor(Approver("approver")).build()
    events = [e async for e in workflow.run_stream("d", runtime=runtime)]
    assert isinstance(events[-1], WorkflowCompletedEvent)
    assert events[-1].status is WorkflowRunState.IDLE_WITH_PENDING_REQUESTS
    [request] = [e for e in events if isinstance(e, RequestInfoEvent)]
    answered = [
        e async for e in workflow.run_stream(responses={request.request_id: True}, runtime=runtime)
    ]
    assert isinstance(answered[-1], WorkflowCompletedEvent)
    assert answered[-1].status is WorkflowRunState.COMPLETED


# --- one superstep budget per run ------------------------------------------------------------


class Guesser(Executor):
    """Asks "again?" until told "done": one superstep per answer."""

    @handler
    async def start(self, n: int, ctx: WorkflowContext[Never, str]) -> None:
        await ctx.request_info(f"guess {n}", str)

    @response_handler
    async def told(self, question: str, answer: str, ctx: WorkflowContext[Never, str]) -> None:
        if answer == "done":
            await ctx.yield_output(answer)
        else:
            await ctx.request_info(question, str)


async def _answer_all_with_run(
    max_supersteps: int | None, answers: list[str], runtime: Runtime
) -> list[str]:
    workflow = WorkflowBuilder(max_supersteps=2).set_start_executor(Guesser("g")).build()
    result = await workflow.run(1, runtime=runtime, max_supersteps=max_supersteps)
    for answer in answers:
        [request] = result.pending_requests
        result = await workflow.run(responses={request.request_id: answer}, runtime=runtime)
    return result.outputs


async def _answer_all_with_stream(
    max_supersteps: int | None, answers: list[str], runtime: Runtime
) -> list[str]:
    workflow = WorkflowBuilder(max_supersteps=2).set_start_executor(Guesser("g")).build()
    events = [
        e async for e in workflow.run_stream(1, runtime=runtime, max_supersteps=max_supersteps)
    ]
    for answer in answers:
        [request] = [e for e in events if isinstance(e, RequestInfoEvent)]
        events = [
            e
            async for e in workflow.run_stream(
                responses={request.request_id: answer}, runtime=runtime
            )
        ]
        failed = [e for e in events if isinstance(e, WorkflowFailedEvent)]
        if failed:
            raise MaxSuperstepsExceededError(failed[0].error, executor_id=None, superstep=0)
    return [e.data for e in events if isinstance(e, WorkflowOutputEvent)]


AnswerAll = Callable[[int | None, list[str], Runtime], Awaitable[list[str]]]


@pytest.mark.parametrize("drive", [_answer_all_with_run, _answer_all_with_stream])
async def test_the_budget_belongs_to_the_run_across_responses(
    drive: AnswerAll, runtime: Runtime
) -> None:
    # run() and run_stream() follow one rule.
    with pytest.raises(MaxSuperstepsExceededError, match="max_supersteps=2"):
        await drive(None, ["again", "again", "done"], runtime)
    assert await drive(None, ["done"], runtime) == ["done"]
    # A run's own budget overrides the builder's (LangGraph's recursion limit), for every call.
    assert await drive(5, ["again", "again", "done"], runtime) == ["done"]


async def test_the_run_budget_survives_a_checkpoint_resume(runtime: Runtime) -> None:
    store = InMemoryCheckpointStore()
    workflow = WorkflowBuilder(max_supersteps=2).set_start_executor(Guesser("g")).build()
    result = await workflow.run(1, checkpoint_store=store, max_supersteps=4, runtime=runtime)
    # Supersteps 1, 2 and 3: past the builder's 2, within the run's own 4.
    for answer in ["again", "again", "again"]:
        [request] = result.pending_requests
        result = await workflow.run(
            checkpoint_id=result.last_checkpoint_id,
            checkpoint_store=store,
            responses={request.request_id: answer},
            runtime=runtime,
        )
    [request] = result.pending_requests
    with pytest.raises(MaxSuperstepsExceededError, match="max_supersteps=4"):
        await workflow.run(
            checkpoint_id=result.last_checkpoint_id,
            checkpoint_store=store,
            responses={request.request_id: "again"},
            runtime=runtime,
        )


async def test_a_budget_below_one_is_refused() -> None:
    workflow = WorkflowBuilder().set_start_executor(Guesser("g")).build()
    with pytest.raises(ValueError, match="max_supersteps must be at least 1"):
        await workflow.run(1, max_supersteps=0)


async def test_stream_events_carry_completed_durations(runtime: Runtime) -> None:
    @executor
    async def one(n: int, ctx: WorkflowContext[Never, int]) -> None:
        await ctx.yield_output(n)

    events = [
        e
        async for e in WorkflowBuilder()
        .set_start_executor(one)
        .build()
        .run_stream(3, runtime=runtime)
    ]
    [completed] = [e for e in events if isinstance(e, ExecutorCompletedEvent)]
    assert completed.duration_s >= 0
    [started] = [e for e in events if isinstance(e, SuperstepStartedEvent)]
    assert started.executor_ids == ["one"]
