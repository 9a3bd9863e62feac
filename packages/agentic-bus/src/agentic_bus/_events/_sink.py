"""NatsEventSink: a run's workflow events into the JetStream stream ``AGENTIC_EVENTS``.

One message per event, on ``agentic.workflow.{run}.{kind}`` (see ``_naming``), body = the
event encoded by a ``TypeCodec`` (JSON with type tags), headers ``Agentic-Run``,
``Agentic-Workflow``, ``Agentic-Event``, ``Agentic-Seq`` (1, 2, ... within a run, continued
across sinks and processes) and ``Nats-Msg-Id`` = ``{run}:{seq}`` (a retried publish is stored
once). With OpenTelemetry on, an event also carries the W3C ``traceparent`` (and ``tracestate``)
current when it was emitted. Decisions and other audit records go to ``AGENTIC_AUDIT`` on
``agentic.audit.{run}.{kind}``.

Publishing is pipelined: up to ``max_in_flight`` messages wait for their JetStream ack at once.
A message not acked within ``ack_timeout_s`` (the server died, the connection dropped) starts a
recovery: with new publishes held back, it and every message sent after it are published again
in order, with backoff, until stored or ``retry_for_s`` passes; then the sink fails with a
``BusError`` (raised by the next ``emit``, ``flush`` or ``close``). ``replay_events`` orders a
run by ``Agentic-Seq``, so even a message the server lost and got again later comes back in its
place.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import json
import time
import uuid
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Self, TypeVar

import structlog
from nats.aio.client import Client as NatsClient
from nats.js import api
from nats.js.client import JetStreamContext
from pydantic import BaseModel

from agentic_bus._bus import NatsBus
from agentic_bus._connect import DEFAULT_NATS_URL
from agentic_bus._errors import PayloadTooLargeError
from agentic_bus._events._naming import (
    HEADER_AUDIT,
    HEADER_EVENT,
    HEADER_RUN,
    HEADER_SEQ,
    HEADER_WORKFLOW,
    event_codec,
    event_subject,
    header_value,
)
from agentic_bus._events._replay import last_stored_seq
from agentic_bus._jetstream import ensure_stream
from agentic_bus._nats_errors import NATS_ERRORS, describe_error, is_transient
from agentic_bus._streams import (
    AUDIT_STREAM,
    EVENTS_MAX_AGE_S,
    EVENTS_STREAM,
    MAX_MSG_SIZE,
    audit_stream_config,
    events_stream_config,
)
from agentic_bus._subjects import Subjects
from agentic_core import (
    AgentRunUpdateEvent,
    Backoff,
    BusError,
    SerializationError,
    TypeCodec,
    WorkflowCompletedEvent,
    WorkflowEvent,
    WorkflowFailedEvent,
    WorkflowGraph,
    WorkflowStartedEvent,
    inject_trace_context,
)

__all__ = ["NatsEventSink"]

_HEADERS_ROOM = 4096
_RETRY = Backoff(initial_s=0.05, max_s=1.0)
_T = TypeVar("_T")

_log = structlog.get_logger("agentic_bus")


# -- the publishing pipeline ------------------------------------------------------------------


@dataclasses.dataclass(slots=True, eq=False)
class _Outgoing:
    """One message on its way to a stream."""

    stream: str
    subject: str
    body: bytes
    headers: dict[str, str]
    run_id: str
    seq: int = 0
    """The event's ``Agentic-Seq`` (0 for an audit record)."""
    last_of_run: bool = False
    """A ``WorkflowCompletedEvent`` or ``WorkflowFailedEvent``: the sink may forget the run."""
    ack: asyncio.Future[api.PubAck] | None = None
    sent_at: float = 0.0
    settled: asyncio.Future[None] | None = None


