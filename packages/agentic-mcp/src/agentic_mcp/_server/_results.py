"""What a tool call answers: text for the model, structured content when there is data, and
tool errors (``isError``) saying what went wrong and what to do."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mcp import types as mcp_types
from pydantic_core import to_json, to_jsonable_python

from agentic_core import AgentResponse, ChatMessage

__all__ = ["tool_error", "tool_text", "workflow_result"]

MAX_ERROR_CHARS = 2000


def tool_text(text: str) -> mcp_types.CallToolResult:
    """A plain text answer."""
    return mcp_types.CallToolResult(content=[mcp_types.TextContent(type="text", text=text)])


def tool_error(message: str) -> mcp_types.CallToolResult:
    """An ``isError`` answer (the model reads it; the protocol call itself succeeded)."""
    text = message if len(message) <= MAX_ERROR_CHARS else message[:MAX_ERROR_CHARS] + "…"
    return mcp_types.CallToolResult(
        content=[mcp_types.TextContent(type="text", text=text)], is_error=True
    )


def workflow_result(outputs: Sequence[Any]) -> mcp_types.CallToolResult:
    """A completed run's outputs: their text, and ``{"outputs": [...]}`` as structured content."""
    text = "\n\n".join(output_text(output) for output in outputs)
    structured = {"outputs": to_jsonable_python(list(outputs), fallback=str)}
    return mcp_types.CallToolResult(
        content=[mcp_types.TextContent(type="text", text=text)],
        structured_content=structured,
    )


def output_text(value: Any) -> str:
    """What a model reads of one output: the text of a reply or message, else its JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, AgentResponse | ChatMessage):
        return value.text
    if isinstance(value, list) and value and all(isinstance(m, ChatMessage) for m in value):  # pyright: ignore[reportUnknownVariableType]
        messages: list[ChatMessage] = value  # pyright: ignore[reportUnknownVariableType]
        return messages[-1].text
    return to_json(value, fallback=str).decode()
