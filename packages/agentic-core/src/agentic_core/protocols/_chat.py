"""The model side of an agent: the ChatClient protocol and the options, replies and streamed
updates it speaks."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterable, Sequence
from enum import StrEnum
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from agentic_core._errors import AgentError
from agentic_core.protocols._messages import (
    ChatMessage,
    Content,
    FunctionCallContent,
    Role,
    TextContent,
    UsageDetails,
)
from agentic_core.protocols._tool import Tool


class FinishReason(StrEnum):
    """Why the model stopped."""

    STOP = "stop"
    LENGTH = "length"
    TOOL_CALLS = "tool_calls"
    CONTENT_FILTER = "content_filter"
    ERROR = "error"


class ChatOptions(BaseModel):
    """Per-call settings for a chat client; ``None`` leaves the provider's default."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    model: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    tools: list[Tool] = Field(default_factory=list[Tool])
    tool_choice: Literal["auto", "none", "required"] | str | None = None
    response_format: type[BaseModel] | None = None
    stop: list[str] | None = None
    seed: int | None = None

    def merged_with(self, other: ChatOptions | None) -> ChatOptions:
        """These options with every field ``other`` sets explicitly taking precedence."""
        update: dict[str, Any] = (
            {k: getattr(other, k) for k in other.model_fields_set} if other else {}
        )
        merged = self.model_copy(update=update)
        for name in ("tools", "stop"):  # never share a list between two option objects
            value = getattr(merged, name)
            if value is not None:
                object.__setattr__(merged, name, list(value))  # not marked as explicitly set
        return merged


class ChatResponse(BaseModel):
    """One complete model reply."""

    message: ChatMessage
    usage: UsageDetails = Field(default_factory=UsageDetails)
    finish_reason: FinishReason = FinishReason.STOP
    model: str = ""
    value: Any = None
    """The parsed ``response_format`` instance, when one was asked for."""

    @property
    def text(self) -> str:
        """The reply's text."""
        return self.message.text

    @classmethod
    def from_updates(
        cls, updates: Iterable[ChatResponseUpdate], *, model: str = ""
    ) -> ChatResponse:
        """Fold streamed updates into one response.

        Text is concatenated; tool-call argument fragments are joined per call index and parsed
        as JSON (an unparsable result raises ``AgentError`` naming the tool); usage is summed;
        the last finish reason wins.
        """
        text: list[str] = []
        calls: dict[int, dict[str, Any]] = {}
        usage = UsageDetails()
        finish: FinishReason | None = None
        for update in updates:
            if update.text:
                text.append(update.text)
            for delta in update.tool_call_deltas:
                call = calls.setdefault(delta.index, {"call_id": None, "name": None, "args": []})
                if delta.call_id:
                    call["call_id"] = delta.call_id
                if delta.name:
                    call["name"] = delta.name
                if delta.arguments:
                    call["args"].append(delta.arguments)
            if update.usage is not None:
                usage = usage + update.usage
            if update.finish_reason is not None:
                finish = update.finish_reason
            if update.model:
                model = update.model
        contents: list[Content] = [TextContent(text="".join(text))] if text else []
        for index in sorted(calls):
            call = calls[index]
            name = call["name"] or ""
            contents.append(
                FunctionCallContent(
                    call_id=call["call_id"] or f"call_{index}",
                    name=name,
                    arguments=parse_tool_arguments(name, "".join(call["args"])),
                )
            )
        if finish is None:
            finish = FinishReason.TOOL_CALLS if calls else FinishReason.STOP
        message = ChatMessage(role=Role.ASSISTANT, contents=contents)
        return cls(message=message, usage=usage, finish_reason=finish, model=model)


def parse_tool_arguments(tool_name: str, raw: str) -> dict[str, Any]:
    """The JSON object of a tool call's arguments (``""`` means no arguments)."""
    if not raw.strip():
        return {}
    try:
        parsed = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise AgentError(
            f"the model sent arguments for tool {tool_name!r} that are not valid JSON "
            f"({exc.msg} at position {exc.pos}): {raw[:200]!r}"
        ) from exc
    if not isinstance(parsed, dict):
        raise AgentError(
            f"the model sent arguments for tool {tool_name!r} that are not a JSON object: "
            f"{raw[:200]!r}"
        )
    return parsed  # pyright: ignore[reportUnknownVariableType]


class ToolCallDelta(BaseModel):
    """A fragment of a streamed tool call; fragments with the same ``index`` form one call."""

    index: int = 0
    call_id: str | None = None
    name: str | None = None
    arguments: str = ""
    """A fragment of the arguments' JSON text."""


class ChatResponseUpdate(BaseModel):
    """One chunk of a streamed reply."""

    text: str = ""
    tool_call_deltas: list[ToolCallDelta] = Field(default_factory=list[ToolCallDelta])
    usage: UsageDetails | None = None
    finish_reason: FinishReason | None = None
    model: str | None = None


@runtime_checkable
class ChatClient(Protocol):
    """What an agent needs from a model (agentic-llm implements it; testing doubles fake it)."""

    @property
    def provider(self) -> str: ...

    @property
    def model(self) -> str: ...

    async def generate(
        self, messages: Sequence[ChatMessage], options: ChatOptions | None = None
    ) -> ChatResponse: ...

    def generate_stream(
        self, messages: Sequence[ChatMessage], options: ChatOptions | None = None
    ) -> AsyncIterator[ChatResponseUpdate]: ...

    async def health_check(self) -> bool: ...
