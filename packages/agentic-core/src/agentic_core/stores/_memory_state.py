"""``InMemoryStateStore``: the in-process ``StateStore`` for tests, demos and single processes."""

from __future__ import annotations

import builtins
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from agentic_core.stores._json_value import encode_json_value

__all__ = ["InMemoryStateStore"]

_SWEEP_INTERVAL_S = 30.0
"""How often ``set`` purges expired keys nobody read (reads purge the keys they meet)."""


@dataclass(frozen=True, slots=True)
class _Entry:
    text: str
    """The value as JSON text: every ``get`` parses a fresh, independent copy."""
    expires_at: float | None
    """Deadline on the store's clock (``time.monotonic`` by default), or None for no expiry."""


class InMemoryStateStore:
    """A ``StateStore`` held in a dict of this process; nothing survives the process.

    Values are kept as JSON text, so a stored value is independent of the caller's object: changing
    the object after ``set``, or the object ``get`` returned, never changes what the store holds.
    A key set with ``ttl_s`` expires after that many seconds of ``time.monotonic()``; expired keys
    are invisible at once and purged lazily. Every method runs without awaiting, so concurrent
    tasks of one event loop never see a half-done change.

    Example:
        ```python
        store = InMemoryStateStore()
        await store.set("session/42", {"user": "ada"}, ttl_s=3600)
        assert await store.get("session/42") == {"user": "ada"}
        assert await store.keys("session/") == ["session/42"]
        ```
    """

    def __init__(self, *, clock: Callable[[], float] = time.monotonic) -> None:
        """Create an empty store; ``clock`` (seconds, monotonic) can be faked to test expiry."""
        self._clock = clock
        self._entries: dict[str, _Entry] = {}
        self._next_sweep = clock() + _SWEEP_INTERVAL_S

    async def get(self, key: str) -> Any | None:
        """The value under ``key`` (a fresh copy), or None if it is missing or expired."""
        entry = self._live_entry(key)
        return None if entry is None else json.loads(entry.text)

    async def set(self, key: str, value: Any, *, ttl_s: float | None = None) -> None:
        """Store a copy of ``value`` under ``key``, replacing any earlier value and its TTL.

        Raises:
            SerializationError: ``value`` is not JSON-able (the message names the key and part).
            ValueError: ``ttl_s`` is not positive.
        """
        if ttl_s is not None and not ttl_s > 0:
            raise ValueError(f"ttl_s must be a positive number of seconds, got {ttl_s!r}")
        text = encode_json_value(key, value)
        now = self._clock()
        if now >= self._next_sweep:
            self._purge_expired(now)
        self._entries[key] = _Entry(text, None if ttl_s is None else now + ttl_s)

    async def delete(self, key: str) -> bool:
        """Remove ``key``; True if a live value was removed."""
        entry = self._entries.pop(key, None)
        return entry is not None and not _expired(entry, self._clock())

    async def exists(self, key: str) -> bool:
        """Whether ``key`` holds a live (not expired) value."""
        return self._live_entry(key) is not None

    async def keys(self, prefix: str = "") -> builtins.list[str]:
        """The live keys starting with ``prefix``, sorted."""
        now = self._clock()
        found: builtins.list[str] = []
        expired: builtins.list[str] = []
        for key, entry in self._entries.items():
            if key.startswith(prefix):
                (expired if _expired(entry, now) else found).append(key)
        for key in expired:
            del self._entries[key]
        found.sort()
        return found

    def _purge_expired(self, now: float) -> None:
        for key in [key for key, entry in self._entries.items() if _expired(entry, now)]:
            del self._entries[key]
        self._next_sweep = now + _SWEEP_INTERVAL_S

    def _live_entry(self, key: str) -> _Entry | None:
        entry = self._entries.get(key)
        if entry is not None and _expired(entry, self._clock()):
            del self._entries[key]
            return None
        return entry


def _expired(entry: _Entry, now: float) -> bool:
    return entry.expires_at is not None and entry.expires_at <= now
