"""Conversations: AgentThread and the message stores that hold its messages."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, Self, runtime_checkable

from agentic_core._errors import AgentError
from agentic_core.protocols._messages import ChatMessage
from agentic_core.protocols._trusted import new_id


@runtime_checkable
class ChatMessageStore(Protocol):
    """Where a thread keeps its messages."""

    async def add_messages(self, messages: Sequence[ChatMessage]) -> None: ...

    async def list_messages(self) -> list[ChatMessage]: ...

    async def replace_messages(self, messages: Sequence[ChatMessage]) -> None: ...

    def serialize(self) -> dict[str, Any]: ...


class InMemoryChatMessageStore:
    """Messages in a list in this process (the default store)."""

    def __init__(self, messages: Sequence[ChatMessage] = ()) -> None:
        self._messages: list[ChatMessage] = list(messages)

    async def add_messages(self, messages: Sequence[ChatMessage]) -> None:
        """Append ``messages``."""
        self._messages.extend(messages)

    async def list_messages(self) -> list[ChatMessage]:
        """A copy of the messages, oldest first."""
        return list(self._messages)

    async def replace_messages(self, messages: Sequence[ChatMessage]) -> None:
        """Replace the whole history (used after a reducer shortened it)."""
        self._messages = list(messages)

    def serialize(self) -> dict[str, Any]:
        """The messages as JSON-able data."""
        return {
            "type": "memory",
            "messages": [m.model_dump(mode="json") for m in self._messages],
        }

    @classmethod
    def deserialize(cls, data: dict[str, Any]) -> Self:
        """A store holding the messages of ``serialize()``."""
        return cls([ChatMessage.model_validate(m) for m in data.get("messages", [])])


class AgentThread:
    """One conversation: an id, metadata (``metadata["user_id"]`` for memory) and its messages.

    Agents are stateless; the thread carries the conversation, so one agent serves many threads.
    """

    def __init__(
        self,
        *,
        id: str | None = None,  # noqa: A002
        message_store: ChatMessageStore | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> None:
        self.id = id or new_id()
        self.message_store: ChatMessageStore = message_store or InMemoryChatMessageStore()
        self.metadata: dict[str, Any] = dict(metadata or {})

    @property
    def user_id(self) -> str | None:
        """``metadata["user_id"]``, used by memory providers."""
        value = self.metadata.get("user_id")
        return None if value is None else str(value)

    async def list_messages(self) -> list[ChatMessage]:
        """The conversation so far."""
        return await self.message_store.list_messages()

    async def add_messages(self, messages: Sequence[ChatMessage]) -> None:
        """Append messages to the conversation."""
        await self.message_store.add_messages(messages)

    def serialize(self) -> dict[str, Any]:
        """The thread as JSON-able data (messages included for the in-memory store)."""
        return {"id": self.id, "metadata": self.metadata, "store": self.message_store.serialize()}

    @classmethod
    def deserialize(
        cls, data: dict[str, Any], *, message_store: ChatMessageStore | None = None
    ) -> AgentThread:
        """The thread of ``serialize()``; pass ``message_store`` for stores that live elsewhere."""
        try:
            store_data: dict[str, Any] = data.get("store") or {"type": "memory"}
            if message_store is None:
                if store_data.get("type") != "memory":
                    raise AgentError(
                        f"thread {data.get('id')!r} keeps its messages in a "
                        f"{store_data.get('type')!r} store: pass message_store= to deserialize"
                    )
                message_store = InMemoryChatMessageStore.deserialize(store_data)
            return cls(id=data["id"], message_store=message_store, metadata=data.get("metadata"))
        except (KeyError, TypeError, ValueError) as exc:
            raise AgentError(f"cannot deserialize a thread from {list(data)!r}: {exc}") from exc

    def __repr__(self) -> str:
        return f"AgentThread(id={self.id!r}, metadata={self.metadata!r})"
