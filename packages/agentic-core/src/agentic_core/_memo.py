"""A small bounded memo: values this process made lately, by a key, oldest forgotten first."""

from __future__ import annotations

import weakref
from typing import ClassVar, Generic, TypeVar

__all__ = ["BoundedMemo"]

K = TypeVar("K")
V = TypeVar("V")


class BoundedMemo(Generic[K, V]):
    """At most ``size`` values by key; the oldest is forgotten first.

    For values that are costly to rebuild from a key the process has just produced, e.g. state
    saved as a JSON string: the next superstep restores that string and gets the parsed value
    back without parsing it. Values are shared between callers and must not be changed in place.
    Safe when threads evict concurrently (a lost entry is only a miss).
    """

    _all: ClassVar[weakref.WeakSet[BoundedMemo[object, object]]] = weakref.WeakSet()

    __slots__ = ("__weakref__", "_entries", "size")

    def __init__(self, size: int) -> None:
        if size < 1:
            raise ValueError(f"a BoundedMemo holds at least 1 value, got size={size}")
        self.size = size
        self._entries: dict[K, V] = {}
        BoundedMemo._all.add(self)  # pyright: ignore[reportArgumentType]

    def get(self, key: K) -> V | None:
        """The value remembered under ``key``, or None."""
        return self._entries.get(key)

    def remember(self, key: K, value: V) -> None:
        """Keep ``value`` under ``key``, forgetting the oldest entries beyond ``size``."""
        entries = self._entries
        entries[key] = value
        while len(entries) > self.size:
            try:
                del entries[next(iter(entries))]
            except (KeyError, RuntimeError, StopIteration):  # another thread evicted it first
                break

    def clear(self) -> None:
        """Forget every value."""
        self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        return f"BoundedMemo(size={self.size}, held={len(self._entries)})"

    @classmethod
    def clear_all(cls) -> None:
        """Forget every value of every memo in the process (tests that must force a rebuild)."""
        for memo in list(cls._all):
            memo.clear()
