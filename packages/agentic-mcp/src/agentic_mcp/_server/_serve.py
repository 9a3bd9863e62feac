"""Serving: ``create_mcp_app`` (the SDK's streamable-HTTP app behind core's ``ServerGuard``) and
``serve_mcp`` (stdio, or that app under uvicorn)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from mcp.server.lowlevel import Server
from mcp.server.transport_security import TransportSecuritySettings

from agentic_core import ServerGuard, serve_asgi
from agentic_mcp._errors import MCPServeError
from agentic_mcp._server._server import (
    DEFAULT_MAX_CONCURRENT_RUNS,
    DEFAULT_TIMEOUT_S,
    create_mcp_server,
    serves_agents_only,
)
from agentic_mcp._server._stdio import serve_stdio
from agentic_mcp._server._targets import Targets

__all__ = ["create_mcp_app", "mcp_asgi_app", "serve_mcp"]

DEFAULT_PORT = 8000


def create_mcp_app(
    server: Server[Any],
    *,
    token: str | None = None,
    allowed_hosts: Iterable[str] = (),
    max_body_bytes: int = ServerGuard.DEFAULT_MAX_BODY_BYTES,
    path: str = "/mcp",
    json_response: bool | None = None,
) -> ServerGuard:
    """``server``'s streamable-HTTP ASGI app at ``path``, wrapped in ``ServerGuard``.

    The guard answers only for loopback names, the bound address and ``allowed_hosts``;
    requires ``Authorization: Bearer <token>`` when a token is set (and refuses to answer on
    a non-loopback address without one); accepts JSON POSTs only, bodies up to
    ``max_body_bytes``. Call it once per server: the app's lifespan runs the SDK's session
    manager (mounted in another app, run that lifespan too).

    ``json_response``: answer each POST with one JSON body instead of a server-sent-event
    stream. Cheaper per call (no stream and task group per request; the client's connection
    is reused), but a call can then send the client nothing before its result: no progress
    notifications, no elicitation (a workflow waiting on a request could not ask). ``None``
    (the default) chooses it when ``server`` is a ``create_mcp_server`` serving agents only,
    which need neither; streams otherwise. ``True`` or ``False`` overrides that choice.
    """
    if json_response is None:
        json_response = serves_agents_only(server)
    app = server.streamable_http_app(
        streamable_http_path=path,
        json_response=json_response,
        # The guard checks Host and Origin (with the allowed hosts); the SDK's own check
        # would refuse the names the guard lets in on purpose.
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        max_request_body_size=max_body_bytes,
    )
    return ServerGuard(app, allowed_hosts=allowed_hosts, token=token, max_body_bytes=max_body_bytes)


def mcp_asgi_app(
    targets: Targets,
    *,
    token: str | None = None,
    allowed_hosts: Iterable[str] = (),
    max_body_bytes: int = ServerGuard.DEFAULT_MAX_BODY_BYTES,
    path: str = "/mcp",
    name: str = "agentic",
    timeout_s: float = DEFAULT_TIMEOUT_S,
    max_concurrent_runs: int = DEFAULT_MAX_CONCURRENT_RUNS,
    json_response: bool | None = None,
) -> ServerGuard:
    """Agents and workflows as MCP tools over streamable HTTP at ``path``: one guarded ASGI app.

    ``create_mcp_server`` and ``create_mcp_app`` in one call; the ``mcp`` entry of the
    ``agentic.servers`` entry-point group, through which ``agentic serve`` mounts MCP beside its
    other protocols without importing this package. The app's lifespan runs the SDK's session
    manager: whoever mounts it must run that lifespan (``serve_mcp`` does, with uvicorn).
    ``json_response`` (plain JSON answers, by default when serving agents only): see
    ``create_mcp_app``.

    Raises:
        MCPServeError: targets it cannot serve, or limits below 1.
        ServerGuardError: an empty token or an allowed host that is not a host name.
    """
    server = create_mcp_server(
        targets, name=name, timeout_s=timeout_s, max_concurrent_runs=max_concurrent_runs
    )
    return create_mcp_app(
        server,
        token=token,
        allowed_hosts=allowed_hosts,
        max_body_bytes=max_body_bytes,
        path=path,
        json_response=json_response,
    )


async def serve_mcp(
    targets: Targets,
    *,
    name: str = "agentic",
    transport: Literal["stdio", "streamable-http"] = "stdio",
    host: str = "127.0.0.1",
    port: int = DEFAULT_PORT,
    token: str | None = None,
    allowed_hosts: Iterable[str] = (),
    path: str = "/mcp",
    max_body_bytes: int = ServerGuard.DEFAULT_MAX_BODY_BYTES,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    max_concurrent_runs: int = DEFAULT_MAX_CONCURRENT_RUNS,
    json_response: bool | None = None,
) -> None:
    """Serve agents and workflows as MCP tools until the client leaves (stdio) or until
    cancelled (streamable HTTP on ``host``:``port``, path ``path``).

    Each agent is a tool (``message`` in, the reply out, the thread kept per MCP session);
    each workflow a tool with its start executor's input schema, progress per superstep and
    elicitation for its requests (see ``create_mcp_server``). Over HTTP the app is guarded
    (``create_mcp_app``): 127.0.0.1 by default; any other address requires ``token``.
    ``json_response`` (HTTP only): plain JSON answers instead of a stream per call, chosen by
    default when serving agents only (no progress or elicitation lost); see ``create_mcp_app``.

    Raises:
        MCPServeError: an unknown transport, a port out of range, or targets it cannot serve.
        ServerGuardError: ``host`` is not loopback and no ``token`` is set.
    """
    server = create_mcp_server(
        targets, name=name, timeout_s=timeout_s, max_concurrent_runs=max_concurrent_runs
    )
    if transport == "stdio":
        await serve_stdio(server)
        return
    if transport != "streamable-http":
        raise MCPServeError(f"unknown transport {transport!r}: use 'stdio' or 'streamable-http'")
    if not 0 <= port <= 65535:
        raise MCPServeError(f"port must be 0..65535, got {port}")
    app = create_mcp_app(
        server,
        token=token,
        allowed_hosts=allowed_hosts,
        max_body_bytes=max_body_bytes,
        path=path,
        json_response=json_response,
    )
    app.check_bind(host, option="serve_mcp(token=...)")
    await serve_asgi(app, host=host, port=port, lifespan="on")
