"""The StateStore protocol: the one key-value shape every state back-end speaks."""

from __future__ import annotations

import builtins
from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class StateStore(Protocol):
    """A key-value store of JSON-able values: the one shape every state back-end speaks.

    Keys are strings; ``keys(prefix)`` lists the live keys starting with ``prefix`` (sorted).
    A value set with ``ttl_s`` disappears after that many seconds.
    """

    async def get(self, key: str) -> Any | None: ...

    async def set(self, key: str, value: Any, *, ttl_s: float | None = None) -> None: ...

    async def delete(self, key: str) -> bool: ...

    async def exists(self, key: str) -> bool: ...

    async def keys(self, prefix: str = "") -> builtins.list[str]: ...
