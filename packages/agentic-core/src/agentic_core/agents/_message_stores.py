"""StateStoreMessageStore: a thread's messages in any StateStore (memory, Redis, NATS KV)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentic_core._errors import AgentError
from agentic_core.protocols._messages import ChatMessage
from agentic_core.protocols._state import StateStore


class StateStoreMessageStore:
    """Messages in any ``StateStore`` (memory, Redis, NATS KV) under ``{prefix}/{thread_id}``."""

    def __init__(
        self,
        store: StateStore,
        thread_id: str,
        *,
        prefix: str = "threads",
        ttl_s: float | None = None,
    ) -> None:
        self._store = store
        self._key = f"{prefix}/{thread_id}"
        self._ttl_s = ttl_s

    @property
    def key(self) -> str:
        """The state-store key holding this thread's messages."""
        return self._key

    async def list_messages(self) -> list[ChatMessage]:
        """The stored messages, oldest first."""
        data = await self._store.get(self._key)
        if data is None:
            return []
        try:
            return [ChatMessage.model_validate(m) for m in data]
        except (TypeError, ValueError) as exc:
            raise AgentError(f"the messages stored under {self._key!r} are corrupt: {exc}") from exc

    async def add_messages(self, messages: Sequence[ChatMessage]) -> None:
        """Append ``messages`` (read, extend, write)."""
        current = await self.list_messages()
        await self.replace_messages([*current, *messages])

    async def replace_messages(self, messages: Sequence[ChatMessage]) -> None:
        """Write ``messages`` as the whole history."""
        data = [m.model_dump(mode="json") for m in messages]
        await self._store.set(self._key, data, ttl_s=self._ttl_s)

    def serialize(self) -> dict[str, Any]:
        """Where the messages live (the store itself is passed again on deserialize)."""
        return {"type": "state_store", "key": self._key}
