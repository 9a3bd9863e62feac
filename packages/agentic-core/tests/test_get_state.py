"""``Workflow.get_state``: where a stored run stands, read from the checkpoint store alone by
a new ``Workflow`` object (LangGraph's ``graph.get_state(config)``), and the run's outputs
stored, bounded, in the checkpoint that ends each call."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Never

import pytest
from pydantic import BaseModel

from agentic_core import (
    Checkpoint,
    CheckpointError,
    CheckpointStore,
    Executor,
    FileCheckpointStore,
    InMemoryCheckpointStore,
    RunSnapshot,
    Workflow,
    WorkflowBuilder,
    WorkflowContext,
    WorkflowExecutionError,
    executor,
    handler,
    response_handler,
    stored_run_status,
)
from agentic_core.graph import _run_state


class Note(BaseModel):
    text: str


class Step(Executor):
    """Counts in shared state, yields a note, passes the turn on (the last one does not)."""

    def __init__(self, id: str, *, last: bool = False) -> None:  # noqa: A002
        super().__init__(id)
        self.last = last

    @handler
    async def on(self, message: str, ctx: WorkflowContext[str, Note]) -> None:
        await ctx.set_shared_state("seen", [*await ctx.get_shared_state("seen", []), self.id])
        await ctx.yield_output(Note(text=f"{self.id}: {message}"))
        if not self.last:
            await ctx.send_message(message)


class Approve(Executor):
    """Asks a person; yields their verdict."""

    @handler
    async def ask(self, message: str, ctx: WorkflowContext[Never, Note]) -> None:
        await ctx.request_info(f"publish {message}?", bool)

    @response_handler
    async def answered(self, asked: str, ok: bool, ctx: WorkflowContext[Never, Note]) -> None:
        await ctx.yield_output(Note(text="published" if ok else "dropped"))


def three_steps() -> Workflow:
    one, two, three = Step("step_1"), Step("step_2"), Step("step_3", last=True)
    return (
        WorkflowBuilder("three_steps")
        .set_start_executor(one)
        .add_edge(one, two)
        .add_edge(two, three)
        .build()
    )


def step_then_approve() -> Workflow:
    write, approve = Step("write"), Approve("approve")
    return WorkflowBuilder("approve").set_start_executor(write).add_edge(write, approve).build()


@pytest.fixture(params=["memory", "file"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> CheckpointStore:
    return InMemoryCheckpointStore() if request.param == "memory" else FileCheckpointStore(tmp_path)


async def test_a_finished_run_reads_back_in_a_new_workflow(store: CheckpointStore) -> None:
    result = await three_steps().run("hi", checkpoint_store=store)

    state = await three_steps().get_state(result.run_id, checkpoint_store=store)

    assert isinstance(state, RunSnapshot)
    assert state.status == "completed"
    assert state.last_superstep == 2
    assert state.next_executors == []
    assert state.outputs == result.outputs == [
        Note(text="step_1: hi"), Note(text="step_2: hi"), Note(text="step_3: hi")
    ]  # fmt: skip
    assert (state.outputs_count, state.outputs_left_out) == (3, 0)
    assert state.pending_requests == []
    assert state.shared_state == {"seen": ["step_1", "step_2", "step_3"]}
    assert state.checkpoint_id == result.last_checkpoint_id


async def test_a_waiting_run_shows_its_requests_and_outputs_so_far(
    store: CheckpointStore,
) -> None:
    paused = await step_then_approve().run("essay", checkpoint_store=store)

    state = await step_then_approve().get_state(paused.run_id, checkpoint_store=store)

    assert state.status == "waiting"
    assert [r.request_id for r in state.pending_requests] == [
        r.request_id for r in paused.pending_requests
    ]
    assert state.pending_requests[0].data == "publish essay?"
    assert state.outputs == [Note(text="write: essay")]
    assert state.shared_state == {"seen": ["write"]}


async def test_outputs_of_every_call_are_stored_when_a_resumed_run_ends(
    store: CheckpointStore,
) -> None:
    paused = await step_then_approve().run("essay", checkpoint_store=store)
    request_id = paused.pending_requests[0].request_id
    before = await step_then_approve().get_state(paused.run_id, checkpoint_store=store)
    await step_then_approve().run(
        checkpoint_id=before.checkpoint_id, checkpoint_store=store, responses={request_id: True}
    )

    state = await step_then_approve().get_state(paused.run_id, checkpoint_store=store)

    assert state.status == "completed"
    assert state.outputs == [Note(text="write: essay"), Note(text="published")]
    assert state.pending_requests == []


async def test_a_run_answered_in_the_same_process_keeps_its_earlier_outputs() -> None:
    store = InMemoryCheckpointStore()
    workflow = step_then_approve()
    paused = await workflow.run("essay", checkpoint_store=store)
    await workflow.send_responses({paused.pending_requests[0].request_id: False})

    state = await step_then_approve().get_state(paused.run_id, checkpoint_store=store)

    assert state.outputs == [Note(text="write: essay"), Note(text="dropped")]


async def test_an_interrupted_run_shows_what_runs_next(store: CheckpointStore) -> None:
    with pytest.raises(WorkflowExecutionError):
        await three_steps().run("hi", checkpoint_store=store, max_supersteps=2)
    (run_id,) = {c.run_id for c in await store.list()}

    state = await three_steps().get_state(run_id, checkpoint_store=store)

    assert state.status == "interrupted"
    assert state.last_superstep == 1
    assert state.next_executors == ["step_3"]
    assert (state.outputs, state.outputs_count, state.outputs_left_out) == ([], 2, 2)
    assert state.shared_state == {"seen": ["step_1", "step_2"]}


async def test_an_unknown_run_is_an_error_naming_it() -> None:
    with pytest.raises(CheckpointError, match="no-such-run"):
        await three_steps().get_state("no-such-run", checkpoint_store=InMemoryCheckpointStore())


async def test_the_workflows_own_store_is_used_by_default() -> None:
    store = InMemoryCheckpointStore()
    one = Step("only", last=True)
    build: Callable[[], Workflow] = lambda: (  # noqa: E731
        WorkflowBuilder("own").set_start_executor(one).with_checkpointing(store).build()
    )
    result = await build().run("x")

    assert (await build().get_state(result.run_id)).outputs == [Note(text="only: x")]


# -- the stored outputs are bounded -------------------------------------------------------------


def counting(n: int) -> Workflow:
    @executor(id="count")
    async def count(message: str, ctx: WorkflowContext[Never, int]) -> None:
        for i in range(n):
            await ctx.yield_output(i)

    return WorkflowBuilder("count").set_start_executor(count).build()


async def test_only_the_newest_outputs_are_stored_past_the_count_cap() -> None:
    store = InMemoryCheckpointStore()
    result = await counting(130).run("go", checkpoint_store=store)

    state = await counting(130).get_state(result.run_id, checkpoint_store=store)

    assert state.outputs == list(range(30, 130))
    assert (state.outputs_count, state.outputs_left_out) == (130, 30)


async def test_only_the_newest_outputs_are_stored_past_the_byte_cap(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_run_state, "CHECKPOINT_OUTPUTS_MAX_BYTES", 11)
    store = InMemoryCheckpointStore()
    result = await counting(20).run("go", checkpoint_store=store)

    state = await counting(20).get_state(result.run_id, checkpoint_store=store)

    assert state.outputs == [15, 16, 17, 18, 19]  # five two-byte numbers, ten bytes
    assert state.outputs_left_out == 15


async def test_a_checkpoint_written_before_outputs_were_stored_still_reads() -> None:
    store = InMemoryCheckpointStore()
    result = await three_steps().run("hi", checkpoint_store=store)
    latest = await store.latest(result.run_id)
    assert latest is not None
    old = {k: v for k, v in latest.model_dump(mode="json").items() if k != "outputs"}
    await store.save(Checkpoint.model_validate(old))

    state = await three_steps().get_state(result.run_id, checkpoint_store=store)

    assert state.status == "completed"
    assert (state.outputs, state.outputs_count, state.outputs_left_out) == ([], 3, 3)


async def test_only_the_checkpoint_ending_a_call_stores_outputs() -> None:
    store = InMemoryCheckpointStore()
    result = await three_steps().run("hi", checkpoint_store=store)

    loaded = [await store.load(c.id) for c in await store.list(run_id=result.run_id)]

    assert [c.outputs is not None for c in loaded if c is not None] == [False, False, True]


def test_the_status_rule_reads_a_checkpoint_alone() -> None:
    base = Checkpoint(
        id="c", workflow_id="w", workflow_name="w", run_id="r", superstep=0,
        workflow_fingerprint="f",
    )  # fmt: skip

    assert stored_run_status(base) == "completed"
    assert stored_run_status(base.model_copy(update={"pending_messages": {"a": [1]}})) == (
        "interrupted"
    )
    assert stored_run_status(base.model_copy(update={"pending_requests": [{}]})) == "waiting"


# -- LangGraph's tests/test_interruption.py, ported ---------------------------------------------


class Noop(Executor):
    @handler
    async def on(self, message: dict[str, str], ctx: WorkflowContext[dict[str, str]]) -> None:
        await ctx.send_message(message)


class End(Executor):
    @handler
    async def on(self, message: dict[str, str], ctx: WorkflowContext[Never, Never]) -> None:
        del message, ctx


def noop_graph() -> Workflow:
    step_1, step_2, step_3 = Noop("step_1"), Noop("step_2"), End("step_3")
    return (
        WorkflowBuilder("noop")
        .set_start_executor(step_1)
        .add_edge(step_1, step_2)
        .add_edge(step_2, step_3)
        .build()
    )


async def test_interruption_without_state_updates() -> None:
    """Test interruption without state updates. This test confirms that
    interrupting doesn't require a state key having been updated in the prev step.

    LangGraph's ``interrupt_after="*"`` stops after each node; ours stops a run at a
    superstep budget (``max_supersteps``, counted across resumes), then resumes it from its
    latest checkpoint. One checkpoint per superstep: LangGraph's counts with
    ``durability="exit"`` (no input checkpoint)."""
    store = InMemoryCheckpointStore()
    graph = noop_graph()
    initial_input = {"input": "hello world"}

    with pytest.raises(WorkflowExecutionError):
        await graph.run(initial_input, checkpoint_store=store, max_supersteps=1)
    (run_id,) = {c.run_id for c in await store.list()}
    state = await graph.get_state(run_id, checkpoint_store=store)
    assert state.next_executors == ["step_2"]
    assert len(await graph.get_run_history(run_id, checkpoint_store=store)) == 1

    with pytest.raises(WorkflowExecutionError):
        await graph.run(checkpoint_id=state.checkpoint_id, checkpoint_store=store, max_supersteps=2)
    state = await graph.get_state(run_id, checkpoint_store=store)
    assert state.next_executors == ["step_3"]
    assert len(await graph.get_run_history(run_id, checkpoint_store=store)) == 2

    await graph.run(checkpoint_id=state.checkpoint_id, checkpoint_store=store, max_supersteps=3)
    state = await graph.get_state(run_id, checkpoint_store=store)
    assert state.next_executors == []
    assert state.status == "completed"
    assert len(await graph.get_run_history(run_id, checkpoint_store=store)) == 3
