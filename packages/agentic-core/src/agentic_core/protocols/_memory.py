"""Long-term memory: the data model and the MemoryProvider protocol agents call."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from pydantic import BaseModel, Field

from agentic_core.protocols._messages import ChatMessage

if TYPE_CHECKING:
    from agentic_core.protocols._agent import AgentResponse
    from agentic_core.protocols._thread import AgentThread


class MemoryCategory(StrEnum):
    """What kind of thing a memory records."""

    USER_PREFERENCE = "user_preference"
    FACT = "fact"
    LEARNED = "learned"
    CONTEXT = "context"
    SUMMARY = "summary"


def _now() -> datetime:
    return datetime.now(UTC)


class Memory(BaseModel):
    """One remembered item, scoped by the provider to an agent and a user."""

    id: str = Field(default_factory=lambda: uuid.uuid4().hex)
    content: str
    category: MemoryCategory = MemoryCategory.FACT
    importance: float = Field(default=0.5, ge=0.0, le=1.0)
    created_at: datetime = Field(default_factory=_now)
    metadata: dict[str, Any] = Field(default_factory=dict[str, Any])


class MemoryContext(BaseModel):
    """What memory adds to a model call: extra instructions, system messages, memories found."""

    extra_instructions: str | None = None
    system_messages: list[ChatMessage] = Field(default_factory=list[ChatMessage])
    retrieved_memories: list[Memory] = Field(default_factory=list[Memory])


@runtime_checkable
class MemoryProvider(Protocol):
    """Injects memories before a model call and learns from the response after it."""

    async def before_invoke(
        self, agent_id: str, thread: AgentThread, ctx: MemoryContext
    ) -> None: ...

    async def after_invoke(
        self, agent_id: str, thread: AgentThread, response: AgentResponse
    ) -> None: ...

    async def get_memories(self, agent_id: str, user_id: str | None) -> list[Memory]: ...

    async def store_memory(self, agent_id: str, user_id: str | None, memory: Memory) -> None: ...

    async def clear_memories(self, agent_id: str, user_id: str | None) -> None: ...
