"""Time travel: a run's checkpoint history, and new runs forked from any checkpoint of it."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentic_core import (
    CheckpointError,
    CheckpointStore,
    Executor,
    FileCheckpointStore,
    InMemoryCheckpointStore,
    InMemoryStateStore,
    Runtime,
    StateStoreCheckpointStore,
    Workflow,
    WorkflowBuilder,
    WorkflowContext,
    WorkflowRequestError,
    WorkflowRunState,
    handler,
    response_handler,
)

MOD = 991


class Step(Executor):
    """Appends its name to the shared list ``value`` (a LangGraph ``operator.add`` channel);
    the last step yields the list."""

    def __init__(self, id: str, *, last: bool = False) -> None:  # noqa: A002
        super().__init__(id)
        self.last = last

    @handler
    async def on(self, message: str, ctx: WorkflowContext[str, list[str]]) -> None:
        value = [*await ctx.get_shared_state("value", []), self.id]
        await ctx.set_shared_state("value", value)
        await ctx.send_message(message)
        if self.last:
            await ctx.yield_output(value)


def a_then_b(calls: list[str] | None = None) -> Workflow:
    class Recorded(Step):
        @handler
        async def on(self, message: str, ctx: WorkflowContext[str, list[str]]) -> None:
            if calls is not None:
                calls.append(self.id)
            await super().on(message, ctx)

    node_a, node_b = Recorded("node_a"), Recorded("node_b", last=True)
    return WorkflowBuilder("a-then-b").set_start_executor(node_a).add_edge(node_a, node_b).build()


async def _checkpoint_before(
    workflow: Workflow, run_id: str, store: CheckpointStore, executor_id: str
) -> str:
    """The id of the run's checkpoint whose next superstep runs ``executor_id``."""
    for metadata in await workflow.get_run_history(run_id, checkpoint_store=store):
        checkpoint = await store.load(metadata.id)
        assert checkpoint is not None
        if executor_id in checkpoint.pending_messages:
            return metadata.id
    raise AssertionError(f"no checkpoint before {executor_id}")


# --- LangGraph's time-travel tests (libs/langgraph/tests/test_time_travel_async.py), ported ---


async def test_replay_reruns_nodes_after_checkpoint() -> None:
    store = InMemoryCheckpointStore()
    calls: list[str] = []
    workflow = a_then_b(calls)
    result = await workflow.run("go", checkpoint_store=store)
    assert result.outputs == [["node_a", "node_b"]]
    assert calls == ["node_a", "node_b"]
    before_b = await _checkpoint_before(workflow, result.run_id, store, "node_b")
    calls.clear()
    replay = await workflow.run(checkpoint_id=before_b, checkpoint_store=store)
    assert replay.outputs == [["node_a", "node_b"]]
    assert calls == ["node_b"]


async def test_fork_reruns_with_modified_state() -> None:
    store = InMemoryCheckpointStore()
    calls: list[str] = []
    workflow = a_then_b(calls)
    original = await workflow.run("go", checkpoint_store=store)
    before_b = await _checkpoint_before(workflow, original.run_id, store, "node_b")
    calls.clear()
    fork = await workflow.run(
        checkpoint_id=before_b,
        checkpoint_store=store,
        fork=True,
        update_state={"value": ["node_a", "x"]},
    )
    assert calls == ["node_b"]
    assert fork.outputs == [["node_a", "x", "node_b"]]
    assert fork.run_id != original.run_id


async def test_multiple_forks_from_same_checkpoint() -> None:
    store = InMemoryCheckpointStore()
    workflow = a_then_b()
    original = await workflow.run("go", checkpoint_store=store)
    before_b = await _checkpoint_before(workflow, original.run_id, store, "node_b")
    first = await workflow.run(
        checkpoint_id=before_b, checkpoint_store=store, fork=True, update_state={"value": ["f1"]}
    )
    second = await workflow.run(
        checkpoint_id=before_b, checkpoint_store=store, fork=True, update_state={"value": ["f2"]}
    )
    assert first.outputs == [["f1", "node_b"]]
    assert second.outputs == [["f2", "node_b"]]
    assert len({original.run_id, first.run_id, second.run_id}) == 3


class AskHuman(Executor):
    """``interrupt("What is your input?")`` of the LangGraph test."""

    @handler
    async def on(self, message: str, ctx: WorkflowContext[str, list[str]]) -> None:
        await ctx.request_info("What is your input?", str)

    @response_handler
    async def answered(
        self, question: str, answer: str, ctx: WorkflowContext[str, list[str]]
    ) -> None:
        del question
        value = [*await ctx.get_shared_state("value", []), f"human:{answer}"]
        await ctx.set_shared_state("value", value)
        await ctx.send_message(answer)


