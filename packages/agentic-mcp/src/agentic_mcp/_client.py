"""MCPClient: many MCP servers behind one object, callable from any task."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Literal, Self

import anyio
import structlog
from mcp import types as mcp_types
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

from agentic_core import Tool
from agentic_mcp._config import MCPServerConfig
from agentic_mcp._connection import ServerConnection, describe_exception, tool_info
from agentic_mcp._errors import (
    MCPClientClosedError,
    MCPClientError,
    MCPConnectionError,
    MCPTimeoutError,
    MCPToolError,
    MCPToolNotAllowedError,
    MCPToolNotFoundError,
)
from agentic_mcp._models import MCPToolInfo, MCPToolResult, ServerStatus
from agentic_mcp._names import qualified_names

_log = structlog.get_logger("agentic_mcp")

ProgressCallback = Callable[[float, float | None, str | None], Awaitable[None] | None]
"""``(progress, total, message)`` for each progress notification of a call."""
ToolsChangedCallback = Callable[[str], Awaitable[None] | None]
"""Called with the server's name after its tool listing changed."""

_TIMEOUT_GRACE_S = 0.25
"""Our own bound waits this much past the SDK's, so the SDK's timeout (which also cancels the
call on the server) normally fires first."""


class MCPClient:
    """Connections to several MCP servers, their tools for agents, one ``close()``.

    Each server's session is owned by a background task of its own (entered and exited there
    only), so any task may call tools and ``close()`` may run anywhere on the client's loop.
    A server that dies is reconnected (single flight, exponential backoff); listings are kept
    fresh on list-changed notifications and after each reconnect; every wait is bounded.

    Example::

        async with MCPClient([MCPServerConfig.stdio("time", "mcp-server-time")]) as mcp:
            result = await mcp.call_tool("time", "get_current_time", {"timezone": "Asia/Tokyo"})
            agent = ChatAgent(chat_client=..., tools=mcp.get_tools())
    """

    def __init__(
        self,
        servers: Sequence[MCPServerConfig] = (),
        *,
        on_tools_changed: ToolsChangedCallback | None = None,
    ) -> None:
        names = [config.name for config in servers]
        duplicates = sorted({name for name in names if names.count(name) > 1})
        if duplicates:
            raise ValueError(f"MCP server names must be unique; repeated: {duplicates}")
        self._pending = list(servers)
        self._on_tools_changed = on_tools_changed
        self._connections: dict[str, ServerConnection] = {}
        self._infos: dict[str, dict[str, MCPToolInfo]] = {}
        """Per server, its allowed tools by remote name (listing order)."""
        self._closed = False
        self._loop: asyncio.AbstractEventLoop | None = None

    def __repr__(self) -> str:
        servers = ", ".join(f"{name}={c.state}" for name, c in self._connections.items())
        return f"MCPClient({servers or 'no servers'}{', closed' if self._closed else ''})"

    # -- lifecycle ------------------------------------------------------------------------------

    async def __aenter__(self) -> Self:
        """Connect every server given to the constructor (concurrently)."""
        pending, self._pending = self._pending, []
        try:
            await asyncio.gather(*(self.connect_server(config) for config in pending))
        except BaseException:
            await self.close()
            raise
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def connect_server(self, config: MCPServerConfig) -> ServerStatus:
        """Connect ``config``'s server: session up, handshake and first listing done.

        Raises ``MCPConnectionError`` (it could not start or answer) or ``MCPTimeoutError``
        (``config.connect_timeout_s`` passed); the server is then not kept.
        """
        self._check_open()
        self._check_loop()
        if config.name in self._connections:
            raise ValueError(f"an MCP server named {config.name!r} is already connected")
        connection = ServerConnection(config, self._on_listing, self._on_tools_changed)
        self._connections[config.name] = connection
        connection.start()
        try:
            await connection.wait_connected(config.connect_timeout_s)
        except BaseException as exc:
            self._connections.pop(config.name, None)
            self._infos.pop(config.name, None)
            await connection.stop(reason="connect failed")
            if isinstance(exc, MCPClientError):
                raise type(exc)(str(exc)) from None
            raise
        return connection.status()

    async def disconnect_server(self, name: str) -> None:
        """Close one server's session; its pending calls fail with ``MCPClientClosedError``."""
        connection = self._connections.pop(name, None)
        if connection is None:
            raise KeyError(f"no MCP server named {name!r}; connected: {sorted(self._connections)}")
        self._rebuild_infos()
        await connection.stop(reason="disconnected")

    async def reconnect_server(self, name: str, *, timeout_s: float | None = None) -> ServerStatus:
        """Open a new session now (also after the server was marked ``failed``)."""
        connection = self._connection(name)
        generation = connection.generation
        connection.request_reconnect()
        bound = timeout_s if timeout_s is not None else connection.config.connect_timeout_s
        deadline = time.monotonic() + bound
        while connection.generation == generation or connection.state != "connected":
            await connection.acquire(max(deadline - time.monotonic(), 0.001))
            if connection.generation != generation:
                break
            await asyncio.sleep(0.01)
        return connection.status()

    def status(self) -> dict[str, ServerStatus]:
        """Each server's connection state, generation, protocol and last error."""
        return {name: connection.status() for name, connection in self._connections.items()}

    @property
    def servers(self) -> list[str]:
        """The names of the servers, in the order they were connected."""
        return list(self._connections)

    def config(self, name: str) -> MCPServerConfig:
        """The configuration ``name`` was connected with."""
        return self._connection(name).config

    async def close(self) -> None:
        """Close every server (any order, from any task); idempotent.

        Calls still waiting fail with ``MCPClientClosedError``; later calls too.
        """
        self._closed = True
        self._pending = []
        connections = list(self._connections.values())
        self._connections.clear()
        self._infos.clear()
        await asyncio.gather(
            *(connection.stop(reason="client closed") for connection in connections),
            return_exceptions=True,
        )

    # -- tools ----------------------------------------------------------------------------------

    async def list_tools(
        self, server: str | None = None, *, refresh: bool = False
    ) -> list[MCPToolInfo]:
        """The allowed tools of one server (or of all), every page; ``refresh`` asks the servers."""
        self._check_open()
        names = [server] if server is not None else list(self._connections)
        if refresh:
            await asyncio.gather(*(self._connection(name).refresh_listing() for name in names))
        return [info for name in names for info in self._infos.get(name, {}).values()]

    def tool_infos(self, servers: Sequence[str] | None = None) -> list[MCPToolInfo]:
        """The cached listing (no I/O): the allowed tools of ``servers`` (default: all)."""
        names = list(servers) if servers is not None else list(self._connections)
        for name in names:
            self._connection(name)
        return [info for name in names for info in self._infos.get(name, {}).values()]

    def get_tools(self, servers: Sequence[str] | None = None) -> list[Tool]:
        """Core ``Tool`` adapters of the allowed tools, for a ``ChatAgent``.

        Names are ``<prefix><tool>`` made safe for every provider (``^[A-Za-z0-9_-]{1,64}$``,
        unique); each call goes to the server's current session, so the adapters keep working
        across reconnects.
        """
        from agentic_mcp._tools import MCPTool

        return [
            MCPTool(self, info, self._connection(info.server).config.max_result_chars)
            for info in self.tool_infos(servers)
        ]

    def describe_tools_for_llm(
        self,
        servers: Sequence[str] | None = None,
        *,
        detail: Literal["names", "signatures", "full"] = "signatures",
    ) -> str:
        """A compact listing of the tools for a prompt: names only, signatures, or full docs."""
        from agentic_mcp._signatures import render_listing

        return render_listing(
            self.tool_infos(servers), detail=detail, call_name=lambda info: info.qualified_name
        )

    def find_tool(self, qualified_name: str) -> MCPToolInfo:
        """The tool a model-facing name stands for (``MCPToolNotFoundError`` if none)."""
        for infos in self._infos.values():
            for info in infos.values():
                if info.qualified_name == qualified_name:
                    return info
        raise MCPToolNotFoundError(f"no MCP tool is named {qualified_name!r}")

    async def call_tool(
        self,
        server: str,
        tool: str,
        args: Mapping[str, Any] | None = None,
        timeout_s: float | None = None,
        *,
        progress: ProgressCallback | None = None,
    ) -> MCPToolResult:
        """Call ``tool`` on ``server``; the tool's own errors come back as ``is_error`` results.

        Raises ``MCPToolNotFoundError`` / ``MCPToolNotAllowedError`` before sending,
        ``MCPTimeoutError`` after ``timeout_s`` (default: the server's ``call_timeout_s``; the
        call is cancelled on the server and the session stays usable),
        ``MCPConnectionError`` when the server is unreachable or died during the call and the
        ``retry_in_flight`` policy forbids a retry, ``MCPClientClosedError`` on close.
        """
        self._check_open()
        connection = self._connection(server)
        config = connection.config
        bound = timeout_s if timeout_s is not None else config.call_timeout_s
        if bound <= 0:
            raise ValueError(f"timeout_s must be positive, got {timeout_s}")
        deadline = time.monotonic() + bound
        info = await self._resolve(connection, tool, deadline)
        arguments = dict(args) if args is not None else {}
        callback = _progress_adapter(progress) if progress is not None else None
        for attempt in (0, 1):
            client, generation = await connection.acquire(_remaining(deadline, bound, tool))
            started = time.perf_counter()
            try:
                raw = await self._send(
                    connection, client, tool, arguments, deadline, bound, callback
                )
            except MCPError as exc:
                if exc.code != mcp_types.CONNECTION_CLOSED:
                    raise self._map_error(exc, server, tool, bound) from None
                why = f"connection lost during {tool}: {exc.message}"
            except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError) as exc:
                why = f"connection lost during {tool}: {describe_exception(exc)}"
            except ValidationError as exc:
                raise MCPToolError(
                    f"MCP tool {server}.{tool} returned a malformed result: "
                    f"{exc.error_count()} validation error(s), first: {exc.errors()[0]['msg']}"
                ) from None
            else:
                return _to_result(server, tool, raw, time.perf_counter() - started)
            connection.mark_lost(generation, why)
            if connection.closed.done():
                raise MCPClientClosedError(f"MCP server {server!r} was closed during {tool}")
            if attempt == 0 and config.reconnect and _may_retry(config.retry_in_flight, info):
                _log.info("mcp_call_retried", server=server, tool=tool, reason=why)
                continue
            policy = (
                f"not retried: retry_in_flight={config.retry_in_flight!r}"
                + (
                    " and the tool is not annotated read-only or idempotent"
                    if config.retry_in_flight == "safe"
                    else ""
                )
                if attempt == 0
                else "the retry failed too"
            )
            raise MCPConnectionError(f"MCP server {server!r}: {why} ({policy})")
        raise AssertionError("unreachable")  # pragma: no cover

    # -- internals ------------------------------------------------------------------------------

    async def _send(
        self,
        connection: ServerConnection,
        client: Any,
        tool: str,
        arguments: dict[str, Any],
        deadline: float,
        bound: float,
        callback: Any,
    ) -> mcp_types.CallToolResult:
        """One SDK call, bounded by the deadline and ended at once by a close."""
        remaining = _remaining(deadline, bound, tool)
        call = asyncio.ensure_future(
            client.call_tool(
                tool, arguments, read_timeout_seconds=remaining, progress_callback=callback
            )
        )
        try:
            done, _ = await asyncio.wait(
                {call, connection.closed},
                timeout=remaining + _TIMEOUT_GRACE_S,
                return_when=asyncio.FIRST_COMPLETED,
            )
        except asyncio.CancelledError:
            call.cancel()
            raise
        if call in done:
            return call.result()
        call.cancel()
        call.add_done_callback(_retrieve)
        if connection.closed.done():
            raise MCPClientClosedError(
                f"MCP server {connection.config.name!r} was closed during {tool}"
            )
        raise MCPTimeoutError(
            f"MCP tool {connection.config.name}.{tool} did not answer within {bound:g} s"
        )

    async def _resolve(
        self, connection: ServerConnection, tool: str, deadline: float
    ) -> MCPToolInfo:
        name = connection.config.name
        for attempt in (0, 1):
            info = self._infos.get(name, {}).get(tool)
            if info is not None:
                return info
            if any(listed.name == tool for listed in connection.tools):
                raise MCPToolNotAllowedError(
                    f"MCP tool {name}.{tool} is not allowed by the server's "
                    "allowed_tools/denied_tools"
                )
            if attempt == 0:  # perhaps new since the last listing: ask once before saying no
                with contextlib.suppress(MCPClientError, TimeoutError):
                    await connection.refresh_listing(max(deadline - time.monotonic(), 0.001))
        known = sorted(self._infos.get(name, {}))
        shown = ", ".join(known[:30]) + (", ..." if len(known) > 30 else "")
        raise MCPToolNotFoundError(
            f"MCP server {name!r} has no tool {tool!r}; its tools: {shown or '(none)'}"
        )

    def _map_error(self, exc: MCPError, server: str, tool: str, bound: float) -> MCPClientError:
        if exc.code == mcp_types.REQUEST_TIMEOUT:
            return MCPTimeoutError(f"MCP tool {server}.{tool} did not answer within {bound:g} s")
        if exc.code == mcp_types.METHOD_NOT_FOUND:
            return MCPToolNotFoundError(f"MCP server {server!r}: {exc.message}")
        return MCPToolError(f"MCP tool {server}.{tool} failed: {exc.message} (code {exc.code})")

    def _on_listing(self, connection: ServerConnection) -> None:
        if self._connections.get(connection.config.name) is connection:
            self._rebuild_infos()

    def _rebuild_infos(self) -> None:
        """Every allowed tool with its unique model-facing name (connect order, listing order)."""
        allowed = [
            (name, connection.config, tool)
            for name, connection in self._connections.items()
            for tool in connection.tools
            if connection.config.allows(tool.name)
        ]
        names = qualified_names((name, config.prefix, tool.name) for name, config, tool in allowed)
        infos: dict[str, dict[str, MCPToolInfo]] = {name: {} for name in self._connections}
        for name, _, tool in allowed:
            infos[name][tool.name] = tool_info(name, tool, names[(name, tool.name)])
        self._infos = infos

    def _connection(self, name: str) -> ServerConnection:
        connection = self._connections.get(name)
        if connection is None:
            if self._closed:
                raise MCPClientClosedError("the MCPClient is closed")
            raise MCPToolNotFoundError(
                f"no MCP server named {name!r}; connected: {sorted(self._connections)}"
            )
        return connection

    def _check_open(self) -> None:
        if self._closed:
            raise MCPClientClosedError("the MCPClient is closed")

    def _check_loop(self) -> None:
        loop = asyncio.get_running_loop()
        if self._loop is None or not self._connections:
            self._loop = loop
        elif self._loop is not loop:
            raise MCPClientError(
                "an MCPClient serves the event loop it connected on; create one per loop"
            )


