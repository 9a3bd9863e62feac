"""A ChatAgent with a tool runs its whole loop against the mocked Gemini API."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
import respx

from agentic_core import ChatAgent, tool
from agentic_llm import GeminiChatClient

ROOT = "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash"
URL = f"{ROOT}:generateContent"
STREAM_URL = f"{ROOT}:streamGenerateContent"


@tool
def get_current_weather(location: str) -> str:
    """Get the current weather in a given location."""
    return f"Sunny, 21 °C in {location}"


@pytest.fixture(autouse=True)
def no_gemini_key_from_the_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)


def _response(parts: list[dict[str, Any]], finish: str | None, prompt: int) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    if finish:
        candidate["finishReason"] = finish
    return {
        "candidates": [candidate],
        "usageMetadata": {
            "promptTokenCount": prompt,
            "candidatesTokenCount": 10,
            "totalTokenCount": prompt + 10,
        },
        "modelVersion": "gemini-2.5-flash",
        "responseId": "resp-1",
    }


CALL = {"functionCall": {"name": "get_current_weather", "args": {"location": "Paris"}}}
TOOL_CALL_REPLY = _response([CALL], "STOP", 50)
TEXT_REPLY = _response([{"text": "It is sunny and 21 °C in Paris."}], "STOP", 80)


def _sse(*events: dict[str, Any]) -> httpx.Response:
    body = "".join(f"data: {json.dumps(e)}\r\n\r\n" for e in events)
    return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body.encode())


def _assert_second_request_carries_the_function_response(route: respx.Route) -> None:
    first = json.loads(route.calls[0].request.content)
    second = json.loads(route.calls[1].request.content)
    assert first["tools"][0]["functionDeclarations"][0]["name"] == "get_current_weather"
    assert second["systemInstruction"] == {"parts": [{"text": "You answer weather questions."}]}
    assert second["contents"] == [
        {"role": "user", "parts": [{"text": "What is the weather in Paris?"}]},
        {"role": "model", "parts": [CALL]},
        {
            "role": "user",
            "parts": [
                {
                    "functionResponse": {
                        "name": "get_current_weather",
                        "response": {"output": "Sunny, 21 °C in Paris"},
                    }
                }
            ],
        },
    ]


async def test_agent_tool_loop_against_gemini(respx_mock: respx.MockRouter) -> None:
    route = respx_mock.post(URL).mock(
        side_effect=[
            httpx.Response(200, json=TOOL_CALL_REPLY),
            httpx.Response(200, json=TEXT_REPLY),
        ]
    )
    async with GeminiChatClient("gemini-2.5-flash", api_key="AIza-test") as client:
        agent = ChatAgent(client, "You answer weather questions.", tools=[get_current_weather])
        response = await agent.run("What is the weather in Paris?")
    assert response.text == "It is sunny and 21 °C in Paris."
    assert response.usage.total_tokens == 60 + 90
    assert route.call_count == 2
    _assert_second_request_carries_the_function_response(route)


async def test_streaming_agent_tool_loop_against_gemini(respx_mock: respx.MockRouter) -> None:
    tool_call_stream = _sse(_response([CALL], "STOP", 50))
    text_stream = _sse(
        _response([{"text": "It is sunny "}], None, 80),
        _response([{"text": "and 21 °C in Paris."}], "STOP", 80),
    )
    route = respx_mock.post(STREAM_URL, params={"alt": "sse"}).mock(
        side_effect=[tool_call_stream, text_stream]
    )
    async with GeminiChatClient("gemini-2.5-flash", api_key="AIza-test") as client:
        agent = ChatAgent(client, "You answer weather questions.", tools=[get_current_weather])
        texts = [u.text async for u in agent.run_stream("What is the weather in Paris?")]
    assert "".join(texts) == "It is sunny and 21 °C in Paris."
    _assert_second_request_carries_the_function_response(route)