async def test_fork_from_before_interrupt_refires() -> None:
    store = InMemoryCheckpointStore()
    node_a, ask, node_b = Step("node_a"), AskHuman("ask_human"), Step("node_b", last=True)
    workflow = (
        WorkflowBuilder("interrupt")
        .set_start_executor(node_a)
        .add_edge(node_a, ask)
        .add_edge(ask, node_b)
        .with_checkpointing(store)
        .build()
    )
    paused = await workflow.run("go")
    [request] = paused.pending_requests
    done = await workflow.run(responses={request.request_id: "hello"})
    assert done.outputs == [["node_a", "human:hello", "node_b"]]
    before_ask = await _checkpoint_before(workflow, paused.run_id, store, "ask_human")
    fork = await workflow.run(
        checkpoint_id=before_ask, fork=True, update_state={"value": ["forked"]}
    )
    assert fork.status is WorkflowRunState.IDLE_WITH_PENDING_REQUESTS
    [refired] = fork.pending_requests
    assert refired.data == "What is your input?"
    assert refired.run_id == fork.run_id
    final = await workflow.run(responses={refired.request_id: "world"})
    assert final.outputs == [["forked", "human:world", "node_b"]]


# --- history, lineage, and what a fork leaves untouched ----------------------------------------


async def test_history_is_oldest_first_and_a_fork_records_its_parent() -> None:
    store = InMemoryCheckpointStore()
    workflow = a_then_b()
    original = await workflow.run("go", checkpoint_store=store)
    history = await workflow.get_run_history(original.run_id, checkpoint_store=store)
    assert [m.superstep for m in history] == [0, 1]
    assert all(m.parent_checkpoint_id is None for m in history)
    fork = await workflow.run(checkpoint_id=history[0].id, checkpoint_store=store, fork=True)
    fork_history = await workflow.get_run_history(fork.run_id, checkpoint_store=store)
    assert fork_history[0].parent_checkpoint_id == history[0].id
    assert all(m.parent_checkpoint_id is None for m in fork_history[1:])
    assert await workflow.get_run_history(original.run_id, checkpoint_store=store) == history


async def test_a_fork_from_a_paused_checkpoint_is_itself_resumable_from_its_store() -> None:
    store = InMemoryCheckpointStore()
    workflow = WorkflowBuilder().set_start_executor(AskHuman("ask")).build()
    paused = await workflow.run("go", checkpoint_store=store)
    fork = await workflow.run(
        checkpoint_id=paused.last_checkpoint_id, checkpoint_store=store, fork=True
    )
    assert fork.status is WorkflowRunState.IDLE_WITH_PENDING_REQUESTS
    assert fork.last_checkpoint_id is not None
    [request] = fork.pending_requests
    again = WorkflowBuilder().set_start_executor(AskHuman("ask")).build()  # "another process"
    with pytest.raises(WorkflowRequestError, match="unknown request"):
        await again.run(responses={request.request_id: "x"})
    done = await again.run(
        checkpoint_id=fork.last_checkpoint_id,
        checkpoint_store=store,
        responses={request.request_id: "x"},
    )
    assert done.run_id == fork.run_id


async def test_fork_arguments_are_checked() -> None:
    store = InMemoryCheckpointStore()
    workflow = a_then_b()
    original = await workflow.run("go", checkpoint_store=store)
    with pytest.raises(ValueError, match="update_state edits a fork"):
        await workflow.run(
            checkpoint_id=original.last_checkpoint_id,
            checkpoint_store=store,
            update_state={"value": []},
        )
    with pytest.raises(ValueError, match="pass checkpoint_id="):
        await workflow.run("go", fork=True)
    with pytest.raises(CheckpointError, match="no checkpoint store"):
        await workflow.get_run_history(original.run_id)
    with pytest.raises(WorkflowRequestError, match=r"update_state\['value'\]"):
        await workflow.run(
            checkpoint_id=original.last_checkpoint_id,
            checkpoint_store=store,
            fork=True,
            update_state={"value": object()},
        )


@pytest.fixture(params=["memory", "file", "state-store"])
def any_store(request: pytest.FixtureRequest, tmp_path: Path) -> CheckpointStore:
    if request.param == "memory":
        return InMemoryCheckpointStore()
    if request.param == "file":
        return FileCheckpointStore(tmp_path / "checkpoints")
    return StateStoreCheckpointStore(InMemoryStateStore())


async def test_time_travel_works_with_every_checkpoint_store(
    any_store: CheckpointStore, runtime: Runtime
) -> None:
    workflow = a_then_b()
    original = await workflow.run("go", checkpoint_store=any_store, runtime=runtime)
    history = await workflow.get_run_history(original.run_id, checkpoint_store=any_store)
    fork = await workflow.run(
        checkpoint_id=history[0].id,
        checkpoint_store=any_store,
        fork=True,
        update_state={"value": ["edited"]},
        runtime=runtime,
    )
    assert fork.outputs == [["edited", "node_b"]]
    [first, *_] = await workflow.get_run_history(fork.run_id, checkpoint_store=any_store)
    assert first.parent_checkpoint_id == history[0].id


