"""NatsBus: core's ``MessageBus`` on a real NATS connection (nats-py)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from typing import Any, Self

import nats.errors
import structlog
from nats.aio.client import Client as NatsClient
from nats.aio.msg import Msg
from nats.aio.subscription import Subscription as NatsSubscriptionHandle

from agentic_bus._connect import DEFAULT_NATS_URL, connect_nats, flush_ordered
from agentic_bus._errors import PayloadTooLargeError
from agentic_core import (
    BusClosedError,
    BusError,
    BusMessage,
    BusPayload,
    BusTimeoutError,
    NoRespondersError,
    redact_urls,
)
from agentic_core.stores import (
    QueuedSubscription,
    check_headers,
    check_subject,
    encode_bus_payload,
)

__all__ = ["NatsBus", "NatsSubscription"]

_log = structlog.get_logger("agentic_bus")


def bus_message(msg: Msg) -> BusMessage:
    """A nats-py message as core's ``BusMessage``."""
    return BusMessage(
        subject=msg.subject,
        data=msg.data,
        headers=dict(msg.headers or {}),
        reply=msg.reply or None,
    )


class NatsSubscription(QueuedSubscription):
    """One subscription of a ``NatsBus``: iterate it for ``BusMessage``s, in order."""

    def __init__(self, subject: str, queue: str | None, max_pending: int) -> None:
        super().__init__(subject, queue, max_pending)
        self._handle: NatsSubscriptionHandle | None = None

    async def unsubscribe(self) -> None:
        """Stop receiving; the iteration ends after the messages already received (idempotent)."""
        handle, self._handle = self._handle, None
        if handle is not None:
            # A closed connection took the subscription with it.
            with contextlib.suppress(
                nats.errors.ConnectionClosedError, nats.errors.BadSubscriptionError
            ):
                await handle.unsubscribe()
        self.end()

    async def _receive(self, msg: Msg) -> None:
        """nats-py's callback."""
        self.deliver(bus_message(msg))


