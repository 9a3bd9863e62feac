"""Worker: runs a workflow's executor invocations taken from its pool's work queue.

Per task: decode, refuse a task of another graph or protocol, or one that does not decode
(tampered: ``SerializationError``), at once (``incompatible`` + ``term``, never retried),
skip a redelivered task whose result is already stored, heartbeat (``in_progress``) while the
executor runs, store the result on its own subject with "expected last subject sequence 0"
(the first result of a task wins, forever), and only then ack. A worker killed at any point
loses nothing: the task comes back after ``ack_wait`` and another worker runs it. A result that
cannot be stored within ``ack_wait`` (the server away that long) is not waited for forever: the
task is handed back (``nak``, logged) and a later delivery runs it again.

The invocation runs under the trace context of the task's headers (when telemetry is on here
and the coordinator sent one), so its spans continue the coordinator's trace.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import time
import uuid
from collections.abc import Callable
from typing import Any

import structlog
from nats.aio.client import Client as NatsClient
from nats.aio.msg import Msg
from nats.js.client import JetStreamContext
from nats.js.errors import BadRequestError, NotFoundError
from pydantic import BaseModel

from agentic_bus._connect import DEFAULT_NATS_URL, connect_nats, flush_ordered
from agentic_bus._kv._blobs import BLOB_THRESHOLD, Blobs
from agentic_bus._nats_errors import describe_error
from agentic_bus._pool import PoolSettings, consumer_name, ensure_pool_consumer, pool_of
from agentic_bus._streams import RESULTS_STREAM, TASKS_STREAM, declare_streams
from agentic_bus._subjects import Subjects
from agentic_bus._task_wire import PROTOCOL_VERSION, TaskMessage, TaskResultMessage
from agentic_core import (
    Backoff,
    BusError,
    Invocation,
    InvocationResult,
    SerializationError,
    WorkflowGraph,
    trace_context,
)

__all__ = ["Worker"]

_log = structlog.get_logger("agentic_bus.worker")
_WRONG_LAST_SEQUENCE = 10071
_STORE_RETRY = Backoff(initial_s=0.1, max_s=2.0)


class Worker:
    """Runs executor invocations of one workflow for any number of coordinators.

    Start as many as you like, on any machine: they compete for the tasks of their pool (the
    workflow's name and fingerprint, so a worker never runs a task of another graph version).

    Example:
        ```python
        worker = Worker(build_workflow, "nats://127.0.0.1:4222")
        await worker.run()  # until worker.stop() or SIGTERM (with handle_signals)
        ```

    Args:
        workflow: the workflow, or a factory building it (called once).
        servers: NATS URL(s).
        pool: the pool to serve (default: the workflow's, as ``NatsRuntime`` computes it).
        build: the build id of the coordinators' ``NatsRuntime(build=...)`` (default pool only).
        slots: tasks run at once.
        settings: delivery settings; must match the coordinators' (``NatsRuntime``'s).
        worker_id: this worker's name in logs and results.
        stop_grace_s: after ``stop()``, how long running tasks may finish; the rest are
            cancelled and handed back to the queue at once (``nak``) for another worker.
    """

    def __init__(
        self,
        workflow: WorkflowGraph | Callable[[], WorkflowGraph],
        servers: str | list[str] = DEFAULT_NATS_URL,
        *,
        pool: str | None = None,
        build: str | None = None,
        slots: int = 8,
        settings: PoolSettings | None = None,
        worker_id: str | None = None,
        subjects: Subjects | None = None,
        connect_timeout_s: float = 5.0,
        stop_grace_s: float = 30.0,
    ) -> None:
        if slots < 1:
            raise ValueError(f"slots must be at least 1, got {slots}")
        self.workflow: WorkflowGraph = (
            workflow if isinstance(workflow, WorkflowGraph) else workflow()
        )
        self._servers = servers
        self.pool = pool or pool_of(self.workflow, build)
        self.slots = slots
        self.settings = settings or PoolSettings()
        self.worker_id = worker_id or f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"
        self._subjects = subjects or Subjects()
        self._connect_timeout_s = connect_timeout_s
        self._stop_grace_s = stop_grace_s
        self._fingerprint = self.workflow.fingerprint()
        self._client: NatsClient | None = None
        self._live_sends: set[asyncio.Future[None]] = set()
        self._running: set[asyncio.Task[None]] = set()
        self._messages: dict[asyncio.Task[None], Msg] = {}
        self._stopping = asyncio.Event()
        self._ready = asyncio.Event()
        self._ended = asyncio.Event()
        self._error: BaseException | None = None
        self.tasks_done = 0
        """Tasks this worker ran to a stored result."""

    def __repr__(self) -> str:
        return f"Worker({self.worker_id!r}, pool={self.pool!r}, slots={self.slots})"

    async def wait_ready(self) -> None:
        """Return once the worker is connected and pulling; raise what stopped ``run()`` if it
        ended first (an unreachable server: ``NatsConnectionError``)."""
        ready = asyncio.ensure_future(self._ready.wait())
        ended = asyncio.ensure_future(self._ended.wait())
        try:
            await asyncio.wait({ready, ended}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            ready.cancel()
            ended.cancel()
        if not self._ready.is_set():
            if self._error is not None:
                raise self._error
            raise BusError(f"worker {self.worker_id} stopped before it was ready")

    def stop(self) -> None:
        """Ask ``run()`` to stop: no new tasks; running ones get ``stop_grace_s`` to finish."""
        self._stopping.set()

    def handle_signals(self) -> None:
        """Stop on SIGTERM and SIGINT (for a worker process)."""
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, self.stop)

    async def run(self) -> None:
        """Pull and run tasks until ``stop()``."""
        try:
            await self._run()
        except BaseException as exc:
            self._error = exc
            raise
        finally:
            self._ended.set()

    async def _run(self) -> None:
        client = await connect_nats(
            self._servers, name=f"agentic-worker {self.worker_id}",
            connect_timeout_s=self._connect_timeout_s,
        )  # fmt: skip
        self._client = client
        js = client.jetstream()  # pyright: ignore[reportUnknownMemberType]
        try:
            await declare_streams(
                js, self._subjects, results_max_age_s=self.settings.results_max_age_s
            )
            await ensure_pool_consumer(js, self._subjects, self.pool, self.settings)
            subscription = await js.pull_subscribe_bind(
                durable=consumer_name(self.pool, self._subjects), stream=TASKS_STREAM
            )
            blobs = Blobs(client)
            self._ready.set()
            _log.info("worker_ready", worker=self.worker_id, pool=self.pool, slots=self.slots)
            held: list[Msg] = []
            while not self._stopping.is_set():
                free = self.slots - len(self._running)
                if free <= 0:
                    await asyncio.wait(self._running, return_when=asyncio.FIRST_COMPLETED)
                    continue
                fetch = asyncio.ensure_future(subscription.fetch(batch=free, timeout=2.0))
                stop = asyncio.ensure_future(self._stopping.wait())
                await asyncio.wait({fetch, stop}, return_when=asyncio.FIRST_COMPLETED)
                stop.cancel()
                if not fetch.done():
                    fetch.cancel()
                    with contextlib.suppress(BaseException):
                        held = await fetch  # a batch that arrived while cancelling
                    break
                try:
                    messages = fetch.result()
                except TimeoutError:
                    continue
                except Exception as exc:  # noqa: BLE001 - the server is away: retry
                    _log.warning("worker_fetch_failed", worker=self.worker_id, error=repr(exc))
                    await asyncio.sleep(0.5)
                    continue
                for msg in messages:
                    if self._stopping.is_set():
                        held.append(msg)
                        continue
                    task = asyncio.create_task(self._handle(js, blobs, msg))
                    self._running.add(task)
                    self._messages[task] = msg
                    task.add_done_callback(self._forget_task)
            # Drop interest in our pull requests first: the server would otherwise redeliver a
            # nak'd task to a fetch of ours still waiting, where nobody reads it (ack_wait lost).
            with contextlib.suppress(Exception):
                await subscription.unsubscribe()
                await flush_ordered(client)
            for msg in held:  # taken but not started: back to the queue at once
                with contextlib.suppress(Exception):
                    await msg.nak()
            await self._finish_running()
        finally:
            # Not drain(): a fetch cancelled by stop() can leave messages in the pull
            # subscription that nobody reads, and drain would wait on them for 30 s. Acks and
            # naks are flushed; anything else comes back after ack_wait.
            with contextlib.suppress(Exception):
                await asyncio.wait_for(client.flush(), 2.0)
            with contextlib.suppress(Exception):
                await client.close()
            _log.info("worker_stopped", worker=self.worker_id, tasks_done=self.tasks_done)

    async def _finish_running(self) -> None:
        if not self._running:
            return
        _, late = await asyncio.wait(self._running, timeout=self._stop_grace_s)
        messages = [self._messages[task] for task in late if task in self._messages]
        for task in late:
            task.cancel()
        await asyncio.gather(*late, return_exceptions=True)
        for msg in messages:  # back to the queue now, not after ack_wait
            with contextlib.suppress(Exception):
                await msg.nak()
        if messages:
            _log.info("worker_tasks_returned", worker=self.worker_id, tasks=len(messages))

    def _forget_task(self, task: asyncio.Task[None]) -> None:
        self._running.discard(task)
        self._messages.pop(task, None)

    # -- one task -------------------------------------------------------------------------------

    async def _handle(self, js: JetStreamContext, blobs: Blobs, msg: Msg) -> None:
        delivery = msg.metadata.num_delivered
        try:
            task = TaskMessage.model_validate_json(msg.data)
        except ValueError as exc:
            _log.error("worker_bad_task", subject=msg.subject, error=str(exc)[:300])
            if await self._refuse_unreadable(js, msg, f"{type(exc).__name__}: {str(exc)[:500]}"):
                await msg.term()
            return
        log = _log.bind(worker=self.worker_id, task=task.task_id, delivery=delivery)
        result_subject = task.result_subject
        if not self._result_subject_ok(result_subject):
            log.error("worker_bad_result_subject", result_subject=result_subject[:200])
            await msg.term()
            return
        problem = self._incompatibility(task)
        invocation: Invocation | None = None
        if problem is None:
            try:
                invocation = self._decode_invocation(await self._encoded_invocation(task, blobs))
            except SerializationError as exc:
                # Types this worker's code does not define, or a tampered task: no delivery can
                # decode it, so it is refused at once rather than retried as if we had crashed.
                problem = (
                    f"worker {self.worker_id} cannot decode the task (SerializationError, "
                    f"not retried): {exc}"
                )
            except Exception as exc:  # noqa: BLE001 - the claim check is away: retried later
                log.warning("worker_task_unreadable", error=f"{type(exc).__name__}: {exc}")
                with contextlib.suppress(Exception):
                    await msg.nak(delay=1.0)
                return
        if problem is not None or invocation is None:
            problem = problem or "the task holds no invocation"
            log.error("worker_incompatible_task", problem=problem)
            reply = TaskResultMessage(
                task_id=task.task_id, status="incompatible", error=problem,
                worker_id=self.worker_id, delivery=delivery,
            )  # fmt: skip
            if await self._store_or_hand_back(js, msg, result_subject, reply, log):
                await msg.term()
            return
        if delivery > 1 and await self._already_stored(js, result_subject):
            log.info("worker_result_already_stored")
            await msg.ack()
            return
        log.debug("worker_task_started")
        heartbeat = asyncio.create_task(self._heartbeat(msg))
        try:
            started = time.perf_counter()
            if task.live:
                invocation.live = self._live_publisher(task, invocation.executor_id)
            with trace_context(msg.headers):  # the coordinator's superstep span as parent
                result = await self.workflow.run_invocation(invocation)
            body = await self._encode_result(task, result, blobs, delivery, started)
            if not await self._store_or_hand_back(js, msg, result_subject, body, log):
                return
            await msg.ack()
            self.tasks_done += 1
            log.debug("worker_task_done")
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - not ours to crash on: redelivered later
            log.error("worker_task_failed", error=f"{type(exc).__name__}: {exc}")
            with contextlib.suppress(Exception):
                await msg.nak(delay=1.0)
        finally:
            heartbeat.cancel()

    def _live_publisher(self, task: TaskMessage, executor_id: str) -> Callable[[Any], None]:
        """The invocation's ``live`` callback: each streaming update to the coordinator, at once
        (core NATS, best effort: the result holds everything that counts)."""
        client = self._client
        subject = self._subjects.live(task.run_id, executor_id)
        encode = self.workflow.type_registry.encode
        pending = self._live_sends

        def publish(event: Any) -> None:
            if client is None or client.is_closed:
                return
            try:
                body = json.dumps({"executor_id": executor_id, "event": encode(event)}).encode()
            except Exception:  # noqa: BLE001 - an update that cannot be encoded is dropped
                return
            send = asyncio.ensure_future(client.publish(subject, body))
            pending.add(send)
            send.add_done_callback(_forget_send(pending))

        return publish

    async def _refuse_unreadable(self, js: JetStreamContext, msg: Msg, error: str) -> bool:
        """A task this worker cannot read (another protocol version, say): if it names its task
        and result subject, store an "incompatible" result there, so the run fails at once
        naming why instead of waiting on workers that look alive. False when that result could
        not be stored (the task was handed back)."""
        try:
            loose = json.loads(msg.data)
            task_id, subject = str(loose["task_id"]), str(loose["result_subject"])
        except (ValueError, KeyError, TypeError):
            return True
        if not self._result_subject_ok(subject):
            return True
        reply = TaskResultMessage(
            task_id=task_id, status="incompatible", worker_id=self.worker_id,
            error=f"worker {self.worker_id} (protocol {PROTOCOL_VERSION}) cannot read the "
            f"task: {error}",
        )  # fmt: skip
        log = _log.bind(worker=self.worker_id, task=task_id)
        return await self._store_or_hand_back(js, msg, subject, reply, log)

    def _result_subject_ok(self, subject: str) -> bool:
        """A subject of the results stream, with no wildcard (the coordinator names it)."""
        tokens = subject.split(".")
        return (
            subject.startswith(self._subjects.results().removesuffix(">"))
            and all(tokens)
            and not {"*", ">"} & set(tokens)
            and not any(c.isspace() for c in subject)
        )

    def _incompatibility(self, task: TaskMessage) -> str | None:
        if task.protocol != PROTOCOL_VERSION:
            return (
                f"task protocol {task.protocol}, worker {self.worker_id} speaks {PROTOCOL_VERSION}"
            )
        if task.fingerprint != self._fingerprint:
            return (
                f"task of graph {task.workflow_name!r} fingerprint {task.fingerprint[:12]}; "
                f"worker {self.worker_id} runs {self.workflow.name!r} "
                f"fingerprint {self._fingerprint[:12]}"
            )
        return None

    async def _encoded_invocation(self, task: TaskMessage, blobs: Blobs) -> Any:
        """The task's encoded invocation: in the task, or the claim check's bytes from KV."""
        if task.blob is not None:
            return await blobs.get(task.blob)
        return task.invocation

    def _decode_invocation(self, encoded: Any) -> Invocation:
        """The invocation (from the task's JSON, or a claim check's bytes), or
        ``SerializationError`` for anything that does not decode to one."""
        try:
            data = json.loads(encoded) if isinstance(encoded, bytes) else encoded
        except ValueError as exc:
            raise SerializationError(f"malformed serialized data: not JSON ({exc})") from exc
        decoded = self.workflow.type_registry.decode(data)
        try:
            return Invocation.from_data(decoded)
        except (TypeError, ValueError, KeyError, AttributeError) as exc:
            raise SerializationError(
                f"malformed serialized data: not an invocation ({type(exc).__name__}: "
                f"{str(exc)[:200]})"
            ) from exc

    async def _encode_result(
        self,
        task: TaskMessage,
        result: InvocationResult,
        blobs: Blobs,
        delivery: int,
        started: float,
    ) -> bytes:
        encoded = self.workflow.type_registry.encode(result.to_data())
        message = TaskResultMessage(
            task_id=task.task_id, status="ok", result=encoded, worker_id=self.worker_id,
            delivery=delivery, duration_s=time.perf_counter() - started,
        )  # fmt: skip
        body = message.model_dump_json().encode()
        if len(body) <= BLOB_THRESHOLD:
            return body
        data = json.dumps(encoded, separators=(",", ":")).encode()
        ref = await blobs.put(f"result.{task.run_id}.{uuid.uuid4().hex}", data)
        message = message.model_copy(update={"result": None, "blob": ref})
        return message.model_dump_json().encode()

    async def _heartbeat(self, msg: Msg) -> None:
        while True:
            await asyncio.sleep(self.settings.heartbeat_s)
            with contextlib.suppress(Exception):
                await msg.in_progress()

    async def _already_stored(self, js: JetStreamContext, subject: str) -> bool:
        try:
            await js.get_last_msg(RESULTS_STREAM, subject)
        except NotFoundError:
            return False
        except Exception:  # noqa: BLE001 - unsure: run it; the store keeps the first result
            return False
        return True

    async def _store_or_hand_back(
        self,
        js: JetStreamContext,
        msg: Msg,
        subject: str,
        result: bytes | TaskResultMessage,
        log: Any,
    ) -> bool:
        """Store the task's result; False once it could not be, with the task handed back to
        the queue (``nak``) so that a later delivery runs it again: late, logged, not lost."""
        body = result.model_dump_json().encode() if isinstance(result, BaseModel) else result
        try:
            await self._store_result(js, subject, body, log)
        except Exception as exc:  # noqa: BLE001 - handed back: another delivery stores it
            log.error("worker_result_not_stored", error=describe_error(exc), task_returned=True)
            with contextlib.suppress(Exception):  # the server away: back after ack_wait anyway
                await msg.nak(delay=1.0)
            return False
        return True

    async def _store_result(
        self, js: JetStreamContext, subject: str, body: bytes, log: Any
    ) -> None:
        """Store the first result of the task; later ones are refused by the stream (fine).

        Retried with backoff while the server is away (the heartbeat keeps the task ours),
        for at most ``ack_wait_s``.

        Raises:
            BusError: not stored within ``ack_wait_s``.
            BadRequestError: the stream refused it (other than "stored already").
        """
        wait_s = self.settings.ack_wait_s
        schedule = _STORE_RETRY.schedule(timeout_s=wait_s)
        while True:
            try:
                await js.publish(
                    subject, body, headers={"Nats-Expected-Last-Subject-Sequence": "0"}
                )
                return
            except BadRequestError as exc:
                if exc.err_code == _WRONG_LAST_SEQUENCE:
                    log.info("worker_result_already_stored_by_another")
                    return
                raise
            except Exception as exc:
                log.warning("worker_result_publish_retry", error=describe_error(exc))
                if not await schedule.wait():
                    raise BusError(
                        f"worker {self.worker_id} could not store the result on {subject!r} "
                        f"within ack_wait_s={wait_s:g} s ({describe_error(exc)})"
                    ) from exc


def _forget_send(pending: set[asyncio.Future[None]]) -> Callable[[asyncio.Future[None]], None]:
    def done(send: asyncio.Future[None]) -> None:
        pending.discard(send)
        if not send.cancelled():
            send.exception()  # retrieved: a lost live update is not an error

    return done