async def test_a_listing_shows_which_checkpoints_wait_for_an_answer(
    any_store: CheckpointStore,
) -> None:
    workflow = WorkflowBuilder().set_start_executor(AskHuman("ask")).build()
    paused = await workflow.run("go", checkpoint_store=any_store)
    [request] = paused.pending_requests
    done = await workflow.run(
        checkpoint_id=paused.last_checkpoint_id,
        checkpoint_store=any_store,
        responses={request.request_id: "yes"},
    )
    listing = await any_store.list(run_id=done.run_id)
    waiting = [m for m in listing if m.pending_request_ids]
    assert [m.pending_request_ids for m in waiting] == [[request.request_id]]
    assert listing[-1].pending_request_ids == []


# --- the property: a fork replays the original, an edit reaches only the fork ----------------


class Node(Executor):
    """Yields (id, value, bias) where ``bias`` is read from shared state; sends the value on."""

    def __init__(self, id: str, mul: int) -> None:  # noqa: A002
        super().__init__(id)
        self.mul = mul

    @handler
    async def on(self, n: int, ctx: WorkflowContext[int, tuple[str, int, int]]) -> None:
        bias = await ctx.get_shared_state("bias", 0)
        value = (n * self.mul + bias) % MOD
        await ctx.yield_output((self.id, value, bias))
        await ctx.send_message(value)


@dataclass(frozen=True)
class Shape:
    muls: tuple[int, ...]
    edges: tuple[tuple[int, int], ...]


@st.composite
def shapes(draw: st.DrawFn) -> Shape:
    n = draw(st.integers(2, 6))
    edges = {(draw(st.integers(0, i - 1)), i) for i in range(1, n)}
    for _ in range(draw(st.integers(0, n))):
        source = draw(st.integers(0, n - 2))
        edges.add((source, draw(st.integers(source + 1, n - 1))))
    return Shape(tuple(draw(st.integers(1, 50)) for _ in range(n)), tuple(sorted(edges)))


def build(shape: Shape) -> Workflow:
    nodes = [Node(f"n{i}", mul) for i, mul in enumerate(shape.muls)]
    builder = WorkflowBuilder("time-travel").set_start_executor(nodes[0])
    for source, target in shape.edges:
        builder.add_edge(nodes[source], nodes[target])
    return builder.build()


async def _check_forks(shape: Shape, message: int, bias: int) -> None:
    store = InMemoryCheckpointStore()
    workflow = build(shape)
    original = await workflow.run(message, checkpoint_store=store)
    history = await workflow.get_run_history(original.run_id, checkpoint_store=store)
    assert [m.superstep for m in history] == list(range(original.superstep_count))
    for metadata in history:
        checkpoint = await store.load(metadata.id)
        assert checkpoint is not None
        after = original.outputs[checkpoint.outputs_so_far :]
        fork = await workflow.run(checkpoint_id=metadata.id, checkpoint_store=store, fork=True)
        assert fork.outputs == after
        edited = await workflow.run(
            checkpoint_id=metadata.id,
            checkpoint_store=store,
            fork=True,
            update_state={"bias": bias},
        )
        assert [b for _, _, b in edited.outputs] == [bias] * len(after)
        assert [node for node, _, _ in edited.outputs] == [node for node, _, _ in after]
    # The original is untouched: the same history, and it still resumes to the same outputs.
    assert await workflow.get_run_history(original.run_id, checkpoint_store=store) == history
    first = await store.load(history[0].id)
    assert first is not None
    replay = await workflow.run(checkpoint_id=first.id, checkpoint_store=store)
    assert replay.outputs == original.outputs[first.outputs_so_far :]


@settings(
    max_examples=30, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(shape=shapes(), message=st.integers(0, MOD - 1), bias=st.integers(1, 100))
def test_a_fork_replays_the_original_and_an_edit_reaches_only_the_fork(
    shape: Shape, message: int, bias: int
) -> None:
    asyncio.run(_check_forks(shape, message, bias))


def test_outputs_reference_is_deterministic() -> None:
    shape = Shape((3, 5, 7), ((0, 1), (0, 2), (1, 2)))
    first: Any = asyncio.run(build(shape).run(4))
    second: Any = asyncio.run(build(shape).run(4))
    assert first.outputs == second.outputs
    assert all(isinstance(o, tuple) for o in first.outputs)


@pytest.mark.parametrize("message", [0, 1])
async def test_a_fork_of_the_last_checkpoint_runs_nothing_and_outputs_nothing(message: int) -> None:
    store = InMemoryCheckpointStore()
    workflow = build(Shape((2, 3), ((0, 1),)))
    original = await workflow.run(message, checkpoint_store=store)
    fork = await workflow.run(
        checkpoint_id=original.last_checkpoint_id, checkpoint_store=store, fork=True
    )
    assert fork.outputs == []
    assert fork.status is WorkflowRunState.COMPLETED
