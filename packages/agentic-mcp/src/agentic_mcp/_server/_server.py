"""``create_mcp_server``: the SDK's low-level ``Server`` with one tool per agent or workflow,
bounded concurrent runs and a timeout on each."""

from __future__ import annotations

import weakref
from typing import Any

import anyio
import structlog
from mcp import types as mcp_types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server

from agentic_mcp._errors import MCPServeError
from agentic_mcp._server._agents import SessionThreads, run_agent
from agentic_mcp._server._results import tool_error
from agentic_mcp._server._targets import ServedTarget, Targets, message_argument, served_targets
from agentic_mcp._server._workflows import PausedCalls, run_workflow

__all__ = [
    "DEFAULT_MAX_CONCURRENT_RUNS",
    "DEFAULT_TIMEOUT_S",
    "create_mcp_server",
    "serves_agents_only",
]

DEFAULT_TIMEOUT_S = 600.0
"""How long one call may run (elicitation waits included) by default."""
DEFAULT_MAX_CONCURRENT_RUNS = 16
"""How many calls may run at once by default; more are answered 'busy'."""

_log = structlog.get_logger("agentic_mcp.server")
_AGENTS_ONLY: weakref.WeakSet[Server[Any]] = weakref.WeakSet()
"""The servers ``create_mcp_server`` made that serve agents only (no workflow)."""


def serves_agents_only(server: Server[Any]) -> bool:
    """Whether ``server`` was made by ``create_mcp_server`` and serves agents only: none of its
    calls reports progress or asks the client by elicitation (False for any other server)."""
    return server in _AGENTS_ONLY


class _Tools:
    """The served tools and the state their calls share."""

    def __init__(self, served: list[ServedTarget], timeout_s: float, max_runs: int) -> None:
        self.by_name = {item.name: item for item in served}
        self.listing = [
            mcp_types.Tool(
                name=item.name,
                description=item.description,
                input_schema=item.input_schema,
            )
            for item in served
        ]
        self.threads = SessionThreads()
        self.paused = PausedCalls()
        self.timeout_s = timeout_s
        self.max_runs = max_runs
        self.running = 0

    async def list_tools(
        self, ctx: ServerRequestContext[Any, Any], params: mcp_types.PaginatedRequestParams | None
    ) -> mcp_types.ListToolsResult:
        return mcp_types.ListToolsResult(tools=list(self.listing))

    async def call_tool(
        self, ctx: ServerRequestContext[Any, Any], params: mcp_types.CallToolRequestParams
    ) -> mcp_types.CallToolResult | mcp_types.InputRequiredResult:
        served = self.by_name.get(params.name)
        if served is None:
            return tool_error(f"no tool {params.name!r}: this server has {sorted(self.by_name)}")
        if self.running >= self.max_runs:
            return tool_error(
                f"the server is busy ({self.max_runs} calls running): try again shortly"
            )
        self.running += 1
        try:
            with anyio.fail_after(self.timeout_s):
                return await self._run(served, params, ctx)
        except TimeoutError:
            return tool_error(f"{params.name!r} did not finish within {self.timeout_s:g} s")
        except Exception as exc:  # noqa: BLE001 - a failed run is the caller's answer
            _log.warning("mcp_tool_failed", tool=params.name, error=type(exc).__name__)
            return tool_error(f"{params.name!r} failed: {type(exc).__name__}: {exc}")
        finally:
            self.running -= 1

    async def _run(
        self,
        served: ServedTarget,
        params: mcp_types.CallToolRequestParams,
        ctx: ServerRequestContext[Any, Any],
    ) -> mcp_types.CallToolResult | mcp_types.InputRequiredResult:
        if served.kind == "workflow":
            return await run_workflow(served, params, ctx, self.paused)
        try:
            message = message_argument(params.arguments or {})
        except ValueError as exc:
            return tool_error(str(exc))
        thread, lock = self.threads.get(session_key(ctx), served.name, served.target)
        return await run_agent(served.target, message, thread, lock)


def session_key(ctx: ServerRequestContext[Any, Any]) -> str | None:
    """The MCP session this call belongs to: the HTTP session id, or stdio's one connection;
    None for a request of no session (2026-07-28 single-exchange HTTP)."""
    request = ctx.request
    headers = getattr(request, "headers", None)
    if headers is None:
        return "stdio"
    session = headers.get("mcp-session-id")
    return None if session is None else f"http:{session}"


def create_mcp_server(
    targets: Targets,
    *,
    name: str = "agentic",
    version: str = "",
    instructions: str | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    max_concurrent_runs: int = DEFAULT_MAX_CONCURRENT_RUNS,
) -> Server[Any]:
    """The MCP server (the SDK's low-level ``Server``) serving ``targets``, not yet running.

    Each agent is a tool taking a ``message`` and answering with the reply; its thread is
    kept per MCP session, so a second call in one session continues the conversation. Each
    workflow is a tool whose input schema is its start executor's input type (a ``message``
    for text or chat input); it reports a progress notification per superstep, answers with
    its outputs (text, and ``{"outputs": [...]}`` as structured content), and asks the client
    by elicitation when it waits on a request. ``serve_mcp`` runs it; ``create_mcp_app``
    wraps it for HTTP.

    Raises:
        MCPServeError: nothing to serve, a target that is no agent or workflow, two tools of
            one name, or limits below 1.
    """
    if timeout_s <= 0 or max_concurrent_runs < 1:
        raise MCPServeError("timeout_s must be positive and max_concurrent_runs at least 1")
    served = served_targets(targets)
    tools = _Tools(served, timeout_s, max_concurrent_runs)
    server: Server[Any] = Server(
        name,
        version=version,
        instructions=instructions,
        on_list_tools=tools.list_tools,
        on_call_tool=tools.call_tool,
    )
    if all(item.kind == "agent" for item in served):
        _AGENTS_ONLY.add(server)
    return server
