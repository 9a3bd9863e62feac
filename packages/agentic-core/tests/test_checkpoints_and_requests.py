"""Checkpoints at every barrier, resume, human-in-the-loop requests, nested workflows."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Never

import pytest
from pydantic import BaseModel

from agentic_core import (
    CheckpointError,
    Executor,
    FileCheckpointStore,
    IncompatibleCheckpointError,
    InMemoryCheckpointStore,
    RequestInfoEvent,
    Runtime,
    SubWorkflowExecutor,
    WorkflowBuilder,
    WorkflowContext,
    WorkflowRequestError,
    WorkflowRunState,
    executor,
    handler,
    response_handler,
)


class Approval(BaseModel):
    approved: bool
    comment: str = ""


def counting_chain(n: int, *, max_value: int = 5) -> tuple[Any, ...]:
    @executor
    async def step(value: int, ctx: WorkflowContext[int, int]) -> None:
        await ctx.yield_output(value)
        await ctx.set_shared_state("last", value)
        if value < max_value:
            await ctx.send_message(value + 1)

    workflow = WorkflowBuilder(f"count{n}").set_start_executor(step).add_edge(step, step).build()
    return (workflow,)


async def test_a_checkpoint_is_saved_at_every_barrier(runtime: Runtime) -> None:
    (workflow,) = counting_chain(1)
    store = InMemoryCheckpointStore()
    result = await workflow.run(0, checkpoint_store=store, runtime=runtime)
    assert result.outputs == [0, 1, 2, 3, 4, 5]
    listed = await store.list(run_id=result.run_id)
    assert [m.superstep for m in listed] == [0, 1, 2, 3, 4, 5]
    assert result.last_checkpoint_id == listed[-1].id
    first = await store.load(listed[0].id)
    assert first is not None
    assert first.workflow_fingerprint == workflow.fingerprint()
    assert first.outputs_so_far == 1
    assert first.shared_state == {"last": 0}


async def test_resuming_from_every_checkpoint_yields_exactly_the_remaining_outputs(
    runtime: Runtime,
) -> None:
    (workflow,) = counting_chain(2)
    store = InMemoryCheckpointStore()
    full = await workflow.run(0, checkpoint_store=store, runtime=runtime)
    for meta in await store.list(run_id=full.run_id):
        checkpoint = await store.load(meta.id)
        assert checkpoint is not None
        resumed = await workflow.run(checkpoint_id=meta.id, checkpoint_store=store, runtime=runtime)
        assert resumed.run_id == full.run_id
        assert full.outputs[: checkpoint.outputs_so_far] + resumed.outputs == full.outputs


async def test_resume_rejects_a_message_and_a_checkpoint_together() -> None:
    (workflow,) = counting_chain(3)
    with pytest.raises(ValueError, match="not both"):
        await workflow.run(1, checkpoint_id="x", checkpoint_store=InMemoryCheckpointStore())


async def test_resume_from_an_unknown_checkpoint_is_an_error() -> None:
    (workflow,) = counting_chain(4)
    with pytest.raises(CheckpointError, match="no checkpoint with id 'nope'"):
        await workflow.run(checkpoint_id="nope", checkpoint_store=InMemoryCheckpointStore())
    with pytest.raises(CheckpointError, match="no checkpoint store"):
        await workflow.run(checkpoint_id="nope")


async def test_a_checkpoint_of_another_graph_is_incompatible() -> None:
    (workflow,) = counting_chain(5)
    store = InMemoryCheckpointStore()
    result = await workflow.run(0, checkpoint_store=store)

    @executor
    async def other(value: int, ctx: WorkflowContext[int, int]) -> None:
        del value, ctx

    different = WorkflowBuilder("count5").set_start_executor(other).build()
    assert different.fingerprint() != workflow.fingerprint()
    with pytest.raises(IncompatibleCheckpointError, match="different graph"):
        await different.run(checkpoint_id=result.last_checkpoint_id, checkpoint_store=store)


async def test_a_corrupt_checkpoint_file_fails_clearly_and_runs_nothing(tmp_path: Path) -> None:
    (workflow,) = counting_chain(6)
    store = FileCheckpointStore(tmp_path)
    result = await workflow.run(0, checkpoint_store=store)
    files = list(tmp_path.rglob("*.json"))
    assert files
    for path in files:
        path.write_text(path.read_text()[:20])
    with pytest.raises(CheckpointError, match=r"\.json"):
        await workflow.run(checkpoint_id=result.last_checkpoint_id, checkpoint_store=store)


async def test_fingerprint_is_stable_and_names_the_shape() -> None:
    (a,) = counting_chain(7)
    (b,) = counting_chain(7)
    assert a.fingerprint() == b.fingerprint()
    assert a.id == b.id


class Reviewer(Executor):
    """Asks a human to approve each draft; yields the verdict."""

    @handler
    async def review(self, draft: str, ctx: WorkflowContext[Never, str]) -> None:
        await ctx.request_info(draft, Approval)

    @response_handler
    async def on_answer(
        self, draft: str, answer: Approval, ctx: WorkflowContext[Never, str]
    ) -> None:
        await ctx.yield_output(f"{draft}: {'approved' if answer.approved else 'rejected'}")


async def test_a_request_pauses_the_run_and_send_responses_resumes_it(runtime: Runtime) -> None:
    workflow = WorkflowBuilder().set_start_executor(Reviewer("reviewer")).build()
    paused = await workflow.run("draft-1", runtime=runtime)
    assert paused.status is WorkflowRunState.IDLE_WITH_PENDING_REQUESTS
    [request] = paused.pending_requests
    assert (request.source_executor_id, request.data, request.response_type) == (
        "reviewer", "draft-1", Approval,
    )  # fmt: skip
    assert request in paused.events
    done = await workflow.send_responses({request.request_id: Approval(approved=True)})
    assert done.status is WorkflowRunState.COMPLETED
    assert done.outputs == ["draft-1: approved"]
    assert done.run_id == paused.run_id


async def test_a_response_given_as_a_dict_is_validated_into_the_model() -> None:
    workflow = WorkflowBuilder().set_start_executor(Reviewer("reviewer")).build()
    paused = await workflow.run("d")
    request_id = paused.pending_requests[0].request_id
    with pytest.raises(WorkflowRequestError, match="must be Approval, got str"):
        await workflow.send_responses({request_id: "yes"})
    done = await workflow.send_responses({request_id: {"approved": False}})
    assert done.outputs == ["d: rejected"]


async def test_an_unknown_request_id_is_an_error_naming_it() -> None:
    workflow = WorkflowBuilder().set_start_executor(Reviewer("reviewer")).build()
    await workflow.run("d")
    with pytest.raises(WorkflowRequestError, match="'not-a-request'"):
        await workflow.send_responses({"not-a-request": Approval(approved=True)})


async def test_paused_runs_resume_from_their_checkpoint_with_responses(runtime: Runtime) -> None:
    store = InMemoryCheckpointStore()
    workflow = (
        WorkflowBuilder().set_start_executor(Reviewer("reviewer")).with_checkpointing(store).build()
    )
    paused = await workflow.run("d", runtime=runtime)
    request_id = paused.pending_requests[0].request_id
    assert paused.last_checkpoint_id is not None
    checkpoint = await store.load(paused.last_checkpoint_id)
    assert checkpoint is not None
    assert checkpoint.pending_requests
    # A "fresh process": another Workflow object built the same way.
    again = (
        WorkflowBuilder().set_start_executor(Reviewer("reviewer")).with_checkpointing(store).build()
    )
    with pytest.raises(WorkflowRequestError, match="'wrong'"):
        await again.run(checkpoint_id=paused.last_checkpoint_id, responses={"wrong": True})
    done = await again.run(
        checkpoint_id=paused.last_checkpoint_id,
        responses={request_id: Approval(approved=True)},
        runtime=runtime,
    )
    assert done.outputs == ["d: approved"]
    assert done.run_id == paused.run_id


async def test_request_ids_are_stable_across_resumes() -> None:
    store = InMemoryCheckpointStore()
    workflow = WorkflowBuilder().set_start_executor(Reviewer("reviewer")).build()
    paused = await workflow.run("d", checkpoint_store=store)
    checkpoint_id = paused.last_checkpoint_id
    assert checkpoint_id is not None
    checkpoint = await store.load(checkpoint_id)
    assert checkpoint is not None
    assert [r["$t"] for r in checkpoint.pending_requests] == ["agentic_core.RequestInfoEvent"]
    [request] = paused.pending_requests
    assert checkpoint.pending_requests[0]["v"]["request_id"] == request.request_id


async def test_a_checkpoint_tagged_with_an_old_private_module_path_still_resumes() -> None:
    # agentic-core 0.1.0 tagged its own classes with their private module paths.
    store = InMemoryCheckpointStore()
    workflow = WorkflowBuilder().set_start_executor(Reviewer("reviewer")).build()
    paused = await workflow.run("d", checkpoint_store=store)
    assert paused.last_checkpoint_id is not None
    checkpoint = await store.load(paused.last_checkpoint_id)
    assert checkpoint is not None
    old = [
        dict(data, **{"$t": "agentic_core.graph._events.RequestInfoEvent"})
        for data in checkpoint.pending_requests
    ]
    await store.save(checkpoint.model_copy(update={"id": "old", "pending_requests": old}))
    [request] = paused.pending_requests
    done = await workflow.run(
        checkpoint_id="old",
        checkpoint_store=store,
        responses={request.request_id: Approval(approved=True)},
    )
    assert done.outputs == ["d: approved"]


async def test_a_sub_workflow_sends_child_outputs_on(runtime: Runtime) -> None:
    @executor
    async def child_double(n: int, ctx: WorkflowContext[Never, int]) -> None:
        await ctx.yield_output(n * 2)
        await ctx.yield_output(n * 3)

    child = WorkflowBuilder("child").set_start_executor(child_double).build()

    @executor
    async def collect(n: int, ctx: WorkflowContext[Never, int]) -> None:
        await ctx.yield_output(n)

    sub = SubWorkflowExecutor(child, id="sub")
    parent = WorkflowBuilder("parent").set_start_executor(sub).add_edge(sub, collect).build()
    result = await parent.run(5, runtime=runtime)
    assert result.outputs == [10, 15]


async def test_child_requests_surface_in_the_parent_and_answers_resume_the_child(
    runtime: Runtime,
) -> None:
    child = WorkflowBuilder("child").set_start_executor(Reviewer("reviewer")).build()

    @executor
    async def collect(text: str, ctx: WorkflowContext[Never, str]) -> None:
        await ctx.yield_output(f"parent got {text}")

    sub = SubWorkflowExecutor(child, id="sub")
    store = InMemoryCheckpointStore()
    parent = WorkflowBuilder("parent").set_start_executor(sub).add_edge(sub, collect).build()
    paused = await parent.run("essay", checkpoint_store=store, runtime=runtime)
    assert paused.status is WorkflowRunState.IDLE_WITH_PENDING_REQUESTS
    [request] = paused.pending_requests
    assert isinstance(request, RequestInfoEvent)
    assert (request.source_executor_id, request.data) == ("sub", "essay")
    done = await parent.run(
        checkpoint_id=paused.last_checkpoint_id,
        checkpoint_store=store,
        responses={request.request_id: Approval(approved=True)},
        runtime=runtime,
    )
    assert done.outputs == ["parent got essay: approved"]


class Draft(BaseModel):
    text: str
    revision: int


async def test_a_checkpoint_with_tampered_values_fails_as_checkpoint_error() -> None:
    @executor
    async def revise(draft: Draft, ctx: WorkflowContext[Draft, Draft]) -> None:
        if draft.revision < 2:
            await ctx.send_message(Draft(text=draft.text, revision=draft.revision + 1))
        else:
            await ctx.yield_output(draft)

    workflow = WorkflowBuilder("tamper").set_start_executor(revise).add_edge(revise, revise).build()
    store = InMemoryCheckpointStore()
    result = await workflow.run(Draft(text="t", revision=0), checkpoint_store=store)
    first = (await store.list(run_id=result.run_id))[0]
    checkpoint = await store.load(first.id)
    assert checkpoint is not None
    [message] = checkpoint.pending_messages["revise"]
    message["v"]["revision"] = "not a number"
    unknown = checkpoint.model_copy(
        update={"id": "tampered", "pending_messages": {"revise": [message]}}
    )
    await store.save(unknown)
    with pytest.raises(CheckpointError, match=r"'tampered' of run .* cannot be decoded"):
        await workflow.run(checkpoint_id="tampered", checkpoint_store=store)
    renamed = dict(message, **{"$t": "somewhere.Else"})
    await store.save(
        checkpoint.model_copy(update={"id": "renamed", "pending_messages": {"revise": [renamed]}})
    )
    with pytest.raises(CheckpointError, match=r"'somewhere.Else'"):
        await workflow.run(checkpoint_id="renamed", checkpoint_store=store)
