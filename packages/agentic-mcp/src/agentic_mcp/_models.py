"""The data agentic_mcp hands out: tool listings, tool results, server status, call records."""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class MCPToolInfo(BaseModel):
    """One tool of one server, as listed by the server (names as the server spells them)."""

    model_config = ConfigDict(frozen=True)

    server: str
    name: str
    """The tool's name on its server."""
    qualified_name: str
    """The name a model sees (``get_tools()``): the prefix + name, sanitized and unique."""
    title: str | None = None
    description: str = ""
    input_schema: dict[str, Any] = Field(default_factory=dict[str, Any])
    output_schema: dict[str, Any] | None = None
    annotations: dict[str, Any] | None = None
    """MCP tool annotations in wire form (``readOnlyHint``, ``idempotentHint``, ...)."""

    @property
    def read_only(self) -> bool:
        """The server says the tool changes nothing."""
        return bool((self.annotations or {}).get("readOnlyHint"))

    @property
    def idempotent(self) -> bool:
        """The server says calling twice with the same arguments does no more than once."""
        return bool((self.annotations or {}).get("idempotentHint"))


class MCPToolResult(BaseModel):
    """What a tool call returned: MCP content items (wire form) and structured content."""

    server: str
    tool: str
    content: list[dict[str, Any]] = Field(default_factory=list[dict[str, Any]])
    """Content items as MCP sends them: ``{"type": "text", "text": ...}``, images, resources."""
    structured: Any | None = None
    """``structuredContent``, when the tool returned any."""
    is_error: bool = False
    duration_s: float = 0.0

    @property
    def text(self) -> str:
        """The text items joined by newlines (other items are left out)."""
        return "\n".join(
            str(item.get("text", "")) for item in self.content if item.get("type") == "text"
        )

    def raise_for_error(self) -> None:
        """Raise ``MCPToolError`` (carrying this result) when the tool reported an error."""
        if self.is_error:
            from agentic_mcp._errors import MCPToolError

            message = self.text or json.dumps(self.structured, default=str) or "(no message)"
            raise MCPToolError(f"MCP tool {self.server}.{self.tool} failed: {message}", self)

    def value(self) -> Any:
        """The structured content (``{"result": x}`` unwrapped to ``x``), else the text."""
        structured = self.structured
        if structured is not None:
            if isinstance(structured, dict) and len(structured) == 1 and "result" in structured:  # pyright: ignore[reportUnknownArgumentType]
                return structured["result"]  # pyright: ignore[reportUnknownVariableType]
            return structured  # pyright: ignore[reportUnknownVariableType]
        if self.content and all(item.get("type") == "text" for item in self.content):
            return self.text
        if not self.content:
            return ""
        return [_plain(item) for item in self.content]


def _plain(item: dict[str, Any]) -> Any:
    if item.get("type") == "text":
        return item.get("text", "")
    return {key: value for key, value in item.items() if key != "annotations"}


ConnectionState = Literal["connecting", "connected", "reconnecting", "failed", "closed"]


class ServerStatus(BaseModel):
    """How one server's connection stands (``MCPClient.status()``)."""

    name: str
    state: ConnectionState
    generation: int = 0
    """How many sessions have been opened to it (1 after the first connect; +1 per reconnect)."""
    protocol_version: str | None = None
    server_name: str | None = None
    server_version: str | None = None
    tool_count: int = 0
    last_error: str | None = None


class ToolCallRecord(BaseModel):
    """One tool call a Code Mode program made (the audit trail of an execution)."""

    server: str
    tool: str
    arguments_bytes: int
    result_bytes: int = 0
    duration_s: float = 0.0
    is_error: bool = False
    error: str | None = None
    """Why the call failed or was refused (``ToolError: ...``, ``NotAllowed: ...``, ...)."""


class CodeModeResult(BaseModel):
    """How one Code Mode execution went: the program's prints, its end, its tool calls."""

    stdout: str
    """What the program printed, capped at ``max_output_chars`` (see ``truncated``)."""
    stderr: str
    exit_code: int
    error: str | None = None
    """The program's uncaught exception (traceback text), or why the run was stopped."""
    timed_out: bool = False
    truncated: bool = False
    tool_calls: list[ToolCallRecord] = Field(default_factory=list[ToolCallRecord])
    duration_s: float = 0.0

    @property
    def ok(self) -> bool:
        """Exited with 0, in time, without an uncaught exception."""
        return self.exit_code == 0 and not self.timed_out and self.error is None

    def for_model(self) -> str:
        """What a model is shown: the output, then the error if there was one."""
        parts = [self.stdout] if self.stdout else []
        if self.error:
            parts.append(f"Error: {self.error}")
        elif self.exit_code != 0 or self.timed_out:
            tail = self.stderr[-2000:]
            reason = "timed out" if self.timed_out else f"exited with {self.exit_code}"
            parts.append(f"Error: the program {reason}" + (f"\n{tail}" if tail else ""))
        return "\n".join(parts) if parts else "(no output: print what you want to see)"


def json_size(value: Any) -> int:
    """Bytes of ``value`` as compact JSON (what crosses a channel)."""
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str).encode())
