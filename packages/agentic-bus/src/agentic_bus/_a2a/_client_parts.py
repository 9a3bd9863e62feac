"""What ``A2AAgent`` sends and reads beyond ``_parts``' conversions: an ``input-required``
task as pending ``ToolApprovalRequest``s, their answers as parts, text chunks joined.

A task waits for input in one of three ways, each surfaced as ``ToolApprovalRequest``s:

- ``input``: a plain question (any A2A server). One request per task, its ``request_id`` the
  task id, ``tool_name="input_required"``, ``arguments={"question": ..., "data": ...}``.
  Answered as text: a str, a ``ChatMessage``, or a ``ToolApprovalResponse`` whose edited
  ``arguments["answer"]`` is the answer (else its reason, else ``yes``/``no``).
- ``approval``: tool calls of an agent served by ``serve_a2a`` waiting for approval (data parts
  tagged ``tool_approval_request``): each surfaces as the remote ``ToolApprovalRequest``.
- ``request_info``: pending requests of a workflow served by ``serve_a2a`` (data parts tagged
  ``request_info``): one request each (``request_id`` the workflow's), ``tool_name=
  "request_info"`` with the question, data and expected type; a request whose data is a tool
  approval surfaces as that ``ToolApprovalRequest``.

``approval`` and ``request_info`` answers go back as one data part ``{request_id: answer}``,
the form ``serve_a2a`` reads.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

from a2a.types import Part
from google.protobuf.json_format import MessageToDict
from pydantic import ValidationError

from agentic_bus._a2a._parts import (
    APPROVAL_REQUEST_KIND,
    CONTENT_KIND_KEY,
    REQUEST_INFO_KIND,
    content_parts,
    data_of,
    data_part,
    text_part,
)
from agentic_core import AgentError, ChatMessage, ToolApprovalRequest, ToolApprovalResponse

__all__ = [
    "INPUT_REQUIRED_TOOL",
    "REQUEST_INFO_TOOL",
    "AnswerValue",
    "RequestKind",
    "answer_parts",
    "message_parts",
    "pending_requests",
    "text_of",
]

INPUT_REQUIRED_TOOL = "input_required"
"""``tool_name`` of a remote task's plain question (A2A's state name)."""
REQUEST_INFO_TOOL = "request_info"
"""``tool_name`` of a remote workflow's pending request."""

RequestKind = Literal["input", "approval", "request_info", "request_info_approval"]
"""How a pending request is answered (see the module docstring)."""

AnswerValue = ToolApprovalResponse | Mapping[str, Any] | ChatMessage | str
"""An answer to a pending request: text, a message, or a ``ToolApprovalResponse`` (or its JSON)."""


def message_parts(messages: Sequence[ChatMessage], data: Any = None) -> list[Part]:
    """The parts of one A2A message carrying ``messages`` (``_parts.content_parts``), then a
    data part holding ``data`` when given."""
    parts = [part for message in messages for part in content_parts(message.contents)]
    if data is not None:
        try:
            parts.append(data_part(data))
        except TypeError as exc:
            raise AgentError(f"data= must be JSON data: {exc}") from exc
    return parts


def text_of(parts: Iterable[Part]) -> str:
    """The text of the text parts, joined as they are (chunks of one text)."""
    return "".join(part.text for part in parts if part.HasField("text"))


def pending_requests(
    parts: Sequence[Part], task_id: str, agent_name: str
) -> list[tuple[ToolApprovalRequest, RequestKind]]:
    """The requests an ``input-required`` status message (``parts``) asks, and their kinds."""
    found: list[tuple[ToolApprovalRequest, RequestKind]] = []
    for part in parts:
        kind = _kind_of(part)
        if kind == APPROVAL_REQUEST_KIND:
            request = _validated(data_of([part])[0])
            if request is not None:
                found.append((request, "approval"))
        elif kind == REQUEST_INFO_KIND:
            found.append(_request_info(data_of([part])[0], agent_name))
    if found:
        return found
    untagged = [value for part in parts if part.HasField("data") for value in data_of([part])]
    arguments: dict[str, Any] = {"question": text_of(parts)}
    if untagged:
        arguments["data"] = untagged[0] if len(untagged) == 1 else untagged
    request = ToolApprovalRequest(
        call_id=task_id, tool_name=INPUT_REQUIRED_TOOL, arguments=arguments, agent_name=agent_name
    )
    return [(request, "input")]


