"""Claim checks: bodies over the message limit stored in KV (in checked parts), fetched back by
reference."""

from __future__ import annotations

from nats.aio.client import Client as NatsClient

from agentic_bus._kv._bucket import KVBucket
from agentic_bus._kv._connection import KVConnection
from agentic_bus._kv._framing import DEFAULT_PART_SIZE
from agentic_bus._task_wire import BlobRef
from agentic_core import BusError

__all__ = ["BLOB_THRESHOLD", "Blobs"]

BLOB_THRESHOLD = 512 * 1024
"""Bodies larger than this go by claim check (the server's default max_payload is 1 MiB)."""


class Blobs:
    """Large bodies in the KV bucket ``agentic_blobs``, kept ``ttl_s`` (a day by default)."""

    def __init__(
        self, client: NatsClient, *, bucket: str = "agentic_blobs", ttl_s: float = 86_400
    ) -> None:
        self._ttl_s = ttl_s
        connection = KVConnection(
            client, bucket=bucket, history=1, replicas=1, connect_timeout_s=5.0,
            timeout_s=10.0, inline_limit=DEFAULT_PART_SIZE, needs_ttl=True, owner="NatsRuntime",
        )  # fmt: skip
        self._kv = KVBucket(connection)

    async def put(self, key: str, data: bytes, *, ttl_s: float | None = None) -> BlobRef:
        """Store ``data`` under ``key`` (a KV key) for ``ttl_s`` (default: the instance's);
        the reference to send instead."""
        kept = self._ttl_s if ttl_s is None else ttl_s
        await self._kv.write(key, data, what=f"claim check {key!r}", ttl_s=kept)
        return BlobRef(key=key, size=len(data))

    async def get(self, ref: BlobRef) -> bytes:
        """The body ``ref`` names; ``BusError`` if it expired, or a ``StorageError`` if it is
        corrupt (the parts are checked)."""
        stored = await self._kv.read(ref.key, what=f"claim check {ref.key!r}")
        if stored is None or len(stored.body) != ref.size:
            raise BusError(f"claim check {ref.key!r} is missing (expired or deleted)")
        return stored.body
