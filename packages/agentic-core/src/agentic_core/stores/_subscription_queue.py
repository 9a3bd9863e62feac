"""QueuedSubscription: the receiving end every ``MessageBus`` subscription shares.

A bus hands each message to ``deliver``; the subscriber iterates. Past ``max_pending`` waiting
messages a slow consumer loses the newest ones, counted in ``dropped`` (logged once), instead
of growing without bound; ``end()`` finishes the iteration after what is already queued.
"""

from __future__ import annotations

import asyncio
from typing import Self

import structlog

from agentic_core.protocols._bus import BusMessage

_log = structlog.get_logger(__name__)
_END = object()


class QueuedSubscription:
    """A subscription's queue of messages; subclasses add ``unsubscribe``."""

    def __init__(self, subject: str, queue: str | None, max_pending: int) -> None:
        self._subject = subject
        self._queue_name = queue
        self._pending: asyncio.Queue[BusMessage | object] = asyncio.Queue()
        self._max_pending = max_pending
        self._ended = False
        self.dropped = 0
        """Messages lost because ``max_pending`` were already waiting (a slow consumer)."""

    def __repr__(self) -> str:
        queue = f", queue={self._queue_name!r}" if self._queue_name else ""
        return f"{type(self).__name__}({self._subject!r}{queue})"

    @property
    def subject(self) -> str:
        """The subject pattern subscribed to."""
        return self._subject

    @property
    def queue(self) -> str | None:
        """The queue group, if any."""
        return self._queue_name

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> BusMessage:
        if self._ended and self._pending.empty():
            raise StopAsyncIteration
        item = await self._pending.get()
        if item is _END:
            self._ended = True
            raise StopAsyncIteration
        assert isinstance(item, BusMessage)  # noqa: S101 - only messages and _END are queued
        return item

    def deliver(self, message: BusMessage) -> None:
        """Queue ``message`` (dropped, and counted, past ``max_pending``)."""
        if self._ended:
            return
        if self._pending.qsize() >= self._max_pending:
            self.dropped += 1
            if self.dropped == 1:
                _log.warning(
                    "bus_slow_consumer", subject=self._subject, max_pending=self._max_pending
                )
            return
        self._pending.put_nowait(message)

    def end(self) -> None:
        """No more messages after those already queued."""
        if not self._ended:
            self._ended = True
            self._pending.put_nowait(_END)
