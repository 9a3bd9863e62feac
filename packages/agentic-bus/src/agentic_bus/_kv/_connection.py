"""One KV store's connection to its bucket: opened lazily, bound per event loop, closed once.

A ``KVConnection`` connects on first use (or uses a ``NatsBus`` / nats-py client it was given,
never closing what it did not open), creates or binds the bucket, and turns nats-py's errors
into ``StorageError`` naming the server (credentials redacted), the bucket and what was being
done. A client belongs to the event loop that opened it: a store used from another loop (a
second ``asyncio.run``) binds again there.

A store that keeps TTLs needs the bucket's stream to allow per-message TTLs (``allow_msg_ttl``,
nats-server ≥ 2.11): nats-py sets it on the KV buckets it creates, and it is switched on here
for an existing bucket without it. Expired messages are removed by the server (measured: within
~10 ms of the TTL) and leave no marker, because no ``limit_marker_ttl`` is set.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Generator, Sequence
from dataclasses import dataclass
from typing import Final

import nats.errors
import structlog
from nats.aio.client import Client as NatsClient
from nats.js import api
from nats.js.client import JetStreamContext
from nats.js.errors import APIError, NotFoundError
from nats.js.kv import KeyValue

from agentic_bus._bus import NatsBus
from agentic_bus._connect import connect_nats, redact_urls_in
from agentic_bus._jetstream import ensure_key_value
from agentic_bus._kv._framing import DEFAULT_PART_SIZE
from agentic_bus._nats_errors import describe_error
from agentic_core import BusError, StorageError, redact_urls

__all__ = [
    "DEFAULT_MAX_VALUE_SIZE",
    "BoundBucket",
    "KVConnection",
    "KVTarget",
    "kv_stream",
    "kv_subject_prefix",
]

_log = structlog.get_logger("agentic_bus")

KVTarget = str | Sequence[str] | NatsBus | NatsClient
"""Where a KV store connects: URL(s), a ``NatsBus`` or a connected nats-py client."""

DEFAULT_MAX_VALUE_SIZE: Final = 1024 * 1024
"""The ``max_value_size`` of the buckets we create (the server's default ``max_payload``)."""
_HEADER_ROOM: Final = 4096
"""Bytes kept free in each message for headers (a part is at most the limit minus this)."""
_MAX_SUBJECT_BYTES: Final = 3500
"""Below the server's 4 KiB ``max_control_line``, with room for the request's reply inbox."""


def kv_stream(bucket: str) -> str:
    """The JetStream stream that holds KV bucket ``bucket`` (nats-py's naming)."""
    return f"KV_{bucket}"


def kv_subject_prefix(bucket: str) -> str:
    """What the subject of every key of ``bucket`` starts with (``$KV.<bucket>.``)."""
    return f"$KV.{bucket}."


@dataclass(slots=True)
class BoundBucket:
    """The connection and bucket of one event loop."""

    loop: asyncio.AbstractEventLoop
    client: NatsClient
    js: JetStreamContext
    kv: KeyValue
    stream: str
    prefix: str
    direct: bool
    part_size: int
    inline_limit: int

    def subject(self, kv_key: str) -> str:
        """The subject of ``kv_key`` in this bucket's stream."""
        return self.prefix + kv_key

    async def get(self, subject: str) -> api.RawStreamMsg | None:
        """The last message on ``subject`` (a value, a part or a tombstone), or None."""
        try:
            return await self.js.get_msg(self.stream, subject=subject, direct=self.direct)  # pyright: ignore[reportUnknownMemberType]
        except NotFoundError:
            return None


class KVConnection:
    """A store's way to its bucket (see the module docstring).

    Args:
        target: ``nats://`` URL(s), a ``NatsBus``, or a connected nats-py client.
        bucket: the KV bucket's name (``[A-Za-z0-9_-]+``).
        history: revisions kept per key when the bucket is created.
        replicas: stream replicas when the bucket is created.
        connect_timeout_s: bound on the first connection (own connections only).
        timeout_s: bound on each JetStream request.
        inline_limit: bodies larger than this are written in parts.
        needs_ttl: make sure the bucket allows per-message TTLs.
        owner: the store's class name, for the connection name and messages.
    """

    def __init__(
        self,
        target: KVTarget,
        *,
        bucket: str,
        history: int,
        replicas: int,
        connect_timeout_s: float,
        timeout_s: float,
        inline_limit: int,
        needs_ttl: bool,
        owner: str,
    ) -> None:
        if not bucket or not all(
            char.isascii() and (char.isalnum() or char in "-_") for char in bucket
        ):
            raise ValueError(f"a KV bucket name is [A-Za-z0-9_-]+, got {bucket!r}")
        if not connect_timeout_s > 0:
            raise ValueError(f"connect_timeout_s must be positive, got {connect_timeout_s!r}")
        if not timeout_s > 0:
            raise ValueError(f"timeout_s must be positive, got {timeout_s!r}")
        if inline_limit < 1:
            raise ValueError(f"inline_limit must be at least 1 byte, got {inline_limit!r}")
        if not 1 <= replicas <= 5:
            raise ValueError(f"replicas must be 1 to 5, got {replicas!r}")
        self.bucket = bucket
        self.timeout_s = timeout_s
        self._history = history
        self._replicas = replicas
        self._connect_timeout_s = connect_timeout_s
        self._inline_limit = inline_limit
        self._needs_ttl = needs_ttl
        self._owner = owner
        self._bus: NatsBus | None = None
        self._given: NatsClient | None = None
        self._servers: list[str] = []
        if isinstance(target, NatsBus):
            self._bus = target
            self.label = target.url
        elif isinstance(target, NatsClient):
            self._given = target
            self.label = _client_label(target)
        else:
            self._servers = [target] if isinstance(target, str) else list(target)
            if not self._servers:
                raise ValueError("servers must name at least one nats:// URL")
            self.label = redact_urls(self._servers)
        self._own: NatsClient | None = None
        self._own_loop: asyncio.AbstractEventLoop | None = None
        self._state: BoundBucket | None = None
        self._locks: dict[asyncio.AbstractEventLoop, asyncio.Lock] = {}
        self._closed = False

    @property
    def where(self) -> str:
        """``NATS KV bucket '<bucket>' at <url>``, for messages."""
        return f"NATS KV bucket {self.bucket!r} at {self.label}"

    async def close(self) -> None:
        """Close the connection this bucket opened (idempotent); a given one is left open."""
        self._closed = True
        self._state = None
        own, self._own = self._own, None
        if own is not None and not own.is_closed and self._own_loop is asyncio.get_running_loop():
            with contextlib.suppress(Exception):
                await own.close()

    async def bound(self) -> BoundBucket:
        """The bucket on this event loop's connection (connected and bound on first use)."""
        if self._closed:
            raise StorageError(
                f"the {self._owner} of NATS KV bucket {self.bucket!r} at {self.label} is closed"
            )
        loop = asyncio.get_running_loop()
        state = self._state
        if state is not None and state.loop is loop and not state.client.is_closed:
            return state
        lock = self._locks.get(loop)
        if lock is None:
            for stale in [stale for stale in self._locks if stale.is_closed()]:
                del self._locks[stale]
            lock = self._locks[loop] = asyncio.Lock()
        async with lock:
            state = self._state
            if state is not None and state.loop is loop and not state.client.is_closed:
                return state
            client = await self._client(loop)
            with self.errors("opening the bucket"):
                state = await self._bind(loop, client)
            self._state = state
            return state

    async def _client(self, loop: asyncio.AbstractEventLoop) -> NatsClient:
        if self._given is not None:
            if self._given.is_closed:
                raise StorageError(f"the nats-py client given to the {self._owner} is closed")
            return self._given
        if self._bus is not None:
            try:
                client = await self._bus.client()
            except BusError as exc:
                raise StorageError(
                    f"{self._owner} (NATS KV bucket {self.bucket!r}): {exc}"
                ) from None
            self.label = _client_label(client)
            return client
        own = self._own
        if own is not None and self._own_loop is loop and not own.is_closed:
            return own
        # A client belongs to the loop that opened it; one of a finished loop is dropped.
        try:
            own = await connect_nats(
                self._servers,
                name=f"agentic {self._owner}",
                connect_timeout_s=self._connect_timeout_s,
            )
        except BusError as exc:
            raise StorageError(f"{self._owner} (NATS KV bucket {self.bucket!r}): {exc}") from None
        self._own, self._own_loop = own, loop
        return own

    async def _bind(self, loop: asyncio.AbstractEventLoop, client: NatsClient) -> BoundBucket:
        js = client.jetstream(timeout=self.timeout_s)  # pyright: ignore[reportUnknownMemberType]
        kv = await ensure_key_value(
            js,
            api.KeyValueConfig(
                bucket=self.bucket,
                history=self._history,
                direct=True,
                max_value_size=DEFAULT_MAX_VALUE_SIZE,
                storage=api.StorageType.FILE,
                replicas=self._replicas,
            ),
        )
        stream = kv_stream(self.bucket)
        info = await js.stream_info(stream)  # pyright: ignore[reportUnknownMemberType]
        config = info.config
        if self._needs_ttl and not config.allow_msg_ttl:
            config.allow_msg_ttl = True  # can be switched on, never off (server >= 2.11)
            info = await js.update_stream(config)  # pyright: ignore[reportUnknownMemberType]
            config = info.config
            _log.info("kv_bucket_msg_ttl_enabled", bucket=self.bucket, url=self.label)
        limit = client.max_payload
        if config.max_msg_size is not None and config.max_msg_size > 0:
            limit = min(limit, config.max_msg_size)
        part_size = max(1024, min(DEFAULT_PART_SIZE, limit - _HEADER_ROOM))
        _log.debug("kv_bucket_ready", bucket=self.bucket, url=self.label, part_size=part_size)
        return BoundBucket(
            loop=loop,
            client=client,
            js=js,
            kv=kv,
            stream=stream,
            prefix=kv_subject_prefix(self.bucket),
            direct=bool(config.allow_direct),
            part_size=part_size,
            inline_limit=min(self._inline_limit, part_size),
        )

    @contextlib.contextmanager
    def errors(self, what: str) -> Generator[None]:
        """nats-py's errors raised inside as ``StorageError`` naming the server and ``what``."""
        try:
            yield
        except (TimeoutError, nats.errors.Error, BusError) as exc:
            self._state = None  # bind again (and re-check the bucket) on the next call
            raise self._storage_error(exc, what) from None

    def _storage_error(self, exc: BaseException, what: str) -> StorageError:
        if isinstance(exc, APIError):
            detail = exc.description or str(exc)
            return StorageError(f"{self.where} refused {what}: {detail} (err_code {exc.err_code})")
        if isinstance(exc, BusError):
            return StorageError(f"{self.where}: {what}: {exc}")
        detail = redact_urls_in(describe_error(exc), self._servers)
        return StorageError(
            f"cannot reach {self.where} for {what} within {self.timeout_s:g} s ({detail}); is "
            "nats-server running with JetStream, and is the URL right?"
        )

    # -- subjects --------------------------------------------------------------------------------

    def fits(self, kv_key: str) -> bool:
        """Whether requests about ``kv_key`` (and its parts) stay within the subject limit.

        A longer subject would make the server drop the connection (``max_control_line``).
        """
        stream, prefix = kv_stream(self.bucket), kv_subject_prefix(self.bucket)
        longest = f"$JS.API.DIRECT.GET.{stream}.{prefix}{kv_key}.part.{'x' * 12}"
        return len(longest.encode()) + 16 <= _MAX_SUBJECT_BYTES

    def check_key(self, kv_key: str, what: str) -> None:
        """Refuse a key too long for a NATS subject (see ``fits``)."""
        if not self.fits(kv_key):
            raise StorageError(
                f"{what} is too long for NATS KV bucket {self.bucket!r}: {len(kv_key):,} bytes "
                f"once escaped, over the {_MAX_SUBJECT_BYTES:,}-byte subject limit this store "
                "keeps below the server's max_control_line; use a shorter key"
            )


def _client_label(client: NatsClient) -> str:
    """The (redacted) URL of a client we were given, for messages."""
    url = client.connected_url
    if url is None:
        return "the given nats-py client's server"
    return redact_urls(url.geturl())
