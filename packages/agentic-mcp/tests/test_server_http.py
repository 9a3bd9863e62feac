# pyright: strict
"""``serve_mcp(..., transport="streamable-http")`` on a real loopback port, called by the SDK's
``ClientSession`` and by agentic-mcp's ``MCPClient``; the guard in front of it (token, Host,
JSON only, bounded bodies) and malformed JSON-RPC answered with protocol errors while the
server keeps serving."""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import json
from collections.abc import AsyncGenerator, Sequence
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import Client, ClientSession
from mcp import types as mcp_types
from mcp.client.session import ClientRequestContext
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client  # pyright: ignore[reportPrivateUsage]

from agentic_core import ChatAgent, ChatMessage, FunctionCallContent, ServerGuardError
from agentic_core.testing import ScriptedChatClient
from agentic_mcp import (
    MCPClient,
    MCPServeError,
    MCPServerConfig,
    create_mcp_server,
    serve_mcp,
)
from agentic_mcp._server._serve import mcp_asgi_app
from agentic_mcp._server._server import serves_agents_only
from tests.fixtures.servers import free_port, wait_until_listening

SCRIPT = Path(__file__).parent / "servers" / "served_targets.py"
TIMEOUT_S = 30
TOKEN = "mcp-test-token-0123456789"  # noqa: S105 - a fake secret
MCP_ACCEPT = {"accept": "application/json, text/event-stream"}
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    },
}


def build_targets() -> list[Any]:
    spec = importlib.util.spec_from_file_location("served_targets", SCRIPT)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    targets: list[Any] = module.build_targets()
    return targets


@contextlib.asynccontextmanager
async def serving(targets: Sequence[Any] | None = None, **options: Any) -> AsyncGenerator[str]:
    """``serve_mcp`` on a free loopback port for the block; yields the endpoint's URL."""
    port = free_port()
    task = asyncio.ensure_future(
        serve_mcp(
            targets if targets is not None else build_targets(),
            name="served-targets",
            transport="streamable-http",
            port=port,
            **options,
        )
    )
    try:
        await wait_until_listening(port, task, timeout_s=TIMEOUT_S)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


@contextlib.asynccontextmanager
async def sdk_session(
    url: str, *, headers: dict[str, str] | None = None, elicit: bool = False
) -> AsyncGenerator[ClientSession]:
    async def approve(
        context: ClientRequestContext, params: mcp_types.ElicitRequestParams
    ) -> mcp_types.ElicitResult:
        del context, params
        return mcp_types.ElicitResult(action="accept", content={"answer": False})

    async with (
        create_mcp_http_client(headers=headers) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(
            read,
            write,
            read_timeout_seconds=TIMEOUT_S,
            elicitation_callback=approve if elicit else None,
        ) as session,
    ):
        await session.initialize()
        yield session


def text_of(result: mcp_types.CallToolResult) -> str:
    return "".join(c.text for c in result.content if isinstance(c, mcp_types.TextContent))


# -- the SDK's client ----------------------------------------------------------------------------


