"""The ChatReducer protocol: keep a conversation within the model's context budget."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from agentic_core.protocols._messages import ChatMessage


@runtime_checkable
class ChatReducer(Protocol):
    """Shortens a history. Every reducer keeps system messages and never separates a tool
    call from its results."""

    def needs_reduction(self, messages: Sequence[ChatMessage]) -> bool: ...

    async def reduce(self, messages: Sequence[ChatMessage]) -> list[ChatMessage]: ...
