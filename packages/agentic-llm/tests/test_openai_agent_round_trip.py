"""A ChatAgent with a tool runs its whole loop against the mocked OpenAI endpoint."""

from __future__ import annotations

import json
from typing import Any

import httpx
import respx

from agentic_core import ChatAgent, tool
from agentic_llm import OpenAIChatClient

URL = "https://api.openai.com/v1/chat/completions"
CALL_ID = "call_abc123"


@tool
def get_current_weather(location: str) -> str:
    """Get the current weather in a given location."""
    return f"Sunny, 21 °C in {location}"


def _completion(message: dict[str, Any], finish_reason: str, tokens: int) -> dict[str, Any]:
    return {
        "id": "chatcmpl-abc",
        "object": "chat.completion",
        "created": 1741569952,
        "model": "gpt-4o-mini-2024-07-18",
        "choices": [
            {"index": 0, "message": message, "logprobs": None, "finish_reason": finish_reason}
        ],
        "usage": {"prompt_tokens": tokens, "completion_tokens": 10, "total_tokens": tokens + 10},
    }


TOOL_CALL_REPLY = _completion(
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": CALL_ID,
                "type": "function",
                "function": {"name": "get_current_weather", "arguments": '{"location": "Paris"}'},
            }
        ],
    },
    "tool_calls",
    50,
)
TEXT_REPLY = _completion(
    {"role": "assistant", "content": "It is sunny and 21 °C in Paris."}, "stop", 80
)


def _sse(*events: dict[str, Any]) -> httpx.Response:
    body = "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"
    return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body.encode())


def _chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-abc",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "gpt-4o-mini",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
    }


def _assert_second_request_carries_the_tool_result(route: respx.Route) -> None:
    first = json.loads(route.calls[0].request.content)
    second = json.loads(route.calls[1].request.content)
    assert first["tools"][0]["function"]["name"] == "get_current_weather"
    assert second["messages"] == [
        {"role": "system", "content": "You answer weather questions."},
        {"role": "user", "content": "What is the weather in Paris?"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": CALL_ID,
                    "type": "function",
                    "function": {
                        "name": "get_current_weather",
                        "arguments": '{"location": "Paris"}',
                    },
                }
            ],
        },
        {"role": "tool", "tool_call_id": CALL_ID, "content": "Sunny, 21 °C in Paris"},
    ]


async def test_agent_tool_loop_against_openai(respx_mock: respx.MockRouter) -> None:
    route = respx_mock.post(URL).mock(
        side_effect=[
            httpx.Response(200, json=TOOL_CALL_REPLY),
            httpx.Response(200, json=TEXT_REPLY),
        ]
    )
    async with OpenAIChatClient("gpt-4o-mini", api_key="sk-test") as client:
        agent = ChatAgent(client, "You answer weather questions.", tools=[get_current_weather])
        response = await agent.run("What is the weather in Paris?")
    assert response.text == "It is sunny and 21 °C in Paris."
    assert response.usage.total_tokens == 60 + 90
    assert route.call_count == 2
    _assert_second_request_carries_the_tool_result(route)


async def test_streaming_agent_tool_loop_against_openai(respx_mock: respx.MockRouter) -> None:
    tool_call_stream = _sse(
        _chunk(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "index": 0,
                        "id": CALL_ID,
                        "type": "function",
                        "function": {"name": "get_current_weather", "arguments": ""},
                    }
                ],
            }
        ),
        _chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"location": '}}]}),
        _chunk({"tool_calls": [{"index": 0, "function": {"arguments": '"Paris"}'}}]}),
        _chunk({}, "tool_calls"),
    )
    text_stream = _sse(
        _chunk({"role": "assistant", "content": ""}),
        _chunk({"content": "It is sunny "}),
        _chunk({"content": "and 21 °C in Paris."}),
        _chunk({}, "stop"),
    )
    route = respx_mock.post(URL).mock(side_effect=[tool_call_stream, text_stream])
    async with OpenAIChatClient("gpt-4o-mini", api_key="sk-test") as client:
        agent = ChatAgent(client, "You answer weather questions.", tools=[get_current_weather])
        texts = [u.text async for u in agent.run_stream("What is the weather in Paris?")]
    assert "".join(texts) == "It is sunny and 21 °C in Paris."
    _assert_second_request_carries_the_tool_result(route)
