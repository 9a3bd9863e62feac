"""One server's connection: a supervisor task that owns each session from start to end.

Every session (``mcp.Client``) is entered and exited in one task of its own, the session task,
started by the server's supervisor; callers in any task only *use* the published client. So the
SDK's "exit cancel scope in a different task" error cannot happen: no other task ever enters or
exits a session. When a session ends (the server died, the connection dropped, a caller saw
``CONNECTION_CLOSED``), the supervisor opens the next one with exponential backoff (jittered,
``agentic_core.Backoff``), at most ``max_reconnect_attempts`` consecutive failures, then marks the
server ``failed``.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from typing import Any, cast

import structlog
from mcp import Client
from mcp import types as mcp_types

from agentic_core import Backoff
from agentic_mcp._config import MCPServerConfig
from agentic_mcp._errors import (
    MCPClientClosedError,
    MCPConnectionError,
    MCPTimeoutError,
)
from agentic_mcp._models import ConnectionState, MCPToolInfo, ServerStatus
from agentic_mcp._transport import open_transport

_log = structlog.get_logger("agentic_mcp")

_SESSION_EXIT_BOUND_S = 10.0
"""How long closing one session may take before its task is cancelled."""
_LISTING_PAGE_CAP = 1000


def reconnect_backoff(config: MCPServerConfig) -> Backoff:
    """The waits between reconnect attempts: from ``reconnect_backoff_s``, doubling up to
    ``reconnect_backoff_max_s``, each drawn from the upper half (jitter)."""
    return Backoff(
        initial_s=config.reconnect_backoff_s, max_s=config.reconnect_backoff_max_s, jitter=0.5
    )


def describe_exception(exc: BaseException) -> str:
    """``Type: message`` of ``exc``, or of the first leaf of an exception group."""
    leaf: BaseException = exc
    while isinstance(leaf, BaseExceptionGroup):
        members = cast("tuple[BaseException, ...]", leaf.exceptions)  # pyright: ignore[reportUnknownMemberType]
        if not members:
            break
        leaf = members[0]
    return _describe(leaf)  # pyright: ignore[reportUnknownArgumentType]


def _describe(exc: BaseException) -> str:
    text = str(exc) or repr(exc)
    return f"{type(exc).__name__}: {text}"[:1000]


class ServerConnection:
    """The live state of one server; calls borrow ``client`` through ``acquire``."""

    def __init__(
        self,
        config: MCPServerConfig,
        on_listing: Callable[[ServerConnection], None],
        on_tools_changed: Callable[[str], Awaitable[None] | None] | None,
    ) -> None:
        self.config = config
        self.state: ConnectionState = "connecting"
        self.generation = 0
        self.client: Client | None = None
        self.tools: list[mcp_types.Tool] = []
        """The server's complete listing (every page), allowed or not."""
        self.last_error: str | None = None
        self.protocol_version: str | None = None
        self.server_name: str | None = None
        self.server_version: str | None = None
        self._on_listing = on_listing
        self._on_tools_changed = on_tools_changed
        self._changed: asyncio.Event = asyncio.Event()
        """Set whenever state changes: waiters re-check."""
        self._lost: asyncio.Event = asyncio.Event()
        self._stop: asyncio.Event = asyncio.Event()
        self._retry_now: asyncio.Event = asyncio.Event()
        self.closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        """Resolved when the server is disconnected or the client closed: pending calls end."""
        self._supervisor: asyncio.Task[None] | None = None
        self._refresh: asyncio.Task[None] | None = None
        self._refresh_again = False

    # -- lifecycle ------------------------------------------------------------------------------

    def start(self) -> None:
        """Start the supervisor (it connects, and reconnects as long as it runs)."""
        self._supervisor = asyncio.get_running_loop().create_task(
            self._supervise(), name=f"agentic-mcp:{self.config.name}"
        )

    async def wait_connected(self, timeout_s: float) -> None:
        """Until the first session is up; MCPConnectionError/MCPTimeoutError otherwise."""
        try:
            await self.acquire(timeout_s, first=True)
        except MCPTimeoutError:
            raise MCPTimeoutError(
                f"MCP server {self.config.name!r} ({self.config.where()}) did not connect "
                f"within {timeout_s:g} s" + (f": {self.last_error}" if self.last_error else "")
            ) from None

    async def stop(self, *, reason: str = "closed") -> None:
        """End the current session and the supervisor; pending and later calls fail."""
        if not self.closed.done():
            self.closed.set_result(None)
        self._stop.set()
        self._set_state("closed")
        if self._refresh is not None:
            self._refresh.cancel()
        supervisor = self._supervisor
        if supervisor is not None and supervisor is not asyncio.current_task():
            try:
                await asyncio.wait_for(asyncio.shield(supervisor), _SESSION_EXIT_BOUND_S + 2)
            except (TimeoutError, asyncio.CancelledError):
                supervisor.cancel()
                with contextlib.suppress(BaseException):
                    await supervisor
            except Exception as exc:  # noqa: BLE001 - closing must not fail
                _log.warning("mcp_supervisor_failed", server=self.config.name, error=str(exc))
        _log.debug("mcp_server_stopped", server=self.config.name, reason=reason)

    def mark_lost(self, generation: int, why: str) -> None:
        """The session of ``generation`` is dead (the first noticer triggers one reconnect)."""
        if generation == self.generation and self.client is not None and not self._lost.is_set():
            self.last_error = why
            self.client = None
            self._set_state("reconnecting")
            self._lost.set()

    def request_reconnect(self) -> None:
        """Drop the current session (if any) and reset the attempt counter."""
        self.last_error = None
        self._retry_now.set()
        if self.client is not None:
            self.client = None
            self._set_state("reconnecting")
            self._lost.set()
        elif self.state == "failed":
            self._set_state("reconnecting")

    # -- borrowing the session ------------------------------------------------------------------

    async def acquire(self, timeout_s: float, *, first: bool = False) -> tuple[Client, int]:
        """The current client and its generation, waiting (bounded) for a reconnect."""
        deadline = time.monotonic() + timeout_s
        while True:
            if self.closed.done():
                raise MCPClientClosedError(
                    f"the connection to MCP server {self.config.name!r} is closed"
                )
            client = self.client
            if client is not None and self.state == "connected":
                return client, self.generation
            if self.state == "failed":
                raise MCPConnectionError(
                    f"MCP server {self.config.name!r} ({self.config.where()}) is unreachable"
                    + (f": {self.last_error}" if self.last_error else "")
                    + ("" if first else "; call reconnect_server() to try again")
                )
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise MCPTimeoutError(
                    f"MCP server {self.config.name!r} was not connected within {timeout_s:g} s"
                    + (f" (last error: {self.last_error})" if self.last_error else "")
                )
            self._changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), remaining)

    def status(self) -> ServerStatus:
        """A snapshot for ``MCPClient.status()``."""
        return ServerStatus(
            name=self.config.name,
            state=self.state,
            generation=self.generation,
            protocol_version=self.protocol_version,
            server_name=self.server_name,
            server_version=self.server_version,
            tool_count=sum(1 for tool in self.tools if self.config.allows(tool.name)),
            last_error=self.last_error,
        )

    # -- listing --------------------------------------------------------------------------------

    async def fetch_listing(self, client: Client, timeout_s: float) -> list[mcp_types.Tool]:
        """Every page of ``tools/list``, fresh from the server."""
        tools: list[mcp_types.Tool] = []
        cursor: str | None = None
        async with asyncio.timeout(timeout_s):
            for _ in range(_LISTING_PAGE_CAP):
                page = await client.list_tools(cursor=cursor, cache_mode="refresh")
                tools.extend(page.tools)
                cursor = page.next_cursor
                if cursor is None:
                    break
        return tools

    async def refresh_listing(self, timeout_s: float | None = None) -> None:
        """Fetch the listing now (callers wait for it)."""
        client, _ = await self.acquire(timeout_s or self.config.connect_timeout_s)
        tools = await self.fetch_listing(client, timeout_s or self.config.connect_timeout_s)
        await self._publish_listing(tools)

    def refresh_soon(self) -> None:
        """Refresh the listing in the background (from a notification: never block the SDK)."""
        if self._stop.is_set():
            return
        if self._refresh is not None and not self._refresh.done():
            self._refresh_again = True
            return
        self._refresh = asyncio.get_running_loop().create_task(self._refresh_loop())

    async def _refresh_loop(self) -> None:
        while True:
            self._refresh_again = False
            try:
                await self.refresh_listing()
            except Exception as exc:  # noqa: BLE001 - a failed refresh is retried on the next event
                _log.warning("mcp_listing_refresh_failed", server=self.config.name, error=str(exc))
            if not self._refresh_again:
                return

    async def _publish_listing(self, tools: list[mcp_types.Tool], *, first: bool = False) -> None:
        before = [(t.name, t.input_schema, t.description) for t in self.tools]
        self.tools = tools
        self._on_listing(self)
        after = [(t.name, t.input_schema, t.description) for t in tools]
        if before != after and self._on_tools_changed is not None and not first:
            try:
                outcome = self._on_tools_changed(self.config.name)
                if outcome is not None:
                    await outcome
            except Exception as exc:  # noqa: BLE001 - a user callback must not break the listing
                _log.warning("mcp_on_tools_changed_failed", server=self.config.name, error=str(exc))

    # -- the supervisor and the sessions --------------------------------------------------------

    def _set_state(self, state: ConnectionState) -> None:
        if self.state == "closed" and state != "closed":
            return
        self.state = state
        self._changed.set()

    async def _supervise(self) -> None:
        config = self.config
        backoff = reconnect_backoff(config)
        failures = 0
        while not self._stop.is_set():
            self._lost.clear()
            self._retry_now.clear()
            up: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            session = asyncio.get_running_loop().create_task(
                self._session(up), name=f"agentic-mcp:{config.name}:session"
            )
            stopper = asyncio.ensure_future(self._stop.wait())
            try:
                await asyncio.wait(
                    {up, session, stopper},
                    timeout=config.connect_timeout_s,
                    return_when=asyncio.FIRST_COMPLETED,
                )
            finally:
                stopper.cancel()
            if up.done() and not up.cancelled() and up.exception() is None:
                failures = 0
                await self._wait_session(session)
            else:
                if not session.done():
                    if not self._stop.is_set():
                        self.last_error = f"connect timed out after {config.connect_timeout_s:g} s"
                    session.cancel()
                await self._wait_session(session)
                failures += 1
            self.client = None
            if self._stop.is_set():
                break
            if (
                not config.reconnect
                or failures > config.max_reconnect_attempts
                or (self.generation == 0 and failures > 0)
            ):
                # The first connect is not retried: connect_server reports why at once.
                self._set_state("failed")
                _log.warning("mcp_server_failed", server=config.name, error=self.last_error)
                await self._wait_for(self._retry_now)
                failures = 0
                continue
            self._set_state("reconnecting")
            if failures:
                await self._wait_for(self._retry_now, timeout_s=backoff.delay(failures - 1))
        self._set_state("closed")

    async def _wait_for(self, event: asyncio.Event, timeout_s: float | None = None) -> None:
        """Until ``event`` or stop (or the timeout)."""
        waiters = {asyncio.ensure_future(event.wait()), asyncio.ensure_future(self._stop.wait())}
        try:
            await asyncio.wait(waiters, timeout=timeout_s, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiter in waiters:
                waiter.cancel()

    async def _wait_session(self, session: asyncio.Task[None]) -> None:
        try:
            await asyncio.wait_for(asyncio.shield(session), _SESSION_EXIT_BOUND_S)
        except TimeoutError:
            session.cancel()
            with contextlib.suppress(BaseException):
                await session
        except asyncio.CancelledError:
            session.cancel()
            raise
        except Exception as exc:  # noqa: BLE001 - the session task records its own errors
            self.last_error = self.last_error or describe_exception(exc)

    async def _session(self, up: asyncio.Future[None]) -> None:
        """Open one session, publish it, keep it until lost or stopped; enter and exit here."""
        config = self.config
        lost = self._lost
        generation = self.generation + 1

        def on_end() -> None:  # the server's stream ended: this session is over
            if self.generation == generation:
                self.mark_lost(generation, "the server closed the connection")
            elif not lost.is_set():
                lost.set()

        try:
            client = Client(
                open_transport(config, on_end),  # pyright: ignore[reportArgumentType]
                mode=config.protocol,
                read_timeout_seconds=config.call_timeout_s,
                message_handler=self._on_message,
                cache=None,
            )
            async with client:
                tools = await self.fetch_listing(client, config.connect_timeout_s)
                self.protocol_version = client.protocol_version
                info = client.server_info
                self.server_name = info.name if info is not None else None
                self.server_version = info.version if info is not None else None
                self.generation = generation
                self.client = client
                self.last_error = None
                await self._publish_listing(tools, first=generation == 1)
                self._set_state("connected")
                if not up.done():
                    up.set_result(None)
                _log.debug(
                    "mcp_server_connected",
                    server=config.name,
                    generation=generation,
                    protocol=self.protocol_version,
                    tools=len(tools),
                )
                watchers = [asyncio.ensure_future(self._watch_changes(client))]
                if config.health_check_interval_s is not None:
                    watchers.append(asyncio.ensure_future(self._health_check(client, generation)))
                try:
                    await self._wait_for(lost)
                finally:
                    for watcher in watchers:
                        watcher.cancel()
                    await asyncio.gather(*watchers, return_exceptions=True)
                    if self.client is client:
                        self.client = None
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # noqa: BLE001 - recorded; the supervisor decides what next
            if not self._stop.is_set():
                self.last_error = describe_exception(exc)
                _log.warning("mcp_session_ended", server=config.name, error=self.last_error)
            if not up.done():
                up.set_exception(MCPConnectionError(self.last_error or "connection failed"))
                up.exception()  # retrieved: the supervisor reads it through up.done()

    async def _watch_changes(self, client: Client) -> None:
        """2026-era servers announce list changes on a ``listen`` stream, not a notification."""
        if not (self.protocol_version or "").startswith("2026"):
            return
        try:
            async with client.listen(tools_list_changed=True) as subscription:
                async for _event in subscription:
                    self.refresh_soon()
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - no listen support: notifications still work
            _log.debug("mcp_listen_unavailable", server=self.config.name, error=str(exc))

    async def _health_check(self, client: Client, generation: int) -> None:
        interval = self.config.health_check_interval_s or 30.0
        while True:
            await asyncio.sleep(interval)
            try:
                await self.fetch_listing(client, min(interval, self.config.connect_timeout_s))
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - any failure means the session is unusable
                self.mark_lost(generation, f"health check failed: {describe_exception(exc)}")
                return

    async def _on_message(self, message: Any) -> None:
        """Handshake-era notifications; never await a request here (it would block the SDK)."""
        root = getattr(message, "root", message)
        if isinstance(root, mcp_types.ToolListChangedNotification):
            self.refresh_soon()
        elif isinstance(message, Exception):
            _log.debug("mcp_transport_error", server=self.config.name, error=str(message))


def tool_info(server: str, tool: mcp_types.Tool, qualified_name: str) -> MCPToolInfo:
    """Our ``MCPToolInfo`` for one listed tool."""
    annotations = (
        tool.annotations.model_dump(by_alias=True, exclude_none=True, mode="json")
        if tool.annotations is not None
        else None
    )
    return MCPToolInfo(
        server=server,
        name=tool.name,
        qualified_name=qualified_name,
        title=tool.title,
        description=tool.description or "",
        input_schema=dict(tool.input_schema),
        output_schema=dict(tool.output_schema) if tool.output_schema is not None else None,
        annotations=annotations,
    )
