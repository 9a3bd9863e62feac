"""What agents return: responses, streaming updates, continuation tokens, the Agent protocol."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Protocol, cast, runtime_checkable

from pydantic import BaseModel, Field

from agentic_core.protocols._messages import ChatMessage, UsageDetails
from agentic_core.protocols._thread import AgentThread


def _now() -> datetime:
    return datetime.now(UTC)


class ContinuationToken(BaseModel):
    """Where a background run stands: poll with ``run(continuation_token=...)``."""

    task_id: str
    checkpoint: bytes | None = None
    sequence: int = 0
    """How many streaming updates the holder has seen."""
    created_at: datetime = Field(default_factory=_now)


class AgentResponse(BaseModel):
    """The result of ``Agent.run``: the new messages, their text, usage and the parsed value."""

    messages: list[ChatMessage] = Field(default_factory=list[ChatMessage])
    text: str = ""
    usage: UsageDetails = Field(default_factory=UsageDetails)
    agent_id: str = ""
    continuation_token: ContinuationToken | None = None
    value: Any = None


class AgentResponseUpdate(BaseModel):
    """One chunk of ``Agent.run_stream``."""

    text: str = ""
    author_name: str | None = None
    done: bool = False
    continuation_token: ContinuationToken | None = None
    response: AgentResponse | None = None
    """On the last update (``done=True``): the complete response, usage and value included."""


AgentInput = str | ChatMessage | Sequence[ChatMessage] | None


@runtime_checkable
class Agent(Protocol):
    """Anything that answers messages: a ChatAgent, a workflow as an agent, a remote proxy."""

    @property
    def id(self) -> str: ...

    @property
    def name(self) -> str: ...

    async def run(
        self, messages: AgentInput = None, *, thread: AgentThread | None = None, **kwargs: Any
    ) -> AgentResponse: ...

    def run_stream(
        self, messages: AgentInput = None, *, thread: AgentThread | None = None, **kwargs: Any
    ) -> AsyncIterator[AgentResponseUpdate]: ...

    def get_new_thread(self, **metadata: Any) -> AgentThread: ...


def to_messages(messages: AgentInput) -> list[ChatMessage]:
    """Normalize an agent's input to a list of messages (a str is a user message).

    Raises:
        TypeError: ``messages`` is none of ``str``, ``ChatMessage``, a sequence of
            ``ChatMessage`` or None; the message names what it was (``got dict``, ``got a
            sequence holding str``), so the mistake shows here, not turns later.
    """
    if messages is None:
        return []
    if isinstance(messages, str):
        return [ChatMessage.user(messages)]
    if isinstance(messages, ChatMessage):
        return [messages]
    given = cast("object", messages)  # callers without type checking pass anything
    if isinstance(given, Mapping | bytes) or not isinstance(given, Iterable):
        kind = type(cast("object", given)).__name__
        raise TypeError(f"{_AGENT_INPUT}, got {kind}")
    items = list(cast("Iterable[object]", given))
    for item in items:
        if not isinstance(item, ChatMessage):
            raise TypeError(f"{_AGENT_INPUT}, got a sequence holding {type(item).__name__}")
    return cast("list[ChatMessage]", items)


_AGENT_INPUT = "agent input must be a str, a ChatMessage or a sequence of ChatMessage"
