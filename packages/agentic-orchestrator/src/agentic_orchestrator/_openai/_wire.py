"""The OpenAI chat-completions wire format: requests in, completions, chunks and errors out.

Shapes as the ``openai`` Python SDK parses them (``ChatCompletion``, ``ChatCompletionChunk``,
``Model``, the ``{"error": {...}}`` body); pure functions, no I/O.
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Any, Literal, cast

from pydantic import BaseModel, ConfigDict, ValidationError

from agentic_core import ChatMessage, FunctionCallContent, UsageDetails

__all__ = [
    "ChatCompletionRequest",
    "EndpointError",
    "chunk",
    "completion",
    "error_body",
    "model_list",
    "new_completion_id",
    "now",
    "parse_request",
    "reported",
    "to_chat_messages",
]


class EndpointError(Exception):
    """An answer in OpenAI's error shape: status, message, ``type`` and ``code``."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        type: str = "invalid_request_error",  # noqa: A002 - OpenAI's field name
        code: str | None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.type = type
        self.code = code


def error_body(message: str, *, type: str, code: str | None) -> dict[str, Any]:  # noqa: A002
    """OpenAI's error body: ``{"error": {"message", "type", "param", "code"}}``."""
    return {"error": {"message": message, "type": type, "param": None, "code": code}}


class StreamOptions(BaseModel):
    model_config = ConfigDict(extra="ignore")
    include_usage: bool = False


class ChatCompletionRequest(BaseModel):
    """The fields of a chat-completions request this endpoint reads; sampling options
    (``temperature``, ``max_tokens``, ...) are accepted and ignored: the served agent's own
    settings apply."""

    model_config = ConfigDict(extra="ignore")
    model: str
    messages: list[dict[str, Any]]
    stream: bool = False
    stream_options: StreamOptions | None = None
    tools: list[Any] | None = None
    functions: list[Any] | None = None
    n: int | None = None

    @property
    def include_usage(self) -> bool:
        return self.stream_options is not None and self.stream_options.include_usage


def parse_request(body: bytes) -> ChatCompletionRequest:
    """The request, or ``EndpointError`` 400 saying what is wrong with it."""
    try:
        raw: Any = json.loads(body or b"null")
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise EndpointError(400, f"the request body is not JSON: {exc}", code=None) from None
    if not isinstance(raw, dict):
        raise EndpointError(400, "the request body must be a JSON object", code=None)
    try:
        request = ChatCompletionRequest.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "body"
        raise EndpointError(400, f"{where}: {first['msg']}", code="invalid_request") from None
    if request.tools or request.functions:
        raise EndpointError(
            400,
            "this endpoint serves agents that run their own tools: send no 'tools' or "
            "'functions' (the agent's tools are used)",
            code="tools_not_supported",
        )
    if request.n not in (None, 1):
        raise EndpointError(400, "n must be 1: an agent gives one answer", code="invalid_n")
    if not request.messages:
        raise EndpointError(400, "messages is empty: send the conversation", code=None)
    return request


# -- messages ------------------------------------------------------------------------------------


def to_chat_messages(messages: list[dict[str, Any]]) -> list[ChatMessage]:
    """The request's messages as core ``ChatMessage``s (``developer`` is a system message,
    an assistant's ``tool_calls`` become ``FunctionCallContent``s, a ``tool`` message the
    result of its ``tool_call_id``)."""
    return [_to_chat_message(index, message) for index, message in enumerate(messages)]


def _to_chat_message(index: int, message: dict[str, Any]) -> ChatMessage:
    role = message.get("role")
    name = message.get("name")
    author = name if isinstance(name, str) else None
    text = _text(index, message.get("content"))
    if role in ("system", "developer"):
        return ChatMessage.system(text, author_name=author)
    if role == "user":
        return ChatMessage.user(text, author_name=author)
    if role == "assistant":
        given: list[Any] = message.get("tool_calls") or []
        calls = [_call(index, call) for call in given]
        reply = ChatMessage.assistant(text, author_name=author)
        reply.contents.extend(calls)
        return reply
    if role == "tool":
        call_id = message.get("tool_call_id")
        if not isinstance(call_id, str):
            message_ = f"messages.{index}: a tool message needs tool_call_id"
            raise EndpointError(400, message_, code=None)
        return ChatMessage.tool(call_id, text)
    raise EndpointError(
        400,
        f"messages.{index}: role {role!r} is not one of system, developer, user, assistant, tool",
        code=None,
    )


