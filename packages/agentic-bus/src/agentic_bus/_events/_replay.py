"""replay_events: a run's stored workflow events, from ``AGENTIC_EVENTS``, in order.

An ephemeral pull consumer (acks off, in memory) filtered on the run's subjects reads what is
stored up to the end (``num_pending`` reaches 0) and stops, or with ``follow=True`` keeps
reading until the run's last stored event is its ``WorkflowCompletedEvent`` or
``WorkflowFailedEvent``. Events come back in ``Agentic-Seq`` order (the order the run produced
them, even for a message the sink had to publish again), decoded into their own classes.
Messages the sink did not write (the distributed runtime's ``committed`` log, anything without
an ``Agentic-Event`` header) are skipped.

``last_stored_seq`` reads the highest ``Agentic-Seq`` stored for a run: where a sink (in this
process or another) continues a resumed run's numbering.
"""

from __future__ import annotations

import contextlib
import json
import time
import uuid
from collections.abc import AsyncGenerator, AsyncIterator, Iterable, Sequence
from dataclasses import dataclass, field

import nats.js.errors
import structlog
from nats.aio.msg import Msg
from nats.js import api
from nats.js.client import JetStreamContext

from agentic_bus._bus import NatsBus
from agentic_bus._events._naming import (
    HEADER_EVENT,
    HEADER_SEQ,
    TERMINAL_KINDS,
    event_codec,
    kind_patterns,
    matches_any,
    run_subject_prefix,
)
from agentic_bus._nats_errors import NATS_ERRORS, describe_error
from agentic_bus._streams import EVENTS_STREAM
from agentic_bus._subjects import Subjects
from agentic_core import (
    Backoff,
    BusError,
    SerializationError,
    TypeCodec,
    WorkflowCompletedEvent,
    WorkflowEvent,
    WorkflowFailedEvent,
    WorkflowGraph,
)

__all__ = ["last_stored_seq", "replay_events"]

_log = structlog.get_logger("agentic_bus")

_BATCH = 256
_RETRY = Backoff(initial_s=0.05, max_s=1.0)
_FETCH_TIMEOUT_S = 1.0


async def replay_events(
    servers: str | Sequence[str] | NatsBus,
    run_id: str,
    *,
    workflow: WorkflowGraph | None = None,
    stream: str = EVENTS_STREAM,
    kinds: Iterable[str] | None = None,
    follow: bool = False,
    subjects: Subjects | None = None,
    retry_for_s: float = 30.0,
) -> AsyncIterator[WorkflowEvent]:
    """The stored events of run ``run_id``, in the order the run emitted them.

    Without ``follow`` the iteration ends at the last stored event; with ``follow=True`` it
    waits for more until the run's last event is a ``WorkflowCompletedEvent`` (completed, or
    paused for requests) or a ``WorkflowFailedEvent`` (bound it with ``asyncio.timeout``).

    Example:
        ```python
        async for event in replay_events("nats://127.0.0.1:4222", run_id, workflow=workflow):
            print(type(event).__name__)
        outputs = [
            e.data async for e in replay_events(url, run_id, workflow=workflow, kinds=["output"])
        ]
        ```

    Args:
        servers: ``nats://`` URL(s), or a ``NatsBus`` to share (never closed here).
        run_id: the run (as ``WorkflowStartedEvent.run_id`` names it).
        workflow: its ``type_registry`` decodes the user types in outputs and requests;
            without it only core types and types this process defines decode.
        stream: the events stream ``NatsEventSink`` wrote to.
        kinds: which events, by name (``EVENT_KINDS``: ``started``, ``superstep``,
            ``executor``, ``output``, ``request``, ``event``, ``live``, ``completed``,
            ``failed``) or as subject suffixes (``executor.*.completed``; escape ids with
            ``subject_token``); default every kind but ``live``.
        follow: keep waiting for new events until the run completes or fails.
        subjects: the subject names the sink used.
        retry_for_s: how long a lost connection is retried before ``BusError``.

    Raises:
        BusError: the stream does not exist (without ``follow``), or the server stayed away.
        SerializationError: an event holds a type the codec does not know (pass ``workflow``).
    """
    if not run_id:
        raise ValueError("replay_events needs the run_id of the run to replay")
    names = Subjects() if subjects is None else subjects
    wanted = kind_patterns(kinds)
    filters = list(wanted)
    if follow:  # the end of the run must be seen, wanted or not
        filters += [t for t in TERMINAL_KINDS if not matches_any(wanted, t)]
    prefix = run_subject_prefix(names, run_id)
    owned = not isinstance(servers, NatsBus)
    bus = NatsBus(servers, name="agentic replay") if not isinstance(servers, NatsBus) else servers
    codec = event_codec(workflow)
    reader = _Reader(
        bus=bus,
        stream=stream,
        filters=[prefix + f for f in filters],
        follow=follow,
        retry_for_s=retry_for_s,
    )
    order = _Reorder()
    try:
        async with contextlib.aclosing(reader.messages()) as messages:
            async for msg, caught_up in messages:
                suffix = msg.subject[len(prefix) :]
                for item in order.push(_item(msg, suffix, wanted, codec, run_id, stream)):
                    yield item.event
                if caught_up:
                    for item in order.flush():
                        yield item.event
                    if not follow or (order.last is not None and order.last.terminal):
                        return
    finally:
        await reader.close()
        if owned:
            await bus.close()  # quiet when the server is away


