"""One chat client, many event loops: in turn (``asyncio.run`` after ``asyncio.run``) and at
once (a loop per thread), without "Event loop is closed" and without leaking connections.

Against a real keep-alive HTTP server (``fake_llm_server``: every provider's canned replies)
so that pooled connections really exist, and against respx for the plain mechanics.
"""

from __future__ import annotations

import asyncio
import gc
import json
import threading
import urllib.request
import warnings
from collections.abc import Callable

import httpx
import pytest
import respx

from agentic_core import ChatAgent, ChatMessage
from agentic_llm import (
    AnthropicChatClient,
    GeminiChatClient,
    LLMError,
    OllamaChatClient,
    OpenAIChatClient,
)
from agentic_llm._base import HTTPChatClient
from tests.fixtures.llm import FAKE_LLM_CHUNKS

KEY = "sk-test-SUPERSECRET-0000"
EXPECTED = "".join(f" token{i}" for i in range(FAKE_LLM_CHUNKS))

Factory = Callable[[str], HTTPChatClient]
CLIENTS: dict[str, Factory] = {
    "openai": lambda root: OpenAIChatClient("gpt-4o-mini", api_key=KEY, base_url=f"{root}/v1"),
    "anthropic": lambda root: AnthropicChatClient("claude-haiku-4-5", api_key=KEY, base_url=root),
    "gemini": lambda root: GeminiChatClient("gemini-2.5-flash", api_key=KEY, base_url=root),
    "ollama": lambda root: OllamaChatClient("llama3.2", host=root),
}
HI = [ChatMessage.user("hi")]


def connections(root: str) -> int:
    with urllib.request.urlopen(f"{root}/__connections", timeout=5) as reply:  # noqa: S310 - loopback
        return int(json.loads(reply.read()))


async def one_exchange(client: HTTPChatClient) -> str:
    """A whole reply, a streamed one and an agent run, on this loop."""
    whole = await client.generate(HI)
    streamed = "".join([u.text async for u in client.generate_stream(HI)])
    agent = await ChatAgent(client).run("hi")
    assert whole.text == streamed == agent.text
    return whole.text


@pytest.mark.parametrize("provider", sorted(CLIENTS))
def test_one_client_serves_event_loops_in_turn(provider: str, fake_llm_server: str) -> None:
    client = CLIENTS[provider](fake_llm_server)
    before = connections(fake_llm_server)
    for _ in range(3):
        assert asyncio.run(one_exchange(client)) == EXPECTED
    # One pool per loop, its connection kept alive within the loop and closed with it (the
    # second count is a connection of its own).
    assert connections(fake_llm_server) - before == 3 + 1
    assert client._http.open_pools == 0  # every loop is closed: nothing is held for them


@pytest.mark.parametrize("provider", sorted(CLIENTS))
def test_two_threads_use_one_client_at_once(provider: str, fake_llm_server: str) -> None:
    client = CLIENTS[provider](fake_llm_server)
    both_running = threading.Barrier(2, timeout=30)
    texts: list[str] = []
    failures: list[BaseException] = []

    async def session() -> None:
        await client.generate(HI)
        both_running.wait()  # each thread's loop has its own pool open now
        texts.extend([await one_exchange(client) for _ in range(3)])

    def in_thread() -> None:
        try:
            asyncio.run(session())
        except BaseException as exc:  # reported by the test
            failures.append(exc)

    threads = [threading.Thread(target=in_thread) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert failures == []
    assert texts == [EXPECTED] * 6


def test_many_loops_leak_neither_pools_nor_sockets(fake_llm_server: str) -> None:
    client = CLIENTS["openai"](fake_llm_server)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(20):
            asyncio.run(client.generate(HI))
        gc.collect()
    assert [w for w in caught if issubclass(w.category, ResourceWarning)] == []
    assert client._http.open_pools == 0


async def test_aclose_closes_the_pool_of_the_running_loop(fake_llm_server: str) -> None:
    client = CLIENTS["openai"](fake_llm_server)
    await client.generate(HI)
    assert client._http.open_pools == 1
    await client.aclose()
    assert client._http.open_pools == 0
    with pytest.raises(LLMError, match="client is closed"):
        await client.generate(HI)
    await client.aclose()  # idempotent


def test_aclose_in_one_loop_leaves_no_pool_of_another(fake_llm_server: str) -> None:
    client = CLIENTS["anthropic"](fake_llm_server)
    asyncio.run(client.generate(HI))
    asyncio.run(client.aclose())
    assert client._http.is_closed
    assert client._http.open_pools == 0


# --- the same mechanics with respx, per client -----------------------------------------------

RESPX_REPLIES: dict[str, tuple[str, dict[str, object]]] = {
    "openai": (
        "https://api.example.test/v1/chat/completions",
        {
            "id": "c",
            "object": "chat.completion",
            "created": 1,
            "model": "gpt-4o-mini",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": "ok"},
                    "finish_reason": "stop",
                }
            ],
        },
    ),
    "anthropic": (
        "https://api.example.test/v1/messages",
        {
            "id": "m",
            "type": "message",
            "role": "assistant",
            "model": "claude-haiku-4-5",
            "content": [{"type": "text", "text": "ok"}],
            "stop_reason": "end_turn",
            "usage": {"input_tokens": 1, "output_tokens": 1},
        },
    ),
    "gemini": (
        "https://api.example.test/v1beta/models/gemini-2.5-flash:generateContent",
        {
            "candidates": [
                {"content": {"role": "model", "parts": [{"text": "ok"}]}, "finishReason": "STOP"}
            ]
        },
    ),
    "ollama": (
        "https://api.example.test/api/chat",
        {
            "model": "llama3.2",
            "message": {"role": "assistant", "content": "ok"},
            "done": True,
            "done_reason": "stop",
        },
    ),
}


@pytest.mark.parametrize("provider", sorted(CLIENTS))
def test_repeated_asyncio_run_with_respx(provider: str) -> None:
    url, body = RESPX_REPLIES[provider]
    root = "https://api.example.test"
    client = CLIENTS[provider](root)
    with respx.mock(assert_all_called=True) as mock:
        mock.post(url).mock(return_value=httpx.Response(200, json=body))
        for _ in range(3):
            assert asyncio.run(client.generate(HI)).text == "ok"
            assert asyncio.run(ChatAgent(client).run("hi")).text == "ok"
    assert client._http.open_pools == 0
