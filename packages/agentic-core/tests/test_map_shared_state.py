"""Shared state under dynamic maps: concurrent branches of one executor never lose an update.

Each branch of a dynamic map runs on the shared state of the last barrier. A reduce written by
hand (every branch reads a list, appends, writes it back: LangGraph's ``Send`` map-reduce ported
without a collect edge) would keep one append and drop the others; the engine refuses it with
``SharedStateConflictError`` naming the key, the executor and ``add_collect_edge``.
"""

from __future__ import annotations

import asyncio
from typing import Any, Never

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentic_core import (
    Executor,
    InMemoryCheckpointStore,
    Runtime,
    SharedStateConflictError,
    WorkflowBuilder,
    WorkflowContext,
    WorkflowExecutionError,
    WorkflowFailedEvent,
    executor,
    handler,
)


@executor
async def split(n: int, ctx: WorkflowContext[int]) -> None:
    for k in range(n):
        await ctx.send_message(k)


@executor
async def collect_by_hand(k: int, ctx: WorkflowContext[Never, list[int]]) -> None:
    """The hand-written reduce: read the shared list, append, write back, yield when full."""
    await asyncio.sleep(0.001 * (3 - k))  # branches interleave
    done: list[int] = await ctx.get_shared_state("results", [])
    done = [*done, k * k]
    await ctx.set_shared_state("results", done)
    if len(done) == 3:
        await ctx.yield_output(sorted(done))


def hand_written_reduce() -> Any:
    return (
        WorkflowBuilder("hand-reduce")
        .set_start_executor(split)
        .add_edge(split, collect_by_hand)
        .build()
    )


async def test_a_hand_written_reduce_over_a_map_fails_loudly_naming_key_and_fix(
    runtime: Runtime,
) -> None:
    with pytest.raises(SharedStateConflictError) as caught:
        await hand_written_reduce().run(3, runtime=runtime)
    error = caught.value
    assert error.key == "results"
    assert error.executor_id == "collect_by_hand"
    assert error.superstep == 1
    text = str(error)
    assert "'results'" in text
    assert "'collect_by_hand'" in text
    assert "add_collect_edge" in text
    assert isinstance(error, WorkflowExecutionError)  # what run() raises for a failed run


async def test_a_stream_reports_the_conflict_as_a_failed_run(runtime: Runtime) -> None:
    events = [e async for e in hand_written_reduce().run_stream(3, runtime=runtime)]
    failed = [e for e in events if isinstance(e, WorkflowFailedEvent)]
    assert len(failed) == 1
    assert "results" in failed[0].error
    assert "add_collect_edge" in failed[0].error


async def test_the_conflict_applies_nothing_and_keeps_the_last_checkpoint(
    runtime: Runtime,
) -> None:
    store = InMemoryCheckpointStore()
    with pytest.raises(SharedStateConflictError):
        await hand_written_reduce().run(3, runtime=runtime, checkpoint_store=store)
    [metadata] = await store.list()
    checkpoint = await store.load(metadata.id)
    assert checkpoint is not None
    assert checkpoint.superstep == 0  # the split's barrier; the map's superstep never applied
    assert checkpoint.shared_state == {}


async def test_the_same_reduce_with_a_collect_edge_keeps_every_branch(runtime: Runtime) -> None:
    @executor
    async def square(k: int, ctx: WorkflowContext[int]) -> None:
        await ctx.send_message(k * k)

    @executor
    async def total(squares: list[int], ctx: WorkflowContext[Never, list[int]]) -> None:
        await ctx.set_shared_state("results", squares)
        await ctx.yield_output(squares)

    workflow = (
        WorkflowBuilder()
        .set_start_executor(split)
        .add_edge(split, square)
        .add_collect_edge(square, total)
        .build()
    )
    result = await workflow.run(3, runtime=runtime)
    assert result.outputs == [[0, 1, 4]]


