"""Claim checks: bodies over the message limit stored as KV parts, fetched back by reference."""

from __future__ import annotations

import asyncio
import hashlib

from nats.js import api
from nats.js.client import JetStreamContext
from nats.js.errors import KeyNotFoundError
from nats.js.kv import KeyValue

from agentic_bus._jetstream import ensure_key_value
from agentic_bus._protocol import BlobRef
from agentic_core import BusError

__all__ = ["BLOB_THRESHOLD", "Blobs"]

BLOB_THRESHOLD = 512 * 1024
"""Bodies larger than this go by claim check (the server's default max_payload is 1 MiB)."""

_PART_SIZE = 512 * 1024


class Blobs:
    """Large bodies in the KV bucket ``agentic_blobs`` (parts of 512 KiB, written in parallel)."""

    def __init__(
        self, js: JetStreamContext, *, bucket: str = "agentic_blobs", ttl_s: float = 86_400
    ) -> None:
        self._js = js
        self._bucket = bucket
        self._ttl_s = ttl_s
        self._kv: KeyValue | None = None
        self._lock = asyncio.Lock()

    async def _store(self) -> KeyValue:
        if self._kv is None:
            async with self._lock:
                if self._kv is None:
                    self._kv = await ensure_key_value(
                        self._js,
                        api.KeyValueConfig(
                            bucket=self._bucket,
                            history=1,
                            ttl=self._ttl_s,
                            max_value_size=_PART_SIZE + 1024,
                            storage=api.StorageType.FILE,
                        ),
                    )
        return self._kv

    async def put(self, key: str, data: bytes) -> BlobRef:
        """Store ``data`` under ``key`` (a KV key); the reference to send instead."""
        kv = await self._store()
        chunks = [data[i : i + _PART_SIZE] for i in range(0, len(data), _PART_SIZE)] or [b""]
        await asyncio.gather(*(kv.put(f"{key}.{n}", chunk) for n, chunk in enumerate(chunks)))
        return BlobRef(key=key, parts=len(chunks), size=len(data), sha256=_sha256(data))

    async def get(self, ref: BlobRef) -> bytes:
        """The body ``ref`` names; ``BusError`` if a part is missing or the body is corrupt."""
        kv = await self._store()
        try:
            entries = await asyncio.gather(*(kv.get(f"{ref.key}.{n}") for n in range(ref.parts)))
        except KeyNotFoundError:
            raise BusError(
                f"claim check {ref.key!r} is incomplete in bucket {self._bucket!r} "
                "(expired or deleted)"
            ) from None
        data = b"".join(entry.value or b"" for entry in entries)
        if len(data) != ref.size or _sha256(data) != ref.sha256:
            raise BusError(f"claim check {ref.key!r} is corrupt (size or sha256 differs)")
        return data

    async def delete(self, ref: BlobRef) -> None:
        """Remove the parts of ``ref`` (missing ones are fine)."""
        kv = await self._store()
        await asyncio.gather(
            *(kv.purge(f"{ref.key}.{n}") for n in range(ref.parts)), return_exceptions=True
        )


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
