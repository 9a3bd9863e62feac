"""Retries by RetryPolicy, previous_errors, timeouts, failure reporting and cancellation."""

from __future__ import annotations

import asyncio
from typing import Never

import pytest

from agentic_core import (
    ExecutorFailedEvent,
    RetryPolicy,
    Runtime,
    WorkflowBuilder,
    WorkflowContext,
    WorkflowExecutionError,
    WorkflowFailedEvent,
    executor,
)


async def test_a_failing_executor_is_retried_and_sees_previous_errors(runtime: Runtime) -> None:
    seen: list[tuple[int, list[str]]] = []

    @executor(retry=RetryPolicy(max_attempts=3))
    async def flaky(n: int, ctx: WorkflowContext[Never, int]) -> None:
        seen.append((ctx.attempt, [e.message for e in ctx.previous_errors]))
        if ctx.attempt < 3:
            raise RuntimeError(f"fail {ctx.attempt}")
        await ctx.yield_output(n)

    result = await WorkflowBuilder().set_start_executor(flaky).build().run(7, runtime=runtime)
    assert result.outputs == [7]
    assert seen == [(1, []), (2, ["fail 1"]), (3, ["fail 1", "fail 2"])]
    failed = [e for e in result.events if isinstance(e, ExecutorFailedEvent)]
    assert [(e.executor_id, e.will_retry) for e in failed] == [("flaky", True), ("flaky", True)]


async def test_a_failed_attempt_leaves_no_effects(runtime: Runtime) -> None:
    @executor(retry=RetryPolicy(max_attempts=2))
    async def half(n: int, ctx: WorkflowContext[Never, str]) -> None:
        await ctx.yield_output(f"attempt {ctx.attempt}")
        if ctx.attempt == 1:
            raise ValueError("half done")

    result = await WorkflowBuilder().set_start_executor(half).build().run(1, runtime=runtime)
    assert result.outputs == ["attempt 2"]


async def test_exhausted_retries_raise_with_executor_superstep_and_cause(runtime: Runtime) -> None:
    @executor
    async def start(n: int, ctx: WorkflowContext[int]) -> None:
        await ctx.send_message(n)

    @executor(retry=RetryPolicy(max_attempts=2))
    async def broken(n: int, ctx: WorkflowContext) -> None:
        raise ZeroDivisionError("no way")

    workflow = WorkflowBuilder().set_start_executor(start).add_edge(start, broken).build()
    with pytest.raises(WorkflowExecutionError) as info:
        await workflow.run(1, runtime=runtime)
    error = info.value
    assert (error.executor_id, error.superstep) == ("broken", 1)
    assert "after 2 attempts: ZeroDivisionError: no way" in str(error)


async def test_the_local_runtime_keeps_the_original_exception_as_cause() -> None:
    @executor
    async def broken(n: int, ctx: WorkflowContext) -> None:
        raise ZeroDivisionError("no way")

    with pytest.raises(WorkflowExecutionError) as info:
        await WorkflowBuilder().set_start_executor(broken).build().run(1)
    assert isinstance(info.value.__cause__, ZeroDivisionError)


async def test_a_timeout_counts_as_a_failed_attempt(runtime: Runtime) -> None:
    @executor(retry=RetryPolicy(max_attempts=2, timeout_s=0.05))
    async def sleepy(n: int, ctx: WorkflowContext[Never, int]) -> None:
        if ctx.attempt == 1:
            await asyncio.sleep(10)
        await ctx.yield_output(ctx.attempt)

    result = await WorkflowBuilder().set_start_executor(sleepy).build().run(1, runtime=runtime)
    assert result.outputs == [2]
    [failed] = [e for e in result.events if isinstance(e, ExecutorFailedEvent)]
    assert "timed out after 0.05 s" in failed.error


async def test_backoff_waits_between_attempts(runtime: Runtime) -> None:
    loop = asyncio.get_running_loop()
    times: list[float] = []

    @executor(retry=RetryPolicy(max_attempts=3, backoff_s=0.02, backoff_factor=2.0))
    async def flaky(n: int, ctx: WorkflowContext[Never, int]) -> None:
        times.append(loop.time())
        if ctx.attempt < 3:
            raise RuntimeError("again")
        await ctx.yield_output(n)

    await WorkflowBuilder().set_start_executor(flaky).build().run(1, runtime=runtime)
    assert times[1] - times[0] >= 0.018
    assert times[2] - times[1] >= 0.038


def test_retry_policy_delays() -> None:
    policy = RetryPolicy(max_attempts=4, backoff_s=1.0, backoff_factor=3.0)
    assert [policy.delay_before(k) for k in (1, 2, 3, 4)] == [0.0, 1.0, 3.0, 9.0]
    with pytest.raises(ValueError, match="greater than or equal to 1"):
        RetryPolicy(max_attempts=0)


async def test_run_stream_yields_a_failed_event_and_stops(runtime: Runtime) -> None:
    @executor
    async def broken(n: int, ctx: WorkflowContext) -> None:
        raise RuntimeError("bad")

    events = [
        e
        async for e in WorkflowBuilder()
        .set_start_executor(broken)
        .build()
        .run_stream(1, runtime=runtime)
    ]
    assert isinstance(events[-1], WorkflowFailedEvent)
    assert events[-1].executor_id == "broken"
    assert "RuntimeError: bad" in events[-1].error


async def test_cancelling_the_run_cancels_running_executors() -> None:
    started = asyncio.Event()
    cancelled: list[str] = []

    def sleeper(name: str):
        async def run(n: int, ctx: WorkflowContext) -> None:
            started.set()
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                cancelled.append(name)
                raise

        return executor(run, id=name)

    @executor
    async def start(n: int, ctx: WorkflowContext[int]) -> None:
        await ctx.send_message(n)

    a, b = sleeper("a"), sleeper("b")
    workflow = WorkflowBuilder().set_start_executor(start).add_fan_out_edge(start, [a, b]).build()
    task = asyncio.create_task(workflow.run(1))
    await asyncio.wait_for(started.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert sorted(cancelled) == ["a", "b"]
