"""A task whose invocation was tampered with on the wire (malformed tagged data) is refused by
the first worker that takes it: no redelivery, and the run fails at once naming serialization
(a real nats-server; the coordinator's own task is swapped in the stream before a worker runs)."""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

import pytest
from bus_graphs import Blob, Echo
from nats.js.client import JetStreamContext

from agentic_bus import NatsRuntime, PoolSettings, Worker
from agentic_bus._subjects import subject_token
from agentic_bus._task_wire import TaskResultMessage
from agentic_core import Workflow, WorkflowBuilder, WorkflowExecutionError

SETTINGS = PoolSettings(ack_wait_s=1.0, max_deliver=3)
TASKS = "AGENTIC_TASKS"


async def _queued_task_subject(js: JetStreamContext, pool: str) -> str:
    """The subject of the one task the coordinator queued for ``pool`` (waited for, 10 s)."""
    for _ in range(200):
        info = await js.stream_info(TASKS, subjects_filter=f"agentic.task.{subject_token(pool)}.>")
        if info.state.subjects:
            return next(iter(info.state.subjects))
        await asyncio.sleep(0.05)
    raise AssertionError(f"the coordinator queued no task for pool {pool}")


async def _tamper(js: JetStreamContext, subject: str, invocation: dict[str, Any]) -> str:
    """Swap the queued task on ``subject`` for a copy whose invocation is ``invocation``;
    returns its result subject."""
    queued = await js.get_last_msg(TASKS, subject)
    task = json.loads(queued.data or b"")
    task["invocation"] = invocation
    assert queued.seq is not None
    await js.delete_msg(TASKS, queued.seq)
    await js.publish(subject, json.dumps(task).encode())  # no Nats-Msg-Id: not a duplicate
    return str(task["result_subject"])


async def test_a_tampered_task_is_refused_on_first_delivery_and_fails_the_run(
    nats_server: str,
) -> None:
    # A workflow of its own name: its own pool, so the consumer counts this test's deliveries.
    workflow: Workflow = (
        WorkflowBuilder(f"tampered-{uuid.uuid4().hex[:8]}").set_start_executor(Echo("echo")).build()
    )
    async with NatsRuntime(nats_server, settings=SETTINGS, worker_wait_s=30) as runtime:
        js = (await runtime.client()).jetstream()
        running = asyncio.create_task(workflow.run(Blob(text="x"), runtime=runtime))
        pool = runtime.pool_for(workflow, "echo")
        subject = await _queued_task_subject(js, pool)
        queued = json.loads((await js.get_last_msg(TASKS, subject)).data or b"")
        invocation = queued["invocation"] | {"messages": [{"$t": "dict", "v": "xx"}]}
        result_subject = await _tamper(js, subject, invocation)
        worker = Worker(workflow, nats_server, settings=SETTINGS)
        serving = asyncio.create_task(worker.run())
        try:
            with pytest.raises(WorkflowExecutionError, match="SerializationError") as caught:
                await asyncio.wait_for(running, 20)
            await asyncio.sleep(3 * SETTINGS.ack_wait_s)  # long enough for any redelivery
            consumer = next(
                c for c in await js.consumers_info(TASKS) if c.config.filter_subject
                and subject_token(pool) in c.config.filter_subject
            )  # fmt: skip
            stored = await js.get_last_msg("AGENTIC_RESULTS", result_subject)
        finally:
            worker.stop()
            await serving
    result = TaskResultMessage.model_validate_json(stored.data or b"")
    assert result.status == "incompatible"
    assert result.delivery == 1
    assert consumer.delivered is not None
    assert consumer.delivered.consumer_seq == 1  # delivered once, never again
    assert consumer.num_redelivered == 0
    assert consumer.num_ack_pending == 0
    assert worker.tasks_done == 0
    assert "malformed serialized data" in str(caught.value)
    assert "'dict' value must be a list" in str(caught.value)
    assert caught.value.executor_id == "echo"
