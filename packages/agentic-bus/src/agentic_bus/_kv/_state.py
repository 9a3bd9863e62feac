"""``NatsKVStateStore``: core's ``StateStore`` on a JetStream KV bucket."""

from __future__ import annotations

import builtins
import json
from collections.abc import Sequence
from typing import Any

from nats.aio.client import Client as NatsClient

from agentic_bus._bus import NatsBus
from agentic_bus._connect import DEFAULT_NATS_URL
from agentic_bus._kv._bucket import KVBacked, KVBucket
from agentic_bus._kv._connection import KVConnection
from agentic_bus._kv._framing import DEFAULT_PART_SIZE
from agentic_bus._kv._keys import decode_key, encode_key
from agentic_core import StorageError
from agentic_core.stores import encode_json_value

__all__ = ["NatsKVStateStore"]


class NatsKVStateStore(KVBacked):
    """A ``StateStore`` in a NATS JetStream KV bucket: JSON values, per-key TTLs, any key.

    Keys are any string: each is escaped into one KV token (``-``, ``_``, ``/``, letters and
    digits stay, every other byte becomes ``=XX``, so ``a.b`` or ``*`` can never act as subject
    tokens or wildcards), and ``keys(prefix)`` gives the original keys back, sorted. Values are
    checked and encoded like every ``StateStore`` (``SerializationError`` naming the key for a
    value that is not JSON-able); one larger than ``inline_limit`` (512 KiB) is stored as parts
    with a checked sha256, so values of any size work within the server's 1 MiB messages.

    A ``ttl_s`` is kept by nats-server itself (a per-message TTL, server ≥ 2.11), so every
    process sees it; the server's smallest TTL is one second, so shorter ones are raised to one
    second. A ``set`` without ``ttl_s`` clears an earlier TTL.

    The connection opens on the first call (or the ``NatsBus`` / nats-py client given is used,
    and never closed by the store). An unreachable server raises ``StorageError`` naming the URL
    with credentials redacted; after a server restart the client reconnects on its own. A value
    another program wrote in the bucket raises ``StorageError`` naming the key.

    Args:
        servers: a ``nats://`` URL, several for a cluster, a ``NatsBus``, or a nats-py client.
        bucket: the KV bucket (created with history 1, file storage, per-message TTLs allowed).
        connect_timeout_s: bound on the first connection.
        replicas: the bucket's replicas when it is created (1 to 5).
        timeout_s: bound on each JetStream request.
        inline_limit: values whose JSON is larger are stored as parts.

    Example:
        ```python
        async with NatsKVStateStore("nats://127.0.0.1:4222") as store:
            await store.set("sessions/42", {"user": "ada"}, ttl_s=3600)
            assert await store.get("sessions/42") == {"user": "ada"}
            assert await store.keys("sessions/") == ["sessions/42"]
        ```
    """

    def __init__(
        self,
        servers: str | Sequence[str] | NatsBus | NatsClient = DEFAULT_NATS_URL,
        *,
        bucket: str = "agentic_state",
        connect_timeout_s: float = 5.0,
        replicas: int = 1,
        timeout_s: float = 5.0,
        inline_limit: int = DEFAULT_PART_SIZE,
    ) -> None:
        self._bucket = KVBucket(
            KVConnection(
                servers,
                bucket=bucket,
                history=1,
                replicas=replicas,
                connect_timeout_s=connect_timeout_s,
                timeout_s=timeout_s,
                inline_limit=inline_limit,
                needs_ttl=True,
                owner="NatsKVStateStore",
            )
        )

    async def get(self, key: str) -> Any | None:
        """The value under ``key``, or None if it is missing or expired.

        Raises:
            StorageError: the server is unreachable, or the key holds a value agentic did not
                write (or one whose parts are missing or corrupt).
        """
        stored = await self._bucket.read(encode_key(key), what=f"key {key!r}")
        if stored is None:
            return None
        try:
            return json.loads(stored.body)
        except ValueError as exc:
            raise StorageError(
                f"NATS KV bucket {self.bucket!r} at {self.url}: key {key!r} does not hold a JSON "
                f"value written by agentic ({exc}); another program uses this bucket: choose "
                "another bucket, or delete the key"
            ) from None

    async def set(self, key: str, value: Any, *, ttl_s: float | None = None) -> None:
        """Store ``value`` under ``key``, replacing any earlier value and its TTL.

        Raises:
            SerializationError: ``value`` is not JSON-able (the message names the key and part).
            ValueError: ``ttl_s`` is not positive.
            StorageError: the server is unreachable (the earlier value is kept).
        """
        if ttl_s is not None and not ttl_s > 0:
            raise ValueError(f"ttl_s must be a positive number of seconds, got {ttl_s!r}")
        text = encode_json_value(key, value)
        await self._bucket.write(encode_key(key), text.encode(), what=f"key {key!r}", ttl_s=ttl_s)

    async def delete(self, key: str) -> bool:
        """Remove ``key`` (and its parts); True if a live value was removed."""
        removed = await self._bucket.remove(encode_key(key), what=f"key {key!r}")
        return removed is not None

    async def exists(self, key: str) -> bool:
        """Whether ``key`` holds a live (not expired) value."""
        return await self._bucket.exists(encode_key(key), what=f"key {key!r}")

    async def keys(self, prefix: str = "") -> builtins.list[str]:
        """The live keys starting with ``prefix``, sorted.

        Reads only the keys' headers (one ephemeral consumer over the bucket's one-token keys;
        parts have more tokens, so they are never listed).

        Raises:
            StorageError: the server is unreachable, or the bucket holds a key agentic did not
                write.
        """
        entries = await self._bucket.scan("*", what="keys", headers_only=True)
        found: list[str] = []
        for entry in entries:
            try:
                key = decode_key(entry.kv_key)
            except ValueError as exc:
                raise StorageError(
                    f"NATS KV bucket {self.bucket!r} at {self.url} holds key {entry.kv_key!r}, "
                    f"which agentic did not write ({exc}); another program uses this bucket: "
                    "choose another bucket, or delete the key"
                ) from None
            if key.startswith(prefix):
                found.append(key)
        return sorted(found)
