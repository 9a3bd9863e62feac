"""The MessageBus protocol: NATS-style subjects, wildcards, queue groups, request/reply.

Rules every bus follows (``MessageBusConformance`` checks them):

- A subject is dot-separated tokens of printable characters without whitespace. Subscriptions may
  use ``*`` (exactly one token) and ``>`` (one or more tokens, last only); a subject one publishes
  or requests on may not. Anything else raises ``InvalidSubjectError`` before sending.
- ``publish`` takes ``bytes``, ``str`` (UTF-8), a pydantic model (its JSON) or a dict (compact
  JSON; a value JSON cannot hold raises ``SerializationError``). Headers are ``str`` to ``str``.
- Every plain subscription matching a subject gets each message; of the subscriptions sharing a
  queue group name on the same subject pattern, exactly one gets it. One publisher's messages reach
  a subscription in the order they were published.
- ``request`` publishes with a fresh reply subject and returns the first reply. Nobody subscribed:
  ``NoRespondersError`` at once; no reply in ``timeout_s``: ``BusTimeoutError``. A responder
  answers with ``publish(message.reply, ...)``.
- ``unsubscribe()`` ends the subscription's iteration; ``close()`` ends every subscription, and
  afterwards ``is_connected`` is false and every call raises ``BusClosedError``.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, Field

BusPayload = bytes | str | BaseModel | dict[str, Any]
"""What ``publish`` and ``request`` accept."""


class BusMessage(BaseModel):
    """One message as a subscriber receives it."""

    subject: str
    data: bytes
    headers: dict[str, str] = Field(default_factory=dict[str, str])
    reply: str | None = None
    """Where a reply goes (set on requests)."""

    @property
    def text(self) -> str:
        """``data`` decoded as UTF-8."""
        return self.data.decode("utf-8")

    def json_value(self) -> Any:
        """``data`` parsed as JSON."""
        return json.loads(self.data)


@runtime_checkable
class Subscription(Protocol):
    """Messages of one subscription, in order; async-iterable until unsubscribed or closed."""

    @property
    def subject(self) -> str: ...

    @property
    def queue(self) -> str | None: ...

    def __aiter__(self) -> AsyncIterator[BusMessage]: ...

    async def __anext__(self) -> BusMessage: ...

    async def unsubscribe(self) -> None: ...


@runtime_checkable
class MessageBus(Protocol):
    """Publish/subscribe and request/reply on subjects (NATS semantics)."""

    @property
    def is_connected(self) -> bool: ...

    async def publish(
        self, subject: str, data: BusPayload, *, headers: dict[str, str] | None = None
    ) -> None: ...

    async def subscribe(self, subject: str, *, queue: str | None = None) -> Subscription: ...

    async def request(
        self,
        subject: str,
        data: BusPayload,
        *,
        timeout_s: float = 5.0,
        headers: dict[str, str] | None = None,
    ) -> BusMessage: ...

    async def close(self) -> None: ...
