# pyright: strict
"""A lowlevel MCP ``Server`` whose ``tools/list`` comes in pages (mcp 2.x, both protocol eras).

Run it over stdio: ``python paging_server.py``. It exposes 25 tools ``tool_00`` .. ``tool_24``,
each taking ``{"x": integer}`` and returning the text ``"tool_<i>:<x>"``; ``tools/list`` returns
10 tools per page (3 pages), the cursor being the index of the next page's first tool.
An unknown cursor is an ``INVALID_PARAMS`` error.
"""

from __future__ import annotations

from typing import Any

import anyio
from mcp import types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

TOOL_COUNT = 25
PAGE_SIZE = 10

TOOLS = [
    types.Tool(
        name=f"tool_{i:02d}",
        description=f"Paging test tool number {i}.",
        input_schema={"type": "object", "properties": {"x": {"type": "integer"}}},
    )
    for i in range(TOOL_COUNT)
]
_BY_NAME = {tool.name: tool for tool in TOOLS}


async def list_tools(
    ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    del ctx
    cursor = params.cursor if params is not None else None
    start = 0
    if cursor is not None:
        if not cursor.isdigit() or int(cursor) >= TOOL_COUNT:
            raise MCPError(types.INVALID_PARAMS, f"invalid cursor {cursor!r}")
        start = int(cursor)
    end = start + PAGE_SIZE
    return types.ListToolsResult(
        tools=TOOLS[start:end], next_cursor=str(end) if end < TOOL_COUNT else None
    )


async def call_tool(
    ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
) -> types.CallToolResult:
    del ctx
    if params.name not in _BY_NAME:
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=f"unknown tool {params.name}")],
            is_error=True,
        )
    x = (params.arguments or {}).get("x")
    return types.CallToolResult(content=[types.TextContent(type="text", text=f"{params.name}:{x}")])


server: Server[Any] = Server("paging", on_list_tools=list_tools, on_call_tool=call_tool)


async def serve_stdio() -> None:
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(serve_stdio)