async def test_the_sdk_client_continues_a_thread_and_runs_workflows() -> None:
    reported: list[tuple[float, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        del total
        reported.append((progress, message))

    async with serving() as url, asyncio.timeout(TIMEOUT_S):
        async with sdk_session(url, elicit=True) as session:
            tools = [tool.name for tool in (await session.list_tools()).tools]
            assert tools == ["echo", "steps", "order", "approve"]
            first = await session.call_tool("echo", {"message": "hello"})
            second = await session.call_tool("echo", {"message": "again"})
            assert (text_of(first), text_of(second)) == ("turn 1: hello", "turn 2: again")
            steps = await session.call_tool(
                "steps", {"message": "go"}, progress_callback=on_progress
            )
            assert steps.structured_content == {"outputs": ["GO!!"]}
            answered = await session.call_tool("approve", {"message": "the post"})
            assert (text_of(answered), answered.is_error) == ("rejected: the post", False)
        async with sdk_session(url) as other:  # another session: another thread
            fresh = await other.call_tool("echo", {"message": "new"})
            assert text_of(fresh) == "turn 1: new"
            refused = await other.call_tool("approve", {"message": "the post"})
            assert refused.is_error
            assert "elicitation" in text_of(refused)
    assert [done for done, _ in reported] == [1, 2, 3]
    assert [message for _, message in reported] == [
        "superstep 0 done: shout",
        "superstep 1 done: bang",
        "superstep 2 done: finish",
    ]


async def test_in_the_2026_era_a_request_is_asked_in_the_result_and_the_retry_resumes() -> None:
    asked: list[str] = []

    async def answer(
        context: ClientRequestContext, params: mcp_types.ElicitRequestParams
    ) -> mcp_types.ElicitResult:
        del context
        assert isinstance(params, mcp_types.ElicitRequestFormParams)
        asked.append(params.message)
        return mcp_types.ElicitResult(action="accept", content={"answer": True})

    async with serving() as url, asyncio.timeout(TIMEOUT_S):
        async with Client(url, elicitation_callback=answer) as client:
            assert client.protocol_version == "2026-07-28"
            result = await client.call_tool("approve", {"message": "the post"})
            assert (text_of(result), result.is_error) == ("approved: the post", False)
            assert asked == ["approve (approver) asks: may I publish 'the post'?"]
            forged = await client.call_tool(
                "approve", {"message": "x"}, request_state="guessed", input_responses={}
            )
            assert forged.is_error
            assert "unknown or already answered" in text_of(forged)
        async with Client(url) as plain:  # no elicitation declared: told how to answer
            refused = await plain.call_tool("approve", {"message": "the post"})
            assert refused.is_error
            assert "elicitation" in text_of(refused)


# -- agentic-mcp's own client --------------------------------------------------------------------


@pytest.mark.parametrize("protocol", ["legacy", "auto"])
async def test_mcp_client_and_a_chat_agent_call_the_served_tools(protocol: Any) -> None:
    async with serving(token=TOKEN) as url:
        config = MCPServerConfig.http(
            "served", url, headers={"Authorization": f"Bearer {TOKEN}"}, protocol=protocol
        )
        async with asyncio.timeout(TIMEOUT_S), MCPClient([config]) as client:
            first = await client.call_tool("served", "echo", {"message": "hi"})
            second = await client.call_tool("served", "echo", {"message": "there"})
            assert first.text == "turn 1: hi"
            # The 2026-07-28 era has no sessions: each call is a conversation of its own.
            assert second.text == ("turn 2: there" if protocol == "legacy" else "turn 1: there")
            order = await client.call_tool("served", "order", {"item": "jam", "quantity": 2})
            assert order.structured == {
                "outputs": [{"item": "jam", "quantity": 2, "total_cents": 500}]
            }

            call = FunctionCallContent(
                call_id="c1", name="served__steps", arguments={"message": "up"}
            )
            model = ScriptedChatClient([ChatMessage.assistant(contents=[call]), "done"])
            agent = ChatAgent(model, tools=client.get_tools())
            assert (await agent.run("shout it")).text == "done"
            results = [
                content.result
                for message in model.calls[1][0]
                for content in message.contents
                if content.type == "function_result"
            ]
            assert results == ["UP!!"]


# -- the guard -----------------------------------------------------------------------------------


async def test_a_token_is_required_when_set() -> None:
    async with serving(token=TOKEN) as url, httpx.AsyncClient(timeout=TIMEOUT_S) as http:
        for headers in ({}, {"authorization": "Bearer wrong-token"}):
            refused = await http.post(url, json=INIT, headers={**MCP_ACCEPT, **headers})
            assert refused.status_code == 401
            assert TOKEN not in refused.text
        async with sdk_session(url, headers={"Authorization": f"Bearer {TOKEN}"}) as session:
            assert text_of(await session.call_tool("echo", {"message": "ok"})) == "turn 1: ok"


async def test_serving_off_loopback_without_a_token_is_refused_before_binding() -> None:
    with pytest.raises(ServerGuardError, match="token"):
        await serve_mcp(build_targets(), transport="streamable-http", host="0.0.0.0", port=1)  # noqa: S104
    with pytest.raises(MCPServeError, match="transport"):
        await serve_mcp(build_targets(), transport="websocket")  # pyright: ignore[reportArgumentType]


async def test_a_foreign_host_is_refused() -> None:
    async with serving() as url, httpx.AsyncClient(timeout=TIMEOUT_S) as http:
        rebound = await http.post(
            url, json=INIT, headers={**MCP_ACCEPT, "host": "evil.example:8000"}
        )
        assert rebound.status_code == 421
        assert "evil.example" in rebound.json()["error"]
        ok = await http.post(url, json=INIT, headers=MCP_ACCEPT)
        assert ok.status_code == 200


async def test_malformed_json_rpc_gets_protocol_errors_and_the_server_keeps_serving() -> None:
    async with (
        serving(max_body_bytes=64 * 1024) as url,
        httpx.AsyncClient(timeout=TIMEOUT_S) as http,
    ):
        json_headers = {**MCP_ACCEPT, "content-type": "application/json"}
        not_json = await http.post(url, content=b"{not json", headers=json_headers)
        assert not_json.status_code == 400
        assert not_json.json()["error"]["code"] == mcp_types.PARSE_ERROR
        not_rpc = await http.post(url, content=b'{"jsonrpc": "2.0", "id": 1}', headers=json_headers)
        assert not_rpc.status_code == 400
        assert -32700 <= not_rpc.json()["error"]["code"] <= -32600  # a JSON-RPC protocol error
        form = await http.post(
            url, content=b"a=1", headers={**MCP_ACCEPT, "content-type": "text/plain"}
        )
        assert form.status_code == 415
        huge = await http.post(url, content=json.dumps({"x": "y" * 70_000}), headers=json_headers)
        assert huge.status_code == 413
        # Still serving: a whole session works.
        async with sdk_session(url) as session:
            assert text_of(await session.call_tool("echo", {"message": "up"})) == "turn 1: up"


async def test_create_mcp_server_builds_without_serving() -> None:
    server = create_mcp_server(build_targets(), name="built")
    assert server.name == "built"
    with pytest.raises(MCPServeError, match="distinct names"):
        create_mcp_server(build_targets() + build_targets())
    with pytest.raises(MCPServeError, match="cannot serve"):
        create_mcp_server([object()])  # pyright: ignore[reportArgumentType]


# -- JSON responses ------------------------------------------------------------------------------


async def content_type_of_initialize(url: str) -> str:
    async with httpx.AsyncClient(timeout=TIMEOUT_S) as http:
        answer = await http.post(url, json=INIT, headers=MCP_ACCEPT)
        assert answer.status_code == 200
        return answer.headers["content-type"]


def echo_only() -> list[Any]:
    return [target for target in build_targets() if isinstance(target, ChatAgent)]


async def test_agents_only_are_answered_in_json_and_both_clients_work() -> None:
    assert serves_agents_only(create_mcp_server(echo_only()))
    assert not serves_agents_only(create_mcp_server(build_targets()))
    async with serving(echo_only()) as url, asyncio.timeout(TIMEOUT_S):
        assert (await content_type_of_initialize(url)).startswith("application/json")
        async with sdk_session(url) as session:
            assert [tool.name for tool in (await session.list_tools()).tools] == ["echo"]
            first = await session.call_tool("echo", {"message": "hello"})
            second = await session.call_tool("echo", {"message": "again"})
            assert (text_of(first), text_of(second)) == ("turn 1: hello", "turn 2: again")
        for protocol in ("legacy", "auto"):
            config = MCPServerConfig.http("served", url, protocol=protocol)
            async with MCPClient([config]) as client:
                first_ = await client.call_tool("served", "echo", {"message": "hi"})
                second_ = await client.call_tool("served", "echo", {"message": "there"})
            assert first_.text == "turn 1: hi"
            assert second_.text == ("turn 2: there" if protocol == "legacy" else "turn 1: there")
        async with Client(url) as modern:
            assert text_of(await modern.call_tool("echo", {"message": "new"})) == "turn 1: new"


async def test_json_response_follows_the_targets_unless_given() -> None:
    async with serving(echo_only(), json_response=False) as url, asyncio.timeout(TIMEOUT_S):
        assert (await content_type_of_initialize(url)).startswith("text/event-stream")
        async with sdk_session(url) as session:
            assert text_of(await session.call_tool("echo", {"message": "a"})) == "turn 1: a"
    async with serving() as url, asyncio.timeout(TIMEOUT_S):  # workflows: streamed
        assert (await content_type_of_initialize(url)).startswith("text/event-stream")
    async with serving(json_response=True) as url, asyncio.timeout(TIMEOUT_S):
        assert (await content_type_of_initialize(url)).startswith("application/json")
        async with sdk_session(url) as session:  # a workflow still answers, without progress
            steps = await session.call_tool("steps", {"message": "go"})
            assert steps.structured_content == {"outputs": ["GO!!"]}
    assert mcp_asgi_app(echo_only(), json_response=False) is not None
