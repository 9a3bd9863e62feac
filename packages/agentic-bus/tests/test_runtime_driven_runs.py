"""``workflow.run(..., runtime=NatsRuntime(...))`` (and ``run_stream``) is the durable run of
``NatsRuntime.run``: claimed, committed to NATS KV every superstep, logged; each of
``workflow.run``'s keywords either keeps its meaning there or fails naming what to call
(in-process workers, a real nats-server)."""

from __future__ import annotations

import pytest
from bus_graphs import approval, pipeline
from worker_tasks import SETTINGS, workers

from agentic_bus import NatsCheckpointStore, NatsRuntime
from agentic_core import (
    BusError,
    CheckpointError,
    Durability,
    InMemoryCheckpointStore,
    WorkflowOutputEvent,
    WorkflowRunState,
    WorkflowStartedEvent,
)


@pytest.mark.parametrize("form", ["run", "run_stream"])
async def test_workflow_run_on_a_nats_runtime_commits_and_fences_every_superstep(
    nats_server: str, form: str
) -> None:
    workflow = pipeline()
    local = await workflow.run(1)
    async with (
        workers(workflow, nats_server, n=1),
        NatsRuntime(nats_server, settings=SETTINGS, worker_wait_s=5) as runtime,
    ):
        if form == "run":
            result = await workflow.run(1, runtime=runtime)
            outputs, run_id = result.outputs, result.run_id
        else:
            events = [e async for e in workflow.run_stream(1, runtime=runtime)]
            outputs = [e.data for e in events if isinstance(e, WorkflowOutputEvent)]
            (run_id,) = {e.run_id for e in events if isinstance(e, WorkflowStartedEvent)}
        committed = await runtime.committed_outputs(workflow, run_id)
    async with NatsCheckpointStore(nats_server) as store:
        head = await store.head(run_id)
    assert outputs == committed == local.outputs
    assert head is not None
    assert head.epoch == 1  # claimed by its coordinator
    assert head.superstep == local.superstep_count - 1  # committed up to the last superstep


async def test_a_checkpoint_store_other_than_the_runtimes_own_is_refused(
    nats_server: str,
) -> None:
    workflow = pipeline()
    async with NatsRuntime(nats_server, settings=SETTINGS, worker_wait_s=5) as runtime:
        with pytest.raises(ValueError, match=r"drop checkpoint_store=") as caught:
            await workflow.run(1, runtime=runtime, checkpoint_store=InMemoryCheckpointStore())
        with pytest.raises(ValueError, match=r"drop checkpoint_store="):
            async for _ in workflow.run_stream(
                1, runtime=runtime, checkpoint_store=InMemoryCheckpointStore()
            ):
                pass
        async with workers(workflow, nats_server, n=1):
            own = await runtime.checkpoint_store()
            result = await workflow.run(1, runtime=runtime, checkpoint_store=own)
    assert "InMemoryCheckpointStore" in str(caught.value)
    assert result.outputs == (await workflow.run(1)).outputs


@pytest.mark.parametrize("durability", ["async", "exit"])
async def test_a_durability_other_than_sync_is_refused_naming_sync(
    nats_server: str, durability: Durability
) -> None:
    workflow = pipeline()
    refused = r"supports only durability='sync'"
    async with NatsRuntime(nats_server, settings=SETTINGS, worker_wait_s=5) as runtime:
        with pytest.raises(ValueError, match=refused):
            await workflow.run(1, runtime=runtime, durability=durability)
        with pytest.raises(ValueError, match=refused):
            async for _ in workflow.run_stream(1, runtime=runtime, durability=durability):
                pass
        with pytest.raises(ValueError, match=refused):
            await runtime.resume(workflow, "any-run", durability=durability)
        async with workers(workflow, nats_server, n=1):
            result = await workflow.run(1, runtime=runtime, durability="sync")
            history = await (await runtime.checkpoint_store()).list(run_id=result.run_id)
    assert result.outputs == (await workflow.run(1)).outputs
    assert [m.superstep for m in history] == list(range(result.superstep_count))


