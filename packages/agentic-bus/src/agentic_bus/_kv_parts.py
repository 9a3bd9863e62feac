"""One JetStream KV bucket of a store: the connection, values of any size in parts, scans.

Both KV stores (``NatsKVStateStore``, ``NatsCheckpointStore``) keep their data through a
``KVBucket``. It connects lazily (or uses a ``NatsBus`` / nats-py client it was given, never
closing what it did not open), creates or binds the bucket, and turns nats-py's errors into
``StorageError`` naming the server (credentials redacted), the bucket and the key.

**Framing.** Every value we write starts with a two-byte tag, so a value another program left in
the bucket is told from ours (``StoredValueError`` naming the key) instead of being misread:
``\\x00J`` + the body (inline), or ``\\x00P`` + a JSON manifest.

**Parts.** A body over the inline limit (512 KiB by default; the bucket's ``max_value_size`` is
1 MiB) is written as immutable part keys ``<key>.part.<write id>.<n>`` (parts of 512 KiB, written
in parallel, each create-only), then a small manifest (write id, parts count, size, sha256) under
the key itself. The write id, fresh for every write, keeps the parts immutable: an overwrite
writes new parts beside the old ones and never changes what an earlier manifest points to. A
reader checks the size and sha256; a missing or corrupt part raises ``StoredValueError``, unless
the key changed meanwhile (an overwrite or delete removed the parts it was reading), in which
case it reads the key again.

**Writes** are compare-and-set on the key's last revision (``Nats-Expected-Last-Subject-
Sequence``), retried on a conflict, so each write knows exactly which value it replaced; once the
new value is in place, the replaced value's parts are purged. Deletes purge the key's messages up
to the revision read (``purge`` with a subject filter and a sequence bound, which leaves no
tombstone), so a value written meanwhile survives.

**TTL.** A write with ``ttl_s`` carries the per-message TTL header ``Nats-TTL`` (nats-server
≥ 2.11; the bucket's stream needs ``allow_msg_ttl``, which nats-py sets on the KV buckets it
creates, and which is switched on here for an existing bucket without it). The server accepts
a Go duration of at least one second (``"1s"``, ``"1500ms"``; ``"999ms"`` is refused with
err_code 10165), so shorter TTLs are raised to one second. Expired messages are removed by the
server (measured: within ~10 ms of the TTL) and leave no marker, because no
``limit_marker_ttl`` is set. Parts of a value with a TTL live a minute longer than its manifest,
so a reader never finds the manifest without its parts.
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import hashlib
import json
import math
import secrets
from collections.abc import Generator, Mapping, Sequence
from dataclasses import dataclass
from typing import Final, Self, cast

import nats.errors
import structlog
from nats.aio.client import Client as NatsClient
from nats.aio.msg import Msg
from nats.js import api
from nats.js.client import JetStreamContext
from nats.js.errors import APIError, KeyWrongLastSequenceError, NotFoundError
from nats.js.kv import KeyValue
from pydantic import BaseModel, ConfigDict, ValidationError

from agentic_bus._bus import NatsBus
from agentic_bus._connect import connect_nats
from agentic_bus._jetstream import ensure_key_value
from agentic_bus._urls import redact_urls
from agentic_core import BusError, StorageError

__all__ = [
    "DEFAULT_MAX_VALUE_SIZE",
    "DEFAULT_PART_SIZE",
    "KVBacked",
    "KVBucket",
    "KVTarget",
    "Manifest",
    "RevisionMismatchError",
    "ScanEntry",
    "StoredValue",
    "StoredValueError",
    "Written",
    "ttl_header",
]

_log = structlog.get_logger("agentic_bus")

KVTarget = str | Sequence[str] | NatsBus | NatsClient
"""Where a KV store connects: URL(s), a ``NatsBus`` or a connected nats-py client."""

DEFAULT_PART_SIZE: Final = 512 * 1024
"""Bytes per part, and the default inline limit of a value."""
DEFAULT_MAX_VALUE_SIZE: Final = 1024 * 1024
"""The ``max_value_size`` of the buckets we create (the server's default ``max_payload``)."""

_TAG_INLINE: Final = b"\x00J"
_TAG_PARTS: Final = b"\x00P"
_TTL_HEADER: Final = "Nats-TTL"
_EXPECTED_LAST: Final = "Nats-Expected-Last-Subject-Sequence"
_KV_OPERATION: Final = "KV-Operation"
_WRONG_LAST_SEQUENCE: Final = frozenset({10071, 10164})
_MIN_TTL_MS: Final = 1000
_PART_TTL_GRACE_S: Final = 60.0
_HEADER_ROOM: Final = 4096
"""Bytes kept free in each message for headers (a part is at most the limit minus this)."""
_MAX_CAS_ATTEMPTS: Final = 64
_MAX_READ_ATTEMPTS: Final = 4
_SCAN_BATCH: Final = 5000
_MAX_SUBJECT_BYTES: Final = 3500
"""Below the server's 4 KiB ``max_control_line``, with room for the request's reply inbox."""


def ttl_header(ttl_s: float) -> str:
    """The ``Nats-TTL`` value for ``ttl_s`` seconds (milliseconds, at least the server's 1 s)."""
    return f"{max(_MIN_TTL_MS, math.ceil(ttl_s * 1000))}ms"


class StoredValueError(StorageError):
    """A stored value that is not ours, or one in parts whose parts are missing or corrupt."""

    def __init__(self, message: str, *, kv_key: str, reason: str) -> None:
        super().__init__(message)
        self.kv_key = kv_key
        self.reason = reason


class RevisionMismatchError(Exception):
    """A compare-and-set found another revision than the one it expected."""


class Manifest(BaseModel):
    """Where a value in parts is: ``<key>.part.<id>.<0..parts-1>``, with its size and sha256."""

    model_config = ConfigDict(frozen=True)

    v: int = 1
    id: str
    parts: int
    size: int
    sha256: str


@dataclass(frozen=True, slots=True)
class StoredValue:
    """A value read back: its body (parts joined and checked), revision and message headers."""

    kv_key: str
    body: bytes
    revision: int
    headers: Mapping[str, str]
    manifest: Manifest | None


@dataclass(frozen=True, slots=True)
class ScanEntry:
    """One key a scan found: the KV key, its revision, headers and (unless headers only) data."""

    kv_key: str
    revision: int
    headers: Mapping[str, str]
    data: bytes


@dataclass(frozen=True, slots=True)
class _Previous:
    """The message a write replaced or a delete removed (live or a tombstone)."""

    revision: int
    headers: Mapping[str, str]
    live: bool
    manifest: Manifest | None


@dataclass(slots=True)
class _Bound:
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


@dataclass(frozen=True, slots=True)
class Written:
    """What a write did: the new revision, and the value it replaced (None if there was none)."""

    revision: int
    previous_headers: Mapping[str, str] | None


class KVBacked:
    """What every store over one ``KVBucket`` shares: its name, URL, repr and lifecycle."""

    _bucket: KVBucket

    @property
    def bucket(self) -> str:
        """The KV bucket's name."""
        return self._bucket.bucket

    @property
    def url(self) -> str:
        """The server's URL with credentials masked."""
        return self._bucket.label

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._bucket.label!r}, bucket={self._bucket.bucket!r})"

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def close(self) -> None:
        """Close the connection the store opened (idempotent); a given bus or client stays open."""
        await self._bucket.close()


