"""One JetStream KV bucket as a store uses it: values of any size, read, written, deleted, scanned.

Both KV stores (``NatsKVStateStore``, ``NatsCheckpointStore``) and the claim checks keep their
data through a ``KVBucket``: its ``KVConnection`` (``_connection``) opens and binds the bucket,
values are framed as ``_framing`` says, and bodies over the inline limit (512 KiB by default;
the bucket's ``max_value_size`` is 1 MiB) go in parts (``_parts``).

**Reads** check a value in parts (size and sha256); a missing or corrupt part raises
``StoredValueError``, unless the key changed meanwhile (an overwrite or delete removed the parts
it was reading), in which case the key is read again.

**Writes** are compare-and-set on the key's last revision (``Nats-Expected-Last-Subject-
Sequence``), retried on a conflict, so each write knows exactly which value it replaced; once the
new value is in place, the replaced value's parts are purged. Deletes purge the key's messages up
to the revision read (``purge`` with a subject filter and a sequence bound, which leaves no
tombstone), so a value written meanwhile survives.
"""

from __future__ import annotations

import asyncio
import builtins
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, Self

from nats.js.errors import APIError, KeyWrongLastSequenceError

from agentic_bus._kv._connection import BoundBucket, KVConnection
from agentic_bus._kv._framing import (
    EXPECTED_LAST_HEADER,
    TTL_HEADER,
    Manifest,
    frame_inline,
    frame_manifest,
    is_tombstone,
    manifest_in,
    message_headers,
    ttl_header,
    unframe,
)
from agentic_bus._kv._parts import join_parts, purge_parts, write_parts
from agentic_bus._kv._scan import ScanEntry, scan_subject
from agentic_core import StorageError
from agentic_core.stores import ForeignValueError

__all__ = [
    "KVBacked",
    "KVBucket",
    "RevisionMismatchError",
    "StoredValue",
    "StoredValueError",
    "Written",
]

_WRONG_LAST_SEQUENCE: Final = frozenset({10071, 10164})
_MAX_CAS_ATTEMPTS: Final = 64
_MAX_READ_ATTEMPTS: Final = 4


class StoredValueError(StorageError):
    """A stored value that is not ours, or one in parts whose parts are missing or corrupt."""

    def __init__(self, message: str, *, kv_key: str, reason: str) -> None:
        super().__init__(message)
        self.kv_key = kv_key
        self.reason = reason


class RevisionMismatchError(Exception):
    """A compare-and-set found another revision than the one it expected."""


@dataclass(frozen=True, slots=True)
class StoredValue:
    """A value read back: its body (parts joined and checked), revision and message headers."""

    kv_key: str
    body: bytes
    revision: int
    headers: Mapping[str, str]
    manifest: Manifest | None


@dataclass(frozen=True, slots=True)
class Written:
    """What a write did: the new revision, and the value it replaced (None if there was none)."""

    revision: int
    previous_headers: Mapping[str, str] | None


