"""One superstep of a ``NatsRuntime`` on the wire: its tasks out, their first results back.

1. subscribe to the superstep's result subjects (before publishing, on the same connection, so
   no result can be missed);
2. publish one task per invocation (``Nats-Msg-Id`` = the invocation id: a re-published
   superstep is deduplicated while its tasks are queued); a run seen for the first time by
   the runtime first collects results already stored (a coordinator resumed mid-superstep);
3. wait for one result per task: the first stored result wins (workers publish with
   "expected last subject sequence 0"); results missed on the core subscription are read back
   from the stream every second; a task that exhausted ``max_deliver`` (poison) fails the run
   naming the executor; no worker on the pool for ``worker_wait_s`` fails it naming the pool.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
import uuid
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import structlog
from nats.aio.client import Client as NatsClient
from nats.aio.msg import Msg
from nats.js.client import JetStreamContext
from nats.js.errors import NotFoundError

from agentic_bus._errors import NoWorkerError
from agentic_bus._kv._blobs import BLOB_THRESHOLD, Blobs
from agentic_bus._pool import PoolSettings, consumer_name
from agentic_bus._streams import (
    ADVISORIES_STREAM,
    RESULTS_STREAM,
    TASKS_STREAM,
    max_deliveries_advisory,
)
from agentic_bus._subjects import Subjects, subject_token
from agentic_bus._task_wire import TaskMessage, TaskResultMessage
from agentic_core import Invocation, InvocationResult, WorkflowExecutionError, WorkflowGraph

__all__ = ["Coordinator", "Gather"]

_log = structlog.get_logger("agentic_bus.runtime")
_POLL_S = 1.0


class Coordinator(Protocol):
    """What a superstep needs of the runtime that coordinates it (a ``NatsRuntime``)."""

    @property
    def subjects(self) -> Subjects: ...

    @property
    def settings(self) -> PoolSettings: ...

    @property
    def worker_wait_s(self) -> float: ...

    async def client(self) -> NatsClient: ...


class Gather:
    """One superstep on the wire: its tasks out, their first results back."""

    def __init__(
        self,
        runtime: Coordinator,
        js: JetStreamContext,
        blobs: Blobs,
        workflow: WorkflowGraph,
        invocations: Sequence[Invocation],
        pools: dict[str, str],
        trace_headers: Mapping[str, str],
        advisory_cursors: dict[tuple[str, str], int],
    ) -> None:
        self.runtime = runtime
        self.advisory_cursors = advisory_cursors
        """Per (pool, run): the last AGENTIC_ADVISORIES sequence read (the runtime's, shared)."""
        self.js = js
        self.blobs = blobs
        self.workflow = workflow
        self.invocations = list(invocations)
        self.pools = pools
        self.trace_headers = trace_headers
        """``traceparent``/``tracestate`` for every task message; empty when telemetry is off."""
        self.run_id = invocations[0].run_id
        self.superstep = invocations[0].superstep
        loop = asyncio.get_running_loop()
        self.waiting: dict[str, asyncio.Future[TaskResultMessage]] = {
            inv.invocation_id: loop.create_future() for inv in invocations
        }
        self.by_task = {inv.invocation_id: inv for inv in invocations}
        self.failure: asyncio.Future[BaseException] = loop.create_future()
        self.subscriptions: list[Any] = []
        self.last_progress = time.monotonic()
        subjects = runtime.subjects
        self.result_subjects = {
            inv.invocation_id: subjects.result(
                self.run_id, self.superstep, inv.executor_id, inv.attempt, inv.index
            )
            for inv in invocations
        }

    async def subscribe(self) -> None:
        client = await self.runtime.client()
        subjects = self.runtime.subjects
        pattern = subjects.superstep_results(self.run_id, self.superstep)
        self.subscriptions.append(await client.subscribe(pattern, cb=self._on_result))  # pyright: ignore[reportUnknownMemberType]
        for pool in set(self.pools.values()):
            advisory = max_deliveries_advisory(consumer_name(pool, subjects))
            self.subscriptions.append(await client.subscribe(advisory, cb=self._on_advisory))  # pyright: ignore[reportUnknownMemberType]
        if any(inv.live is not None for inv in self.invocations):
            live = subjects.live_all(self.run_id)
            self.subscriptions.append(await client.subscribe(live, cb=self._on_live))  # pyright: ignore[reportUnknownMemberType]

    async def unsubscribe(self) -> None:
        for subscription in self.subscriptions:
            with contextlib.suppress(Exception):
                await subscription.unsubscribe()

    async def collect_stored(self) -> None:
        js = self.js
        await asyncio.gather(*(self._read_stored(js, task_id) for task_id in self.waiting))
        await self._scan_advisories(js)

    async def publish_missing(
        self, *, fresh_ids: bool = False, pools: set[str] | None = None
    ) -> None:
        js = self.js
        subjects = self.runtime.subjects
        registry = self.workflow.type_registry
        fingerprint = self.workflow.fingerprint()
        publishes: list[Any] = []
        for inv in self.invocations:
            task_id = inv.invocation_id
            if self.waiting[task_id].done():
                continue
            if pools is not None and self.pools[inv.executor_id] not in pools:
                continue
            encoded = registry.encode(inv.to_data())
            task = TaskMessage(
                task_id=task_id, run_id=self.run_id, workflow_name=self.workflow.name,
                fingerprint=fingerprint, invocation=encoded, live=inv.live is not None,
                result_subject=self.result_subjects[task_id],
            )  # fmt: skip
            body = task.model_dump_json().encode()
            if len(body) > BLOB_THRESHOLD:
                data = json.dumps(encoded, separators=(",", ":")).encode()
                ref = await self.blobs.put(
                    f"task.{subject_token(self.run_id)}.{uuid.uuid4().hex}", data
                )
                body = (
                    task.model_copy(update={"invocation": None, "blob": ref})
                    .model_dump_json()
                    .encode()
                )
            subject = subjects.task(
                self.pools[inv.executor_id], self.run_id, self.superstep, inv.executor_id
            )
            msg_id = f"{task_id}:{uuid.uuid4().hex[:8]}" if fresh_ids else task_id
            headers = {"Nats-Msg-Id": msg_id}
            if self.trace_headers:
                headers.update(self.trace_headers)
            publishes.append(js.publish(subject, body, headers=headers))
        if publishes:
            await asyncio.gather(*publishes)

    async def wait(self) -> list[InvocationResult]:
        js = self.js
        pending = {f for f in self.waiting.values() if not f.done()}
        while pending:
            done, pending = await asyncio.wait(
                pending | {self.failure}, timeout=_POLL_S, return_when=asyncio.FIRST_COMPLETED
            )
            if self.failure.done():
                raise self.failure.result()
            pending.discard(self.failure)
            if done:
                self.last_progress = time.monotonic()
                continue
            missing = [t for t, f in self.waiting.items() if not f.done()]
            await asyncio.gather(*(self._read_stored(js, task_id) for task_id in missing))
            await self._scan_advisories(js)
            if self.failure.done():
                raise self.failure.result()
            pending = {f for f in self.waiting.values() if not f.done()}
            if pending and time.monotonic() - self.last_progress > self.runtime.worker_wait_s:
                await self._check_workers(js)
        return [await self._decode(inv) for inv in self.invocations]

    # -- callbacks and helpers ------------------------------------------------------------------

    def _accept(self, data: bytes) -> None:
        try:
            message = TaskResultMessage.model_validate_json(data)
        except ValueError:
            _log.warning("runtime_bad_result", run=self.run_id)
            return
        future = self.waiting.get(message.task_id)
        if future is None or future.done():
            return  # another superstep's, or a duplicate (first result wins)
        if message.status == "incompatible":
            inv = self.by_task[message.task_id]
            self._fail(
                WorkflowExecutionError(
                    f"executor {inv.executor_id!r} in superstep {self.superstep} cannot run on "
                    f"worker {message.worker_id}: {message.error}",
                    executor_id=inv.executor_id,
                    superstep=self.superstep,
                )
            )
            return
        future.set_result(message)

    async def _on_result(self, msg: Msg) -> None:
        self._accept(msg.data)

    async def _read_stored(self, js: JetStreamContext, task_id: str) -> None:
        if self.waiting[task_id].done():
            return
        try:
            stored = await js.get_last_msg(RESULTS_STREAM, self.result_subjects[task_id])
        except NotFoundError:
            return
        except Exception as exc:  # noqa: BLE001 - the server is away: the next poll retries
            _log.debug("runtime_poll_failed", error=repr(exc))
            return
        if stored.data:
            self._accept(stored.data)

    async def _on_advisory(self, msg: Msg) -> None:
        await self._poisoned(msg.data)

    async def _scan_advisories(self, js: JetStreamContext) -> None:
        """Advisories stored while nobody listened (this coordinator was down): read once."""
        cursors = self.advisory_cursors
        for pool in set(self.pools.values()):
            subject = max_deliveries_advisory(consumer_name(pool, self.runtime.subjects))
            key = (pool, self.run_id)
            while True:
                try:
                    stored = await js.get_msg(  # pyright: ignore[reportUnknownMemberType]
                        ADVISORIES_STREAM, seq=cursors.get(key, 0) + 1, next=True, subject=subject
                    )
                except NotFoundError:
                    break
                except Exception as exc:  # noqa: BLE001 - the server is away: next poll
                    _log.debug("runtime_advisories_unreadable", error=repr(exc))
                    return
                cursors[key] = stored.seq or cursors.get(key, 0) + 1
                if len(cursors) > 4096:  # bounded like _Recent: a forgotten run rescans once
                    del cursors[next(iter(cursors))]
                await self._poisoned(stored.data or b"")

    async def _poisoned(self, data: bytes) -> None:
        """A max-deliveries advisory: fail the run if it names one of this superstep's tasks."""
        try:
            advisory = json.loads(data)
            sequence = int(advisory["stream_seq"])
            deliveries = int(advisory.get("deliveries", 0))
        except (ValueError, KeyError, TypeError):
            return
        js = self.js
        try:
            stored = await js.get_msg(TASKS_STREAM, sequence)
            task = TaskMessage.model_validate_json(stored.data or b"")
        except Exception:  # noqa: BLE001 - gone already, or not a task of ours
            return
        inv = self.by_task.get(task.task_id)
        if inv is None or self.waiting[task.task_id].done():
            return
        with contextlib.suppress(Exception):
            await js.delete_msg(TASKS_STREAM, sequence)
        max_deliver = self.runtime.settings.max_deliver
        self._fail(
            WorkflowExecutionError(
                f"executor {inv.executor_id!r} in superstep {self.superstep} crashed or hung "
                f"its worker {deliveries or max_deliver} times (max_deliver={max_deliver}); "
                f"task {task.task_id} was removed from the queue",
                executor_id=inv.executor_id,
                superstep=self.superstep,
            )
        )

    async def _on_live(self, msg: Msg) -> None:
        try:
            data = json.loads(msg.data)
            executor_id = data["executor_id"]
            event = self.workflow.type_registry.decode(data["event"])
        except Exception:  # noqa: BLE001 - best effort: a broken update is dropped
            return
        for inv in self.invocations:
            if inv.executor_id == executor_id and inv.live is not None:
                inv.live(event)
                return

    def _fail(self, error: BaseException) -> None:
        if not self.failure.done():
            self.failure.set_result(error)

    async def _check_workers(self, js: JetStreamContext) -> None:
        """No progress for ``worker_wait_s``: no worker on a pool is an error; idle workers
        with nothing queued or in flight mean our tasks are gone (purged by a cancelled
        coordinator, whose message ids still dedupe a re-publish): publish them afresh."""
        lost: list[str] = []
        for pool in sorted(set(self.pools.values())):
            try:
                info = await js.consumer_info(
                    TASKS_STREAM, consumer_name(pool, self.runtime.subjects)
                )
            except Exception:  # noqa: BLE001 - the server is away: an outage is not "no worker"
                return
            if info.num_waiting or info.num_ack_pending:
                if info.num_waiting and not info.num_ack_pending and not info.num_pending:
                    lost.append(pool)
                continue
            executors = sorted(e for e, p in self.pools.items() if p == pool)
            raise NoWorkerError(
                f"no worker serves pool {pool!r} (executors {', '.join(executors)} of workflow "
                f"{self.workflow.name!r}, superstep {self.superstep}): nothing took its tasks for "
                f"{self.runtime.worker_wait_s:g} s; start one with Worker(...) or "
                f"`agentic-worker MODULE:FACTORY --nats URL`",
                executor_id=executors[0] if executors else None,
                superstep=self.superstep,
            )
        self.last_progress = time.monotonic()  # workers are there, busy or idle
        if lost:
            _log.warning("runtime_tasks_republished", run=self.run_id, pools=lost)
            await self.publish_missing(fresh_ids=True, pools=set(lost))

    async def _decode(self, inv: Invocation) -> InvocationResult:
        message = self.waiting[inv.invocation_id].result()
        encoded: Any = message.result
        if message.blob is not None:
            encoded = json.loads(await self.blobs.get(message.blob))
        return InvocationResult.from_data(self.workflow.type_registry.decode(encoded))
