"""Microsoft Agent Framework's MCP tests and sample, ported to agentic's API on real servers.

From microsoft/agent-framework ``python/packages/core/tests/core/test_mcp.py``:
``test_mcp_tool_allowed_tools`` (MAF mocks a session with three tools; here the real paging
server's tools) and ``test_mcp_tool_call_tool_raises_on_is_error``; and the sample
``python/samples/02-agents/providers/openai/chat_completion_client_with_local_mcp.py``
(``mcp_tools_on_agent_level``: one agent, the MCP tools given at creation, two queries), with a
scripted model in place of OpenAI and a local server in place of Microsoft Learn's.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from agentic_core import ChatAgent, ChatMessage, FunctionCallContent
from agentic_core.testing import ScriptedChatClient
from agentic_mcp import MCPClient, MCPServerConfig, MCPToolError

pytestmark = pytest.mark.slow


@pytest.mark.parametrize(
    ("allowed_tools", "expected_names"),
    [
        (None, ["tool_00", "tool_01", "tool_02"]),  # None means all tools are allowed
        ([], []),  # an empty list means no tools are allowed
        (["tool_00"], ["tool_00"]),
        (["tool_00", "tool_02"], ["tool_00", "tool_02"]),
        (["nonexistent_tool"], []),
    ],
)
async def test_mcp_tool_allowed_tools(
    paging_server_script: Path, allowed_tools: list[str] | None, expected_names: list[str]
) -> None:
    # MAF's three tools are the paging server's first three here: the rest is denied.
    config = MCPServerConfig.stdio(
        "test_server",
        sys.executable,
        str(paging_server_script),
        allowed_tools=allowed_tools,
        denied_tools=[f"tool_{i:02d}" for i in range(3, 25)],
        tool_prefix="",
    )
    async with MCPClient([config]) as server:
        assert len(server.config("test_server").args) == 1
        functions = server.get_tools()
        assert len(functions) == len(expected_names)
        assert sorted(function.name for function in functions) == sorted(expected_names)


async def test_mcp_tool_call_tool_raises_on_is_error(probe_server_script: Path) -> None:
    config = MCPServerConfig.stdio(
        "test_server", sys.executable, str(probe_server_script), "stdio", tool_prefix=""
    )
    async with MCPClient([config]) as server:
        func = next(tool for tool in server.get_tools() if tool.name == "fail")
        with pytest.raises(MCPToolError, match="Something went wrong"):
            await func.invoke({"message": "Something went wrong"})


def _asks(tool: str, **arguments: Any) -> ChatMessage:
    return ChatMessage.assistant(
        contents=[FunctionCallContent(call_id=tool, name=tool, arguments=arguments)]
    )


async def test_mcp_tools_on_agent_level(probe_server_script: Path) -> None:
    """The sample's agent-level variant: tools at creation, used across two queries."""
    model = ScriptedChatClient(
        [
            _asks("docs__echo", text="az storage account create"),
            "Use `az storage account create`.",
            _asks("docs__save_note", title="maf", body="Microsoft Agent Framework"),
            "It is a framework for agents.",
        ]
    )
    async with MCPClient(
        [MCPServerConfig.stdio("docs", sys.executable, str(probe_server_script), "stdio")]
    ) as mcp_server:
        agent = ChatAgent(
            model,
            "You are a helpful assistant that can help with microsoft documentation questions.",
            name="DocsAgent",
            tools=mcp_server.get_tools(),
        )
        result1 = await agent.run("How to create an Azure storage account using az cli?")
        assert result1.text == "Use `az storage account create`."
        result2 = await agent.run("What is Microsoft Agent Framework?")
        assert result2.text == "It is a framework for agents."
    first = model.calls[1][0][-1].function_results[0]
    assert first.result == "az storage account create"
    second = model.calls[3][0][-1].function_results[0]
    assert second.result == "saved maf (25 chars)"