class NatsBus:
    """A ``MessageBus`` over NATS: subjects with ``*``/``>`` wildcards, queue groups,
    request/reply with timeouts, headers; reconnects on its own after a server restart.

    Connect with ``await NatsBus.connect(url)`` (or ``async with NatsBus(url) as bus``; any
    first call connects too). An unreachable server raises ``NatsConnectionError`` naming the
    URL with credentials redacted; reconnect attempts after a connection loss are logged as one
    structlog line each, never as tracebacks. Subjects and headers are checked before sending
    (``InvalidSubjectError``); a message over the server's ``max_payload`` raises
    ``PayloadTooLargeError``.

    Example:
        ```python
        bus = await NatsBus.connect("nats://127.0.0.1:4222")
        sub = await bus.subscribe("orders.*")
        await bus.publish("orders.new", {"id": 1})
        message = await anext(sub)  # BusMessage(subject="orders.new", ...)
        await bus.close()
        ```

    Args:
        servers: a ``nats://`` URL, or several for a cluster.
        name: the connection name the server shows.
        connect_timeout_s: bound on the first connection.
        max_pending: messages a subscription buffers before it drops (and counts) more.
        client: an already connected nats-py client to use (the bus then never closes it).
        options: more ``nats.connect`` options (``user_credentials``, ``tls``, ...).
    """

    def __init__(
        self,
        servers: str | Sequence[str] = DEFAULT_NATS_URL,
        *,
        name: str | None = None,
        connect_timeout_s: float = 5.0,
        max_pending: int = 65_536,
        client: NatsClient | None = None,
        **options: Any,
    ) -> None:
        if max_pending < 1:
            raise ValueError(f"max_pending must be at least 1, got {max_pending}")
        self._servers = [servers] if isinstance(servers, str) else list(servers)
        self._name = name
        self._connect_timeout_s = connect_timeout_s
        self._options = options
        self._max_pending = max_pending
        self._client = client
        self._owns_client = client is None
        self._connecting: asyncio.Lock | None = None
        self._subscriptions: set[NatsSubscription] = set()
        self._closed = False

    @classmethod
    async def connect(
        cls, servers: str | Sequence[str] = DEFAULT_NATS_URL, **kwargs: Any
    ) -> NatsBus:
        """A connected bus (``NatsConnectionError`` if the server cannot be reached)."""
        bus = cls(servers, **kwargs)
        await bus.client()
        return bus

    def __repr__(self) -> str:
        state = "closed" if self._closed else ("connected" if self.is_connected else "idle")
        return f"NatsBus({redact_urls(self._servers)!r}, {state})"

    @property
    def url(self) -> str:
        """The server URL(s), credentials redacted (safe for logs and errors)."""
        return redact_urls(self._servers)

    @property
    def is_connected(self) -> bool:
        """True while the connection is up (false before the first call and after ``close()``)."""
        return not self._closed and self._client is not None and self._client.is_connected

    async def client(self) -> NatsClient:
        """The nats-py client, connecting on first use (for JetStream and other advanced use)."""
        if self._closed:
            raise BusClosedError("the NatsBus was closed")
        if self._client is not None:
            return self._client
        if self._connecting is None:
            self._connecting = asyncio.Lock()
        async with self._connecting:
            if self._client is None:
                self._client = await connect_nats(
                    self._servers,
                    name=self._name,
                    connect_timeout_s=self._connect_timeout_s,
                    **self._options,
                )
            if self._closed:  # closed while connecting
                await self._client.close()
                raise BusClosedError("the NatsBus was closed")
            return self._client

    async def publish(
        self, subject: str, data: BusPayload, *, headers: dict[str, str] | None = None
    ) -> None:
        """Publish ``data`` (bytes, text, a pydantic model or a dict) on ``subject``."""
        check_subject(subject, wildcards=False)
        payload = encode_bus_payload(data)
        checked = check_headers(headers) or None
        client = await self.client()
        with self._errors(subject, len(payload)):
            await client.publish(subject, payload, headers=checked)

    async def subscribe(self, subject: str, *, queue: str | None = None) -> NatsSubscription:
        """The messages of ``subject`` (wildcards allowed); with ``queue``, as one member.

        Returns once the server has the subscription, so a message published afterwards from
        any connection reaches it.
        """
        check_subject(subject, wildcards=True)
        if queue is not None:
            check_subject(queue, wildcards=False)
        client = await self.client()
        subscription = NatsSubscription(subject, queue, self._max_pending)
        with self._errors(subject, 0):
            subscription._handle = await client.subscribe(  # pyright: ignore[reportPrivateUsage, reportUnknownMemberType]
                subject,
                queue=queue or "",
                cb=subscription._receive,  # pyright: ignore[reportPrivateUsage]
                pending_msgs_limit=-1,  # bounded by our queue, which counts what it drops
                pending_bytes_limit=-1,
            )
            await flush_ordered(client)
        self._subscriptions.add(subscription)
        return subscription

    async def request(
        self,
        subject: str,
        data: BusPayload,
        *,
        timeout_s: float = 5.0,
        headers: dict[str, str] | None = None,
    ) -> BusMessage:
        """Publish with a fresh reply subject and return the first reply.

        Raises:
            NoRespondersError: nobody subscribes to ``subject`` (at once).
            BusTimeoutError: no reply within ``timeout_s``.
        """
        check_subject(subject, wildcards=False)
        if not timeout_s > 0:
            raise ValueError(f"timeout_s must be positive, got {timeout_s!r}")
        payload = encode_bus_payload(data)
        checked = check_headers(headers) or None
        client = await self.client()
        reply: Msg | None = None
        with self._errors(subject, len(payload)):
            try:
                reply = await client.request(subject, payload, timeout=timeout_s, headers=checked)
            except nats.errors.NoRespondersError:
                raise NoRespondersError(f"no subscriber for request subject {subject!r}") from None
            except nats.errors.TimeoutError:
                raise BusTimeoutError(
                    f"no reply to a request on {subject!r} within {timeout_s:g} s"
                ) from None
        assert reply is not None  # noqa: S101 - the with block raised otherwise
        return bus_message(reply)

    async def flush(self, timeout_s: float = 5.0) -> None:
        """Wait until the server has everything published so far."""
        client = await self.client()
        with self._errors("", 0):
            await flush_ordered(client, timeout_s)

    async def close(self) -> None:
        """End every subscription and the connection; later calls raise ``BusClosedError``.

        Does not raise when the server is away: the connection is gone either way, and what
        nats-py still held for a reconnect is lost (logged as ``nats_close_failed``).
        """
        if self._closed:
            return
        self._closed = True
        subscriptions, self._subscriptions = self._subscriptions, set()
        for subscription in subscriptions:
            subscription.end()
        client = self._client
        if client is not None and self._owns_client and not client.is_closed:
            try:
                await client.drain()
            except Exception:  # noqa: BLE001 - closing anyway
                await _close_dead(client, self.url)

    async def __aenter__(self) -> Self:
        await self.client()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    def _errors(self, subject: str, size: int) -> _TranslateErrors:
        return _TranslateErrors(self, subject, size)


async def _close_dead(client: NatsClient, url: str) -> None:
    """Close a connection that could not drain (the server is away, nats-py reconnecting).

    nats-py's ``close()`` then writes its reconnect buffer to the dead socket, and fails:
    ``ConnectionResetError``, or on Python 3.12-3.13 (before cpython#136234) a ``TypeError`` from
    asyncio's ``writelines``. Its status is ``CLOSED`` and its tasks are cancelled by then.
    """
    try:
        await client.close()
    except Exception as exc:  # noqa: BLE001 - the connection is gone either way
        _log.warning("nats_close_failed", url=url, error=f"{type(exc).__name__}: {exc}")


class _TranslateErrors:
    """nats-py's errors as core's ``BusError`` family, naming the subject."""

    def __init__(self, bus: NatsBus, subject: str, size: int) -> None:
        self._bus = bus
        self._subject = subject
        self._size = size

    def __enter__(self) -> None:
        return None

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, _tb: object
    ) -> bool:
        if exc is None or isinstance(exc, BusError | asyncio.CancelledError):
            return False
        where = f" on {self._subject!r}" if self._subject else ""
        if isinstance(exc, nats.errors.MaxPayloadError):
            client = self._bus._client  # pyright: ignore[reportPrivateUsage]
            limit = client.max_payload if client is not None else 0
            raise PayloadTooLargeError(
                f"a {self._size:,}-byte message{where} is over the server's max_payload "
                f"({limit:,} bytes): send a reference to it (a KV key) or split it"
            ) from None
        if isinstance(exc, nats.errors.ConnectionClosedError):
            raise BusClosedError(f"the NATS connection is closed{where}") from None
        if isinstance(exc, nats.errors.Error):
            detail = f"{type(exc).__name__}: {exc}"
            raise BusError(f"NATS refused the operation{where}: {detail}") from exc
        return False
