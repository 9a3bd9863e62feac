"""What agents return: responses, streaming updates, continuation tokens, the Agent protocol."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Protocol, cast, runtime_checkable

from pydantic import BaseModel, Field, model_validator

from agentic_core.protocols._messages import ChatMessage, Role, UsageDetails
from agentic_core.protocols._thread import AgentThread
from agentic_core.protocols._tool_approval import ToolApprovalRequest


def _now() -> datetime:
    return datetime.now(UTC)


class ContinuationToken(BaseModel):
    """Where a background run stands: poll with ``run(continuation_token=...)``."""

    task_id: str
    checkpoint: bytes | None = None
    sequence: int = 0
    """How many streaming updates the holder has seen."""
    created_at: datetime = Field(default_factory=_now)


def _no_requests() -> list[ToolApprovalRequest]:
    return []


class AgentResponse(BaseModel):
    """The result of ``Agent.run``: the new messages, their text, usage and the parsed value.

    ``text`` is the answer's text: when not given it is computed from ``messages`` as the
    response is made (the text of the last assistant message that has any, ``""`` when none
    has), so ``AgentResponse(messages=[ChatMessage.assistant("hi")]).text == "hi"``. A ``text``
    given explicitly (even ``""``) is kept as given, and so is a serialized one on load.
    Changing ``messages`` afterwards does not recompute it. (MAF's ``text`` joins the text of
    every message; ours is the reply's, the value every built-in agent sets.)
    """

    messages: list[ChatMessage] = Field(default_factory=list[ChatMessage])
    text: str = ""
    usage: UsageDetails = Field(default_factory=UsageDetails)
    agent_id: str = ""
    continuation_token: ContinuationToken | None = None
    value: Any = None
    user_input_requests: list[ToolApprovalRequest] = Field(default_factory=_no_requests)
    """Tool calls waiting for a person's approval: the turn resumes with
    ``run(responses={request.call_id: answer}, thread=...)`` (Microsoft Agent Framework's name)."""

    @model_validator(mode="before")
    @classmethod
    def _text_from_messages(cls, data: object) -> object:
        # On the raw input, before validation: a dict lookup, not a second pass over the model.
        if type(data) is not dict:
            return data
        given = cast("dict[str, Any]", data)
        if "text" in given:
            return given
        messages: Sequence[object] | None = given.get("messages")
        return {**given, "text": _reply_text(messages)} if messages else given


def _reply_text(messages: Sequence[object]) -> str:
    """What ``AgentResponse.text`` is when not given: the last assistant text, or ``""``.

    ``messages`` as given to the constructor: ``ChatMessage``s, or their JSON-like dicts."""
    for given in reversed(messages):
        message = given if isinstance(given, ChatMessage) else ChatMessage.model_validate(given)
        if message.role is Role.ASSISTANT:
            text = message.text
            if text:
                return text
    return ""


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
