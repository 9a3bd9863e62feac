"""The ``mcp`` tool source: config tables in, connected servers' tools out, closed after."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from agentic_core import Tool
from agentic_core.registry import load
from agentic_mcp import MCPClientClosedError, MCPClientError
from agentic_mcp._tool_source import mcp_tools

pytestmark = pytest.mark.slow


def test_the_entry_point_names_this_tool_source() -> None:
    assert load("agentic.tool_sources", "mcp") is mcp_tools


async def test_tables_become_the_tools_of_each_connected_server(probe_server_script: Path) -> None:
    table = {"command": sys.executable, "args": [str(probe_server_script), "stdio"]}
    async with mcp_tools({"probe": table, "narrow": {**table, "allowed_tools": ["add"]}}) as found:
        assert set(found) == {"probe", "narrow"}
        assert all(isinstance(tool, Tool) for tool in found["probe"])
        assert "probe__echo" in {tool.name for tool in found["probe"]}
        [add] = found["narrow"]
        assert add.name == "narrow__add"
        assert await add.invoke({"a": 2, "b": 40}) == "42"
    with pytest.raises(MCPClientClosedError):
        await add.invoke({"a": 1, "b": 1})


async def test_a_wrong_table_names_the_server_and_the_field() -> None:
    with pytest.raises(MCPClientError, match=r"MCP server 'bad': command: Input should be"):
        async with mcp_tools({"bad": {"command": 42}}):
            pass