async def test_checkpoint_id_resumes_the_run_from_its_last_commit_only(nats_server: str) -> None:
    workflow = approval()
    async with (
        workers(workflow, nats_server, n=1) as pool,
        NatsRuntime(nats_server, settings=SETTINGS, worker_wait_s=5) as runtime,
    ):
        paused = await workflow.run("ship it", runtime=runtime)
        (request,) = paused.pending_requests
        answer = {request.request_id: True}
        history = await (await runtime.checkpoint_store()).list(run_id=paused.run_id)
        older = history[0].id
        with pytest.raises(CheckpointError, match=r"NatsRuntime\.resume.*fork=True"):
            await workflow.run(checkpoint_id=older, responses=answer, runtime=runtime)
        done = await workflow.run(
            checkpoint_id=paused.last_checkpoint_id, responses=answer, runtime=runtime
        )
        committed = await runtime.committed_outputs(workflow, paused.run_id)
    assert paused.status is WorkflowRunState.IDLE_WITH_PENDING_REQUESTS
    assert done.status is WorkflowRunState.COMPLETED
    assert done.run_id == paused.run_id
    assert [*paused.outputs, *done.outputs] == ["draft: ship it", "publish SHIP IT? yes"]
    assert committed == [*paused.outputs, *done.outputs]
    assert sum(w.tasks_done for w in pool) == 3  # drafter, approver, its answer: all on workers


async def test_a_fork_is_a_new_durable_run_from_an_earlier_commit(nats_server: str) -> None:
    workflow = pipeline()
    expected = (await workflow.run(1)).outputs
    async with (
        workers(workflow, nats_server, n=1),
        NatsRuntime(nats_server, settings=SETTINGS, worker_wait_s=5) as runtime,
    ):
        original = await workflow.run(1, runtime=runtime)
        store = await runtime.checkpoint_store()
        (second,) = [m for m in await store.list(run_id=original.run_id) if m.superstep == 2]
        checkpoint = await store.load(second.id)
        assert checkpoint is not None
        forked = await workflow.run(checkpoint_id=second.id, fork=True, runtime=runtime)
        committed = await runtime.committed_outputs(workflow, forked.run_id)
    assert forked.run_id != original.run_id
    assert forked.outputs == committed == expected[checkpoint.outputs_so_far :]


@pytest.mark.parametrize("how", ["send_responses", "run(responses=, runtime=)"])
async def test_responses_to_a_run_paused_here_go_on_through_the_nats_runtime(
    nats_server: str, how: str
) -> None:
    workflow = approval()
    async with (
        workers(workflow, nats_server, n=1) as pool,
        NatsRuntime(nats_server, settings=SETTINGS, worker_wait_s=5) as runtime,
    ):
        paused = await workflow.run("ship it", runtime=runtime)
        answer = {paused.pending_requests[0].request_id: False}
        if how == "send_responses":
            done = await workflow.send_responses(answer)
        else:
            done = await workflow.run(responses=answer, runtime=runtime)
        committed = await runtime.committed_outputs(workflow, paused.run_id)
    assert done.status is WorkflowRunState.COMPLETED
    assert committed == ["draft: ship it", "publish SHIP IT? no"]
    assert sum(w.tasks_done for w in pool) == 3  # the answer ran on a worker, not here


async def test_responses_without_the_paused_run_name_natsruntime_resume(nats_server: str) -> None:
    async with NatsRuntime(nats_server, settings=SETTINGS, worker_wait_s=5) as runtime:
        with pytest.raises(ValueError, match=r"NatsRuntime\.resume\(workflow, run_id"):
            await runtime.run(approval(), responses={"some-request": True})


async def test_answering_a_run_whose_runtime_closed_names_natsruntime_resume(
    nats_server: str,
) -> None:
    workflow = approval()
    async with (
        workers(workflow, nats_server, n=1),
        NatsRuntime(nats_server, settings=SETTINGS, worker_wait_s=5) as runtime,
    ):
        paused = await workflow.run("ship it", runtime=runtime)
    with pytest.raises(BusError, match=r"NatsRuntime\.resume\(workflow, run_id"):
        await workflow.send_responses({paused.pending_requests[0].request_id: True})
