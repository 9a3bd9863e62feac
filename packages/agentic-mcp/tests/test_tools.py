"""MCP tools as core Tools: names, schemas, results for a model, errors, and a ChatAgent."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from agentic_core import ChatAgent, ChatMessage, FunctionCallContent, Tool
from agentic_core.testing import ScriptedChatClient
from agentic_mcp import MCPClient, MCPServerConfig, MCPTool, MCPToolError, MCPToolResult
from agentic_mcp._names import qualified_names
from agentic_mcp._tools import result_text, truncate_for_model

pytestmark = pytest.mark.slow


def probe_config(script: Path, name: str = "probe", **options: Any) -> MCPServerConfig:
    return MCPServerConfig.stdio(name, sys.executable, str(script), "stdio", **options)


def call(name: str, call_id: str = "c1", **arguments: Any) -> ChatMessage:
    return ChatMessage.assistant(
        contents=[FunctionCallContent(call_id=call_id, name=name, arguments=arguments)]
    )


async def test_adapters_are_core_tools_with_the_server_schema(probe_server_script: Path) -> None:
    async with MCPClient([probe_config(probe_server_script)]) as client:
        tools = {tool.name: tool for tool in client.get_tools()}
        add = tools["probe__add"]
        assert isinstance(add, Tool)
        assert isinstance(add, MCPTool)
        assert add.parameters["type"] == "object"
        assert set(add.parameters["properties"]) == {"a", "b"}
        assert add.parameters["required"] == ["a", "b"]
        choose = tools["probe__choose"]
        assert choose.parameters["properties"]["color"]["enum"] == ["red", "green"]
        assert tools["probe__echo"].description
        assert await add.invoke({"a": 20, "b": 22}) == "42"
        # Structured only once: the text a model reads, not text + JSON.
        assert await tools["probe__stats"].invoke({"values": [2.0, 4.0]}) in (
            '{"count": 2, "total": 6.0, "mean": 3.0}',
            '{\n  "count": 2,\n  "total": 6.0,\n  "mean": 3.0\n}',
        )
        with pytest.raises(MCPToolError, match="no good"):
            await tools["probe__fail"].invoke({"message": "no good"})
        long = await tools["probe__big"].invoke({"n_bytes": 200_000})
        assert len(long) < 50_500
        assert "characters cut" in long


async def test_a_chat_agent_calls_mcp_tools_like_function_tools(probe_server_script: Path) -> None:
    async with MCPClient([probe_config(probe_server_script)]) as client:
        model = ScriptedChatClient(
            [
                call("probe__add", a=19, b=23),
                call("probe__fail", call_id="c2", message="disk full"),
                "The sum is 42.",
            ]
        )
        agent = ChatAgent(model, "Use the tools.", tools=client.get_tools())
        response = await agent.run("What is 19 + 23?")
        assert response.text == "The sum is 42."
        options = model.calls[0][1]
        assert options is not None
        offered = {tool.name for tool in options.tools or []}
        assert {"probe__add", "probe__echo", "probe__slow"} <= offered
        first = model.calls[1][0][-1].function_results[0]
        assert (first.result, first.is_error) == ("42", False)
        second = model.calls[2][0][-1].function_results[0]
        assert second.is_error
        assert "disk full" in second.result


async def test_prefixes_and_collisions_give_unique_safe_names(probe_server_script: Path) -> None:
    servers = [
        probe_config(probe_server_script, "a", tool_prefix=""),
        probe_config(probe_server_script, "b", tool_prefix=""),
    ]
    async with MCPClient(servers) as client:
        names = [tool.name for tool in client.get_tools()]
        assert len(names) == len(set(names))
        assert "echo" in names
        assert "echo_2" in names
        info = client.find_tool("echo_2")
        assert (info.server, info.name) == ("b", "echo")
        assert [tool.name for tool in client.get_tools(["a"])].count("echo") == 1


def test_names_are_sanitized_and_bounded() -> None:
    names = qualified_names(
        [
            ("s", "srv.v1/", "get weather!"),
            ("s", "srv__", "x" * 100),
            ("s", "srv__", "x" * 100 + "y"),
            ("t", "", "ok-name_1"),
        ]
    )
    assert names[("s", "get weather!")] == "srv_v1_get_weather_"
    long_a, long_b = names[("s", "x" * 100)], names[("s", "x" * 100 + "y")]
    assert len(long_a) == len(long_b) == 64
    assert long_a != long_b
    assert names[("t", "ok-name_1")] == "ok-name_1"


def test_results_for_a_model() -> None:
    both = MCPToolResult(
        server="s",
        tool="t",
        content=[{"type": "text", "text": "7"}],
        structured={"result": 7},
    )
    assert result_text(both) == "7"
    assert both.value() == 7
    only_structured = MCPToolResult(server="s", tool="t", structured={"a": [1, 2]})
    assert result_text(only_structured) == '{"a": [1, 2]}'
    image = MCPToolResult(
        server="s",
        tool="t",
        content=[{"type": "image", "data": "AAAA", "mimeType": "image/png"}],
    )
    assert result_text(image) == "[image image/png, 3 bytes]"
    text = "h" * 1000 + "t" * 1000
    cut = truncate_for_model(text, 500)
    assert cut.startswith("h" * 100)
    assert cut.endswith("t" * 50)
    assert "1," in cut
    assert len(cut) < 700
    assert truncate_for_model("short", 500) == "short"


async def test_describe_tools_for_llm_at_three_levels(probe_server_script: Path) -> None:
    async with MCPClient([probe_config(probe_server_script)]) as client:
        names = client.describe_tools_for_llm(detail="names").splitlines()
        assert "probe__add" in names
        assert len(names) == len(client.get_tools())
        signatures = client.describe_tools_for_llm()
        assert "probe__add(*, a: int, b: int) -> int" in signatures
        assert "probe__choose(*, color: Literal['red', 'green'], count: int | None = None)" in (
            signatures
        )
        full = client.describe_tools_for_llm(detail="full")
        assert len(full) > len(signatures)
        assert "Args:" in full
