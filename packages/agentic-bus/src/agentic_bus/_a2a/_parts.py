"""Agentic chat messages and contents as A2A ``Part``s and ``Message``s, both ways.

- Text contents and text parts carry text.
- Data parts carry JSON: read back as a ``TextContent`` holding the JSON text (what a reader of
  text sees) while ``data_of`` gives their values. ``google.protobuf.Value`` stores numbers as
  doubles, so whole numbers come back as ints (``3.0`` is read as ``3``).
- A tool call or tool result becomes a data part tagged in its metadata
  (``{"agentic_content": "function_call" | "function_result"}``) and comes back as the same
  content.
- A part agentic has no content for (raw bytes, a URL) is never dropped: it becomes a text
  content with a note saying what it was (``[file report.pdf (application/pdf, 12 bytes) not
  shown]``).

Roles: A2A has two, ``user`` and ``agent``; an assistant message is an ``agent`` message and
every other role a ``user`` one.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Sequence
from typing import Any

from a2a.types import Message, Part
from a2a.types import Role as A2ARole
from google.protobuf import struct_pb2
from google.protobuf.json_format import MessageToDict, ParseDict

from agentic_core import (
    ChatMessage,
    Content,
    FunctionCallContent,
    FunctionResultContent,
    Role,
    TextContent,
)

__all__ = [
    "APPROVAL_REQUEST_KIND",
    "CONTENT_KIND_KEY",
    "REQUEST_INFO_KIND",
    "a2a_message",
    "chat_message",
    "content_parts",
    "contents_of",
    "data_of",
    "data_part",
    "part_content",
    "parts_text",
    "text_part",
]

CONTENT_KIND_KEY = "agentic_content"
"""The metadata key of a data part that carries a tool call, a tool result or a request."""

APPROVAL_REQUEST_KIND = "tool_approval_request"
"""The kind of a data part holding a ``ToolApprovalRequest`` an ``input-required`` task asks."""

REQUEST_INFO_KIND = "request_info"
"""The kind of a data part holding a served workflow's pending ``request_info`` request."""

_CALL = "function_call"
_RESULT = "function_result"


def text_part(text: str) -> Part:
    """A text part."""
    return Part(text=text)


def data_part(data: Any, *, kind: str | None = None) -> Part:
    """A data part holding the JSON value ``data`` (``kind`` tags what agentic content it is).

    Raises ``TypeError`` naming the type when ``data`` is not JSON data.
    """
    try:
        value = ParseDict(_jsonable(data), struct_pb2.Value())
    except (TypeError, ValueError) as exc:
        raise TypeError(f"a data part needs JSON data, got {type(data).__name__}: {exc}") from exc
    part = Part(data=value, media_type="application/json")
    if kind is not None:
        part.metadata.update({CONTENT_KIND_KEY: kind})
    return part


def content_parts(contents: Iterable[Content]) -> list[Part]:
    """The A2A parts carrying ``contents`` (empty text contents are left out)."""
    parts: list[Part] = []
    for content in contents:
        if isinstance(content, TextContent):
            if content.text:
                parts.append(text_part(content.text))
        elif isinstance(content, FunctionCallContent):
            parts.append(data_part(content.model_dump(mode="json", exclude={"type"}), kind=_CALL))
        else:
            parts.append(data_part(content.model_dump(mode="json", exclude={"type"}), kind=_RESULT))
    return parts


def a2a_message(
    message: ChatMessage, *, context_id: str | None = None, task_id: str | None = None
) -> Message:
    """``message`` as an A2A message (its ``message_id`` kept)."""
    role = A2ARole.ROLE_AGENT if message.role is Role.ASSISTANT else A2ARole.ROLE_USER
    return Message(
        message_id=message.message_id or uuid.uuid4().hex,
        role=role,
        parts=content_parts(message.contents),
        context_id=context_id or "",
        task_id=task_id or "",
    )


def part_content(part: Part) -> Content:
    """The agentic content of one part (see the module docstring for the mapping)."""
    if part.HasField("text"):
        return TextContent(text=part.text)
    if part.HasField("data"):
        value = _value_of(part)
        kind = _kind_of(part)
        if kind == _CALL and isinstance(value, dict):
            return FunctionCallContent.model_validate(value)
        if kind == _RESULT and isinstance(value, dict):
            return FunctionResultContent.model_validate(value)
        return TextContent(text=json.dumps(value, ensure_ascii=False))
    return TextContent(text=_note(part))


def contents_of(parts: Iterable[Part]) -> list[Content]:
    """The agentic contents of ``parts``, one per part, in order."""
    return [part_content(part) for part in parts]


def chat_message(message: Message) -> ChatMessage:
    """An A2A message as a ``ChatMessage`` (``agent`` → assistant, else user)."""
    role = Role.ASSISTANT if message.role == A2ARole.ROLE_AGENT else Role.USER
    kwargs: dict[str, Any] = {"message_id": message.message_id} if message.message_id else {}
    return ChatMessage(role=role, contents=contents_of(message.parts), **kwargs)


def parts_text(parts: Iterable[Part]) -> str:
    """What a reader of text sees of ``parts``: text parts as they are, data parts as JSON
    text and other parts as notes, joined by newlines."""
    texts: list[str] = []
    for part in parts:
        content = part_content(part)
        if isinstance(content, TextContent):
            texts.append(content.text)
        else:
            texts.append(json.dumps(_value_of(part), ensure_ascii=False))
    return "\n".join(t for t in texts if t)


def data_of(parts: Sequence[Part]) -> list[Any]:
    """The JSON value of each data part (tool calls and results included), in order."""
    return [_value_of(part) for part in parts if part.HasField("data")]


def _value_of(part: Part) -> Any:
    return _narrow(MessageToDict(part.data))


def _kind_of(part: Part) -> str | None:
    if not part.HasField("metadata"):
        return None
    kind = MessageToDict(part.metadata).get(CONTENT_KIND_KEY)
    return kind if isinstance(kind, str) else None


def _narrow(value: Any) -> Any:
    """Whole floats back to ints (protobuf stores every JSON number as a double)."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    if isinstance(value, dict):
        items: dict[Any, Any] = value  # pyright: ignore[reportUnknownVariableType]
        return {str(k): _narrow(v) for k, v in items.items()}
    if isinstance(value, list):
        return [_narrow(v) for v in value]  # pyright: ignore[reportUnknownVariableType]
    return value


def _note(part: Part) -> str:
    media = part.media_type or "unknown type"
    name = f" {part.filename}" if part.filename else ""
    if part.HasField("raw"):
        return f"[file{name} ({media}, {len(part.raw)} bytes) not shown: binary A2A part]"
    if part.HasField("url"):
        return f"[file{name} ({media}) at {part.url}: A2A URL part, not fetched]"
    return "[empty A2A part]"


def _jsonable(data: Any) -> Any:
    return json.loads(json.dumps(data))