class NatsEventSink:
    """Workflow events to the JetStream stream ``AGENTIC_EVENTS``, replayable by run id.

    Wrap a ``run_stream`` with ``record``: events pass through unchanged while each is
    published (once, in order) on ``agentic.workflow.{run}.{kind}``; when the loop ends, all are
    stored. ``replay_events(url, run_id, workflow=...)`` gives them back. Agents' streaming
    updates (``AgentRunUpdateEvent``) are left out unless ``include_live=True``. ``audit``
    stores decisions in ``AGENTIC_AUDIT``.

    Example:
        ```python
        async with NatsEventSink("nats://127.0.0.1:4222", workflow=workflow) as sink:
            async for event in sink.record(workflow.run_stream("hello")):
                print(event)
            await sink.audit({"approved": True}, run_id=run_id, kind="approval")
        async for event in replay_events("nats://127.0.0.1:4222", run_id, workflow=workflow):
            ...
        ```

    Args:
        servers: ``nats://`` URL(s), or a ``NatsBus`` to share (the sink never closes it).
        workflow: its ``type_registry`` encodes the events (and names ``workflow_id``).
        stream: the events stream (its subjects are ``{prefix}.workflow.>``).
        audit_stream: the audit stream (subjects ``{prefix}.audit.>``).
        max_age_s: how long both streams keep messages.
        subjects: the subject names (another prefix for another deployment).
        include_live: also publish ``AgentRunUpdateEvent``s (core NATS, best effort).
        max_in_flight: publishes waiting for their ack at once (``emit`` waits beyond).
        ack_timeout_s: a publish not acked within this is sent again.
        retry_for_s: how long a failed publish is retried before the sink fails.
    """

    def __init__(
        self,
        servers: str | Sequence[str] | NatsBus = DEFAULT_NATS_URL,
        *,
        workflow: WorkflowGraph | None = None,
        stream: str = EVENTS_STREAM,
        audit_stream: str = AUDIT_STREAM,
        max_age_s: float = EVENTS_MAX_AGE_S,
        subjects: Subjects | None = None,
        include_live: bool = False,
        max_in_flight: int = 1024,
        ack_timeout_s: float = 5.0,
        retry_for_s: float = 30.0,
    ) -> None:
        if max_in_flight < 1:
            raise ValueError(f"max_in_flight must be at least 1, got {max_in_flight}")
        for label, value in (
            ("max_age_s", max_age_s),
            ("ack_timeout_s", ack_timeout_s),
            ("retry_for_s", retry_for_s),
        ):
            if not value > 0:
                raise ValueError(f"{label} must be positive, got {value!r}")
        if isinstance(servers, NatsBus):
            self._bus, self._owns_bus = servers, False
        else:
            self._bus, self._owns_bus = NatsBus(servers, name="agentic events"), True
        self.workflow = workflow
        self.codec: TypeCodec = event_codec(workflow)
        self.stream = stream
        self.audit_stream = audit_stream
        self.max_age_s = max_age_s
        self.subjects = subjects or Subjects()
        self.include_live = include_live
        self.max_in_flight = max_in_flight
        self.ack_timeout_s = ack_timeout_s
        self.retry_for_s = retry_for_s
        self._js: JetStreamContext | None = None
        self._audit_declared = False
        self._seqs: dict[str, int] = {}
        self._window: deque[_Outgoing] = deque()
        self._slots = asyncio.Semaphore(max_in_flight)
        self._order = asyncio.Lock()
        self._setup = asyncio.Lock()
        self._wake = asyncio.Event()
        self._acker: asyncio.Task[None] | None = None
        self._failure: BusError | None = None
        self._reported = False
        self._closed = False

    def __repr__(self) -> str:
        return (
            f"NatsEventSink({self._bus!r}, stream={self.stream!r}, in_flight={len(self._window)})"
        )

    # -- public API -------------------------------------------------------------------------------

    async def emit(self, event: WorkflowEvent, *, run_id: str, workflow_id: str) -> None:
        """Publish ``event`` of run ``run_id`` (returns once sent; ``flush`` waits for the ack).

        Raises:
            BusError: an earlier publish could not be stored within ``retry_for_s``.
            SerializationError: the event holds a value that cannot be encoded.
        """
        self._check_open()
        live = isinstance(event, AgentRunUpdateEvent)
        if live and not self.include_live:
            return
        subject = event_subject(self.subjects, run_id, event)
        body = self._encode(event, run_id)
        await self._check_size(body, subject)
        headers = {
            HEADER_RUN: header_value(run_id),
            HEADER_WORKFLOW: header_value(workflow_id),
            HEADER_EVENT: type(event).__name__,
        }
        inject_trace_context(headers)  # with telemetry on: the trace the event belongs to
        if live:  # best effort, never waits for an ack (and takes no sequence number)
            client = await self._bus.client()
            with contextlib.suppress(*NATS_ERRORS):
                await client.publish(subject, body, headers=headers)
            return
        await self._slots.acquire()
        try:
            async with self._order:
                self._check_open()
                js = await self._jetstream()
                seq = await self._next_seq(js, run_id)
                headers[HEADER_SEQ] = str(seq)
                headers["Nats-Msg-Id"] = f"{header_value(run_id)}:{seq}"
                last = isinstance(event, WorkflowCompletedEvent | WorkflowFailedEvent)
                out = _Outgoing(self.stream, subject, body, headers, run_id, seq, last)
                await self._send(js, out)
        except BaseException:
            self._slots.release()
            raise

    async def record(
        self, events: AsyncIterator[WorkflowEvent], *, workflow_id: str | None = None
    ) -> AsyncIterator[WorkflowEvent]:
        """``events`` unchanged, each published on its way; stored when the loop ends.

        The run id comes from the stream's ``WorkflowStartedEvent`` (its first event), the
        workflow id from ``workflow_id``, else that event.

        Example:
            ```python
            async for event in sink.record(workflow.run_stream(message)):
                ...  # every event of the run is in AGENTIC_EVENTS once the loop ends
            ```
        """
        run_id: str | None = None
        wf_id = workflow_id
        async for event in events:
            if isinstance(event, WorkflowStartedEvent):
                run_id = event.run_id
                wf_id = workflow_id or event.workflow_id
            if run_id is None or wf_id is None:
                raise ValueError(
                    f"record() needs the run's WorkflowStartedEvent first, got "
                    f"{type(event).__name__}: pass it a workflow's run_stream(...)"
                )
            await self.emit(event, run_id=run_id, workflow_id=wf_id)
            yield event
        await self.flush()

    async def audit(
        self,
        decision: BaseModel | Mapping[str, Any],
        *,
        run_id: str,
        kind: str,
        workflow_id: str | None = None,
    ) -> None:
        """Store ``decision`` (a pydantic model or a JSON-able dict) in ``AGENTIC_AUDIT`` on
        ``agentic.audit.{run}.{kind}``; body ``{"run_id", "kind", "at", "type", "decision"}``.

        Example:
            ```python
            await sink.audit(Approval(by="ana", ok=True), run_id=run_id, kind="approval")
            ```
        """
        self._check_open()
        if isinstance(decision, BaseModel):
            kind_of = type(decision).__qualname__
            data: Any = decision.model_dump(mode="json")
        else:
            kind_of, data = "dict", dict(decision)
        record = {
            "run_id": run_id,
            "kind": kind,
            "workflow_id": workflow_id,
            "at": datetime.now(UTC).isoformat(),
            "type": kind_of,
            "decision": data,
        }
        try:
            body = json.dumps(record, separators=(",", ":")).encode()
        except (TypeError, ValueError) as exc:
            raise SerializationError(
                f"an audit record of kind {kind!r} is not JSON: {exc}"
            ) from exc
        headers = {
            HEADER_RUN: header_value(run_id),
            HEADER_AUDIT: header_value(kind),
            "Nats-Msg-Id": f"audit:{uuid.uuid4().hex}",
        }
        if workflow_id is not None:
            headers[HEADER_WORKFLOW] = header_value(workflow_id)
        subject = self.subjects.audit(run_id, kind)
        await self._check_size(body, subject)
        await self._slots.acquire()
        try:
            async with self._order:
                self._check_open()
                js = await self._jetstream()
                if not self._audit_declared:
                    await self._retrying(
                        "declare the audit stream",
                        lambda: ensure_stream(
                            js,
                            audit_stream_config(
                                self.subjects, name=self.audit_stream, max_age_s=self.max_age_s
                            ),
                        ),
                    )
                    self._audit_declared = True
                await self._send(js, _Outgoing(self.audit_stream, subject, body, headers, run_id))
        except BaseException:
            self._slots.release()
            raise

    async def flush(self) -> None:
        """Wait until everything emitted so far is stored.

        Raises:
            BusError: a publish could not be stored within ``retry_for_s``.
        """
        self._raise_failure()
        if self._window:
            last = self._window[-1].settled
            assert last is not None  # noqa: S101 - set when sent
            try:
                await asyncio.shield(last)
            except BusError:
                self._reported = True
                raise
        if self.include_live and self._bus.is_connected:
            with contextlib.suppress(*NATS_ERRORS):
                await (await self._bus.client()).flush()

    async def close(self) -> None:
        """Flush, then stop (and close the connection the sink opened). Idempotent.

        Raises:
            BusError: the last publishes could not be stored (unless ``emit`` or ``flush``
                raised it already).
        """
        if self._closed:
            return
        try:
            if self._failure is None and self._window:
                await self.flush()
        finally:
            self._closed = True
            acker, self._acker = self._acker, None
            if acker is not None:
                acker.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await acker
            self._drop_window(self._failure or BusError("the NatsEventSink was closed"))
            if self._owns_bus:
                await self._bus.close()  # quiet when the server is away
        self._raise_failure(again=False)

    async def __aenter__(self) -> Self:
        await self._jetstream()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    # -- internals --------------------------------------------------------------------------------

    def _raise_failure(self, *, again: bool = True) -> None:
        if self._failure is not None and (again or not self._reported):
            self._reported = True
            raise self._failure

    def _check_open(self) -> None:
        self._raise_failure()
        if self._closed:
            raise BusError("the NatsEventSink was closed")

    async def _check_size(self, body: bytes, subject: str) -> None:
        client = await self._bus.client()
        limit = min(client.max_payload or MAX_MSG_SIZE, MAX_MSG_SIZE) - _HEADERS_ROOM
        if len(body) > limit:
            raise PayloadTooLargeError(
                f"a {len(body):,}-byte event on {subject!r} is over the {limit:,} bytes a stream "
                "message may hold: keep large data out of events (store it, send a reference)"
            )

    def _encode(self, event: WorkflowEvent, run_id: str) -> bytes:
        try:
            return json.dumps(self.codec.encode(event), separators=(",", ":")).encode()
        except (SerializationError, TypeError, ValueError) as exc:
            raise SerializationError(
                f"cannot publish a {type(event).__name__} of run {run_id}: {exc}"
            ) from exc

    async def _jetstream(self) -> JetStreamContext:
        if self._js is not None:
            return self._js
        async with self._setup:
            if self._js is None:
                client: NatsClient = await self._bus.client()
                js = client.jetstream(publish_async_max_pending=self.max_in_flight + 1)  # pyright: ignore[reportUnknownMemberType]
                config = events_stream_config(self.subjects, self.max_age_s, name=self.stream)
                await self._retrying("declare the events stream", lambda: ensure_stream(js, config))
                self._js = js
        return self._js

    async def _next_seq(self, js: JetStreamContext, run_id: str) -> int:
        last = self._seqs.get(run_id)
        if last is None:
            last = await self._retrying(
                f"find the last event of run {run_id}",
                lambda: last_stored_seq(js, self.stream, self.subjects, run_id),
            )
        self._seqs[run_id] = last + 1
        return last + 1

    async def _send(self, js: JetStreamContext, out: _Outgoing) -> None:
        """Publish ``out`` (its slot is taken) and queue it for the acker; order lock held."""
        loop = asyncio.get_running_loop()
        out.settled = loop.create_future()
        out.sent_at = time.monotonic()
        try:
            out.ack = await js.publish_async(  # pyright: ignore[reportUnknownMemberType]
                out.subject, out.body, headers=dict(out.headers), stream=out.stream
            )
        except NATS_ERRORS as exc:  # the acker recovers it
            failed: asyncio.Future[api.PubAck] = loop.create_future()
            failed.set_exception(exc)
            out.ack = failed
        self._window.append(out)
        self._wake.set()
        if self._acker is None or self._acker.done():
            self._acker = asyncio.create_task(self._ack_loop(js), name="agentic-event-sink-acks")
            self._acker.add_done_callback(self._acker_ended)

    def _acker_ended(self, task: asyncio.Task[None]) -> None:
        """An acker that crashed fails the sink (nobody would settle the window otherwise)."""
        error = None if task.cancelled() else task.exception()
        if error is None:
            return
        if self._failure is None:
            self._failure = BusError(f"the event sink's ack loop failed: {describe_error(error)}")
            self._failure.__cause__ = error
        self._drop_window(self._failure)

    async def _ack_loop(self, js: JetStreamContext) -> None:
        """Settle the window in order: an ack, or a recovery when one is missing."""
        while True:
            if not self._window:
                self._wake.clear()
                await self._wake.wait()
                continue
            out = self._window[0]
            ack = out.ack
            assert ack is not None  # noqa: S101 - set by _send
            remaining = out.sent_at + self.ack_timeout_s - time.monotonic()
            try:
                if not ack.done():
                    async with asyncio.timeout(max(remaining, 0.0)):
                        await asyncio.shield(ack)
                ack.result()
            except NATS_ERRORS as exc:
                if not await self._recover(js, exc):
                    return
                continue
            self._settle(self._window.popleft())

    async def _recover(self, js: JetStreamContext, cause: BaseException) -> bool:
        """Publish the window again, in order, until stored; False once the sink failed."""
        async with self._order:  # no new publish overtakes the ones being retried
            runs = sorted({out.run_id for out in self._window})
            _log.warning(
                "event_sink_retrying",
                stream=self.stream,
                waiting=len(self._window),
                runs=runs[:5],
                error=describe_error(cause),
            )
            deadline = time.monotonic() + self.retry_for_s
            retried = 0
            while self._window:
                out = self._window[0]
                ack = out.ack
                if (
                    ack is not None
                    and ack.done()
                    and not ack.cancelled()
                    and ack.exception() is None
                ):
                    self._settle(self._window.popleft())
                    continue
                if ack is not None and not ack.done():
                    ack.cancel()  # frees nats-py's slot; a late copy is deduplicated
                try:
                    await self._retrying(
                        f"store an event of run {out.run_id}",
                        functools.partial(self._publish_now, js, out),
                        deadline=deadline,
                    )
                except BusError as exc:
                    self._failure = exc
                    self._drop_window(exc)
                    _log.error(
                        "event_sink_failed", stream=self.stream, runs=runs[:5], error=str(exc)
                    )
                    return False
                retried += 1
                self._settle(self._window.popleft())
            _log.info("event_sink_recovered", stream=self.stream, republished=retried)
            return True

    async def _retrying(
        self,
        what: str,
        operation: Callable[[], Awaitable[_T]],
        *,
        deadline: float | None = None,
    ) -> _T:
        """``await operation()``, again with backoff on transient errors until ``deadline``
        (``retry_for_s`` from now by default)."""
        timeout_s = self.retry_for_s if deadline is None else None
        schedule = _RETRY.schedule(timeout_s=timeout_s, deadline=deadline)
        while True:
            try:
                return await operation()
            except NATS_ERRORS as exc:
                if not is_transient(exc) or not await schedule.wait():
                    why = f"for {self.retry_for_s:g} s" if is_transient(exc) else "(not retried)"
                    raise BusError(
                        f"could not {what} on JetStream stream {self.stream!r} {why}: "
                        f"{describe_error(exc)}; is nats-server up? (connection {self._bus!r})"
                    ) from exc

    async def _publish_now(self, js: JetStreamContext, out: _Outgoing) -> api.PubAck:
        return await js.publish(  # pyright: ignore[reportUnknownMemberType]
            out.subject,
            out.body,
            timeout=self.ack_timeout_s,
            stream=out.stream,
            headers=dict(out.headers),
        )

    def _settle(self, out: _Outgoing) -> None:
        if out.settled is not None and not out.settled.done():
            out.settled.set_result(None)
        if out.last_of_run and self._seqs.get(out.run_id) == out.seq:
            # Stored, and nothing later of the run in flight: a resumed run looks its last
            # number up again, so a long-lived sink keeps no state per finished run.
            del self._seqs[out.run_id]
        self._slots.release()

    def _drop_window(self, error: BusError) -> None:
        while self._window:
            out = self._window.popleft()
            if out.ack is not None and not out.ack.done():
                out.ack.cancel()
            if out.settled is not None and not out.settled.done():
                out.settled.set_exception(error)
                out.settled.exception()  # retrieved: flush() re-raises self._failure
            self._slots.release()
