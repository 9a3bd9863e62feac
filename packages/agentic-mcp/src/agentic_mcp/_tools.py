"""MCPTool: one MCP tool as a core ``Tool`` a ``ChatAgent`` calls like a function tool."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from agentic_mcp._models import MCPToolInfo, MCPToolResult

if TYPE_CHECKING:
    from agentic_mcp._client import MCPClient


class MCPTool:
    """An MCP tool for an agent: the server's description and input schema, a safe name.

    ``invoke`` calls the tool through the client's current session and returns what a model
    should read: the text content, or the structured content as JSON when there is no text
    (never both: MCP servers often send the same value twice), cut to ``max_result_chars``
    (head and tail, with a notice). A tool error raises ``MCPToolError``, which the agent loop
    shows the model as an error result.
    """

    def __init__(self, client: MCPClient, info: MCPToolInfo, max_result_chars: int) -> None:
        self._client = client
        self.info = info
        self._max_chars = max_result_chars

    def __repr__(self) -> str:
        return f"MCPTool({self.name!r} -> {self.info.server}.{self.info.name})"

    @property
    def name(self) -> str:
        """The model-facing name, e.g. ``git__git_log``."""
        return self.info.qualified_name

    @property
    def description(self) -> str:
        """The server's title and description of the tool."""
        info = self.info
        if info.title and info.title not in info.description:
            return f"{info.title}. {info.description}".strip()
        return info.description or info.title or info.name

    @property
    def parameters(self) -> dict[str, Any]:
        """The tool's JSON input schema (always an object schema)."""
        schema = dict(self.info.input_schema)
        schema.setdefault("type", "object")
        schema.setdefault("properties", {})
        return schema

    async def invoke(self, arguments: Mapping[str, Any]) -> str:
        """Call the tool; its result as text for the model."""
        result = await self._client.call_tool(self.info.server, self.info.name, arguments)
        result.raise_for_error()
        return truncate_for_model(result_text(result), self._max_chars)


def result_text(result: MCPToolResult) -> str:
    """What a model reads of a result: text items, else structured content as JSON."""
    texts: list[str] = []
    for item in result.content:
        kind = item.get("type")
        if kind == "text":
            texts.append(str(item.get("text", "")))
        elif kind in ("image", "audio"):
            size = len(str(item.get("data", ""))) * 3 // 4
            texts.append(f"[{kind} {item.get('mimeType', '')}, {size} bytes]")
        elif kind == "resource_link":
            texts.append(f"[resource {item.get('uri', '')}]")
        elif kind == "resource":
            resource: dict[str, Any] = item.get("resource") or {}
            texts.append(str(resource.get("text") or f"[resource {resource.get('uri', '')}]"))
    if any(item.get("type") == "text" for item in result.content):
        return "\n".join(texts)
    if result.structured is not None:
        return json.dumps(result.value(), ensure_ascii=False, default=str)
    return "\n".join(texts)


def truncate_for_model(text: str, max_chars: int) -> str:
    """``text`` cut to about ``max_chars``: its head and tail around a notice of what was cut."""
    if len(text) <= max_chars:
        return text
    notice_room = 200
    keep = max(max_chars - notice_room, 2)
    head, tail = text[: keep * 2 // 3], text[-(keep // 3) :]
    cut = len(text) - len(head) - len(tail)
    notice = (
        f"\n[... {cut:,} of {len(text):,} characters cut: the result exceeded "
        f"{max_chars:,} characters; ask for less (filters, limits, pages) ...]\n"
    )
    return head + notice + tail