def answer_parts(answers: Mapping[str, object], kinds: Mapping[str, RequestKind]) -> list[Part]:
    """The parts of the message answering ``answers`` (by request id) of the given kinds."""
    parts: list[Part] = []
    mapping: dict[str, Any] = {}
    for request_id, answer in answers.items():
        kind = kinds[request_id]
        if kind == "input":
            parts.extend(_spoken(answer, request_id))
        elif kind in ("approval", "request_info_approval"):
            if isinstance(answer, str):
                parts.append(text_part(answer))  # "yes", or a rejection's reason
            else:
                approval = _approval(answer, request_id)
                mapping[request_id] = approval.model_dump(mode="json", exclude_none=True)
        else:
            mapping[request_id] = _value(answer, request_id)
    if mapping:
        parts.append(data_part(mapping))
    return parts


def _request_info(value: Any, agent_name: str) -> tuple[ToolApprovalRequest, RequestKind]:
    info: dict[str, Any] = dict(value) if isinstance(value, dict) else {"data": value}  # pyright: ignore[reportUnknownArgumentType]
    request_id = str(info.get("request_id", ""))
    data = info.get("data")
    if info.get("expects") == "ToolApprovalResponse":
        nested = _validated(data)
        if nested is not None:
            return nested.model_copy(update={"call_id": request_id}), "request_info_approval"
    source = info.get("source")
    arguments = {"question": f"{source} asks", "data": data, "expects": info.get("expects")}
    if isinstance(data, str):
        arguments["question"] = f"{source} asks: {data}"
    request = ToolApprovalRequest(
        call_id=request_id,
        tool_name=REQUEST_INFO_TOOL,
        arguments=arguments,
        agent_name=str(source) if source else agent_name,
    )
    return request, "request_info"


def _spoken(answer: object, request_id: str) -> list[Part]:
    """A plain question's answer as text (a ``ToolApprovalResponse``'s ``answer``, reason, or
    ``yes``/``no``; JSON that is not text as a data part)."""
    if isinstance(answer, str):
        return [text_part(answer)]
    if isinstance(answer, ChatMessage):
        return message_parts([answer])
    response = _approval(answer, request_id)
    given = (response.arguments or {}).get("answer")
    if isinstance(given, str):
        return [text_part(given)]
    if given is not None:
        return [data_part(given)]
    return [text_part(response.reason or ("yes" if response.approved else "no"))]


def _value(answer: object, request_id: str) -> Any:
    """A workflow request's answer as JSON data (what its ``response_type`` validates)."""
    if isinstance(answer, str):
        return answer
    if isinstance(answer, ChatMessage):
        return answer.text
    response = _approval(answer, request_id)
    arguments = response.arguments or {}
    if "answer" in arguments:
        return arguments["answer"]
    return response.reason if response.reason is not None else response.approved


def _approval(answer: object, request_id: str) -> ToolApprovalResponse:
    if isinstance(answer, ToolApprovalResponse):
        return answer
    if isinstance(answer, Mapping):
        try:
            return ToolApprovalResponse.model_validate(answer)
        except ValidationError as exc:
            raise AgentError(
                f"the answer to request {request_id!r} is a mapping but not a "
                f"ToolApprovalResponse: {exc.errors(include_url=False)[0]['msg']}"
            ) from None
    raise TypeError(
        f"the answer to request {request_id!r} must be a str, a ChatMessage or a "
        f"ToolApprovalResponse, got {type(answer).__name__}"
    )


def _validated(value: Any) -> ToolApprovalRequest | None:
    try:
        return ToolApprovalRequest.model_validate(value)
    except ValidationError:
        return None


def _kind_of(part: Part) -> str | None:
    if not part.HasField("data") or not part.HasField("metadata"):
        return None
    kind = MessageToDict(part.metadata).get(CONTENT_KIND_KEY)
    return kind if isinstance(kind, str) else None
