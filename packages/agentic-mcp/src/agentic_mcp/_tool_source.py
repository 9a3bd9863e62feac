"""The ``mcp`` tool source: MCP servers named in a config, as core Tools, for as long as needed.

Registered under the ``agentic.tool_sources`` entry point group, so the ``agentic`` command line
(agentic-orchestrator) gets MCP tools without importing this package: it passes the
``[mcp.servers.<name>]`` tables of a run file as plain mappings.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping
from contextlib import asynccontextmanager
from typing import Any

from pydantic import ValidationError

from agentic_core import Tool
from agentic_mcp._client import MCPClient
from agentic_mcp._config import MCPServerConfig
from agentic_mcp._errors import MCPClientError

__all__ = ["mcp_tools"]


@asynccontextmanager
async def mcp_tools(
    servers: Mapping[str, Mapping[str, Any]],
) -> AsyncGenerator[dict[str, list[Tool]]]:
    """Connect every server of ``{name: table}`` and yield ``{name: its tools}``; close on exit.

    A table holds ``MCPServerConfig`` fields (``command``, ``args``, ``env``, ``cwd`` for stdio;
    ``url``, ``headers`` for HTTP; ``allowed_tools``, timeouts, ...). A wrong table raises
    ``MCPClientError`` naming the server and the field; a server that cannot start raises
    ``MCPConnectionError`` or ``MCPTimeoutError`` (and the others are closed again).

    Example::

        async with mcp_tools({"time": {"command": "mcp-server-time"}}) as tools:
            agent = ChatAgent(client, tools=tools["time"])
    """
    configs: list[MCPServerConfig] = []
    for name, table in servers.items():
        try:
            configs.append(MCPServerConfig.model_validate({**table, "name": name}))
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'server'}: {e['msg']}"
                for e in exc.errors()
            )
            raise MCPClientError(f"MCP server {name!r}: {problems}") from None
    async with MCPClient(configs) as client:
        yield {config.name: client.get_tools([config.name]) for config in configs}
