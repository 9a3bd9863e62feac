"""What a served target keeps between the messages of its tasks, in the state store.

- ``{prefix}/thread/{context_id}``: an agent's ``AgentThread`` per A2A context (serialized, so a
  restarted server continues the conversation).
- ``{prefix}/pending/{task_id}``: what a task in ``input-required`` waits for: an agent's tool
  approval requests, or the id of the workflow run paused on ``request_info`` (its requests
  and checkpoint are in the checkpoint store).

Per-context locks keep two tasks of one context from writing its thread at once (in this
process; a context served by two processes at once is the deployment's to avoid).
"""

from __future__ import annotations

import asyncio
import weakref
from typing import Any, cast

from pydantic import BaseModel, Field

from agentic_core import Agent, AgentThread, StateStore, StorageError, ToolApprovalRequest

__all__ = ["Pending", "ServedState"]


def _no_requests() -> list[ToolApprovalRequest]:
    return []


class Pending(BaseModel):
    """What a task in ``input-required`` waits for."""

    approvals: list[ToolApprovalRequest] = Field(default_factory=_no_requests)
    """An agent's tool calls waiting for approval."""
    run_id: str | None = None
    """A workflow run paused on its requests."""


class ServedState:
    """Threads and pending requests of the tasks one server runs, in a ``StateStore``."""

    def __init__(self, store: StateStore, *, prefix: str = "a2a") -> None:
        self.store = store
        self.prefix = prefix.rstrip("/")
        self._locks: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()

    def context_lock(self, context_id: str) -> asyncio.Lock:
        """The lock of ``context_id`` (one per context while anyone holds it)."""
        lock = self._locks.get(context_id)
        if lock is None:
            lock = asyncio.Lock()
            self._locks[context_id] = lock
        return lock

    async def thread(self, context_id: str, agent: Agent) -> AgentThread:
        """The thread of ``context_id``: the stored one, else a new one of ``agent``."""
        key = f"{self.prefix}/thread/{context_id}"
        data = await self.store.get(key)
        if data is None:
            return agent.get_new_thread()
        if not isinstance(data, dict):
            raise StorageError(f"{key} holds a {type(data).__name__}, not an agent thread")
        return AgentThread.deserialize(cast("dict[str, Any]", data))

    async def save_thread(self, context_id: str, thread: AgentThread) -> None:
        """Keep ``thread`` as the thread of ``context_id``."""
        await self.store.set(f"{self.prefix}/thread/{context_id}", thread.serialize())

    async def pending(self, task_id: str) -> Pending | None:
        """What ``task_id`` waits for, or None."""
        key = f"{self.prefix}/pending/{task_id}"
        data = await self.store.get(key)
        if data is None:
            return None
        try:
            return Pending.model_validate(data)
        except ValueError as exc:
            raise StorageError(f"{key} holds no pending request: {exc}") from None

    async def set_pending(self, task_id: str, pending: Pending) -> None:
        """Record what ``task_id`` waits for."""
        await self.store.set(f"{self.prefix}/pending/{task_id}", pending.model_dump(mode="json"))

    async def clear_pending(self, task_id: str) -> None:
        """``task_id`` waits for nothing (any more)."""
        await self.store.delete(f"{self.prefix}/pending/{task_id}")
