# pyright: strict
"""Type-checked (pyright strict) uses of the agentic_mcp API: fails CI if the types regress.

It also runs as a test module, without an MCP server: a client is built but not connected,
and Code Mode's host side runs against ``ScriptedSandbox``, whose program prints the frames
the real sandbox-side runner would.
"""

from __future__ import annotations

import json
from typing import Any, Literal, assert_type

import pytest

from agentic_core import AgenticError, Executor, ExecutorKind, Tool
from agentic_core.testing import ScriptedSandbox
from agentic_mcp import (
    CodeMode,
    CodeModeExecutor,
    CodeModeRequest,
    CodeModeResult,
    CodeModeTool,
    MCPClient,
    MCPClientClosedError,
    MCPClientError,
    MCPServerConfig,
    MCPToolError,
    MCPToolInfo,
    MCPToolResult,
    ServerStatus,
)


def frames(*items: dict[str, Any]) -> str:
    """What the sandbox-side runner prints: one JSON frame a line."""
    return "".join(json.dumps(item) + "\n" for item in items)


def test_server_configs_are_built_three_ways() -> None:
    local = MCPServerConfig.stdio("time", "mcp-server-time", "--local-timezone=UTC")
    remote = MCPServerConfig.http("docs", "https://example.test/mcp", headers={"X-Team": "a"})
    listed = MCPServerConfig.from_mcp_json({"mcpServers": {"git": {"command": "mcp-server-git"}}})

    assert_type(local, MCPServerConfig)
    assert_type(listed, list[MCPServerConfig])
    assert_type(remote.transport, Literal["stdio", "http"])
    assert (local.transport, remote.transport, listed[0].name) == ("stdio", "http", "git")


async def test_a_client_without_servers_lists_nothing() -> None:
    async with MCPClient() as client:
        assert_type(client.status(), dict[str, ServerStatus])
        assert_type(client.get_tools(), list[Tool])
        assert_type(await client.list_tools(), list[MCPToolInfo])
        assert_type(client.describe_tools_for_llm(detail="names"), str)
        assert_type(client.servers, list[str])
        assert client.servers == []
    with pytest.raises(MCPClientClosedError):
        await client.call_tool("time", "get_current_time", {"timezone": "UTC"})


def test_a_tool_result_reads_as_text_and_raises_for_errors() -> None:
    result = MCPToolResult(
        server="time", tool="now", content=[{"type": "text", "text": "noon"}], is_error=True
    )

    assert_type(result.text, str)
    assert_type(result.value(), Any)
    with pytest.raises(MCPToolError):
        result.raise_for_error()


async def test_code_mode_runs_a_program_and_returns_its_result() -> None:
    program = frames({"t": "out", "data": "hello\n"}, {"t": "done", "error": None})
    sandbox = ScriptedSandbox([program])
    code_mode = CodeMode(MCPClient(), sandbox, deny=["git.*"], timeout_s=5)

    result = await code_mode.execute("print('hello')")
    tool = code_mode.as_tool()

    assert_type(result, CodeModeResult)
    assert_type(tool, CodeModeTool)
    assert_type(code_mode.api_listing(), str)
    assert (result.stdout, result.ok) == ("hello\n", True)
    assert isinstance(tool, Tool)
    assert len(sandbox.calls) == 1


def test_code_mode_is_a_workflow_node_too() -> None:
    code_mode = CodeMode(MCPClient(), ScriptedSandbox([]))
    node = CodeModeExecutor(code_mode, id="tools", kind=ExecutorKind.VALIDATOR)
    request = CodeModeRequest(code="print(1)", files={"data.txt": "x"})

    assert isinstance(node, Executor)
    assert_type(request.files, dict[str, str | bytes])


def test_the_errors_share_one_root() -> None:
    assert issubclass(MCPClientClosedError, MCPClientError)
    assert issubclass(MCPToolError, MCPClientError)
    assert issubclass(MCPClientError, AgenticError)


def test_the_server_side_is_built_without_serving() -> None:
    from mcp.server.lowlevel import Server

    from agentic_core import ChatAgent, ServerGuard
    from agentic_core.testing import ScriptedChatClient
    from agentic_mcp import MCPServeError, create_mcp_app, create_mcp_server, serve_mcp

    agent = ChatAgent(ScriptedChatClient(["hi"]), name="helper")
    server = create_mcp_server([agent], name="typed")
    assert_type(server, Server[Any])
    app = create_mcp_app(server, token="a-secret-token")  # noqa: S106 - a fake secret
    assert_type(app, ServerGuard)
    assert app.token_required
    assert "a-secret-token" not in repr(app)
    assert callable(serve_mcp)
    with pytest.raises(MCPServeError):
        create_mcp_server({"bad name!": agent})
    assert issubclass(MCPServeError, MCPClientError)
