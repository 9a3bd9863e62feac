"""agentic-mcp.

Model Context Protocol client, agent tools, Code Mode and server for agentic.

``MCPServerConfig`` (stdio and streamable HTTP servers, ``from_mcp_json``), ``MCPClient`` (many
servers, each session owned by one task, reconnects, bounded waits), ``get_tools()`` (MCP tools
as core ``Tool``s for a ``ChatAgent``), ``CodeMode`` and ``CodeModeExecutor`` (model-written
Python calling MCP tools from inside a sandbox), ``serve_mcp`` / ``create_mcp_server`` (agents
and workflows served as MCP tools). Names load lazily, from ``__init__.pyi``.
"""

from agentic_core import lazy_exports as _lazy_exports

__getattr__, __dir__, __all__ = _lazy_exports(  # pyright: ignore[reportUnsupportedDunderAll]
    __name__, __file__, distribution="agentic-mcp"
)