# -- decoding and ordering --------------------------------------------------------------------


@dataclass(slots=True)
class _Item:
    """A stored event: its number in the run, whether the caller asked for it."""

    seq: int | None
    event: WorkflowEvent
    wanted: bool
    terminal: bool


def _item(
    msg: Msg, suffix: str, wanted: list[str], codec: TypeCodec, run_id: str, stream: str
) -> _Item | None:
    """``msg`` decoded, or None when the sink did not write it."""
    headers = msg.headers or {}
    if HEADER_EVENT not in headers:
        return None  # the committed log, a runtime's live update, a foreign publisher
    raw_seq = headers.get(HEADER_SEQ, "")
    stream_seq = msg.metadata.sequence.stream
    try:
        event = codec.decode(json.loads(msg.data))
    except (SerializationError, ValueError, TypeError, KeyError) as exc:
        raise SerializationError(
            f"cannot decode event #{raw_seq or '?'} of run {run_id} ({stream} sequence "
            f"{stream_seq}, a {headers[HEADER_EVENT]}): {exc}; pass workflow= so its type "
            "registry knows the types in it"
        ) from exc
    if not isinstance(event, WorkflowEvent):
        raise SerializationError(
            f"{stream} sequence {stream_seq} of run {run_id} holds a "
            f"{type(event).__name__}, not a workflow event"
        )
    return _Item(
        seq=int(raw_seq) if raw_seq.isdigit() else None,
        event=event,
        wanted=matches_any(wanted, suffix),
        terminal=isinstance(event, WorkflowCompletedEvent | WorkflowFailedEvent),
    )


@dataclass(slots=True)
class _Reorder:
    """Puts items back in ``Agentic-Seq`` order; gaps are waited for until ``flush``."""

    next_seq: int = 1
    waiting: dict[int, _Item] = field(default_factory=dict[int, _Item])
    seen: set[int] = field(default_factory=set[int])
    last: _Item | None = None
    """The item with the highest number so far (to see the end of a run)."""

    def push(self, item: _Item | None) -> list[_Item]:
        if item is None:
            return []
        if item.seq is None:  # a live update: never numbered, passed on at once
            return [item] if item.wanted else []
        if item.seq in self.seen:
            return []  # stored twice (a retry after the dedup window)
        self.seen.add(item.seq)
        if self.last is None or item.seq > (self.last.seq or 0):
            self.last = item
        if item.seq < self.next_seq:  # late: its gap was given up on already
            return [item] if item.wanted else []
        self.waiting[item.seq] = item
        ready: list[_Item] = []
        while self.next_seq in self.waiting:
            ready.append(self.waiting.pop(self.next_seq))
            self.next_seq += 1
        if len(self.waiting) > 10_000:  # a gap that will not fill: stop holding events back
            ready += self.flush()
        return [i for i in ready if i.wanted]

    def flush(self) -> list[_Item]:
        """Everything waiting, in order (at the end of what is stored)."""
        ready = [self.waiting.pop(seq) for seq in sorted(self.waiting)]
        if ready:
            self.next_seq = (ready[-1].seq or 0) + 1
        return [i for i in ready if i.wanted]


# -- the consumer -----------------------------------------------------------------------------


