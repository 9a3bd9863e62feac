"""The Redis connection of the stores: clients per event loop, retries, errors naming the URL.

A ``redis.asyncio`` connection belongs to the event loop that opened it, and scripts, notebooks and
test suites use one store from several ``asyncio.run`` calls in turn. So a store made from a URL
keeps one client (with its own pool) per running loop and closes each on its own loop as that
loop shuts down. A store given a client uses that client as it is.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncGenerator, Generator
from dataclasses import dataclass
from typing import Any, Self, cast
from urllib.parse import parse_qsl, urlsplit

import redis.asyncio as aioredis
import redis.exceptions as redis_errors
from redis.asyncio.connection import parse_url
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialWithJitterBackoff

from agentic_core import StorageError, redact_url

__all__ = ["DEFAULT_REDIS_URL", "RedisBacked", "RedisConnection"]

DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"
_MASK = "***"
_AUTH_ERRORS = (
    redis_errors.AuthenticationError,
    redis_errors.AuthenticationWrongNumberOfArgsError,
)


async def _close_at_shutdown(client: aioredis.Redis) -> AsyncGenerator[None]:
    """Suspended for the life of the client's loop; ``asyncio.run`` closes it at shutdown, so the
    client's connections close on their own loop instead of leaking with it."""
    try:
        yield
    finally:
        await client.aclose()


@dataclass(slots=True)
class _LoopClient:
    client: aioredis.Redis
    closer: AsyncGenerator[None]


