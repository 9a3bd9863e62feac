"""The errors of agentic_mcp: one root, ``MCPClientError``, and a subclass per way a call fails.

The SDK's own ``MCPError`` never leaves this package: each is mapped to one of these, with a
message naming the server and the tool.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentic_core import AgenticError

if TYPE_CHECKING:
    from agentic_mcp._models import MCPToolResult


class MCPClientError(AgenticError):
    """Base of every error agentic_mcp raises."""


class MCPConnectionError(MCPClientError):
    """A server cannot be reached, died during a call, or gave up reconnecting."""


class MCPTimeoutError(MCPClientError):
    """A connect, a listing or a tool call took longer than its timeout."""


class MCPToolError(MCPClientError):
    """The tool ran and reported an error (``isError``); ``result`` holds what it said."""

    def __init__(self, message: str, result: MCPToolResult | None = None) -> None:
        super().__init__(message)
        self.result = result


class MCPToolNotFoundError(MCPClientError):
    """No connected server offers a tool of that name."""


class MCPToolNotAllowedError(MCPClientError):
    """The tool exists but the allow/deny lists or an approval callback refuse it."""


class MCPClientClosedError(MCPClientError):
    """The client (or the server's connection) was closed before or during the call."""


class MCPServeError(MCPClientError, ValueError):
    """``serve_mcp`` or ``create_mcp_server`` was given something it cannot serve (no target,
    a target that is no agent or workflow, two tools of one name, an unknown transport)."""
