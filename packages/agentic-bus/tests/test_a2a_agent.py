"""A2AAgent against a reference A2A server built only with a2a-sdk's server classes (uvicorn on
a free loopback port): run, run_stream, threads as contexts, data parts, failed tasks,
input-required answered, unreachable servers and timeouts. Nothing is mocked."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass

import httpx
import pytest
from a2a.client import A2ACardResolver
from a2a.server.routes import create_agent_card_routes
from a2a_reference_server import (
    GREETING_QUESTION,
    ScriptedExecutor,
    free_port,
    reference_app,
    reference_card,
    served,
)
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse
from starlette.routing import Route

from agentic_bus import A2AAgent, A2AConnectionError, A2ATaskError
from agentic_bus._a2a._errors import A2ATimeoutError
from agentic_core import Agent, AgentError, AgentThread, ChatMessage, ToolApprovalResponse


@dataclass
class Remote:
    url: str
    executor: ScriptedExecutor


@pytest.fixture
async def remote() -> AsyncIterator[Remote]:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    executor = ScriptedExecutor()
    async with served(reference_app(executor, reference_card(base)), port) as url:
        yield Remote(url, executor)


@pytest.fixture
async def agent(remote: Remote) -> AsyncIterator[A2AAgent]:
    async with A2AAgent(remote.url, name="reference", timeout_s=10) as agent:
        yield agent


async def test_run_returns_the_remote_answer(agent: A2AAgent) -> None:
    assert isinstance(agent, Agent)  # the core protocol
    response = await agent.run("hello there")
    assert response.text == "echo: hello there"
    [reply] = response.messages
    assert reply.role == "assistant"
    assert reply.author_name == "reference"
    assert response.agent_id == agent.id
    assert response.user_input_requests == []
    assert (await agent.get_card()).name == "reference"


async def test_maf_agent_with_a2a_sample(remote: Remote) -> None:
    # MAF's samples/02-agents/a2a/agent_with_a2a.py: resolve the card, wrap it, run, stream.
    async with httpx.AsyncClient(timeout=60.0) as http_client:
        resolver = A2ACardResolver(httpx_client=http_client, base_url=remote.url)
        agent_card = await resolver.get_agent_card()
    async with A2AAgent(agent_card, name=agent_card.name) as agent:
        response = await agent.run("What are your capabilities?")
        assert response.text == "echo: What are your capabilities?"
        streamed = ""
        final = None
        async for update in agent.run_stream("Tell me about yourself"):
            streamed += update.text
            final = update.response or final
        assert final is not None
        assert final.text == streamed == "echo: Tell me about yourself"


async def test_run_stream_yields_the_chunks_in_order_then_the_response(agent: A2AAgent) -> None:
    updates = [update async for update in agent.run_stream("one two three")]
    texts = [u.text for u in updates if not u.done]
    assert texts == ["echo: ", "one ", "two ", "three"]
    assert updates[-1].done
    assert updates[-1].response is not None
    assert updates[-1].response.text == "echo: one two three"


async def test_run_stream_text_arrives_while_the_remote_agent_still_works(
    agent: A2AAgent, remote: Remote
) -> None:
    stream = agent.run_stream("gated")
    first = await anext(stream)
    assert first.text == "one "  # arrived before the remote agent could go on
    assert not remote.executor.gate.is_set()
    remote.executor.gate.set()
    rest = [update.text async for update in stream]
    assert rest[:2] == ["two ", "three"]


async def test_stopping_a_stream_early_cancels_the_remote_task(
    agent: A2AAgent, remote: Remote
) -> None:
    stream = agent.run_stream("gated")
    assert (await anext(stream)).text == "one "
    await stream.aclose()  # the caller has heard enough
    async with asyncio.timeout(5):
        await remote.executor.cancelled.wait()


async def test_a_thread_is_one_remote_context_and_survives_serialization(
    agent: A2AAgent, remote: Remote
) -> None:
    thread = agent.get_new_thread()
    first = await agent.run("turn", thread=thread)
    second = await agent.run("turn", thread=thread)
    context_id = thread.metadata["a2a_context_id"]
    assert first.text == f"turn 1 in {context_id}"
    assert second.text == f"turn 2 in {context_id}"
    other = await agent.run("turn", thread=agent.get_new_thread())
    assert other.text.startswith("turn 1 in ")
    assert context_id not in other.text
    # The thread as JSON, read back by another A2AAgent (a process restart): same context.
    saved = thread.serialize()
    async with A2AAgent(remote.url) as again:
        restored = AgentThread.deserialize(saved)
        third = await again.run("turn", thread=restored)
    assert third.text == f"turn 3 in {context_id}"
    # The thread keeps a transcript of the exchange.
    texts = [m.text for m in await restored.list_messages()]
    assert texts[-2:] == ["turn", f"turn 3 in {context_id}"]


async def test_data_parts_go_out_and_come_back(agent: A2AAgent, remote: Remote) -> None:
    response = await agent.run("with data", data={"city": "Paris", "days": 3})
    assert response.value == {"echo": [{"city": "Paris", "days": 3}]}
    assert response.text == "echo: with data"
    assert '"city": "Paris"' in response.messages[0].contents[1].model_dump()["text"]
    sent = remote.executor.received[-1]
    assert [p.WhichOneof("content") for p in sent.parts] == ["text", "data"]
    streamed = [u async for u in agent.run_stream("again", data=[1, 2])]
    final = streamed[-1].response
    assert final is not None
    assert final.value == {"echo": [[1, 2]]}


async def test_a_direct_message_reply(agent: A2AAgent) -> None:
    assert (await agent.run("message please")).text == "a direct message"


@pytest.mark.parametrize(
    ("word", "state", "said"),
    [
        ("fail", "failed", "boom"),
        ("reject", "rejected", "not my job"),
        ("auth", "auth-required", "log in"),
    ],
)
async def test_a_task_that_does_not_complete_raises_a2a_task_error(
    agent: A2AAgent, word: str, state: str, said: str
) -> None:
    thread = agent.get_new_thread()
    with pytest.raises(A2ATaskError) as caught:
        await agent.run(word, thread=thread)
    assert caught.value.state == state
    assert caught.value.task_id
    assert said in str(caught.value)
    with pytest.raises(A2ATaskError, match=said):
        async for _ in agent.run_stream(word):
            pass


async def test_input_required_is_a_pending_request_answered_on_the_same_task(
    agent: A2AAgent, remote: Remote
) -> None:
    thread = agent.get_new_thread()
    asked = await agent.run("ask", thread=thread)
    [request] = asked.user_input_requests
    assert request.arguments["question"] == GREETING_QUESTION
    assert asked.text == GREETING_QUESTION
    answered = await agent.run(responses={request.request_id: "Ada"}, thread=thread)
    assert answered.text == "Hello, Ada!"
    assert answered.user_input_requests == []
    sent = remote.executor.received[-1]
    assert sent.task_id == request.request_id
    assert sent.context_id == thread.metadata["a2a_context_id"]
    assert "a2a_task_id" not in thread.metadata


async def test_input_required_answered_streaming_without_a_thread_and_by_approval(
    agent: A2AAgent,
) -> None:
    updates = [u async for u in agent.run_stream("ask")]
    assert [u.text for u in updates if not u.done] == [GREETING_QUESTION]
    final = updates[-1].response
    assert final is not None
    [request] = final.user_input_requests
    answer = request.edit({"answer": "Grace"})
    streamed = [u async for u in agent.run_stream(responses={request.request_id: answer})]
    assert "".join(u.text for u in streamed) == "Hello, Grace!"
    # Answering a task that is over: the server's JSON-RPC error, as A2ATaskError.
    with pytest.raises(A2ATaskError) as caught:
        await agent.run(responses={"no-such-task": ToolApprovalResponse.approve()})
    assert caught.value.state is None


async def test_a_plain_message_on_a_waiting_thread_answers_it(agent: A2AAgent) -> None:
    thread = agent.get_new_thread()
    await agent.run("ask", thread=thread)
    assert (await agent.run(ChatMessage.user("Linus"), thread=thread)).text == "Hello, Linus!"


async def test_answers_must_name_the_waiting_request(agent: A2AAgent) -> None:
    thread = agent.get_new_thread()
    await agent.run("ask", thread=thread)
    with pytest.raises(AgentError, match=r"\[.other.\] are not waiting on task"):
        await agent.run(responses={"other": "x"}, thread=thread)


async def test_an_unreachable_server_names_the_url_without_credentials() -> None:
    port = free_port()  # nobody listens there
    secret = "tok-9f8e7d6c5b4a"  # noqa: S105 - a made-up token that must not leak
    agent = A2AAgent(
        f"http://user:{secret}@127.0.0.1:{port}/?api_key={secret}",
        headers={"Authorization": f"Bearer {secret}"},
        timeout_s=5,
    )
    assert secret not in repr(agent)
    with pytest.raises(A2AConnectionError) as caught:
        await agent.run("hello")
    message = str(caught.value)
    assert f"127.0.0.1:{port}" in message
    assert secret not in message
    assert caught.value.__cause__ is None or secret not in str(caught.value.__cause__)
    await agent.aclose()


async def test_a_server_that_is_not_a2a_is_a_connection_error() -> None:
    port = free_port()
    app = Starlette(routes=[Route("/", lambda _: PlainTextResponse("a web page, no agent"))])
    async with served(app, port) as url, A2AAgent(url) as agent:
        with pytest.raises(A2AConnectionError, match="agent card"):
            await agent.run("hello")


@pytest.mark.parametrize(
    "answer",
    [
        {"hello": "world"},  # not JSON-RPC
        {"jsonrpc": "2.0", "id": 1, "result": {"weird": 1}},  # JSON-RPC, not A2A
    ],
)
async def test_an_endpoint_that_answers_no_a2a_is_a_connection_error(
    answer: dict[str, object],
) -> None:
    port = free_port()

    async def rpc(request: Request) -> JSONResponse:
        del request
        return JSONResponse(answer)

    card_routes = create_agent_card_routes(reference_card(f"http://127.0.0.1:{port}"))
    app = Starlette(routes=[*card_routes, Route("/", rpc, methods=["POST"])])
    async with served(app, port) as url, A2AAgent(url) as agent:
        with pytest.raises(A2AConnectionError, match=f"127.0.0.1:{port} cannot be used"):
            await agent.run("hi")
        with pytest.raises(A2AConnectionError):
            async for _ in agent.run_stream("hi"):
                pass


async def test_the_bearer_header_is_sent_and_never_shown() -> None:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    token = "s3cret-bearer-value"  # noqa: S105 - a made-up token that must not leak
    app = reference_app(ScriptedExecutor(), reference_card(base), token=token)
    async with served(app, port) as url:
        async with A2AAgent(url, headers={"Authorization": f"Bearer {token}"}) as agent:
            assert (await agent.run("hi")).text == "echo: hi"
            assert token not in repr(agent)
        async with A2AAgent(url, headers={"Authorization": "Bearer wrong-token"}) as agent:
            with pytest.raises(A2AConnectionError) as caught:
                await agent.run("hi")
            assert "wrong-token" not in str(caught.value)


async def test_an_agent_card_given_directly(remote: Remote) -> None:
    card = reference_card(remote.url, name="carded")
    async with A2AAgent(card) as agent:
        assert agent.name == "carded"
        assert (await agent.run("hi")).text == "echo: hi"


async def test_timeout_bounds_run_and_each_stream_update(remote: Remote) -> None:
    async with A2AAgent(remote.url, timeout_s=0.5) as agent:
        with pytest.raises(A2ATimeoutError) as caught:
            await agent.run("slow")
        assert isinstance(caught.value, TimeoutError)
        with pytest.raises(TimeoutError):
            async for _ in agent.run_stream("slow"):
                pass


async def test_closed_agents_refuse_to_run(remote: Remote) -> None:
    agent = A2AAgent(remote.url)
    assert (await agent.run("hi")).text == "echo: hi"
    await agent.aclose()
    await agent.aclose()  # idempotent
    with pytest.raises(A2AConnectionError, match="closed"):
        await agent.run("hi")


async def test_unknown_keywords_are_refused(agent: A2AAgent) -> None:
    with pytest.raises(TypeError, match="response_format"):
        await agent.run("hi", response_format=dict)


async def test_runs_in_parallel_share_the_agent(agent: A2AAgent) -> None:
    answers = await asyncio.gather(*(agent.run(f"n{i}") for i in range(5)))
    assert [a.text for a in answers] == [f"echo: n{i}" for i in range(5)]
