"""InMemoryBus: core's MessageBus inside one process, with NATS semantics (for tests and demos)."""

from __future__ import annotations

import asyncio
import random
import uuid
from typing import Self

import structlog

from agentic_core._errors import BusClosedError, BusTimeoutError, NoRespondersError
from agentic_core.protocols._bus import BusMessage, BusPayload
from agentic_core.stores._bus_rules import (
    check_headers,
    check_subject,
    encode_bus_payload,
    subject_matches,
)
from agentic_core.stores._subscription_queue import QueuedSubscription

_log = structlog.get_logger(__name__)


class InMemorySubscription(QueuedSubscription):
    """One subscription of an ``InMemoryBus``: iterate it for messages."""

    def __init__(self, bus: InMemoryBus, subject: str, queue: str | None, max_pending: int) -> None:
        super().__init__(subject, queue, max_pending)
        self._bus = bus

    async def unsubscribe(self) -> None:
        """Stop receiving; the iteration ends (idempotent)."""
        self._bus._remove(self)  # pyright: ignore[reportPrivateUsage]
        self.end()


class InMemoryBus:
    """A ``MessageBus`` in one process: wildcards, queue groups, request/reply, headers.

    Example::

        bus = InMemoryBus()
        subscription = await bus.subscribe("orders.*")
        await bus.publish("orders.new", {"id": 1})
        message = await anext(subscription)  # BusMessage(subject="orders.new", ...)
    """

    def __init__(self, *, max_pending: int = 100_000) -> None:
        if max_pending < 1:
            raise ValueError(f"max_pending must be at least 1, got {max_pending}")
        self._max_pending = max_pending
        self._subscriptions: list[InMemorySubscription] = []
        self._closed = False

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"{len(self._subscriptions)} subscriptions"
        return f"InMemoryBus({state})"

    @property
    def is_connected(self) -> bool:
        """True until ``close()``."""
        return not self._closed

    async def publish(
        self, subject: str, data: BusPayload, *, headers: dict[str, str] | None = None
    ) -> None:
        """Deliver ``data`` to every matching subscription (one per queue group)."""
        self._check_open()
        check_subject(subject, wildcards=False)
        self._route(
            BusMessage(
                subject=subject, data=encode_bus_payload(data), headers=check_headers(headers)
            )
        )

    async def subscribe(self, subject: str, *, queue: str | None = None) -> InMemorySubscription:
        """The messages of ``subject`` (wildcards allowed); with ``queue``, as one member."""
        self._check_open()
        check_subject(subject, wildcards=True)
        if queue is not None:
            check_subject(queue, wildcards=False)
        subscription = InMemorySubscription(self, subject, queue, self._max_pending)
        self._subscriptions.append(subscription)
        return subscription

    async def request(
        self,
        subject: str,
        data: BusPayload,
        *,
        timeout_s: float = 5.0,
        headers: dict[str, str] | None = None,
    ) -> BusMessage:
        """Publish with a reply subject; the first reply (see the protocol for the errors)."""
        self._check_open()
        check_subject(subject, wildcards=False)
        payload = encode_bus_payload(data)
        checked = check_headers(headers)
        if not any(subject_matches(s.subject, subject) for s in self._subscriptions):
            raise NoRespondersError(f"no subscriber for request subject {subject!r}")
        inbox = await self.subscribe(f"_INBOX.{uuid.uuid4().hex}")
        try:
            self._route(
                BusMessage(subject=subject, data=payload, headers=checked, reply=inbox.subject)
            )
            try:
                async with asyncio.timeout(timeout_s):
                    return await anext(inbox)
            except TimeoutError:
                raise BusTimeoutError(
                    f"no reply to a request on {subject!r} within {timeout_s:g} s"
                ) from None
            except StopAsyncIteration:
                raise BusClosedError("the bus was closed while waiting for a reply") from None
        finally:
            await inbox.unsubscribe()

    async def close(self) -> None:
        """End every subscription; later calls raise ``BusClosedError`` (idempotent)."""
        self._closed = True
        subscriptions, self._subscriptions = self._subscriptions, []
        for subscription in subscriptions:
            subscription.end()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    # -- internals ------------------------------------------------------------------------------

    def _route(self, message: BusMessage) -> None:
        groups: dict[tuple[str, str], list[InMemorySubscription]] = {}
        for subscription in self._subscriptions:
            if not subject_matches(subscription.subject, message.subject):
                continue
            if subscription.queue is None:
                subscription.deliver(message)
            else:
                groups.setdefault((subscription.subject, subscription.queue), []).append(
                    subscription
                )
        for members in groups.values():
            random.choice(members).deliver(message)  # noqa: S311 - load spreading, not crypto

    def _remove(self, subscription: InMemorySubscription) -> None:
        if subscription in self._subscriptions:
            self._subscriptions.remove(subscription)

    def _check_open(self) -> None:
        if self._closed:
            raise BusClosedError("the bus is closed")
