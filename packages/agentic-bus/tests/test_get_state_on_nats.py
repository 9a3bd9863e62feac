"""``Workflow.get_state`` of runs a ``NatsRuntime`` drove (core's run-driver path): read from
NATS KV by another ``Workflow`` object and another store client, as from any checkpoint store
(in-process workers, a real nats-server)."""

from __future__ import annotations

from bus_graphs import approval, pipeline
from worker_tasks import SETTINGS, workers

from agentic_bus import NatsCheckpointStore, NatsRuntime


async def test_a_run_driven_on_nats_reads_back_completed_with_its_outputs(
    nats_server: str,
) -> None:
    workflow = pipeline()
    local = await workflow.run(1)
    async with (
        workers(workflow, nats_server, n=1),
        NatsRuntime(nats_server, settings=SETTINGS, worker_wait_s=5) as runtime,
    ):
        result = await workflow.run(1, runtime=runtime)

    async with NatsCheckpointStore(nats_server) as store:
        state = await pipeline().get_state(result.run_id, checkpoint_store=store)

    assert state.status == "completed"
    assert state.outputs == result.outputs == local.outputs
    assert state.last_superstep == local.superstep_count - 1


async def test_a_run_paused_on_nats_reads_back_waiting_with_its_request(
    nats_server: str,
) -> None:
    workflow = approval()
    async with (
        workers(workflow, nats_server, n=1),
        NatsRuntime(nats_server, settings=SETTINGS, worker_wait_s=5) as runtime,
    ):
        paused = await workflow.run("ship it", runtime=runtime)

    async with NatsCheckpointStore(nats_server) as store:
        state = await approval().get_state(paused.run_id, checkpoint_store=store)

    assert state.status == "waiting"
    assert [r.request_id for r in state.pending_requests] == [
        r.request_id for r in paused.pending_requests
    ]
    assert state.outputs == paused.outputs
