"""What a served target reads from an A2A message and what it says back, beyond plain parts.

- A workflow's start message and its request answers: the message made into the type the
  start executor (or the request's ``response_type``) takes: a data part's value, the text,
  a ``ChatMessage`` or a list of them, whichever validates first.
- Tool-approval answers for an agent: a data part holding a ``ToolApprovalResponse`` (or a
  mapping call id -> response), else the text: ``yes``/``approve``... approves every waiting
  call, anything else rejects them with the text as the reason (nothing runs on a doubt).
- Outputs and pending requests as parts: text as text, models and JSON data as data parts.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterable, Sequence
from typing import Any, cast

from a2a.types import Message, Part
from pydantic import BaseModel, TypeAdapter, ValidationError

from agentic_bus._a2a._parts import (
    APPROVAL_REQUEST_KIND,
    REQUEST_INFO_KIND,
    chat_message,
    content_parts,
    data_of,
    data_part,
    parts_text,
    text_part,
)
from agentic_core import (
    AgentResponse,
    AgentResponseUpdate,
    ChatMessage,
    RequestInfoEvent,
    ToolApprovalRequest,
    ToolApprovalResponse,
)

__all__ = [
    "AnswerError",
    "approval_answers",
    "approval_question",
    "as_type",
    "output_parts",
    "request_parts",
]

_YES = frozenset({"y", "yes", "ok", "okay", "approve", "approved", "allow", "go", "true"})


class AnswerError(ValueError):
    """An A2A message that cannot be the answer or the input asked for (says what was asked)."""


def as_type(message: Message, accepted: Sequence[Any], what: str) -> Any:
    """``message`` as the first of ``accepted`` types it validates as.

    Tried, for each type in order: the single data part's value, the text, the text as JSON,
    the message as a ``ChatMessage``, as a one-message list. ``Any``/``object`` takes the data
    value when there is one, else the text. Raises ``AnswerError`` naming ``what``.
    """
    data = data_of(message.parts)
    text = parts_text(message.parts)
    candidates: list[Any] = [data[0]] if len(data) == 1 else []
    candidates.append(text)
    with contextlib.suppress(ValueError):
        candidates.append(json.loads(text))
    chat = chat_message(message)
    candidates.extend([chat, [chat]])
    for tp in accepted or (Any,):
        if tp is Any or tp is object:
            return candidates[0]
        adapter: TypeAdapter[Any] = TypeAdapter(tp)
        for candidate in candidates:
            try:
                return adapter.validate_python(candidate)
            except (ValidationError, TypeError, ValueError):
                continue
    names = ", ".join(getattr(tp, "__name__", str(tp)) for tp in accepted)
    raise AnswerError(f"{what} must be {names}: the message could not be read as one")


def approval_answers(
    message: Message, requests: Sequence[ToolApprovalRequest]
) -> dict[str, ToolApprovalResponse]:
    """The answers ``message`` gives to the waiting tool calls ``requests``."""
    ids = [r.call_id for r in requests]
    for value in data_of(message.parts):
        if not isinstance(value, dict):
            continue
        mapping = cast("dict[str, Any]", value)
        if "approved" in mapping:
            response = _approval(mapping)
            return dict.fromkeys(ids, response)
        if set(mapping) & set(ids):
            return {cid: _approval(mapping[cid]) for cid in ids if cid in mapping}
    text = parts_text(p for p in message.parts if p.HasField("text")).strip()
    if text.lower().rstrip(".!") in _YES:
        return dict.fromkeys(ids, ToolApprovalResponse.approve())
    return dict.fromkeys(ids, ToolApprovalResponse.reject(text or "rejected"))


def approval_question(requests: Sequence[ToolApprovalRequest]) -> list[Part]:
    """The parts of an ``input-required`` status for waiting tool calls: a question naming
    the tools (argument values stay in the data part), then each request as data."""
    names = ", ".join(f"{r.tool_name!r}" for r in requests)
    question = (
        f"Approve the call of {names}? Answer 'yes', or anything else to reject it (the text "
        'is the reason), or send {"approved": true|false, "reason": ..., "arguments": ...}.'
    )
    return [
        text_part(question),
        *(data_part(r.model_dump(mode="json"), kind=APPROVAL_REQUEST_KIND) for r in requests),
    ]


def request_parts(requests: Iterable[RequestInfoEvent]) -> list[Part]:
    """The parts of an ``input-required`` status for a workflow's pending requests: what each
    asks, as text and as a data part (``request_id``, ``source``, ``data``, ``expects``)."""
    parts: list[Part] = []
    for request in requests:
        expects = getattr(request.response_type, "__name__", str(request.response_type))
        parts.append(text_part(f"{request.source_executor_id} asks: {_spoken(request.data)}"))
        parts.append(
            data_part(
                {
                    "request_id": request.request_id,
                    "source": request.source_executor_id,
                    "data": _jsonable(request.data),
                    "expects": expects,
                },
                kind=REQUEST_INFO_KIND,
            )
        )
    return parts


def output_parts(value: Any) -> list[Part]:
    """One workflow output (or agent answer) as parts."""
    if isinstance(value, str):
        return [text_part(value)] if value else []
    if isinstance(value, AgentResponse):
        return [text_part(value.text)] if value.text else []
    if isinstance(value, AgentResponseUpdate):
        return [text_part(value.text)] if value.text else []
    if isinstance(value, ChatMessage):
        return content_parts(value.contents)
    if isinstance(value, list):
        items = cast("list[Any]", value)
        if items and all(isinstance(m, ChatMessage) for m in items):
            return content_parts(cast("ChatMessage", items[-1]).contents)
    agent_response: object = getattr(
        cast("object", value), "agent_response", None
    )  # AgentExecutorResponse
    if isinstance(agent_response, AgentResponse):
        return output_parts(agent_response)
    return [data_part(_jsonable(value))]


def _approval(value: Any) -> ToolApprovalResponse:
    try:
        return ToolApprovalResponse.model_validate(value)
    except ValidationError as exc:
        raise AnswerError(
            "the answer is not a tool approval ({'approved': true|false, 'reason': ..., "
            f"'arguments': ...}}): {exc.errors(include_url=False)[0]['msg']}"
        ) from None


def _spoken(data: Any) -> str:
    if isinstance(data, str):
        return data
    if isinstance(data, BaseModel):
        return data.model_dump_json()
    return json.dumps(_jsonable(data), ensure_ascii=False)


def _jsonable(value: Any) -> Any:
    """``value`` as JSON data: models dumped, anything else not JSON as its ``str``."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    try:
        return json.loads(json.dumps(value))
    except (TypeError, ValueError):
        return TypeAdapter(Any).dump_python(value, mode="json", fallback=str)