class RedisConnection:
    """Where a store's Redis commands go: the URL (or the user's client) and error translation.

    Args:
        target: a ``redis://`` / ``rediss://`` / ``unix://`` URL, or a ``redis.asyncio.Redis``
            client (used as is, never closed by the store).
        socket_timeout_s: bound on each command's network wait.
        retries: how many times redis-py retries a command after a connection error or timeout,
            with exponential backoff and jitter (a restarted server is reconnected to).
        max_connections: bound on each loop's connection pool (None: redis-py's default).
    """

    def __init__(
        self,
        target: str | aioredis.Redis,
        *,
        socket_timeout_s: float = 5.0,
        retries: int = 3,
        max_connections: int | None = None,
    ) -> None:
        if socket_timeout_s <= 0:
            raise ValueError(f"socket_timeout_s must be > 0, got {socket_timeout_s!r}")
        if retries < 0:
            raise ValueError(f"retries must be >= 0, got {retries!r}")
        self._given: aioredis.Redis | None = None
        if isinstance(target, str):
            self._url = target
            self.label = redact_url(target, keep_user=True)  # an ACL user name is no secret
            # Fail now, naming the (redacted) URL, rather than on the first command.
            try:
                parse_url(target)
            except ValueError as exc:
                raise ValueError(f"not a Redis URL: {self.label} ({exc})") from None
        else:
            self._url = ""
            self._given = target
            self.label = _describe_client(target)
        self._socket_timeout_s = socket_timeout_s
        self._retries = retries
        self._max_connections = max_connections
        self._clients: dict[asyncio.AbstractEventLoop, _LoopClient] = {}
        self._lock = threading.Lock()  # loops in several threads may share one store
        self._closed = False

    async def client(self) -> aioredis.Redis:
        """The running loop's client (made on first use in that loop).

        Raises:
            StorageError: the store was closed.
        """
        if self._closed:
            raise StorageError(f"the store of Redis at {self.label} is closed")
        if self._given is not None:
            return self._given
        loop = asyncio.get_running_loop()
        entry = self._clients.get(loop)
        if entry is not None:
            return entry.client
        with self._lock:
            for stale in [stale for stale in self._clients if stale.is_closed()]:
                del self._clients[stale]
            entry = self._clients.get(loop)
            if entry is None:
                client = self._new_client()
                entry = self._clients[loop] = _LoopClient(client, _close_at_shutdown(client))
        await anext(entry.closer)
        return entry.client

    def _new_client(self) -> aioredis.Redis:
        retry = Retry(
            ExponentialWithJitterBackoff(base=0.05, cap=1.0),
            self._retries,
            supported_errors=(redis_errors.ConnectionError, redis_errors.TimeoutError),
        )
        options: dict[str, Any] = {
            "socket_timeout": self._socket_timeout_s,
            "socket_connect_timeout": self._socket_timeout_s,
            "retry": retry,
            "retry_on_error": [redis_errors.ConnectionError, redis_errors.TimeoutError],
            "health_check_interval": 30,
        }
        if self._max_connections is not None:
            options["max_connections"] = self._max_connections
        return aioredis.from_url(self._url, **options)

    async def aclose(self) -> None:
        """Close the clients this object made (idempotent); a given client is left open."""
        self._closed = True
        current = asyncio.get_running_loop()
        with self._lock:
            entries = list(self._clients.items())
            self._clients.clear()
        for loop, entry in entries:
            if loop is current:
                await entry.closer.aclose()
            elif loop.is_running() and not loop.is_closed():
                asyncio.run_coroutine_threadsafe(entry.closer.aclose(), loop)

    @contextlib.contextmanager
    def errors(self, *, key: str | None = None) -> Generator[None]:
        """Turn redis-py's errors raised inside into ``StorageError`` naming the URL and key."""
        try:
            yield
        except redis_errors.RedisError as exc:
            raise self.storage_error(exc, key=key) from exc

    def storage_error(
        self, exc: redis_errors.RedisError, *, key: str | None = None
    ) -> StorageError:
        """The ``StorageError`` for ``exc``: what failed, at which (redacted) URL, for which key."""
        where = f"Redis at {self.label}"
        about = "" if key is None else f" (key {key!r})"
        detail = self._redact(str(exc))
        if isinstance(exc, _AUTH_ERRORS) or (
            isinstance(exc, redis_errors.ResponseError)
            and detail.startswith(("NOAUTH", "WRONGPASS"))
        ):
            return StorageError(
                f"{where} refused the credentials{about}: {detail}; check the URL's password"
            )
        if isinstance(exc, redis_errors.ConnectionError | redis_errors.TimeoutError):
            return StorageError(
                f"cannot reach {where}{about} after {self._retries} retries: {detail}; "
                "is the server running and the URL right?"
            )
        if isinstance(exc, redis_errors.ResponseError) and detail.startswith("WRONGTYPE"):
            return StorageError(
                f"{where}: the key{about} holds a Redis value of another type, not one "
                "written by agentic; another program uses this key: choose another prefix"
            )
        return StorageError(f"{where} failed{about}: {detail}")

    def _redact(self, text: str) -> str:
        password = _password_of(self._url) if self._url else None
        return text.replace(password, _MASK) if password else text


def _password_of(url: str) -> str | None:
    with contextlib.suppress(ValueError):
        parts = urlsplit(url)
        if parts.password:
            return parts.password
        for key, value in parse_qsl(parts.query):
            if key.lower() == "password" and value:
                return value
    return None


def _describe_client(client: aioredis.Redis) -> str:
    """The (password-free) address of a client we were given, for messages."""
    kwargs = cast("dict[str, object]", client.connection_pool.connection_kwargs)  # pyright: ignore[reportUnknownMemberType]
    if "path" in kwargs:
        return f"unix://{kwargs['path']}"
    host, port = kwargs.get("host", "localhost"), kwargs.get("port", 6379)
    return f"redis://{host}:{port}/{kwargs.get('db', 0)}"


class RedisBacked:
    """What both Redis stores share: their connection's URL, ``close`` and ``async with``."""

    _connection: RedisConnection

    @property
    def url(self) -> str:
        """The server's URL with its password masked."""
        return self._connection.label

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def close(self) -> None:
        """Close this store's connections (idempotent); a client passed in is left open."""
        await self._connection.aclose()
