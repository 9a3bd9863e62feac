"""LocalRuntime's direct path (one invocation per superstep, run inline) against the full path.

Every engine test runs on LocalRuntime and SerializingRuntime; these pin down what the direct
path itself decides: which handler, which context, which failures retry, and when it must step
aside for the full path.
"""

from __future__ import annotations

from typing import Any, Never

import pytest

from agentic_core import (
    Executor,
    ExecutorError,
    LocalRuntime,
    RetryPolicy,
    SerializingRuntime,
    WorkflowBuilder,
    WorkflowContext,
    WorkflowExecutionError,
    executor,
    handler,
)
from agentic_core.graph._direct import drive_direct


async def test_a_chain_runs_on_the_direct_path(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    real = drive_direct

    async def spy(*args: Any) -> None:
        calls.append("direct")
        await real(*args)

    monkeypatch.setattr("agentic_core.graph._workflow.drive_direct", spy)

    @executor
    async def one(n: int, ctx: WorkflowContext[int]) -> None:
        await ctx.send_message(n + 1)

    @executor
    async def two(n: int, ctx: WorkflowContext[Never, int]) -> None:
        await ctx.yield_output(n * 10)

    workflow = WorkflowBuilder().set_start_executor(one).add_edge(one, two).build()
    assert (await workflow.run(1)).get_outputs() == [20]
    assert (await workflow.run(1, runtime=SerializingRuntime())).get_outputs() == [20]
    assert calls == ["direct"]  # the default runtime only


class _Lists(Executor):
    """Two handlers a message's type alone cannot choose between (``list[int]``/``list[str]``)."""

    @handler
    async def ints(self, items: list[int], ctx: WorkflowContext[Any, str]) -> None:
        await ctx.yield_output(f"{self.id} ints {sum(items)}")
        if items:
            await ctx.send_message([str(i) for i in items])

    @handler
    async def strs(self, items: list[str], ctx: WorkflowContext[Any, str]) -> None:
        await ctx.yield_output(f"{self.id} strs {'+'.join(items)}")


@pytest.mark.parametrize("runtime", [LocalRuntime(), SerializingRuntime()], ids=["local", "ser"])
async def test_dispatch_by_content_is_never_cached_by_type(runtime: Any) -> None:
    lists = _Lists("lists")
    workflow = WorkflowBuilder().set_start_executor(lists).add_edge(lists, lists).build()
    result = await workflow.run([1, 2], runtime=runtime)
    assert result.get_outputs() == ["lists ints 3", "lists strs 1+2"]


async def test_the_context_names_the_invocation_on_the_direct_path() -> None:
    seen: list[tuple[str, int, int, str]] = []

    @executor(id="first")
    async def first(n: int, ctx: WorkflowContext[int]) -> None:
        seen.append((ctx.executor_id, ctx.superstep, ctx.attempt, ctx.run_id))
        await ctx.send_message(n)

    @executor(id="second")
    async def second(n: int, ctx: WorkflowContext[Never, int]) -> None:
        seen.append((ctx.executor_id, ctx.superstep, ctx.attempt, ctx.invocation_id))
        await ctx.yield_output(n)

    workflow = WorkflowBuilder().set_start_executor(first).add_edge(first, second).build()
    result = await workflow.run(5)
    assert seen == [
        ("first", 0, 1, result.run_id),
        ("second", 1, 1, f"{result.run_id}.1.second.1"),
    ]


async def test_a_failure_retries_by_policy_and_a_mistake_does_not() -> None:
    attempts: list[int] = []

    @executor(retry=RetryPolicy(max_attempts=3, backoff_s=0))
    async def flaky(n: int, ctx: WorkflowContext[Never, int]) -> None:
        attempts.append(ctx.attempt)
        if ctx.attempt < 3:
            raise RuntimeError("not yet")
        await ctx.yield_output(n)

    result = await WorkflowBuilder().set_start_executor(flaky).build().run(7)
    assert result.get_outputs() == [7]
    assert attempts == [1, 2, 3]
    assert [e.attempt for e in result.errors] == [1, 2]

    mistakes: list[int] = []

    @executor(retry=RetryPolicy(max_attempts=3, backoff_s=0))
    async def wrong(n: int, ctx: WorkflowContext[Never, int]) -> None:
        mistakes.append(ctx.attempt)
        raise ExecutorError("a mistake no retry mends", executor_id=ctx.executor_id)

    with pytest.raises(WorkflowExecutionError, match="after 1 attempt: ExecutorError"):
        await WorkflowBuilder().set_start_executor(wrong).build().run(1)
    assert mistakes == [1]


async def test_a_message_no_handler_takes_fails_the_run_with_a_clear_error() -> None:
    @executor
    async def ints_only(n: int, ctx: WorkflowContext[Never, int]) -> None:
        await ctx.yield_output(n)

    with pytest.raises(WorkflowExecutionError, match="no handler for a message of type str"):
        await WorkflowBuilder().set_start_executor(ints_only).build().run("text")


class _Counter(Executor):
    """Per-run state: the full path runs it on a copy, never the shared instance."""

    def __init__(self) -> None:
        super().__init__("counter")
        self.count = 0

    @handler
    async def count_up(self, n: int, ctx: WorkflowContext[int, int]) -> None:
        self.count += n
        if n > 1:
            await ctx.send_message(n - 1)
        else:
            await ctx.yield_output(self.count)

    def snapshot_state(self) -> Any:
        return self.count

    def restore_state(self, state: Any) -> None:
        self.count = state


async def test_stateful_executors_keep_their_state_per_run() -> None:
    counter = _Counter()
    workflow = WorkflowBuilder().set_start_executor(counter).add_edge(counter, counter).build()
    assert (await workflow.run(3)).get_outputs() == [6]
    assert (await workflow.run(3)).get_outputs() == [6]
    assert counter.count == 0


async def test_effect_lists_are_never_shared_between_results() -> None:
    from agentic_core.graph._context import WorkflowContext as Ctx
    from agentic_core.graph._serialization import TypeRegistry
    from agentic_core.protocols._runtime import Invocation, InvocationResult

    registry = TypeRegistry()
    results = [InvocationResult("e"), InvocationResult("e")]
    invocation = Invocation("run", "wf", 0, "e", [1], {}, streaming=True)
    ctx: Ctx[Any, Any] = Ctx(invocation, results[0], frozenset({"next"}), registry)
    await ctx.send_message(1)
    await ctx.send_message(2, target_id="next")
    await ctx.yield_output("out")
    await ctx.set_shared_state("k", 1)
    await ctx.request_info("question?", str)
    first, second = results
    assert first.sent == [(1, None), (2, "next")]
    assert first.outputs == ["out"]
    assert [type(e).__name__ for e in first.events] == ["WorkflowOutputEvent"]
    assert first.state_writes == {"k": 1}
    assert len(first.requests) == 1
    # the other result saw none of it, and stays usable
    for untouched in (second.sent, second.outputs, second.events, second.requests):
        assert not untouched
    assert not second.state_writes
    wire = first.to_data()
    assert [type(wire[k]) for k in ("outputs", "events", "requests", "state_writes")] == [
        list,
        list,
        list,
        dict,
    ]
    assert InvocationResult.from_data(second.to_data()).outputs == []


async def test_a_failed_invocation_keeps_none_of_its_effects() -> None:
    @executor
    async def half(n: int, ctx: WorkflowContext[int, int]) -> None:
        await ctx.yield_output(n)
        await ctx.set_shared_state("k", n)
        await ctx.send_message(n)
        if ctx.attempt == 1:
            raise RuntimeError("fails after its effects")

    @executor
    async def sink(n: int, ctx: WorkflowContext[Never, int]) -> None:
        await ctx.yield_output(n * 100)

    workflow = WorkflowBuilder().set_start_executor(half).add_edge(half, sink).build()
    with pytest.raises(WorkflowExecutionError, match="fails after its effects"):
        await workflow.run(1)
    half.retry = RetryPolicy(max_attempts=2)
    retried = WorkflowBuilder().set_start_executor(half).add_edge(half, sink).build()
    result = await retried.run(1)
    assert result.get_outputs() == [1, 100]  # the failed attempt's output and send are gone