async def test_a_stateful_executor_handles_the_hand_written_reduce_one_message_at_a_time(
    runtime: Runtime,
) -> None:
    class Reduce(Executor):
        """Per-run state makes the executor sequential: each message sees the last write."""

        def __init__(self) -> None:
            super().__init__("reduce")
            self.seen = 0

        @handler
        async def take(self, k: int, ctx: WorkflowContext[Never, list[int]]) -> None:
            self.seen += 1
            done: list[int] = await ctx.get_shared_state("results", [])
            done = [*done, k * k]
            await ctx.set_shared_state("results", done)
            if len(done) == 3:
                await ctx.yield_output(done)

        def snapshot_state(self) -> Any:
            return self.seen

        def restore_state(self, state: Any) -> None:
            self.seen = state or 0

    reduce = Reduce()
    workflow = WorkflowBuilder().set_start_executor(split).add_edge(split, reduce).build()
    result = await workflow.run(3, runtime=runtime)
    assert result.outputs == [[0, 1, 4]]


async def test_branches_may_read_a_key_none_of_them_writes(runtime: Runtime) -> None:
    @executor
    async def seed(n: int, ctx: WorkflowContext[int]) -> None:
        await ctx.set_shared_state("factor", 10)
        for k in range(n):
            await ctx.send_message(k)

    @executor
    async def scale(k: int, ctx: WorkflowContext[Never, int]) -> None:
        await ctx.set_shared_state(f"scaled-{k}", k)  # one key per branch: no conflict
        await ctx.yield_output(k * await ctx.get_shared_state("factor"))

    workflow = WorkflowBuilder().set_start_executor(seed).add_edge(seed, scale).build()
    result = await workflow.run(3, runtime=runtime)
    assert result.outputs == [0, 10, 20]


async def test_blind_writes_by_branches_apply_in_delivery_order(runtime: Runtime) -> None:
    @executor
    async def last_seen(k: int, ctx: WorkflowContext[str]) -> None:
        await asyncio.sleep(0.001 * (3 - k))  # the last message finishes first
        await ctx.set_shared_state("last", k)
        await ctx.send_message("read")

    @executor
    async def report(_: list[str], ctx: WorkflowContext[Never, int]) -> None:
        await ctx.yield_output(await ctx.get_shared_state("last"))

    workflow = (
        WorkflowBuilder()
        .set_start_executor(split)
        .add_edge(split, last_seen)
        .add_collect_edge(last_seen, report)
        .build()
    )
    result = await workflow.run(3, runtime=runtime)
    assert result.outputs == [2]


# --- the invariant: no update is ever lost silently -------------------------------------------

KEYS = ("a", "b", "c")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.sampled_from(KEYS), unique=True), min_size=1, max_size=5))
def test_no_append_is_lost_whatever_keys_the_branches_touch(plan: list[list[str]]) -> None:
    """Branch ``i`` appends ``i`` to each key of ``plan[i]`` (read, append, write back). The run
    either keeps every append or fails with ``SharedStateConflictError`` on a key that two
    branches appended to; it fails exactly when such a key exists."""

    @executor
    async def fan(_: str, ctx: WorkflowContext[int]) -> None:
        for branch in range(len(plan)):
            await ctx.send_message(branch)

    @executor
    async def append(branch: int, ctx: WorkflowContext[str]) -> None:
        for key in plan[branch]:
            await asyncio.sleep(0)
            values: list[int] = await ctx.get_shared_state(key, [])
            await ctx.set_shared_state(key, [*values, branch])
        await ctx.send_message("done")

    @executor
    async def read_back(_: list[str], ctx: WorkflowContext[Never, dict[str, list[int]]]) -> None:
        await ctx.yield_output({key: await ctx.get_shared_state(key, []) for key in KEYS})

    workflow = (
        WorkflowBuilder()
        .set_start_executor(fan)
        .add_edge(fan, append)
        .add_collect_edge(append, read_back)
        .build()
    )
    appenders = {key: [b for b, keys in enumerate(plan) if key in keys] for key in KEYS}
    shared = {key for key, branches in appenders.items() if len(branches) > 1}
    multiple = len(plan) > 1

    async def run() -> None:
        if multiple and shared:
            with pytest.raises(SharedStateConflictError) as caught:
                await workflow.run("go")
            assert caught.value.key in shared
            return
        result = await workflow.run("go")
        [state] = result.outputs
        for key, branches in appenders.items():
            assert sorted(state[key]) == branches

    asyncio.run(run())
