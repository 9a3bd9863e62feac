"""BaseChatClient: an optional base class for chat clients, with ``as_agent``."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Sequence
from typing import Any

from agentic_core.agents._agent import ChatAgent
from agentic_core.protocols._chat import ChatOptions, ChatResponse, ChatResponseUpdate
from agentic_core.protocols._messages import ChatMessage


class BaseChatClient(ABC):
    """Optional base for chat clients: ``generate`` and ``generate_stream`` to implement,
    ``health_check`` and ``as_agent`` provided."""

    provider: str = "custom"
    model: str = ""

    @abstractmethod
    async def generate(
        self, messages: Sequence[ChatMessage], options: ChatOptions | None = None
    ) -> ChatResponse:
        """One complete reply to ``messages``."""

    @abstractmethod
    def generate_stream(
        self, messages: Sequence[ChatMessage], options: ChatOptions | None = None
    ) -> AsyncIterator[ChatResponseUpdate]:
        """The reply to ``messages`` as it is produced."""

    async def health_check(self) -> bool:
        """Whether the model can be reached (default: True)."""
        return True

    def as_agent(
        self, instructions: str | None = None, name: str | None = None, **kwargs: Any
    ) -> ChatAgent:
        """A ``ChatAgent`` on this client (keywords as ``ChatAgent``'s)."""
        return ChatAgent(self, instructions, name=name, **kwargs)