@dataclass(frozen=True, slots=True)
class _Previous:
    """The message a write replaced or a delete removed (live or a tombstone)."""

    revision: int
    headers: Mapping[str, str]
    live: bool
    manifest: Manifest | None


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
    """A KV bucket as one store uses it, over its connection (see the module docstring).

    Example:
        ```python
        bucket = KVBucket(KVConnection(url, bucket="agentic_state", history=1, ...))
        await bucket.write("k", b"body", what="key 'k'")
        ```
    """

    def __init__(self, connection: KVConnection) -> None:
        self._conn = connection

    @property
    def bucket(self) -> str:
        """The bucket's name."""
        return self._conn.bucket

    @property
    def label(self) -> str:
        """The server's URL(s), credentials redacted."""
        return self._conn.label

    async def close(self) -> None:
        """Close the connection this bucket opened (idempotent); a given one is left open."""
        await self._conn.close()

    def fits(self, kv_key: str) -> bool:
        """Whether ``kv_key`` (and its parts) fit in a NATS subject (``KVConnection.fits``)."""
        return self._conn.fits(kv_key)

    # -- reads -----------------------------------------------------------------------------------

    async def read(self, kv_key: str, *, what: str) -> StoredValue | None:
        """The value under ``kv_key`` (parts joined and checked), or None if there is none.

        Raises:
            StoredValueError: the value is not ours, or its parts are missing or corrupt.
            StorageError: the server cannot be reached.
        """
        if not self.fits(kv_key):
            return None  # never stored: writes refuse such keys
        state = await self._conn.bound()
        subject = state.subject(kv_key)
        with self._conn.errors(f"reading {what}"):
            for _ in range(_MAX_READ_ATTEMPTS):
                msg = await state.get(subject)
                if msg is None or is_tombstone(message_headers(msg)):
                    return None
                revision, headers = msg.seq or 0, message_headers(msg)
                found = self._unframe(kv_key, msg.data or b"", what)
                if not isinstance(found, Manifest):
                    return StoredValue(kv_key, found, revision, headers, None)
                body, problem = await join_parts(state, kv_key, found)
                if problem is None:
                    return StoredValue(kv_key, body, revision, headers, found)
                latest = await state.get(subject)
                if latest is not None and latest.seq == revision:
                    raise StoredValueError(
                        f"{self._conn.where}: {what} is a value in {found.parts} parts and "
                        f"{problem}; write it again or delete it",
                        kv_key=kv_key,
                        reason=f"a value in {found.parts} parts and {problem}",
                    )
                # Overwritten or deleted while its parts were read: read the key again.
            raise StorageError(
                f"{self._conn.where}: {what} changed {_MAX_READ_ATTEMPTS} times while it was "
                "read; try again"
            )

    async def exists(self, kv_key: str, *, what: str) -> bool:
        """Whether ``kv_key`` holds a live value (of any program; its parts are not read)."""
        return await self.headers(kv_key, what=what) is not None

    async def headers(self, kv_key: str, *, what: str) -> Mapping[str, str] | None:
        """The headers of the live value under ``kv_key``, or None if there is none."""
        if not self.fits(kv_key):
            return None
        state = await self._conn.bound()
        with self._conn.errors(f"reading {what}"):
            msg = await state.get(state.subject(kv_key))
        if msg is None or is_tombstone(message_headers(msg)):
            return None
        return message_headers(msg)

    def _unframe(self, kv_key: str, data: bytes, what: str) -> bytes | Manifest:
        """An inline value's body or a value's manifest; else ``StoredValueError``."""
        try:
            return unframe(data)
        except ForeignValueError as exc:
            reason = str(exc)
        raise StoredValueError(
            f"{self._conn.where}: {what}: {reason}; another program uses this bucket: choose "
            "another bucket, or delete the key",
            kv_key=kv_key,
            reason=reason,
        )

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
        self._conn.check_key(kv_key, what)
        state = await self._conn.bound()
        manifest: Manifest | None = None
        with self._conn.errors(f"writing {what}"):
            if len(body) > state.inline_limit:
                manifest = await write_parts(state, self.bucket, kv_key, body, ttl_s)
                data = frame_manifest(manifest)
            else:
                data = frame_inline(body)
            try:
                revision, previous = await self._compare_and_publish(
                    state, kv_key, data, ttl_s, headers, what
                )
            except BaseException:
                if manifest is not None:
                    await purge_parts(state, self.bucket, kv_key, manifest.id)
                raise
        if previous is not None and previous.manifest is not None:
            await purge_parts(state, self.bucket, kv_key, previous.manifest.id)
        if previous is None or not previous.live:
            return Written(revision, None)
        return Written(revision, previous.headers)

    async def _compare_and_publish(
        self,
        state: BoundBucket,
        kv_key: str,
        data: bytes,
        ttl_s: float | None,
        headers: Mapping[str, str] | None,
        what: str,
    ) -> tuple[int, _Previous | None]:
        """Publish ``data`` over exactly the message read before (retried on a conflict)."""
        subject = state.subject(kv_key)
        for _ in range(_MAX_CAS_ATTEMPTS):
            previous = await self._previous(state, subject)
            sent = dict(headers or {})
            sent[EXPECTED_LAST_HEADER] = str(previous.revision if previous is not None else 0)
            if ttl_s is not None:
                sent[TTL_HEADER] = ttl_header(ttl_s)
            try:
                ack = await state.js.publish(subject, data, headers=sent)  # pyright: ignore[reportUnknownMemberType]
            except APIError as exc:
                if exc.err_code in _WRONG_LAST_SEQUENCE:
                    continue  # written or expired meanwhile: read again
                raise  # (a bucket that lost allow_msg_ttl is re-bound, and fixed, next call)
            return int(ack.seq), previous
        raise StorageError(
            f"{self._conn.where}: {what} was written by others {_MAX_CAS_ATTEMPTS} times while "
            "this write tried; try again"
        )

    async def _previous(self, state: BoundBucket, subject: str) -> _Previous | None:
        msg = await state.get(subject)
        if msg is None:
            return None
        headers = message_headers(msg)
        if is_tombstone(headers):
            return _Previous(msg.seq or 0, headers, live=False, manifest=None)
        return _Previous(msg.seq or 0, headers, live=True, manifest=manifest_in(msg.data or b""))

    async def compare_and_set(self, kv_key: str, body: bytes, *, last: int, what: str) -> int:
        """Write a small inline value only if the key's revision is ``last`` (0: absent).

        Uses ``kv.create`` for ``last == 0`` (a create race has one winner) and
        ``kv.update(..., last=)`` otherwise; returns the new revision.

        Raises:
            RevisionMismatchError: the key is at another revision.
            StorageError: the server cannot be reached.
        """
        self._conn.check_key(kv_key, what)
        state = await self._conn.bound()
        data = frame_inline(body)
        with self._conn.errors(f"writing {what}"):
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
        state = await self._conn.bound()
        subject = state.subject(kv_key)
        with self._conn.errors(f"deleting {what}"):
            previous = await self._previous(state, subject)
            if previous is None:
                return None
            await state.js.purge_stream(  # pyright: ignore[reportUnknownMemberType]
                state.stream, subject=subject, seq=previous.revision + 1
            )
        if previous.manifest is not None:
            await purge_parts(state, self.bucket, kv_key, previous.manifest.id)
        return previous.headers if previous.live else None

    # -- scans -----------------------------------------------------------------------------------

    async def scan(
        self, pattern: str, *, what: str, headers_only: bool = False
    ) -> builtins.list[ScanEntry]:
        """The live keys matching ``pattern`` (KV wildcards ``*``, ``>``), last revision each
        (``_scan``: one ephemeral consumer; tombstones skipped; the stream's order)."""
        state = await self._conn.bound()
        with self._conn.errors(f"listing {what}"):
            return await scan_subject(
                state,
                state.subject(pattern),
                headers_only=headers_only,
                timeout_s=self._conn.timeout_s,
            )

    async def scan_values(self, pattern: str, *, what: str) -> builtins.list[StoredValue]:
        """The live values whose keys match ``pattern``, as ``read`` gives them (parts joined).

        Raises:
            StoredValueError: a matching value is not ours, or its parts are broken.
        """
        values: builtins.list[StoredValue] = []
        parted: builtins.list[str] = []
        for entry in await self.scan(pattern, what=what):
            found = self._unframe(entry.kv_key, entry.data, f"{what} key {entry.kv_key!r}")
            if isinstance(found, Manifest):
                parted.append(entry.kv_key)
            else:
                values.append(StoredValue(entry.kv_key, found, entry.revision, entry.headers, None))
        joined = await asyncio.gather(
            *(self.read(key, what=f"{what} key {key!r}") for key in parted)
        )
        values.extend(stored for stored in joined if stored is not None)  # None: deleted since
        return values