class KVBucket:
    """A KV bucket as one store uses it (see the module docstring for the layout and framing).

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
        self._history = history
        self._replicas = replicas
        self._connect_timeout_s = connect_timeout_s
        self._timeout_s = timeout_s
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
        self._state: _Bound | None = None
        self._locks: dict[asyncio.AbstractEventLoop, asyncio.Lock] = {}
        self._closed = False

    # -- connection ------------------------------------------------------------------------------

    async def close(self) -> None:
        """Close the connection this bucket opened (idempotent); a given one is left open."""
        self._closed = True
        self._state = None
        own, self._own = self._own, None
        if own is not None and not own.is_closed and self._own_loop is asyncio.get_running_loop():
            with contextlib.suppress(Exception):
                await own.close()

    async def _bound(self) -> _Bound:
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

    async def _bind(self, loop: asyncio.AbstractEventLoop, client: NatsClient) -> _Bound:
        js = client.jetstream(timeout=self._timeout_s)  # pyright: ignore[reportUnknownMemberType]
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
        stream = f"KV_{self.bucket}"
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
        return _Bound(
            loop=loop,
            client=client,
            js=js,
            kv=kv,
            stream=stream,
            prefix=f"$KV.{self.bucket}.",
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
        where = f"NATS KV bucket {self.bucket!r} at {self.label}"
        if isinstance(exc, APIError):
            detail = exc.description or str(exc)
            return StorageError(f"{where} refused {what}: {detail} (err_code {exc.err_code})")
        if isinstance(exc, BusError):
            return StorageError(f"{where}: {what}: {exc}")
        detail = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        for url in self._servers:
            detail = detail.replace(url, redact_urls(url))
        return StorageError(
            f"cannot reach {where} for {what} within {self._timeout_s:g} s ({detail}); is "
            "nats-server running with JetStream, and is the URL right?"
        )

    # -- subjects --------------------------------------------------------------------------------

    def fits(self, kv_key: str) -> bool:
        """Whether requests about ``kv_key`` (and its parts) stay within the subject limit.

        A longer subject would make the server drop the connection (``max_control_line``).
        """
        longest = f"$JS.API.DIRECT.GET.KV_{self.bucket}.$KV.{self.bucket}.{kv_key}.part.{'x' * 12}"
        return len(longest.encode()) + 16 <= _MAX_SUBJECT_BYTES

    def check_key(self, kv_key: str, what: str) -> None:
        """Refuse a key too long for a NATS subject (see ``fits``)."""
        if not self.fits(kv_key):
            raise StorageError(
                f"{what} is too long for NATS KV bucket {self.bucket!r}: {len(kv_key):,} bytes "
                f"once escaped, over the {_MAX_SUBJECT_BYTES:,}-byte subject limit this store "
                "keeps below the server's max_control_line; use a shorter key"
            )

    # -- reads -----------------------------------------------------------------------------------

    async def read(self, kv_key: str, *, what: str) -> StoredValue | None:
        """The value under ``kv_key`` (parts joined and checked), or None if there is none.

        Raises:
            StoredValueError: the value is not ours, or its parts are missing or corrupt.
            StorageError: the server cannot be reached.
        """
        if not self.fits(kv_key):
            return None  # never stored: writes refuse such keys
        state = await self._bound()
        subject = state.prefix + kv_key
        with self.errors(f"reading {what}"):
            for _ in range(_MAX_READ_ATTEMPTS):
                msg = await self._raw_get(state, subject)
                if msg is None or _is_tombstone(_headers(msg)):
                    return None
                revision, headers = msg.seq or 0, _headers(msg)
                data = msg.data or b""
                manifest = self._manifest_of(kv_key, data, what)
                if manifest is None:
                    return StoredValue(kv_key, data[len(_TAG_INLINE) :], revision, headers, None)
                body, problem = await self._join_parts(state, kv_key, manifest)
                if problem is None:
                    return StoredValue(kv_key, body, revision, headers, manifest)
                latest = await self._raw_get(state, subject)
                if latest is not None and latest.seq == revision:
                    raise StoredValueError(
                        f"NATS KV bucket {self.bucket!r} at {self.label}: {what} is a value in "
                        f"{manifest.parts} parts and {problem}; write it again or delete it",
                        kv_key=kv_key,
                        reason=f"a value in {manifest.parts} parts and {problem}",
                    )
                # Overwritten or deleted while its parts were read: read the key again.
            raise StorageError(
                f"NATS KV bucket {self.bucket!r} at {self.label}: {what} changed "
                f"{_MAX_READ_ATTEMPTS} times while it was read; try again"
            )

    async def exists(self, kv_key: str, *, what: str) -> bool:
        """Whether ``kv_key`` holds a live value (of any program; its parts are not read)."""
        if not self.fits(kv_key):
            return False
        state = await self._bound()
        with self.errors(f"reading {what}"):
            msg = await self._raw_get(state, state.prefix + kv_key)
        return msg is not None and not _is_tombstone(_headers(msg))

    async def headers(self, kv_key: str, *, what: str) -> Mapping[str, str] | None:
        """The headers of the live value under ``kv_key``, or None if there is none."""
        if not self.fits(kv_key):
            return None
        state = await self._bound()
        with self.errors(f"reading {what}"):
            msg = await self._raw_get(state, state.prefix + kv_key)
        if msg is None or _is_tombstone(_headers(msg)):
            return None
        return _headers(msg)

    async def _raw_get(self, state: _Bound, subject: str) -> api.RawStreamMsg | None:
        try:
            return await state.js.get_msg(state.stream, subject=subject, direct=state.direct)  # pyright: ignore[reportUnknownMemberType]
        except NotFoundError:
            return None

    def _manifest_of(self, kv_key: str, data: bytes, what: str) -> Manifest | None:
        """None for an inline value, its manifest for one in parts; else ``StoredValueError``."""
        tag = data[: len(_TAG_INLINE)]
        if tag == _TAG_INLINE:
            return None
        if tag == _TAG_PARTS:
            try:
                return Manifest.model_validate_json(data[len(_TAG_PARTS) :])
            except ValidationError:
                reason = "a parts manifest that does not parse"
        else:
            reason = f"a value not written by agentic (it starts with {data[:24]!r})"
        raise StoredValueError(
            f"NATS KV bucket {self.bucket!r} at {self.label}: {what} holds {reason}; another "
            "program uses this bucket: choose another bucket, or delete the key",
            kv_key=kv_key,
            reason=reason,
        )

    async def _join_parts(
        self, state: _Bound, kv_key: str, manifest: Manifest
    ) -> tuple[bytes, str | None]:
        """The body ``manifest`` describes, or a description of what is wrong with its parts."""
        subjects = [
            f"{state.prefix}{_part_key(kv_key, manifest.id, n)}" for n in range(manifest.parts)
        ]
        messages = await asyncio.gather(*(self._raw_get(state, s) for s in subjects))
        for n, msg in enumerate(messages):
            if msg is None or _is_tombstone(_headers(msg)):
                return b"", f"part {n} is missing (expired or deleted)"
        body = b"".join(msg.data or b"" for msg in messages if msg is not None)
        if len(body) != manifest.size or hashlib.sha256(body).hexdigest() != manifest.sha256:
            return b"", "its parts do not match its size and sha256 (corrupt)"
        return body, None

    # -- writes ----------------------------------------------------------------------------------

    async def write(
        self,
        kv_key: str,
        body: bytes,
        *,
        what: str,
        ttl_s: float | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> Written:
        """Store ``body`` under ``kv_key`` (in parts if large), replacing any value and its TTL.

        Raises:
            StorageError: the server cannot be reached, or refused the write.
        """
        self.check_key(kv_key, what)
        state = await self._bound()
        subject = state.prefix + kv_key
        manifest: Manifest | None = None
        with self.errors(f"writing {what}"):
            if len(body) > state.inline_limit:
                manifest = await self._write_parts(state, kv_key, body, ttl_s)
                data = _TAG_PARTS + manifest.model_dump_json().encode()
            else:
                data = _TAG_INLINE + body
            try:
                revision, previous = await self._compare_and_publish(
                    state, subject, data, ttl_s, headers, what
                )
            except BaseException:
                if manifest is not None:
                    await self._purge_parts(state, kv_key, manifest.id)
                raise
        if previous is not None and previous.manifest is not None:
            await self._purge_parts(state, kv_key, previous.manifest.id)
        if previous is None or not previous.live:
            return Written(revision, None)
        return Written(revision, previous.headers)

    async def _compare_and_publish(
        self,
        state: _Bound,
        subject: str,
        data: bytes,
        ttl_s: float | None,
        headers: Mapping[str, str] | None,
        what: str,
    ) -> tuple[int, _Previous | None]:
        """Publish ``data`` over exactly the message read before (retried on a conflict)."""
        for _ in range(_MAX_CAS_ATTEMPTS):
            previous = await self._previous(state, subject)
            sent = dict(headers or {})
            sent[_EXPECTED_LAST] = str(previous.revision if previous is not None else 0)
            if ttl_s is not None:
                sent[_TTL_HEADER] = ttl_header(ttl_s)
            try:
                ack = await state.js.publish(subject, data, headers=sent)  # pyright: ignore[reportUnknownMemberType]
            except APIError as exc:
                if exc.err_code in _WRONG_LAST_SEQUENCE:
                    continue  # written or expired meanwhile: read again
                raise  # (a bucket that lost allow_msg_ttl is re-bound, and fixed, next call)
            return int(ack.seq), previous
        raise StorageError(
            f"NATS KV bucket {self.bucket!r} at {self.label}: {what} was written by others "
            f"{_MAX_CAS_ATTEMPTS} times while this write tried; try again"
        )

    async def _previous(self, state: _Bound, subject: str) -> _Previous | None:
        msg = await self._raw_get(state, subject)
        if msg is None:
            return None
        headers = _headers(msg)
        if _is_tombstone(headers):
            return _Previous(msg.seq or 0, headers, live=False, manifest=None)
        data = msg.data or b""
        manifest: Manifest | None = None
        if data.startswith(_TAG_PARTS):
            with contextlib.suppress(ValidationError):
                manifest = Manifest.model_validate_json(data[len(_TAG_PARTS) :])
        return _Previous(msg.seq or 0, headers, live=True, manifest=manifest)

    async def _write_parts(
        self, state: _Bound, kv_key: str, body: bytes, ttl_s: float | None
    ) -> Manifest:
        write_id = secrets.token_hex(6)
        size = state.part_size
        chunks = [body[i : i + size] for i in range(0, len(body), size)]
        headers = {_EXPECTED_LAST: "0"}  # parts are immutable: create-only
        if ttl_s is not None:
            headers[_TTL_HEADER] = ttl_header(ttl_s + _PART_TTL_GRACE_S)
        try:
            await asyncio.gather(
                *(
                    state.js.publish(  # pyright: ignore[reportUnknownMemberType]
                        state.prefix + _part_key(kv_key, write_id, n), chunk, headers=headers
                    )
                    for n, chunk in enumerate(chunks)
                )
            )
        except BaseException:
            await self._purge_parts(state, kv_key, write_id)
            raise
        return Manifest(
            id=write_id, parts=len(chunks), size=len(body), sha256=hashlib.sha256(body).hexdigest()
        )

    async def _purge_parts(self, state: _Bound, kv_key: str, write_id: str) -> None:
        """Remove the parts of one write (best effort: a failure is logged, never raised)."""
        try:
            await state.js.purge_stream(  # pyright: ignore[reportUnknownMemberType]
                state.stream, subject=f"{state.prefix}{kv_key}.part.{write_id}.>"
            )
        except (TimeoutError, nats.errors.Error) as exc:
            _log.warning(
                "kv_parts_cleanup_failed",
                bucket=self.bucket,
                key=kv_key,
                write_id=write_id,
                error=f"{type(exc).__name__}: {exc}",
            )

    async def compare_and_set(self, kv_key: str, body: bytes, *, last: int, what: str) -> int:
        """Write a small inline value only if the key's revision is ``last`` (0: absent).

        Uses ``kv.create`` for ``last == 0`` (a create race has one winner) and
        ``kv.update(..., last=)`` otherwise; returns the new revision.

        Raises:
            RevisionMismatchError: the key is at another revision.
            StorageError: the server cannot be reached.
        """
        self.check_key(kv_key, what)
        state = await self._bound()
        data = _TAG_INLINE + body
        with self.errors(f"writing {what}"):
            try:
                if last == 0:
                    return await state.kv.create(kv_key, data)  # pyright: ignore[reportUnknownMemberType]
                return await state.kv.update(kv_key, data, last=last)
            except KeyWrongLastSequenceError:
                raise RevisionMismatchError(kv_key) from None

    # -- deletes ---------------------------------------------------------------------------------

    async def remove(self, kv_key: str, *, what: str) -> Mapping[str, str] | None:
        """Delete the value under ``kv_key`` and its parts; its headers if one was live, else None.

        Only the revisions up to the one read are purged: a value written meanwhile stays.
        """
        if not self.fits(kv_key):
            return None
        state = await self._bound()
        subject = state.prefix + kv_key
        with self.errors(f"deleting {what}"):
            previous = await self._previous(state, subject)
            if previous is None:
                return None
            await state.js.purge_stream(  # pyright: ignore[reportUnknownMemberType]
                state.stream, subject=subject, seq=previous.revision + 1
            )
        if previous.manifest is not None:
            await self._purge_parts(state, kv_key, previous.manifest.id)
        return previous.headers if previous.live else None

    # -- scans -----------------------------------------------------------------------------------

    async def scan(
        self, pattern: str, *, what: str, headers_only: bool = False
    ) -> builtins.list[ScanEntry]:
        """The live keys matching ``pattern`` (KV wildcards ``*``, ``>``), last revision each.

        One ephemeral consumer (``deliver_policy=LAST_PER_SUBJECT``, headers only if asked)
        reads only the matching subjects; tombstones are skipped. Order: the stream's.
        """
        state = await self._bound()
        with self.errors(f"listing {what}"):
            return await self._scan(state, state.prefix + pattern, headers_only)

    async def scan_values(self, pattern: str, *, what: str) -> builtins.list[StoredValue]:
        """The live values whose keys match ``pattern``, as ``read`` gives them (parts joined).

        Raises:
            StoredValueError: a matching value is not ours, or its parts are broken.
        """
        values: builtins.list[StoredValue] = []
        parted: builtins.list[str] = []
        for entry in await self.scan(pattern, what=what):
            manifest = self._manifest_of(entry.kv_key, entry.data, f"{what} key {entry.kv_key!r}")
            if manifest is None:
                body = entry.data[len(_TAG_INLINE) :]
                values.append(StoredValue(entry.kv_key, body, entry.revision, entry.headers, None))
            else:
                parted.append(entry.kv_key)
        joined = await asyncio.gather(
            *(self.read(key, what=f"{what} key {key!r}") for key in parted)
        )
        values.extend(stored for stored in joined if stored is not None)  # None: deleted since
        return values

    async def _scan(
        self, state: _Bound, subject: str, headers_only: bool
    ) -> builtins.list[ScanEntry]:
        name = f"agentic_scan_{secrets.token_hex(8)}"
        config = api.ConsumerConfig(
            name=name,
            deliver_policy=api.DeliverPolicy.LAST_PER_SUBJECT,
            ack_policy=api.AckPolicy.NONE,
            filter_subject=subject,
            headers_only=headers_only or None,
            mem_storage=True,
            num_replicas=1,
            inactive_threshold=max(30.0, 4 * self._timeout_s),
        )
        info = await state.js.add_consumer(state.stream, config)  # pyright: ignore[reportUnknownMemberType]
        found: builtins.list[ScanEntry] = []
        try:
            if info.num_pending:
                await self._pull_all(state, name, found)
        finally:
            with contextlib.suppress(TimeoutError, nats.errors.Error):
                await state.js.delete_consumer(state.stream, name)  # pyright: ignore[reportUnknownMemberType]
        return found

    async def _pull_all(
        self, state: _Bound, consumer: str, found: builtins.list[ScanEntry]
    ) -> None:
        client = state.client
        inbox = client.new_inbox()
        sub = await client.subscribe(inbox)  # pyright: ignore[reportUnknownMemberType]
        request = json.dumps({"batch": _SCAN_BATCH, "no_wait": True}).encode()
        next_subject = f"$JS.API.CONSUMER.MSG.NEXT.{state.stream}.{consumer}"
        prefix_len = len(state.prefix)
        try:
            while True:
                await client.publish(next_subject, request, reply=inbox)
                for _ in range(_SCAN_BATCH):
                    msg: Msg = await sub.next_msg(timeout=self._timeout_s)
                    headers = _headers(msg)
                    if not msg.reply:  # a status message, not a stored one
                        status = headers.get("Status", "")
                        if status == "404":
                            return  # no more messages: the end
                        description = headers.get("Description", "")
                        raise nats.errors.Error(f"listing stopped: status {status} {description}")
                    meta = msg.metadata
                    if not _is_tombstone(headers):
                        found.append(
                            ScanEntry(
                                msg.subject[prefix_len:], meta.sequence.stream, headers, msg.data
                            )
                        )
                    if meta.num_pending == 0:
                        return
        finally:
            with contextlib.suppress(nats.errors.Error):
                await sub.unsubscribe()


def _part_key(kv_key: str, write_id: str, n: int) -> str:
    return f"{kv_key}.part.{write_id}.{n}"


def _headers(msg: api.RawStreamMsg | Msg) -> dict[str, str]:
    """A message's headers as plain strings (empty when it has none)."""
    headers = cast("Mapping[str, object] | None", msg.headers)  # pyright: ignore[reportUnknownMemberType]
    return {str(k): str(v) for k, v in (headers or {}).items()}


def _is_tombstone(headers: Mapping[str, str]) -> bool:
    """A KV delete or purge marker (``KV-Operation: DEL|PURGE``) or a server marker."""
    return headers.get(_KV_OPERATION) in ("DEL", "PURGE") or "Nats-Marker-Reason" in headers


def _client_label(client: NatsClient) -> str:
    """The (redacted) URL of a client we were given, for messages."""
    url = client.connected_url
    if url is None:
        return "the given nats-py client's server"
    return redact_urls(url.geturl())
