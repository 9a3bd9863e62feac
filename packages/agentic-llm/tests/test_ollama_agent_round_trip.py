"""A ChatAgent with a tool runs its whole loop against a mocked Ollama server."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
import respx

from agentic_core import ChatAgent, tool
from agentic_llm import OllamaChatClient

URL = "http://127.0.0.1:11434/api/chat"


@tool
def get_temperature(city: str) -> str:
    """Get the current temperature for a city."""
    return f"22°C in {city}"


@pytest.fixture(autouse=True)
def no_ollama_host_from_the_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OLLAMA_HOST", raising=False)


def _reply(message: dict[str, Any], prompt: int, *, done: bool = True) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": "qwen3",
        "created_at": "2025-05-27T22:54:57.641643Z",
        "message": {"role": "assistant", "content": "", **message},
        "done": done,
    }
    if done:
        body.update(done_reason="stop", prompt_eval_count=prompt, eval_count=10)
    return body


CALL = {"function": {"name": "get_temperature", "arguments": {"city": "New York"}}}
TOOL_CALL_REPLY = _reply({"tool_calls": [CALL]}, 50)
TEXT_REPLY = _reply({"content": "It is 22°C in New York."}, 80)


def _ndjson(*lines: dict[str, Any]) -> httpx.Response:
    body = "".join(json.dumps(line) + "\n" for line in lines)
    return httpx.Response(200, headers={"content-type": "application/x-ndjson"}, content=body)


def _assert_second_request_carries_the_tool_result(route: respx.Route) -> None:
    first = json.loads(route.calls[0].request.content)
    second = json.loads(route.calls[1].request.content)
    assert first["tools"][0]["function"]["name"] == "get_temperature"
    assert second["messages"] == [
        {"role": "system", "content": "You answer weather questions."},
        {"role": "user", "content": "What is the temperature in New York?"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "type": "function",
                    "function": {
                        "index": 0,
                        "name": "get_temperature",
                        "arguments": {"city": "New York"},
                    },
                }
            ],
        },
        {"role": "tool", "content": "22°C in New York", "tool_name": "get_temperature"},
    ]


async def test_agent_tool_loop_against_ollama(respx_mock: respx.MockRouter) -> None:
    route = respx_mock.post(URL).mock(
        side_effect=[
            httpx.Response(200, json=TOOL_CALL_REPLY),
            httpx.Response(200, json=TEXT_REPLY),
        ]
    )
    async with OllamaChatClient("qwen3") as client:
        agent = ChatAgent(client, "You answer weather questions.", tools=[get_temperature])
        response = await agent.run("What is the temperature in New York?")
    assert response.text == "It is 22°C in New York."
    assert response.usage.total_tokens == 60 + 90
    assert route.call_count == 2
    _assert_second_request_carries_the_tool_result(route)


async def test_streaming_agent_tool_loop_against_ollama(respx_mock: respx.MockRouter) -> None:
    tool_call_stream = _ndjson(_reply({"tool_calls": [CALL]}, 0, done=False), _reply({}, 50))
    text_stream = _ndjson(
        _reply({"content": "It is 22°C "}, 0, done=False),
        _reply({"content": "in New York."}, 0, done=False),
        _reply({}, 80),
    )
    route = respx_mock.post(URL).mock(side_effect=[tool_call_stream, text_stream])
    async with OllamaChatClient("qwen3") as client:
        agent = ChatAgent(client, "You answer weather questions.", tools=[get_temperature])
        texts = [u.text async for u in agent.run_stream("What is the temperature in New York?")]
    assert "".join(texts) == "It is 22°C in New York."
    _assert_second_request_carries_the_tool_result(route)
