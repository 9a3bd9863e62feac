# pyright: strict
"""``serve_mcp(..., transport="stdio")`` in a child process, called by the SDK's own
``ClientSession`` and by agentic-mcp's ``MCPClient``: an agent's thread continues within the
session, a workflow reports its supersteps in order, a typed workflow takes its model's schema,
a request is answered by elicitation (or refused with how to answer), and garbage on stdin is
answered with a protocol error while the server keeps serving."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

from mcp import ClientSession, StdioServerParameters
from mcp import types as mcp_types
from mcp.client.session import ClientRequestContext
from mcp.client.stdio import stdio_client

from agentic_core import ChatAgent, ChatMessage, FunctionCallContent
from agentic_core.testing import ScriptedChatClient
from agentic_mcp import MCPClient, MCPServerConfig

SCRIPT = Path(__file__).parent / "servers" / "served_targets.py"
TIMEOUT_S = 30


def server_params() -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=[str(SCRIPT)])


def text_of(result: mcp_types.CallToolResult) -> str:
    return "".join(c.text for c in result.content if isinstance(c, mcp_types.TextContent))


async def approve_all(
    context: ClientRequestContext, params: mcp_types.ElicitRequestParams
) -> mcp_types.ElicitResult:
    del context
    assert isinstance(params, mcp_types.ElicitRequestFormParams)
    assert "may I publish 'the post'?" in params.message
    assert params.requested_schema["properties"]["answer"]["type"] == "boolean"
    return mcp_types.ElicitResult(action="accept", content={"answer": True})


@contextlib.asynccontextmanager
async def open_session(*, elicit: bool = True) -> AsyncGenerator[ClientSession]:
    """A session with a new server process (entered and exited in the test's own task)."""
    callback = approve_all if elicit else None
    async with (
        stdio_client(server_params()) as (read, write),
        ClientSession(
            read, write, read_timeout_seconds=TIMEOUT_S, elicitation_callback=callback
        ) as session,
    ):
        await session.initialize()
        yield session


async def test_the_sdk_client_lists_one_tool_per_target() -> None:
    async with asyncio.timeout(TIMEOUT_S), open_session() as session:
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        assert sorted(tools) == ["approve", "echo", "order", "steps"]
        assert tools["echo"].description == "Echoes, counting turns."
        assert tools["echo"].input_schema["required"] == ["message"]
        order = tools["order"].input_schema
        assert order["properties"]["quantity"]["type"] == "integer"
        assert order["required"] == ["item", "quantity"]


async def test_an_agent_keeps_its_thread_within_the_session() -> None:
    async with asyncio.timeout(TIMEOUT_S), open_session() as session:
        first = await session.call_tool("echo", {"message": "hello"})
        second = await session.call_tool("echo", {"message": "again"})
        assert (text_of(first), first.is_error) == ("turn 1: hello", False)
        assert text_of(second) == "turn 2: again"  # the second call continued the conversation


async def test_a_workflow_reports_each_superstep_in_order() -> None:
    async with asyncio.timeout(TIMEOUT_S), open_session() as session:
        reported: list[tuple[float, str | None]] = []

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            del total
            reported.append((progress, message))

        result = await session.call_tool("steps", {"message": "go"}, progress_callback=on_progress)
        assert text_of(result) == "GO!!"
        assert result.structured_content == {"outputs": ["GO!!"]}
        assert reported == [
            (1, "superstep 0 done: shout"),
            (2, "superstep 1 done: bang"),
            (3, "superstep 2 done: finish"),
        ]


async def test_a_typed_workflow_takes_its_model() -> None:
    async with asyncio.timeout(TIMEOUT_S), open_session() as session:
        result = await session.call_tool("order", {"item": "tea", "quantity": 3})
        assert result.structured_content == {
            "outputs": [{"item": "tea", "quantity": 3, "total_cents": 750}]
        }
        wrong = await session.call_tool("order", {"item": "tea", "quantity": "many"})
        assert wrong.is_error
        assert "quantity" in text_of(wrong)


async def test_a_request_is_answered_by_elicitation() -> None:
    async with asyncio.timeout(TIMEOUT_S), open_session() as session:
        result = await session.call_tool("approve", {"message": "the post"})
        assert (text_of(result), result.is_error) == ("approved: the post", False)


async def test_without_elicitation_a_request_is_an_error_saying_how_to_answer() -> None:
    async with asyncio.timeout(TIMEOUT_S), open_session(elicit=False) as session:
        result = await session.call_tool("approve", {"message": "the post"})
        assert result.is_error
        assert "may I publish 'the post'?" in text_of(result)
        assert "elicitation" in text_of(result)


async def test_mcp_client_calls_the_served_tools_and_a_chat_agent_uses_them() -> None:
    config = MCPServerConfig.stdio("served", sys.executable, str(SCRIPT))
    async with asyncio.timeout(TIMEOUT_S), MCPClient([config]) as client:
        first = await client.call_tool("served", "echo", {"message": "hi"})
        second = await client.call_tool("served", "echo", {"message": "there"})
        assert (first.text, second.text) == ("turn 1: hi", "turn 2: there")
        order = await client.call_tool("served", "order", {"item": "jam", "quantity": 2})
        assert order.structured == {"outputs": [{"item": "jam", "quantity": 2, "total_cents": 500}]}

        call = FunctionCallContent(call_id="c1", name="served__steps", arguments={"message": "up"})
        model = ScriptedChatClient([ChatMessage.assistant(contents=[call]), "done"])
        agent = ChatAgent(model, tools=client.get_tools())
        response = await agent.run("shout it")
        assert response.text == "done"
        tool_results = [
            content.result
            for message in model.calls[1][0]
            for content in message.contents
            if content.type == "function_result"
        ]
        assert tool_results == ["UP!!"]


async def test_bad_lines_get_protocol_errors_and_the_server_keeps_serving() -> None:
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"},
        },
    }
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        str(SCRIPT),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    assert process.stdin is not None
    assert process.stdout is not None
    stdin, stdout = process.stdin, process.stdout

    async def exchange(line: str) -> dict[str, Any]:
        stdin.write(line.encode() + b"\n")
        await stdin.drain()
        return json.loads(await stdout.readline())

    try:
        async with asyncio.timeout(TIMEOUT_S):
            not_json = await exchange("{not json")
            assert not_json["id"] is None
            assert not_json["error"]["code"] == mcp_types.PARSE_ERROR
            assert (await exchange(json.dumps(init)))["result"]["serverInfo"]["name"] == (
                "served-targets"
            )
            stdin.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
            not_rpc = await exchange(
                '{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": 1}'
            )
            assert not_rpc["error"]["code"] == mcp_types.INVALID_REQUEST
            bad_params = await exchange(
                json.dumps(
                    {"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {"name": 5}}
                )
            )
            assert (bad_params["id"], bad_params["error"]["code"]) == (8, mcp_types.INVALID_PARAMS)
            unknown = await exchange(json.dumps({"jsonrpc": "2.0", "id": 9, "method": "no/such"}))
            assert unknown["error"]["code"] == mcp_types.METHOD_NOT_FOUND
            listing = await exchange(
                json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
            )
            assert [t["name"] for t in listing["result"]["tools"]] == [
                "echo",
                "steps",
                "order",
                "approve",
            ]
            called = await exchange(
                json.dumps(
                    {
                        "jsonrpc": "2.0",
                        "id": 3,
                        "method": "tools/call",
                        "params": {"name": "echo", "arguments": {"message": "still here"}},
                    }
                )
            )
            assert called["result"]["content"][0]["text"] == "turn 1: still here"
            stdin.close()
            assert await process.wait() == 0
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
