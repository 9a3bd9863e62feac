"""A workflow's pending request as an MCP elicitation (form mode): the question shown, the
form asked for, and the answer turned back into the request's response type."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from mcp import types as mcp_types
from mcp.server.context import ServerRequestContext
from mcp.server.elicitation import render_elicitation_schema
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel, TypeAdapter, ValidationError
from pydantic_core import to_json

from agentic_core import RequestInfoEvent

__all__ = [
    "Answer",
    "can_ask_in_result",
    "can_elicit",
    "elicit_answer",
    "elicit_request",
    "parse_elicited",
]

_QUESTION_CHARS = 4000
_PRIMITIVES: dict[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}


class Answer:
    """What the client answered: a value, or why there is none (declined, cancelled, invalid)."""

    def __init__(self, value: Any = None, *, refused: str | None = None) -> None:
        self.value = value
        self.refused = refused


def can_elicit(ctx: ServerRequestContext[Any, Any]) -> bool:
    """Whether this call may ask its client mid-call: the client declared elicitation and the
    connection carries server-to-client requests (the handshake eras: stdio, HTTP sessions)."""
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        return False
    capabilities = ctx.session.client_capabilities
    return (
        capabilities is not None
        and capabilities.elicitation is not None
        and ctx.session.can_send_request
    )


def can_ask_in_result(ctx: ServerRequestContext[Any, Any]) -> bool:
    """Whether this call may answer with ``InputRequiredResult`` (2026-07-28): the client
    declared elicitation on the request and retries the call with its answers."""
    if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
        return False
    capabilities = ctx.session.client_capabilities
    return capabilities is not None and capabilities.elicitation is not None


def elicit_request(tool: str, request: RequestInfoEvent) -> mcp_types.ElicitRequest:
    """The form asking for ``request``'s answer, to embed in an ``InputRequiredResult``."""
    schema, _ = answer_form(request.response_type)
    return mcp_types.ElicitRequest(
        params=mcp_types.ElicitRequestFormParams(
            message=question_text(tool, request), requested_schema=schema
        )
    )


def question_text(tool: str, request: RequestInfoEvent) -> str:
    """What the form says: who asks, and the request's data."""
    data = request.data
    shown = data if isinstance(data, str) else to_json(data, fallback=str).decode()
    if len(shown) > _QUESTION_CHARS:
        shown = shown[:_QUESTION_CHARS] + "…"
    return f"{tool} ({request.source_executor_id}) asks: {shown}"


def answer_form(response_type: Any) -> tuple[dict[str, Any], Callable[[dict[str, Any]], Any]]:
    """The form schema for ``response_type`` and the parser of the form's content."""
    if isinstance(response_type, type) and issubclass(response_type, BaseModel):
        model: type[BaseModel] = response_type
        try:
            return render_elicitation_schema(model), model.model_validate
        except TypeError:
            pass  # not a flat form: asked as JSON below
    adapter: TypeAdapter[Any] = TypeAdapter(cast("Any", response_type))
    primitive = _PRIMITIVES.get(response_type)
    if primitive is not None:
        schema = _answer_schema(primitive, "Your answer.")
        return schema, lambda content: adapter.validate_python(content.get("answer"))
    try:
        shape = to_json(adapter.json_schema()).decode()[:1000]
    except Exception:  # noqa: BLE001 - a type without a JSON schema: no hint
        shape = "any JSON value"
    schema = _answer_schema("string", f"Your answer as JSON, matching: {shape}")

    def parse(content: dict[str, Any]) -> Any:
        raw = content.get("answer")
        if isinstance(raw, str):
            try:
                return adapter.validate_json(raw)
            except ValidationError:
                pass
        return adapter.validate_python(raw)

    return schema, parse


def _answer_schema(json_type: str, description: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"answer": {"type": json_type, "description": description}},
        "required": ["answer"],
    }


async def elicit_answer(
    ctx: ServerRequestContext[Any, Any], tool: str, request: RequestInfoEvent
) -> Answer:
    """Ask the client for ``request``'s answer (form mode) and parse it."""
    schema, _ = answer_form(request.response_type)
    result = await ctx.session.elicit_form(
        question_text(tool, request), schema, related_request_id=ctx.request_id
    )
    return parse_elicited(request, result)


def parse_elicited(request: RequestInfoEvent, result: Any) -> Answer:
    """``request``'s answer from the client's ``ElicitResult`` (refused when none)."""
    if not isinstance(result, mcp_types.ElicitResult):
        return Answer(refused=f"no elicitation answer to the request {request.request_id!r}")
    _, parse = answer_form(request.response_type)
    if result.action != "accept":
        done = "declined" if result.action == "decline" else "cancelled"
        return Answer(refused=f"the client {done} the request {request.request_id!r}")
    try:
        return Answer(parse(dict(result.content or {})))
    except (ValidationError, ValueError) as exc:
        return Answer(refused=f"the answer to request {request.request_id!r} is invalid: {exc}")
