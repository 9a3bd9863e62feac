"""The protocols other agentic packages implement; in-memory versions live in agentic_core.

Each protocol is ``runtime_checkable`` so a registry or a test can verify an implementation.
"""

from __future__ import annotations

import builtins
from typing import Any, Protocol, runtime_checkable

from agentic_core._sandbox import InteractiveSandbox, Sandbox, SandboxProcess
from agentic_core.agents._chat import ChatClient
from agentic_core.agents._memory_types import MemoryProvider
from agentic_core.agents._reducer_types import ChatReducer
from agentic_core.agents._responses import Agent
from agentic_core.agents._thread import ChatMessageStore
from agentic_core.agents._tool_protocol import Tool
from agentic_core.graph._runtime import Runtime
from agentic_core.stores._checkpoint_model import Checkpoint, CheckpointMetadata

__all__ = [
    "Agent",
    "ChatClient",
    "ChatMessageStore",
    "ChatReducer",
    "CheckpointStore",
    "InteractiveSandbox",
    "MemoryProvider",
    "Runtime",
    "Sandbox",
    "SandboxProcess",
    "StateStore",
    "Tool",
]


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


@runtime_checkable
class CheckpointStore(Protocol):
    """Where a workflow saves a checkpoint at every superstep barrier.

    ``save`` is atomic: a reader sees the whole checkpoint or none of it. A saved checkpoint is
    immutable: later changes to the object passed to ``save`` or returned by ``load`` never
    change what the store holds. ``list`` and ``latest`` order by superstep, then creation time.
    """

    async def save(self, checkpoint: Checkpoint) -> str: ...

    async def load(self, checkpoint_id: str) -> Checkpoint | None: ...

    async def list(
        self, *, workflow_id: str | None = None, run_id: str | None = None
    ) -> builtins.list[CheckpointMetadata]: ...

    async def latest(self, run_id: str) -> Checkpoint | None: ...

    async def delete(self, checkpoint_id: str) -> bool: ...

    async def delete_all(self, run_id: str) -> int: ...

    async def cleanup_keep_last(self, run_id: str, n: int) -> int: ...
