"""Serving over stdio: the SDK's stdio transport, with an answer to every line that is not a
JSON-RPC message (the SDK drops them silently; JSON-RPC asks for an error with a null id)."""

from __future__ import annotations

from typing import Any

import structlog
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp_types import INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError
from pydantic import ValidationError

from agentic_mcp._read_stream import DelegatingReadStream

__all__ = ["serve_stdio"]

_log = structlog.get_logger("agentic_mcp.server")


class _AnsweringReadStream(DelegatingReadStream):
    """The transport's read stream, answering each unreadable line instead of passing it on."""

    def __init__(self, inner: Any, write: Any) -> None:
        super().__init__(inner)
        self._write = write

    async def receive(self) -> Any:
        while True:
            message = await self._inner.receive()
            if not isinstance(message, Exception):
                return message
            await self._answer(message)

    async def __anext__(self) -> Any:
        while True:
            message = await self._inner.__anext__()
            if not isinstance(message, Exception):
                return message
            await self._answer(message)

    async def _answer(self, exc: Exception) -> None:
        unparsable = isinstance(exc, ValidationError) and any(
            error["type"] == "json_invalid" for error in exc.errors()
        )
        code, text = (
            (PARSE_ERROR, "Parse error: the line is not JSON")
            if unparsable
            else (INVALID_REQUEST, "Invalid request: the line is not a JSON-RPC message")
        )
        _log.info("mcp_stdio_bad_line", code=code)
        reply = JSONRPCError(jsonrpc="2.0", id=None, error=ErrorData(code=code, message=text))
        await self._write.send(SessionMessage(reply))


async def serve_stdio(server: Server[Any]) -> None:
    """Serve ``server`` on this process's stdin and stdout until stdin closes."""
    async with stdio_server() as (read, write):
        answering = _AnsweringReadStream(read, write)
        await server.run(answering, write, server.create_initialization_options())  # pyright: ignore[reportArgumentType]