def _text(index: int, content: Any) -> str:
    """A message's content as text: a string, or the text parts of a list of parts."""
    if content is None or isinstance(content, str):
        return content or ""
    if isinstance(content, list):
        texts: list[str] = []
        for part in cast("list[Any]", content):
            if isinstance(part, dict) and part.get("type") == "text":  # pyright: ignore[reportUnknownMemberType]
                texts.append(str(part.get("text", "")))  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]
            else:
                raise EndpointError(
                    400, f"messages.{index}: only text content parts are served", code=None
                )
        return "".join(texts)
    raise EndpointError(400, f"messages.{index}: content must be a string or a list", code=None)


def _call(index: int, call: Any) -> FunctionCallContent:
    fields = cast("dict[str, Any]", call) if isinstance(call, dict) else {}
    function: Any = fields.get("function")
    if not isinstance(function, dict) or not isinstance(fields.get("id"), str):
        raise EndpointError(400, f"messages.{index}: a tool call needs id and function", code=None)
    raw = cast("dict[str, Any]", function)
    try:
        arguments: Any = json.loads(raw.get("arguments") or "{}")
    except (TypeError, json.JSONDecodeError):
        arguments = {"arguments": raw.get("arguments")}
    if not isinstance(arguments, dict):
        arguments = {"arguments": arguments}
    return FunctionCallContent(
        call_id=cast("str", fields["id"]),
        name=str(raw.get("name", "")),
        arguments=cast("dict[str, Any]", arguments),
    )


# -- responses -----------------------------------------------------------------------------------


def new_completion_id() -> str:
    return f"chatcmpl-{uuid.uuid4().hex}"


def _usage(usage: UsageDetails) -> dict[str, int]:
    return {
        "prompt_tokens": usage.input_tokens,
        "completion_tokens": usage.output_tokens,
        "total_tokens": usage.total_tokens or usage.input_tokens + usage.output_tokens,
    }


def reported(usage: UsageDetails) -> bool:
    """Whether the agent's client reported any usage (all zero: it did not)."""
    return bool(usage.input_tokens or usage.output_tokens or usage.total_tokens)


def completion(
    completion_id: str, model: str, text: str, usage: UsageDetails, created: int
) -> dict[str, Any]:
    """A ``chat.completion`` object with one choice."""
    return {
        "id": completion_id,
        "object": "chat.completion",
        "created": created,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text, "refusal": None},
                "logprobs": None,
                "finish_reason": "stop",
            }
        ],
        "usage": _usage(usage) if reported(usage) else None,
    }


Delta = dict[str, str]
FinishReason = Literal["stop"]


def chunk(
    completion_id: str,
    model: str,
    created: int,
    *,
    delta: Delta | None = None,
    finish_reason: FinishReason | None = None,
    usage: UsageDetails | None = None,
    include_usage: bool = False,
) -> dict[str, Any]:
    """A ``chat.completion.chunk``: a delta (or the finish), or with ``usage`` the usage chunk
    (no choices); with ``include_usage`` every chunk carries ``usage`` (null but the last)."""
    choices: list[dict[str, Any]] = (
        []
        if usage is not None
        else [{"index": 0, "delta": delta or {}, "logprobs": None, "finish_reason": finish_reason}]
    )
    body: dict[str, Any] = {
        "id": completion_id,
        "object": "chat.completion.chunk",
        "created": created,
        "model": model,
        "choices": choices,
    }
    if usage is not None:
        body["usage"] = _usage(usage)
    elif include_usage:
        body["usage"] = None
    return body


def model_list(names: list[str], created: int) -> dict[str, Any]:
    """The ``/v1/models`` list: one ``model`` object per served target."""
    return {
        "object": "list",
        "data": [
            {"id": name, "object": "model", "created": created, "owned_by": "agentic"}
            for name in names
        ],
    }


def now() -> int:
    return int(time.time())
