"""A worker that cannot store a task's result (the server away) tries for ``ack_wait_s``, then
hands the task back to the queue (``nak``, logged) for a later delivery: never forever, never
acked without a stored result. Doubles stand in for JetStream and the task message."""

from __future__ import annotations

import asyncio
import time
from types import SimpleNamespace
from typing import Any, cast

import pytest
import structlog
from bus_graphs import pipeline

from agentic_bus import PoolSettings, Worker
from agentic_bus._task_wire import TaskMessage
from agentic_core import BusError, Invocation

SETTINGS = PoolSettings(ack_wait_s=0.3)
RESULT_SUBJECT = "agentic.result.r.1.start.1"


class AwayJetStream:
    """Every publish times out, as while nats-server is down."""

    def __init__(self) -> None:
        self.publishes = 0

    async def publish(self, subject: str, payload: bytes, **options: Any) -> None:
        del subject, payload, options
        self.publishes += 1
        raise TimeoutError("nats: timeout")


class TaskMsg:
    """A delivered task: its body, and how the worker settled it."""

    def __init__(self, task: TaskMessage) -> None:
        self.data = task.model_dump_json().encode()
        self.subject = "agentic.task.pool.r.1.start"
        self.headers: dict[str, str] = {}
        self.metadata = SimpleNamespace(num_delivered=1)
        self.settled: list[str] = []

    async def ack(self) -> None:
        self.settled.append("ack")

    async def nak(self, delay: float | None = None) -> None:
        del delay
        self.settled.append("nak")

    async def term(self) -> None:
        self.settled.append("term")

    async def in_progress(self) -> None:
        pass


def _task(worker: Worker, *, fingerprint: str | None = None) -> TaskMessage:
    workflow = worker.workflow
    invocation = Invocation(
        run_id="r", workflow_id=workflow.name, superstep=1, executor_id="start",
        messages=[1], shared_state={},
    )  # fmt: skip
    return TaskMessage(
        task_id=invocation.invocation_id,
        run_id="r",
        workflow_name=workflow.name,
        fingerprint=fingerprint or workflow.fingerprint(),
        result_subject=RESULT_SUBJECT,
        invocation=workflow.type_registry.encode(invocation.to_data()),
    )


async def _handle(worker: Worker, msg: TaskMsg) -> AwayJetStream:
    js = AwayJetStream()
    async with asyncio.timeout(10):  # the old loop retried forever
        await worker._handle(cast("Any", js), cast("Any", None), cast("Any", msg))  # pyright: ignore[reportPrivateUsage]
    return js


async def test_storing_a_result_gives_up_after_ack_wait() -> None:
    worker = Worker(pipeline(), settings=SETTINGS)
    js = AwayJetStream()
    started = time.monotonic()

    with pytest.raises(BusError, match=r"ack_wait_s=0\.3 s .*TimeoutError"):
        await worker._store_result(cast("Any", js), RESULT_SUBJECT, b"{}", structlog.get_logger())  # pyright: ignore[reportPrivateUsage]

    assert 0.25 <= time.monotonic() - started < 3.0
    assert js.publishes > 1  # retried with backoff before giving up


async def test_a_result_that_cannot_be_stored_hands_the_task_back() -> None:
    worker = Worker(pipeline(), settings=SETTINGS)
    msg = TaskMsg(_task(worker))

    js = await _handle(worker, msg)

    assert js.publishes > 1  # the executor ran; its result was tried until ack_wait passed
    assert msg.settled == ["nak"]  # back to the queue, not acked: a later delivery stores it
    assert worker.tasks_done == 0


async def test_an_incompatible_result_that_cannot_be_stored_hands_the_task_back() -> None:
    worker = Worker(pipeline(), settings=SETTINGS)
    msg = TaskMsg(_task(worker, fingerprint="0" * 64))

    js = await _handle(worker, msg)

    assert js.publishes > 1
    assert msg.settled == ["nak"]  # not terminated: the refusal must reach the coordinator
