"""Runs of one Workflow are isolated, whatever an executor's restore_state does with its state.

MAF samples keep executor state the way ``Seen`` below does: ``snapshot_state`` returns the
live attribute and ``restore_state`` keeps the object it is given, without a copy. The engine
must never hand one run's (or one attempt's) state object to another, so ``LocalRuntime`` and
``SerializingRuntime`` always agree.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, Never

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentic_core import (
    Executor,
    InMemoryCheckpointStore,
    LocalRuntime,
    RetryPolicy,
    Runtime,
    SerializingRuntime,
    Workflow,
    WorkflowBuilder,
    WorkflowContext,
    handler,
)

MOD = 997


class Seen(Executor):
    """Keeps every number it saw, the MAF way: no copy in restore_state."""

    def __init__(self, id: str, retry: RetryPolicy | None = None) -> None:  # noqa: A002
        super().__init__(id, retry=retry)
        self.seen: list[int] = []

    def snapshot_state(self) -> Any:
        return {"seen": self.seen}

    def restore_state(self, state: Any) -> None:
        self.seen = state["seen"]

    @handler
    async def on_number(self, n: int, ctx: WorkflowContext[Never, list[int]]) -> None:
        self.seen.append(n)
        await ctx.yield_output(list(self.seen))


async def test_two_runs_of_one_workflow_do_not_share_executor_state(runtime: Runtime) -> None:
    workflow = WorkflowBuilder().set_start_executor(Seen("seen")).build()
    first = await workflow.run(1, runtime=runtime)
    second = await workflow.run(2, runtime=runtime)
    assert first.outputs == [[1]]
    assert second.outputs == [[2]]


async def test_concurrent_runs_do_not_share_executor_state(runtime: Runtime) -> None:
    workflow = WorkflowBuilder().set_start_executor(Seen("seen")).build()
    results = await asyncio.gather(*(workflow.run(n, runtime=runtime) for n in range(20)))
    assert [r.outputs for r in results] == [[[n]] for n in range(20)]


async def test_the_executor_object_keeps_its_constructed_state() -> None:
    seen = Seen("seen")
    workflow = WorkflowBuilder().set_start_executor(seen).build()
    await workflow.run(1)
    assert seen.seen == []


class Flaky(Seen):
    """Appends to its state, then fails on its first attempt: a retry must start clean."""

    @handler
    async def on_number(self, n: int, ctx: WorkflowContext[Never, list[int]]) -> None:
        self.seen.append(n)
        if ctx.attempt == 1:
            raise RuntimeError("first attempt fails after touching its state")
        await ctx.yield_output(list(self.seen))


async def test_a_failed_attempt_leaves_no_trace_in_executor_state(runtime: Runtime) -> None:
    workflow = (
        WorkflowBuilder().set_start_executor(Flaky("flaky", retry=RetryPolicy(max_attempts=2)))
    ).build()
    assert (await workflow.run(5, runtime=runtime)).outputs == [[5]]


async def test_a_resumed_run_keeps_its_state_and_a_new_one_starts_fresh() -> None:
    store = InMemoryCheckpointStore()

    class Counter(Seen):
        @handler
        async def on_number(self, n: int, ctx: WorkflowContext[int, list[int]]) -> None:
            self.seen.append(n)
            await ctx.yield_output(list(self.seen))
            if n < 3:
                await ctx.send_message(n + 1)

    counter = Counter("counter")
    workflow = WorkflowBuilder().set_start_executor(counter).add_edge(counter, counter).build()
    done = await workflow.run(1, checkpoint_store=store)
    assert done.outputs == [[1], [1, 2], [1, 2, 3]]
    [first, *_] = await store.list(run_id=done.run_id)
    resumed = await workflow.run(checkpoint_id=first.id, checkpoint_store=store)
    assert resumed.outputs == [[1, 2], [1, 2, 3]]
    assert (await workflow.run(1)).outputs == [[1], [1, 2], [1, 2, 3]]


# --- The property: random graphs of stateful executors, runs in sequence and at once -------------


class Accumulator(Executor):
    """Adds each number to its running list; yields and sends a digest of the list."""

    def __init__(self, id: str, *, aliasing: bool, factor: int) -> None:  # noqa: A002
        super().__init__(id)
        self.aliasing = aliasing
        self.factor = factor
        self.seen: list[int] = []

    def snapshot_state(self) -> Any:
        return {"seen": self.seen}

    def restore_state(self, state: Any) -> None:
        self.seen = state["seen"] if self.aliasing else list(state["seen"])

    @handler
    async def on_number(self, n: int, ctx: WorkflowContext[int, tuple[str, list[int]]]) -> None:
        self.seen.append(n)
        await ctx.yield_output((self.id, list(self.seen)))
        await ctx.send_message((sum(self.seen) * self.factor + n) % MOD)


@dataclass(frozen=True)
class Shape:
    aliasing: tuple[bool, ...]
    factors: tuple[int, ...]
    edges: tuple[tuple[int, int], ...]  # forward edges only: every run ends


@st.composite
def shapes(draw: st.DrawFn) -> Shape:
    n = draw(st.integers(2, 6))
    # Every node gets an edge from an earlier one (all reachable), plus a few more forward edges.
    edges = {(draw(st.integers(0, i - 1)), i) for i in range(1, n)}
    for _ in range(draw(st.integers(0, n))):
        source = draw(st.integers(0, n - 2))
        edges.add((source, draw(st.integers(source + 1, n - 1))))
    return Shape(
        aliasing=tuple(draw(st.booleans()) for _ in range(n)),
        factors=tuple(draw(st.integers(1, 50)) for _ in range(n)),
        edges=tuple(sorted(edges)),
    )


def build(shape: Shape) -> Workflow:
    nodes = [
        Accumulator(f"n{i}", aliasing=alias, factor=factor)
        for i, (alias, factor) in enumerate(zip(shape.aliasing, shape.factors, strict=True))
    ]
    builder = WorkflowBuilder("isolation", max_supersteps=50).set_start_executor(nodes[0])
    for node in nodes:
        builder.add_executor(node)
    for source, target in shape.edges:
        builder.add_edge(nodes[source], nodes[target])
    return builder.build()


async def _outputs(
    workflow: Workflow, inputs: list[int], runtime: Runtime, *, at_once: bool
) -> Any:
    if at_once:
        results = await asyncio.gather(*(workflow.run(n, runtime=runtime) for n in inputs))
    else:
        results = [await workflow.run(n, runtime=runtime) for n in inputs]
    return [r.outputs for r in results]


@settings(
    max_examples=40, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(shape=shapes(), inputs=st.lists(st.integers(0, MOD - 1), min_size=2, max_size=5))
def test_runtimes_agree_and_runs_are_isolated_on_random_stateful_graphs(
    shape: Shape, inputs: list[int]
) -> None:
    # The reference: each input alone, on a workflow built for it.
    expected = [asyncio.run(_outputs(build(shape), [n], LocalRuntime(), at_once=False))[0]
                for n in inputs]  # fmt: skip
    for runtime in (LocalRuntime(), SerializingRuntime()):
        workflow = build(shape)
        assert asyncio.run(_outputs(workflow, inputs, runtime, at_once=False)) == expected
        assert asyncio.run(_outputs(workflow, inputs, runtime, at_once=True)) == expected


@pytest.mark.parametrize("aliasing", [True, False])
async def test_a_stateful_executor_handles_a_supersteps_messages_in_delivery_order(
    aliasing: bool, runtime: Runtime
) -> None:
    class Source(Executor):
        @handler
        async def fan(self, n: int, ctx: WorkflowContext[int]) -> None:
            for k in range(4):
                await ctx.send_message(n + k)

    acc = Accumulator("acc", aliasing=aliasing, factor=1)
    source = Source("source")
    workflow = WorkflowBuilder().set_start_executor(source).add_edge(source, acc).build()
    result = await workflow.run(10, runtime=runtime)
    assert result.outputs == [
        ("acc", [10]),
        ("acc", [10, 11]),
        ("acc", [10, 11, 12]),
        ("acc", [10, 11, 12, 13]),
    ]