class _Reader:
    """An ephemeral pull consumer over the run's subjects, recreated after a server restart
    from the message after the last one read."""

    def __init__(
        self,
        *,
        bus: NatsBus,
        stream: str,
        filters: list[str],
        follow: bool,
        retry_for_s: float,
    ) -> None:
        self.bus = bus
        self.stream = stream
        self.filters = filters
        self.follow = follow
        self.retry_for_s = retry_for_s
        self.name = f"agentic_replay_{uuid.uuid4().hex}"
        self.last_stream_seq = 0
        self._js: JetStreamContext | None = None
        self._sub: JetStreamContext.PullSubscription | None = None

    async def messages(self) -> AsyncGenerator[tuple[Msg, bool]]:
        """Each stored message, with whether it was the last stored one at the time."""
        pending = await self._open()
        if pending == 0 and not self.follow:
            return
        checked = time.monotonic()
        while True:
            sub = self._sub
            assert sub is not None  # noqa: S101 - opened above
            try:
                msgs = await sub.fetch(batch=_BATCH, timeout=_FETCH_TIMEOUT_S)
            except TimeoutError:  # nats-py raises both its own and asyncio's
                # Nothing new: for a replay the end (the consumer still says so), for a
                # follower a pause. Either way make sure the consumer survived a restart.
                if self.follow and time.monotonic() - checked < 2 * _FETCH_TIMEOUT_S:
                    continue
                checked = time.monotonic()
                pending = await self._still_pending()
                if pending == 0 and not self.follow:
                    return
                continue
            except NATS_ERRORS as exc:
                _log.info("event_replay_reconnecting", stream=self.stream, error=str(exc))
                await self._reopen()
                continue
            for msg in msgs:
                self.last_stream_seq = msg.metadata.sequence.stream
                yield msg, msg.metadata.num_pending == 0

    async def _open(self) -> int:
        """Create the consumer from the message after the last one read; its pending count.

        A server away is waited for ``retry_for_s``; a stream not there yet, by a follower,
        without end (bound it with ``asyncio.timeout``)."""
        unreachable = _RETRY.schedule(timeout_s=self.retry_for_s)
        absent = _RETRY.schedule()
        while True:
            try:
                client = await self.bus.client()
                if self._js is None:
                    self._js = client.jetstream()  # pyright: ignore[reportUnknownMemberType]
                return await self._create(self._js)
            except nats.js.errors.NotFoundError as exc:
                if not self.follow:
                    raise BusError(
                        f"there is no JetStream stream {self.stream!r}: no event was ever "
                        "recorded there (NatsEventSink creates it)"
                    ) from exc
                await absent.wait()
            except nats.js.errors.BadRequestError as exc:
                raise BusError(
                    f"JetStream refused to read {self.stream!r} with filters {self.filters}: "
                    f"{exc.description or exc}"
                ) from exc
            except NATS_ERRORS as exc:
                if not await unreachable.wait():
                    raise BusError(
                        f"could not read JetStream stream {self.stream!r} for "
                        f"{self.retry_for_s:g} s ({describe_error(exc)}); is nats-server "
                        f"up? (connection {self.bus!r})"
                    ) from exc

    async def _create(self, js: JetStreamContext) -> int:
        start = self.last_stream_seq + 1
        config = api.ConsumerConfig(
            name=self.name,
            deliver_policy=(
                api.DeliverPolicy.ALL if start == 1 else api.DeliverPolicy.BY_START_SEQUENCE
            ),
            opt_start_seq=None if start == 1 else start,
            ack_policy=api.AckPolicy.NONE,
            mem_storage=True,
            num_replicas=1,
            inactive_threshold=60.0,
        )
        if len(self.filters) == 1:
            config.filter_subject = self.filters[0]
        else:
            config.filter_subjects = self.filters
        info = await js.add_consumer(self.stream, config)  # pyright: ignore[reportUnknownMemberType]
        if self._sub is None:
            self._sub = await js.pull_subscribe_bind(stream=self.stream, name=self.name)
        return info.num_pending or 0

    async def _still_pending(self) -> int:
        """The consumer's pending count; it is created again if a restart lost it."""
        assert self._js is not None  # noqa: S101 - opened first
        try:
            info = await self._js.consumer_info(self.stream, self.name)
        except NATS_ERRORS:  # NotFoundError (lost in a restart) or the server is away
            return await self._reopen()
        return info.num_pending or 0

    async def _reopen(self) -> int:
        """A new consumer (new name) from the message after the last one read."""
        await self.close()
        self.name = f"agentic_replay_{uuid.uuid4().hex}"
        return await self._open()

    async def close(self) -> None:
        """Unsubscribe and delete the consumer (it would expire on its own anyway)."""
        sub, self._sub = self._sub, None
        if sub is not None:
            with contextlib.suppress(*NATS_ERRORS):
                await sub.unsubscribe()
        if self._js is not None and self.bus.is_connected:
            with contextlib.suppress(*NATS_ERRORS):
                await self._js.delete_consumer(self.stream, self.name)


async def last_stored_seq(
    js: JetStreamContext, stream: str, subjects: Subjects, run_id: str
) -> int:
    """The highest ``Agentic-Seq`` stored for run ``run_id`` (0 for a run never seen).

    One ``get_last_msg`` for a new run; a run seen before (a resumed run, another process) is
    read once per subject (``DeliverPolicy.LAST_PER_SUBJECT``) for its highest number.
    """
    run_all = run_subject_prefix(subjects, run_id) + ">"
    try:
        await js.get_last_msg(stream, run_all)
    except nats.js.errors.NotFoundError:
        return 0
    name = f"agentic_seq_{uuid.uuid4().hex}"
    config = api.ConsumerConfig(
        name=name,
        filter_subject=run_all,
        deliver_policy=api.DeliverPolicy.LAST_PER_SUBJECT,
        ack_policy=api.AckPolicy.NONE,
        headers_only=True,
        mem_storage=True,
        num_replicas=1,
        inactive_threshold=30.0,
    )
    info = await js.add_consumer(stream, config)  # pyright: ignore[reportUnknownMemberType]
    highest = 0
    try:
        if info.num_pending:
            sub = await js.pull_subscribe_bind(stream=stream, name=name)
            try:
                while True:
                    msgs = await sub.fetch(batch=256, timeout=5.0)
                    for msg in msgs:
                        seq = (msg.headers or {}).get(HEADER_SEQ)
                        if seq is not None and seq.isdigit():
                            highest = max(highest, int(seq))
                    if msgs[-1].metadata.num_pending == 0:
                        break
            finally:
                await sub.unsubscribe()
    finally:
        with contextlib.suppress(*NATS_ERRORS):
            await js.delete_consumer(stream, name)
    return highest
