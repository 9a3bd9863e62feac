"""``RedisStateStore``: core's ``StateStore`` on Redis (``redis.asyncio``)."""

from __future__ import annotations

import builtins
import json
import math
from collections.abc import AsyncIterator
from typing import Any, cast

import redis.asyncio as aioredis

from agentic_core import StorageError
from agentic_core.stores import ForeignValueError, encode_json_value
from agentic_storage._codec import decode_text, encode_text
from agentic_storage._redis_client import DEFAULT_REDIS_URL, RedisBacked, RedisConnection

__all__ = ["RedisStateStore"]

_SCAN_COUNT = 1000


class RedisStateStore(RedisBacked):
    """A ``StateStore`` in Redis: JSON values under ``{prefix}:{key}``, with per-key TTLs.

    Values are checked and encoded like every ``StateStore`` (``SerializationError`` naming the
    key for a value that is not JSON-able) and written as tagged JSON text, so a value another
    program left under the prefix raises ``StorageError`` naming its key instead of being
    misread. ``keys(prefix)`` walks the keyspace with ``SCAN`` (never ``KEYS``, which blocks the
    server). A TTL is kept by Redis itself (millisecond precision), so every process sees it.

    A command that cannot reach the server is retried by redis-py with exponential backoff
    (``retries`` times); after that it raises ``StorageError`` naming the URL with its password
    masked. The next call reconnects on its own, so a restarted server needs no new store.

    Args:
        url: a ``redis://`` / ``rediss://`` / ``unix://`` URL, or a ``redis.asyncio.Redis``
            client to use as it is (the store then never closes it).
        prefix: namespace of this store's keys (``""`` for none).
        socket_timeout_s: bound on each command's network wait.
        retries: redis-py retries after a connection error or timeout.
        max_connections: bound on the connection pool of each event loop.

    Example:
        ```python
        store = RedisStateStore("redis://127.0.0.1:6379/0", prefix="myapp")
        await store.set("sessions/42", {"user": "ada"}, ttl_s=3600)
        assert await store.get("sessions/42") == {"user": "ada"}
        await store.close()
        ```
    """

    def __init__(
        self,
        url: str | aioredis.Redis = DEFAULT_REDIS_URL,
        *,
        prefix: str = "agentic",
        socket_timeout_s: float = 5.0,
        retries: int = 3,
        max_connections: int | None = None,
    ) -> None:
        self._connection = RedisConnection(
            url,
            socket_timeout_s=socket_timeout_s,
            retries=retries,
            max_connections=max_connections,
        )
        self._prefix = prefix
        self._namespace = f"{prefix}:" if prefix else ""

    @property
    def prefix(self) -> str:
        """The namespace of this store's keys."""
        return self._prefix

    def __repr__(self) -> str:
        return f"RedisStateStore({self._connection.label!r}, prefix={self._prefix!r})"

    def redis_key(self, key: str) -> str:
        """The Redis key that holds ``key`` (``{prefix}:{key}``)."""
        return self._namespace + key

    async def get(self, key: str) -> Any | None:
        """The value under ``key``, or None if it is missing or expired.

        Raises:
            StorageError: Redis is unreachable, or the key holds a value agentic did not write.
        """
        client = await self._connection.client()
        with self._connection.errors(key=key):
            data = cast("bytes | None", await client.get(self.redis_key(key)))
        return None if data is None else self._decode(key, data)

    async def set(self, key: str, value: Any, *, ttl_s: float | None = None) -> None:
        """Store ``value`` under ``key``, replacing any earlier value and its TTL.

        Raises:
            SerializationError: ``value`` is not JSON-able (the message names the key and part).
            ValueError: ``ttl_s`` is not positive.
            StorageError: Redis is unreachable (nothing was written).
        """
        if ttl_s is not None and not ttl_s > 0:
            raise ValueError(f"ttl_s must be a positive number of seconds, got {ttl_s!r}")
        data = encode_text(encode_json_value(key, value))
        client = await self._connection.client()
        with self._connection.errors(key=key):
            if ttl_s is None:
                await client.set(self.redis_key(key), data)
            else:
                await client.set(self.redis_key(key), data, px=max(1, math.ceil(ttl_s * 1000)))

    async def delete(self, key: str) -> bool:
        """Remove ``key``; True if a live value was removed."""
        client = await self._connection.client()
        with self._connection.errors(key=key):
            return bool(await client.delete(self.redis_key(key)))

    async def exists(self, key: str) -> bool:
        """Whether ``key`` holds a live (not expired) value."""
        client = await self._connection.client()
        with self._connection.errors(key=key):
            return bool(await client.exists(self.redis_key(key)))

    async def keys(self, prefix: str = "") -> builtins.list[str]:
        """The live keys starting with ``prefix``, sorted (walked with ``SCAN``)."""
        client = await self._connection.client()
        pattern = _glob_escape(self._namespace + prefix) + "*"
        start = len(self._namespace)
        found: set[str] = set()  # SCAN may return a key twice while the keyspace rehashes
        with self._connection.errors(key=prefix or None):
            scan = client.scan_iter(match=pattern, count=_SCAN_COUNT)  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
            async for raw in cast("AsyncIterator[bytes]", scan):
                found.add(raw.decode(errors="surrogateescape")[start:])
        return sorted(found)

    def _decode(self, key: str, data: bytes) -> Any:
        try:
            return json.loads(decode_text(data))
        except (ForeignValueError, ValueError) as exc:
            raise StorageError(
                f"Redis key {self.redis_key(key)!r} at {self._connection.label} does not hold a "
                f"value written by agentic: {exc}; another program uses this prefix "
                f"({self._prefix!r}): choose another one or delete the key"
            ) from None


def _glob_escape(text: str) -> str:
    """``text`` matched literally by Redis's glob patterns (``SCAN MATCH``)."""
    return "".join("\\" + char if char in "\\*?[]^" else char for char in text)
