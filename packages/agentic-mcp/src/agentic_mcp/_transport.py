"""The transport of one session: stdio or streamable HTTP, watched for end of stream.

``open_transport`` is entered and exited by the task that owns the session (never another),
so the SDK's anyio scopes stay in one task. The read stream is wrapped so the owner learns at
once that the server went away (stdout EOF), instead of at the next call.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import AsyncGenerator, Callable
from pathlib import Path
from typing import IO, Any

import structlog
from mcp import StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client  # pyright: ignore[reportPrivateUsage]

from agentic_mcp._config import MCPServerConfig
from agentic_mcp._read_stream import DelegatingReadStream

_server_log = structlog.get_logger("agentic_mcp.server")


class _WatchedReadStream(DelegatingReadStream):
    """The SDK's read stream, calling ``on_end`` once when it ends (EOF or closed)."""

    def __init__(self, inner: Any, on_end: Callable[[], None]) -> None:
        super().__init__(inner)
        self._on_end = on_end

    async def receive(self) -> Any:
        try:
            return await self._inner.receive()
        except Exception:
            self._on_end()
            raise

    async def __anext__(self) -> Any:
        try:
            return await self._inner.__anext__()
        except (StopAsyncIteration, Exception):
            self._on_end()
            raise


@contextlib.asynccontextmanager
async def open_transport(
    config: MCPServerConfig, on_end: Callable[[], None]
) -> AsyncGenerator[tuple[Any, Any]]:
    """The (read, write) streams of a new connection to ``config``'s server."""
    if config.command is not None:
        async with _stderr_sink(config) as errlog:
            params = StdioServerParameters(
                command=config.command,
                args=list(config.args),
                env=dict(config.env) if config.env is not None else None,
                cwd=config.cwd,
            )
            async with stdio_client(params, errlog=errlog) as (read, write):  # pyright: ignore[reportArgumentType]
                yield _WatchedReadStream(read, on_end), write
        return
    # The SDK's defaults (30 s to connect, 300 s for a silent event stream); our own deadlines
    # bound every wait below that.
    http = create_mcp_http_client(headers=dict(config.headers) if config.headers else None)
    async with http:
        transport = streamable_http_client(
            config.url or "", http_client=http, max_sse_event_size=config.max_sse_event_bytes
        )
        async with transport as (read, write):
            yield _WatchedReadStream(read, on_end), write


@contextlib.asynccontextmanager
async def _stderr_sink(config: MCPServerConfig) -> AsyncGenerator[IO[str]]:
    """Where the server's stderr goes: our logger (a pipe read on the loop), ours, or nowhere."""
    if config.stderr == "inherit":
        yield sys.stderr
        return
    if config.stderr == "devnull":
        with Path(os.devnull).open("w", encoding="utf-8") as devnull:  # noqa: ASYNC230 - no I/O
            yield devnull
        return
    read_fd, write_fd = os.pipe()
    reader = asyncio.ensure_future(_log_lines(read_fd, config.name))
    writer = os.fdopen(write_fd, "w", encoding="utf-8")
    try:
        yield writer
    finally:
        writer.close()  # the child keeps its own copy; the reader sees EOF when the child is gone
        with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError):
            await asyncio.wait_for(asyncio.shield(reader), timeout=2.0)
        if not reader.done():
            reader.cancel()


async def _log_lines(read_fd: int, server: str) -> None:
    loop = asyncio.get_running_loop()
    stream = asyncio.StreamReader(limit=1 << 20, loop=loop)
    pipe = os.fdopen(read_fd, "rb", buffering=0)
    transport, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(stream, loop=loop), pipe
    )
    try:
        while True:
            try:
                line = await stream.readline()
            except ValueError:  # a line past the limit: log what we have
                line = await stream.read(1 << 20)
            if not line:
                return
            text = line.decode("utf-8", "replace").rstrip()
            if text:
                _server_log.info("mcp_server_stderr", server=server, line=text[:4000])
    finally:
        transport.close()