def _remaining(deadline: float, bound: float, tool: str) -> float:
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise MCPTimeoutError(f"MCP tool {tool} did not answer within {bound:g} s")
    return remaining


def _may_retry(policy: str, info: MCPToolInfo) -> bool:
    if policy == "always":
        return True
    if policy == "safe":
        return info.read_only or info.idempotent
    return False


def _retrieve(task: asyncio.Future[Any]) -> None:
    if not task.cancelled():
        task.exception()


def _progress_adapter(progress: ProgressCallback) -> Callable[..., Awaitable[None]]:
    async def forward(value: float, total: float | None, message: str | None) -> None:
        try:
            outcome = progress(value, total, message)
            if inspect.isawaitable(outcome):
                await outcome
        except Exception as exc:  # noqa: BLE001 - a callback must not break the call
            _log.warning("mcp_progress_callback_failed", error=str(exc))

    return forward


def _to_result(
    server: str, tool: str, raw: mcp_types.CallToolResult, duration_s: float
) -> MCPToolResult:
    return MCPToolResult(
        server=server,
        tool=tool,
        content=[
            item.model_dump(by_alias=True, exclude_none=True, mode="json") for item in raw.content
        ],
        structured=raw.structured_content,
        is_error=bool(raw.is_error),
        duration_s=duration_s,
    )
