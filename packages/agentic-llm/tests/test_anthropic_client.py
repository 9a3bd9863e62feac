"""AnthropicChatClient against a respx-mocked Messages API.

Payloads follow the API reference and guides: the ``Message`` object, the named SSE events of
a stream (``message_start`` ... ``message_stop``, ``ping``, ``error``), and
``{"type": "error", "error": {"type": ..., "message": ...}, "request_id": ...}`` error bodies.
"""

from __future__ import annotations

import json
import pickle
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
import respx
from pydantic import BaseModel

from agentic_core import (
    ChatAgent,
    ChatMessage,
    ChatOptions,
    ChatResponse,
    FinishReason,
    FunctionCallContent,
    UsageDetails,
    tool,
)
from agentic_llm import (
    AnthropicChatClient,
    AuthenticationError,
    ContextLengthError,
    InvalidRequestError,
    LLMError,
    PermissionDeniedError,
    ProviderError,
    RateLimitError,
)
from tests.fixtures.llm_http import (
    assert_a_body_that_is_not_json,
    assert_a_dropped_connection_is_a_provider_error,
    assert_a_garbage_event_is_a_provider_error,
    assert_a_stream_error_hides_the_key,
    assert_an_empty_stream_is_a_provider_error,
    assert_cancelling_a_streaming_task_closes_it,
    assert_errors_and_logs_hide_the_key,
    assert_health_check_logs_hide_the_key,
    assert_leaving_a_stream_early_closes_it,
    assert_read_timeout_is_not_retried,
    client_error_not_retried,
    collect,
    generate_after_failures,
    health_check_failure_reason,
    rate_limited_after_the_retries,
    sent,
    shown_by,
    sse_response,
    streamed_text_after_failures,
    updates_before_the_error,
)

URL = "https://api.anthropic.com/v1/messages"
MODELS_URL = "https://api.anthropic.com/v1/models"
KEY = "sk-ant-api03-SUPERSECRET0123456789"
HELLO = [ChatMessage.user("Hello, Claude")]
MODEL = "claude-sonnet-4-20250514"


@tool
def get_weather(location: str, unit: str = "celsius") -> str:
    """Get the current weather in a given location."""
    return f"Sunny, 21 °C in {location}"


@pytest.fixture(autouse=True)
def no_anthropic_key_from_the_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests never pick up a real key from the environment."""
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)


@pytest.fixture
async def claude() -> AsyncIterator[AnthropicChatClient]:
    """A client of api.anthropic.com with a fake key (respx answers for the server)."""
    async with AnthropicChatClient(MODEL, api_key=KEY) as client:
        yield client


# --- payloads (shapes from the API reference) ---------------------------------------------------


def message(
    content: list[dict[str, Any]] | None = None,
    stop_reason: str = "end_turn",
    *,
    input_tokens: int = 2095,
    output_tokens: int = 503,
) -> dict[str, Any]:
    return {
        "id": "msg_013Zva2CMHLNnXjNJJKqJ2EF",
        "type": "message",
        "role": "assistant",
        "content": content
        if content is not None
        else [{"type": "text", "text": "Hi! My name is Claude."}],
        "model": MODEL,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {
            "input_tokens": input_tokens,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "output_tokens": output_tokens,
        },
    }


def tool_use(tool_id: str, name: str, tool_input: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}


def error_body(kind: str, text: str) -> dict[str, Any]:
    return {
        "type": "error",
        "error": {"type": kind, "message": text},
        "request_id": "req_018EeWyXxfu5pfWkrYcMdjWG",
    }


# Stream events (the streaming guide's examples).


def message_start(input_tokens: int = 25) -> dict[str, Any]:
    return {
        "type": "message_start",
        "message": {
            "id": "msg_1nZdL29xx5MUA1yADyHTEsnR8uuvGzszyY",
            "type": "message",
            "role": "assistant",
            "content": [],
            "model": MODEL,
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": input_tokens, "output_tokens": 1},
        },
    }


def text_start(index: int) -> dict[str, Any]:
    return {
        "type": "content_block_start",
        "index": index,
        "content_block": {"type": "text", "text": ""},
    }


def text_delta(index: int, text: str) -> dict[str, Any]:
    return {
        "type": "content_block_delta",
        "index": index,
        "delta": {"type": "text_delta", "text": text},
    }


def tool_start(index: int, tool_id: str, name: str = "get_weather") -> dict[str, Any]:
    return {
        "type": "content_block_start",
        "index": index,
        "content_block": {"type": "tool_use", "id": tool_id, "name": name, "input": {}},
    }


def json_delta(index: int, partial: str) -> dict[str, Any]:
    return {
        "type": "content_block_delta",
        "index": index,
        "delta": {"type": "input_json_delta", "partial_json": partial},
    }


def block_stop(index: int) -> dict[str, Any]:
    return {"type": "content_block_stop", "index": index}


def message_delta(stop_reason: str = "end_turn", output_tokens: int = 15) -> dict[str, Any]:
    return {
        "type": "message_delta",
        "delta": {"stop_reason": stop_reason, "stop_sequence": None},
        "usage": {"output_tokens": output_tokens},
    }


PING = {"type": "ping"}
MESSAGE_STOP = {"type": "message_stop"}


def sse(*events: dict[str, Any] | str, stop: bool = True) -> bytes:
    """Named SSE events (``event:`` is the JSON ``type``); a str is sent as raw data."""
    lines: list[str] = []
    for event in [*events, MESSAGE_STOP] if stop else events:
        if isinstance(event, str):
            lines.append(f"event: content_block_delta\ndata: {event}\n\n")
        else:
            lines.append(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n")
    return "".join(lines).encode()


def text_stream(*pieces: str, stop_reason: str = "end_turn") -> bytes:
    return sse(
        message_start(),
        text_start(0),
        PING,
        *(text_delta(0, piece) for piece in pieces),
        block_stop(0),
        message_delta(stop_reason),
    )


STOP_REASONS = [
    ("end_turn", FinishReason.STOP),
    ("stop_sequence", FinishReason.STOP),
    ("max_tokens", FinishReason.LENGTH),
    ("refusal", FinishReason.CONTENT_FILTER),
    ("pause_turn", FinishReason.STOP),
]
"""Each ``stop_reason`` of a message and the finish reason it maps to."""


# --- generate ----------------------------------------------------------------------------------


async def test_plain_reply(claude: AnthropicChatClient, respx_mock: respx.MockRouter) -> None:
    route = respx_mock.post(URL).respond(200, json=message())
    response = await claude.generate(HELLO)
    assert response.text == "Hi! My name is Claude."
    assert response.finish_reason is FinishReason.STOP
    assert response.usage == UsageDetails(input_tokens=2095, output_tokens=503, total_tokens=2598)
    assert response.model == MODEL
    assert sent(route) == {
        "model": MODEL,
        "max_tokens": 4096,
        "messages": [{"role": "user", "content": "Hello, Claude"}],
    }


async def test_request_headers(claude: AnthropicChatClient, respx_mock: respx.MockRouter) -> None:
    route = respx_mock.post(URL).respond(200, json=message())
    await claude.generate(HELLO)
    headers = route.calls[0].request.headers
    assert headers["x-api-key"] == KEY
    assert headers["anthropic-version"] == "2023-06-01"
    assert headers["content-type"] == "application/json"
    assert "authorization" not in headers


async def test_version_and_max_tokens_are_configurable(respx_mock: respx.MockRouter) -> None:
    route = respx_mock.post(URL).respond(200, json=message())
    async with AnthropicChatClient(
        MODEL, api_key=KEY, max_tokens=256, anthropic_version="2099-01-01"
    ) as client:
        await client.generate(HELLO)
        await client.generate(HELLO, ChatOptions(max_tokens=32))
    assert route.calls[0].request.headers["anthropic-version"] == "2099-01-01"
    assert sent(route, 0)["max_tokens"] == 256
    assert sent(route, 1)["max_tokens"] == 32


async def test_system_prompt_is_the_top_level_field(
    claude: AnthropicChatClient, respx_mock: respx.MockRouter
) -> None:
    route = respx_mock.post(URL).respond(200, json=message())
    await claude.generate([ChatMessage.system("Today's date is 2024-06-01."), *HELLO])
    assert sent(route)["system"] == "Today's date is 2024-06-01."
    assert all(m["role"] != "system" for m in sent(route)["messages"])


async def test_multiple_tool_use_blocks(
    claude: AnthropicChatClient, respx_mock: respx.MockRouter
) -> None:
    route = respx_mock.post(URL).respond(
        200,
        json=message(
            [
                {"type": "text", "text": "I'll check the weather in both cities."},
                tool_use(
                    "toolu_01A09q90qw90lq917835lq9",
                    "get_weather",
                    {"location": "San Francisco, CA"},
                ),
                tool_use(
                    "toolu_01T1x1fJ34qAmk2tNTrN7Up6",
                    "get_weather",
                    {"location": "Paris", "unit": "celsius"},
                ),
            ],
            "tool_use",
        ),
    )
    response = await claude.generate(HELLO, ChatOptions(tools=[get_weather]))
    assert response.finish_reason is FinishReason.TOOL_CALLS
    assert response.text == "I'll check the weather in both cities."
    assert response.message.function_calls == [
        FunctionCallContent(
            call_id="toolu_01A09q90qw90lq917835lq9",
            name="get_weather",
            arguments={"location": "San Francisco, CA"},
        ),
        FunctionCallContent(
            call_id="toolu_01T1x1fJ34qAmk2tNTrN7Up6",
            name="get_weather",
            arguments={"location": "Paris", "unit": "celsius"},
        ),
    ]
    assert sent(route)["tools"] == [
        {
            "name": "get_weather",
            "description": "Get the current weather in a given location.",
            "input_schema": get_weather.parameters,
        }
    ]


@pytest.mark.parametrize(("raw", "expected"), STOP_REASONS)
async def test_each_stop_reason(
    raw: str, expected: FinishReason, claude: AnthropicChatClient, respx_mock: respx.MockRouter
) -> None:
    respx_mock.post(URL).respond(200, json=message([{"type": "text", "text": "partial"}], raw))
    assert (await claude.generate(HELLO)).finish_reason is expected


async def test_tool_use_stop_reason(
    claude: AnthropicChatClient, respx_mock: respx.MockRouter
) -> None:
    respx_mock.post(URL).respond(
        200, json=message([tool_use("toolu_1", "get_weather", {"location": "Oslo"})], "tool_use")
    )
    assert (await claude.generate(HELLO)).finish_reason is FinishReason.TOOL_CALLS


async def test_options_reach_the_wire(
    claude: AnthropicChatClient, respx_mock: respx.MockRouter
) -> None:
    route = respx_mock.post(URL).respond(200, json=message())
    options = ChatOptions(
        model="claude-opus-4-1-20250805",
        temperature=0.0,
        max_tokens=32,
        stop=["END"],
        seed=1,
        tools=[get_weather],
        tool_choice="get_weather",
    )
    await claude.generate(HELLO, options)
    body = sent(route)
    assert (body["model"], body["max_tokens"], body["temperature"]) == (
        "claude-opus-4-1-20250805",
        32,
        0.0,
    )
    assert body["stop_sequences"] == ["END"]
    assert body["tool_choice"] == {"type": "tool", "name": "get_weather"}
    assert "seed" not in body


class Weather(BaseModel):
    location: str
    temperature_c: float


async def test_structured_output_through_a_forced_tool(
    claude: AnthropicChatClient, respx_mock: respx.MockRouter
) -> None:
    route = respx_mock.post(URL).respond(
        200,
        json=message(
            [
                tool_use(
                    "toolu_01Q", "structured_response", {"location": "Paris", "temperature_c": 21}
                )
            ],
            "tool_use",
        ),
    )
    response = await claude.generate(HELLO, ChatOptions(response_format=Weather))
    assert response.value == Weather(location="Paris", temperature_c=21)
    assert response.finish_reason is FinishReason.STOP
    assert response.message.function_calls == []
    body = sent(route)
    assert body["tool_choice"] == {"type": "tool", "name": "structured_response"}
    assert body["tools"][0]["input_schema"] == Weather.model_json_schema()


async def test_agent_structured_output(respx_mock: respx.MockRouter) -> None:
    respx_mock.post(URL).respond(
        200,
        json=message(
            [
                tool_use(
                    "toolu_01Q", "structured_response", {"location": "Paris", "temperature_c": 21}
                )
            ],
            "tool_use",
        ),
    )
    async with AnthropicChatClient(MODEL, api_key=KEY) as client:
        result = await ChatAgent(client).run("Weather in Paris?", response_format=Weather)
    assert result.value == Weather(location="Paris", temperature_c=21)


# --- errors ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "body", "error"),
    [
        (
            400,
            error_body(
                "invalid_request_error",
                'messages: roles must alternate between "user" and "assistant"',
            ),
            InvalidRequestError,
        ),
        (
            400,
            error_body(
                "invalid_request_error", "prompt is too long: 208656 tokens > 200000 maximum"
            ),
            ContextLengthError,
        ),
        (401, error_body("authentication_error", "invalid x-api-key"), AuthenticationError),
        (
            403,
            error_body(
                "permission_error",
                "Your API key does not have permission to use the specified resource.",
            ),
            PermissionDeniedError,
        ),
        (404, error_body("not_found_error", "model: claude-9"), InvalidRequestError),
        (
            413,
            error_body("request_too_large", "Request exceeds the maximum allowed number of bytes."),
            ContextLengthError,
        ),
    ],
)
async def test_client_errors_are_not_retried_and_carry_the_providers_message(
    status: int,
    body: Any,
    error: type[LLMError],
    claude: AnthropicChatClient,
    respx_mock: respx.MockRouter,
    backoff_waits: list[float],
) -> None:
    caught = await client_error_not_retried(
        claude, respx_mock.post(URL), HELLO, status, body, error, backoff_waits
    )
    assert caught.provider == "anthropic"
    assert body["error"]["message"] in str(caught)
    assert "anthropic (https://api.anthropic.com)" in str(caught)


async def test_401_names_the_key_variable(
    claude: AnthropicChatClient, respx_mock: respx.MockRouter
) -> None:
    respx_mock.post(URL).respond(401, json=error_body("authentication_error", "invalid x-api-key"))
    with pytest.raises(AuthenticationError, match="ANTHROPIC_API_KEY"):
        await claude.generate(HELLO)


async def test_429_is_retried_after_retry_after(
    claude: AnthropicChatClient, respx_mock: respx.MockRouter, backoff_waits: list[float]
) -> None:
    limited = httpx.Response(
        429,
        headers={"retry-after": "2"},
        json=error_body(
            "rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit"
        ),
    )
    response = await generate_after_failures(
        claude, respx_mock.post(URL), HELLO, [limited], httpx.Response(200, json=message())
    )
    assert response.text.startswith("Hi!")
    assert backoff_waits == [2.0]


async def test_429_after_the_retries_is_a_rate_limit_error(
    claude: AnthropicChatClient, respx_mock: respx.MockRouter, backoff_waits: list[float]
) -> None:
    route = respx_mock.post(URL)
    body = error_body("rate_limit_error", "Rate limited")
    caught = await rate_limited_after_the_retries(claude, route, HELLO, retry_after="34", body=body)
    assert route.call_count == 4  # the first try and max_retries=3 retries
    assert backoff_waits == [30.0, 30.0, 30.0]  # Retry-After, capped at the 30 s maximum wait
    assert caught.retry_after_s == 34.0
    assert "Rate limited" in str(caught)


async def test_529_overloaded_is_retried(
    claude: AnthropicChatClient, respx_mock: respx.MockRouter, backoff_waits: list[float]
) -> None:
    overloaded = httpx.Response(529, json=error_body("overloaded_error", "Overloaded"))
    response = await generate_after_failures(
        claude,
        respx_mock.post(URL),
        HELLO,
        [overloaded, overloaded],
        httpx.Response(200, json=message()),
    )
    assert response.text
    assert len(backoff_waits) == 2


@pytest.mark.parametrize(
    ("status", "kind", "text"),
    [
        (529, "overloaded_error", "Overloaded"),
        (500, "api_error", "Internal server error"),
        (504, "timeout_error", "Request timeout"),
    ],
)
async def test_server_errors_after_the_retries_are_provider_errors(
    status: int,
    kind: str,
    text: str,
    claude: AnthropicChatClient,
    respx_mock: respx.MockRouter,
    backoff_waits: list[float],
) -> None:
    route = respx_mock.post(URL).respond(status, json=error_body(kind, text))
    with pytest.raises(ProviderError) as caught:
        await claude.generate(HELLO)
    assert type(caught.value) is ProviderError
    assert caught.value.status == status
    assert text in str(caught.value)
    assert route.call_count == 4
    assert len(backoff_waits) == 3


async def test_read_timeout_is_an_llm_timeout_error(
    claude: AnthropicChatClient, respx_mock: respx.MockRouter
) -> None:
    await assert_read_timeout_is_not_retried(claude, respx_mock.post(URL), HELLO, timeout_s=60)


async def test_a_body_that_is_not_json(
    claude: AnthropicChatClient, respx_mock: respx.MockRouter
) -> None:
    await assert_a_body_that_is_not_json(
        claude, respx_mock.post(URL), HELLO, text="<html>gateway</html>"
    )


async def test_a_json_body_that_is_not_a_message(
    claude: AnthropicChatClient, respx_mock: respx.MockRouter
) -> None:
    respx_mock.post(URL).respond(200, json={"completion": "Hi", "stop_reason": "stop_sequence"})
    with pytest.raises(ProviderError, match="not a message"):
        await claude.generate(HELLO)


# --- streaming ---------------------------------------------------------------------------------


async def test_streamed_text_with_usage(
    claude: AnthropicChatClient, respx_mock: respx.MockRouter
) -> None:
    route = respx_mock.post(URL).mock(return_value=sse_response(text_stream("Hello", "!"), piece=7))
    updates = await collect(claude.generate_stream(HELLO))
    assert [u.text for u in updates if u.text] == ["Hello", "!"]
    response = ChatResponse.from_updates(updates)
    assert response.text == "Hello!"
    assert response.finish_reason is FinishReason.STOP
    assert response.usage == UsageDetails(input_tokens=25, output_tokens=15, total_tokens=40)
    assert response.model == MODEL
    assert sent(route)["stream"] is True


@pytest.mark.parametrize(("raw", "expected"), STOP_REASONS)
async def test_each_streamed_stop_reason(
    raw: str, expected: FinishReason, claude: AnthropicChatClient, respx_mock: respx.MockRouter
) -> None:
    respx_mock.post(URL).mock(return_value=sse_response(text_stream("x", stop_reason=raw)))
    updates = await collect(claude.generate_stream(HELLO))
    assert ChatResponse.from_updates(updates).finish_reason is expected


async def test_streamed_tool_calls_with_fragmented_input_json(
    claude: AnthropicChatClient, respx_mock: respx.MockRouter
) -> None:
    body = sse(
        message_start(472),
        text_start(0),
        text_delta(0, "Okay, let's check both:"),
        block_stop(0),
        tool_start(1, "toolu_01T1x1fJ34qAmk2tNTrN7Up6"),
        json_delta(1, ""),
        json_delta(1, '{"location":'),
        json_delta(1, ' "San'),
        PING,
        json_delta(1, " Francisc"),
        json_delta(1, 'o, CA"'),
        json_delta(1, ', "unit": "fah'),
        json_delta(1, 'renheit"}'),
        block_stop(1),
        tool_start(2, "toolu_01A09q90qw90lq917835lq9"),
        json_delta(2, '{"loc'),
        json_delta(2, 'ation": "Paris"}'),
        block_stop(2),
        message_delta("tool_use", 89),
    )
    respx_mock.post(URL).mock(return_value=sse_response(body, piece=13))
    updates = await collect(claude.generate_stream(HELLO, ChatOptions(tools=[get_weather])))
    deltas = [d for u in updates for d in u.tool_call_deltas]
    assert {d.index for d in deltas} == {1, 2}
    response = ChatResponse.from_updates(updates)
    assert response.finish_reason is FinishReason.TOOL_CALLS
    assert response.text == "Okay, let's check both:"
    assert response.message.function_calls == [
        FunctionCallContent(
            call_id="toolu_01T1x1fJ34qAmk2tNTrN7Up6",
            name="get_weather",
            arguments={"location": "San Francisco, CA", "unit": "fahrenheit"},
        ),
        FunctionCallContent(
            call_id="toolu_01A09q90qw90lq917835lq9",
            name="get_weather",
            arguments={"location": "Paris"},
        ),
    ]
    assert response.usage == UsageDetails(input_tokens=472, output_tokens=89, total_tokens=561)


async def test_streamed_structured_output(
    claude: AnthropicChatClient, respx_mock: respx.MockRouter
) -> None:
    body = sse(
        message_start(),
        tool_start(0, "toolu_01Q", "structured_response"),
        json_delta(0, '{"location": "Pa'),
        json_delta(0, 'ris", "temperature_c": 21}'),
        block_stop(0),
        message_delta("tool_use", 20),
    )
    respx_mock.post(URL).mock(return_value=sse_response(body))
    updates = await collect(claude.generate_stream(HELLO, ChatOptions(response_format=Weather)))
    response = ChatResponse.from_updates(updates)
    assert Weather.model_validate_json(response.text) == Weather(location="Paris", temperature_c=21)
    assert response.finish_reason is FinishReason.STOP


async def test_a_stream_cut_off_before_message_stop_is_a_provider_error(
    claude: AnthropicChatClient, respx_mock: respx.MockRouter
) -> None:
    body = sse(
        message_start(), text_start(0), text_delta(0, "Hello"), text_delta(0, " wor"), stop=False
    )
    respx_mock.post(URL).mock(return_value=sse_response(body))
    received = await updates_before_the_error(
        claude, HELLO, match=r"without the terminal message_stop event.*incomplete"
    )
    assert [u.text for u in received] == ["Hello", " wor"]


async def test_a_stream_cut_off_after_message_delta_is_a_provider_error(
    claude: AnthropicChatClient, respx_mock: respx.MockRouter
) -> None:
    body = sse(
        message_start(),
        text_start(0),
        text_delta(0, "Hi"),
        block_stop(0),
        message_delta(),
        stop=False,
    )
    respx_mock.post(URL).mock(return_value=sse_response(body))
    with pytest.raises(ProviderError, match="after 5 event"):
        await collect(claude.generate_stream(HELLO))


async def test_an_empty_stream_is_a_provider_error(
    claude: AnthropicChatClient, respx_mock: respx.MockRouter
) -> None:
    await assert_an_empty_stream_is_a_provider_error(
        claude, respx_mock.post(URL), HELLO, sse_response(b"")
    )


async def test_a_dropped_connection_mid_stream_is_a_provider_error(
    claude: AnthropicChatClient, respx_mock: respx.MockRouter
) -> None:
    first = sse(message_start(), text_start(0), text_delta(0, "Hel"), stop=False)
    await assert_a_dropped_connection_is_a_provider_error(
        claude, respx_mock.post(URL), HELLO, first
    )


async def test_a_garbage_event_is_a_provider_error(
    claude: AnthropicChatClient, respx_mock: respx.MockRouter
) -> None:
    body = sse(
        message_start(),
        text_start(0),
        '{"type": "content_block_delta", "index": 0, "delta": {"ty',
        stop=False,
    )
    await assert_a_garbage_event_is_a_provider_error(
        claude, respx_mock.post(URL), HELLO, sse_response(body)
    )


async def test_an_event_that_is_not_an_object_is_a_provider_error(
    claude: AnthropicChatClient, respx_mock: respx.MockRouter
) -> None:
    respx_mock.post(URL).mock(return_value=sse_response(sse(message_start(), "[1, 2]")))
    with pytest.raises(ProviderError, match="not a JSON object"):
        await collect(claude.generate_stream(HELLO))


async def test_an_overloaded_error_event_is_a_provider_error_with_status_529(
    claude: AnthropicChatClient, respx_mock: respx.MockRouter
) -> None:
    body = sse(
        message_start(),
        text_start(0),
        text_delta(0, "Hi"),
        {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
        stop=False,
    )
    respx_mock.post(URL).mock(return_value=sse_response(body))
    with pytest.raises(
        ProviderError, match=r"mid-stream \(overloaded_error\): Overloaded"
    ) as caught:
        await collect(claude.generate_stream(HELLO))
    assert type(caught.value) is ProviderError
    assert caught.value.status == 529


async def test_a_rate_limit_error_event_is_a_rate_limit_error(
    claude: AnthropicChatClient, respx_mock: respx.MockRouter
) -> None:
    body = sse(
        message_start(),
        {"type": "error", "error": {"type": "rate_limit_error", "message": "Rate limited"}},
        stop=False,
    )
    respx_mock.post(URL).mock(return_value=sse_response(body))
    with pytest.raises(RateLimitError, match="Rate limited") as caught:
        await collect(claude.generate_stream(HELLO))
    assert caught.value.status == 429


async def test_stream_errors_before_the_body_are_retried(
    claude: AnthropicChatClient, respx_mock: respx.MockRouter, backoff_waits: list[float]
) -> None:
    overloaded = httpx.Response(529, json=error_body("overloaded_error", "Overloaded"))
    text = await streamed_text_after_failures(
        claude, respx_mock.post(URL), HELLO, [overloaded], sse_response(text_stream("ok"))
    )
    assert text == "ok"
    assert len(backoff_waits) == 1


async def test_stream_auth_error(claude: AnthropicChatClient, respx_mock: respx.MockRouter) -> None:
    respx_mock.post(URL).respond(401, json=error_body("authentication_error", "invalid x-api-key"))
    with pytest.raises(AuthenticationError, match="invalid x-api-key"):
        await collect(claude.generate_stream(HELLO))


async def test_leaving_a_stream_early_closes_the_response(
    claude: AnthropicChatClient, respx_mock: respx.MockRouter
) -> None:
    first = sse(message_start(), text_start(0), text_delta(0, "one"), stop=False)
    await assert_leaving_a_stream_early_closes_it(
        claude, respx_mock.post(URL), HELLO, first, first_text="one"
    )


async def test_cancelling_a_streaming_task_closes_the_response(
    claude: AnthropicChatClient, respx_mock: respx.MockRouter
) -> None:
    first = sse(message_start(), text_start(0), text_delta(0, "one"), stop=False)
    await assert_cancelling_a_streaming_task_closes_it(claude, respx_mock.post(URL), HELLO, first)


# --- health check, configuration -----------------------------------------------------------------


async def test_health_check_lists_models(
    claude: AnthropicChatClient, respx_mock: respx.MockRouter
) -> None:
    route = respx_mock.get(MODELS_URL).respond(
        200,
        json={
            "data": [
                {
                    "type": "model",
                    "id": "claude-sonnet-4-20250514",
                    "display_name": "Claude Sonnet 4",
                    "created_at": "2025-05-22T00:00:00Z",
                }
            ],
            "has_more": True,
            "first_id": "claude-sonnet-4-20250514",
            "last_id": "claude-sonnet-4-20250514",
        },
    )
    assert await claude.health_check() is True
    request = route.calls[0].request
    assert request.url.params["limit"] == "1"
    assert request.headers["x-api-key"] == KEY
    assert request.headers["anthropic-version"] == "2023-06-01"


async def test_health_check_failure_is_false_with_a_logged_reason(
    claude: AnthropicChatClient, respx_mock: respx.MockRouter
) -> None:
    route = respx_mock.get(MODELS_URL).respond(
        529, json=error_body("overloaded_error", "Overloaded")
    )
    assert "Overloaded" in await health_check_failure_reason(claude, route)


def test_missing_key_names_the_variable() -> None:
    with pytest.raises(AuthenticationError, match="ANTHROPIC_API_KEY"):
        AnthropicChatClient(MODEL)


async def test_key_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, respx_mock: respx.MockRouter
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-from-env")
    route = respx_mock.post(URL).respond(200, json=message())
    async with AnthropicChatClient(MODEL) as client:
        await client.generate(HELLO)
    assert route.calls[0].request.headers["x-api-key"] == "sk-ant-from-env"


async def test_a_gateway_base_url_gets_no_environment_key(
    monkeypatch: pytest.MonkeyPatch, respx_mock: respx.MockRouter
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-from-env")
    route = respx_mock.post("http://localhost:4000/v1/messages").respond(200, json=message())
    async with AnthropicChatClient(MODEL, base_url="http://localhost:4000/") as client:
        await client.generate(HELLO)
    assert "x-api-key" not in route.calls[0].request.headers


def test_invalid_max_tokens() -> None:
    with pytest.raises(ValueError, match="max_tokens"):
        AnthropicChatClient(MODEL, api_key=KEY, max_tokens=0)


def test_repr_shows_model_and_base_url() -> None:
    client = AnthropicChatClient(MODEL, api_key=KEY)
    assert (
        repr(client)
        == f"AnthropicChatClient(model='{MODEL}', base_url='https://api.anthropic.com')"
    )
    assert client.provider == "anthropic"
    assert client.max_tokens == 4096


# --- secrets -----------------------------------------------------------------------------------


def _echo_key_error(status: int) -> httpx.Response:
    """A server that (wrongly) echoes the whole key back in its error message."""
    return httpx.Response(
        status, json=error_body("authentication_error", f"invalid x-api-key: {KEY}")
    )


async def test_client_str_repr_and_default_headers_hide_the_key() -> None:
    client = AnthropicChatClient(MODEL, api_key=KEY)
    pool = await client._http._client()  # this loop's pool
    shown = [*shown_by(client), repr(pool.headers)]
    assert all("SUPERSECRET" not in text for text in shown)
    with pytest.raises(TypeError):
        pickle.dumps(client)


@pytest.mark.parametrize("status", [400, 401, 403, 404, 413, 429, 500, 529])
async def test_errors_and_logs_never_contain_the_key(
    status: int, respx_mock: respx.MockRouter
) -> None:
    respx_mock.post(URL).mock(return_value=_echo_key_error(status))
    async with AnthropicChatClient(MODEL, api_key=KEY, max_retries=1) as client:
        await assert_errors_and_logs_hide_the_key(
            client, HELLO, masked="invalid x-api-key: **********"
        )


async def test_stream_error_events_never_contain_the_key(respx_mock: respx.MockRouter) -> None:
    body = sse(
        message_start(),
        {"type": "error", "error": {"type": "api_error", "message": f"bad key {KEY}"}},
        stop=False,
    )
    respx_mock.post(URL).mock(return_value=sse_response(body))
    async with AnthropicChatClient(MODEL, api_key=KEY) as client:
        await assert_a_stream_error_hides_the_key(client, HELLO)


async def test_malformed_stream_events_never_show_the_key(respx_mock: respx.MockRouter) -> None:
    for raw in (f'{{"broken": "{KEY}"', f'["{KEY}"]'):
        respx_mock.post(URL).mock(return_value=sse_response(sse(raw, stop=False)))
        async with AnthropicChatClient(MODEL, api_key=KEY) as client:
            with pytest.raises(LLMError) as caught:
                await collect(client.generate_stream(HELLO))
        assert "SUPERSECRET" not in str(caught.value)
        assert "SUPERSECRET" not in caught.value.body


async def test_health_check_logs_never_contain_the_key(respx_mock: respx.MockRouter) -> None:
    respx_mock.get(MODELS_URL).mock(return_value=_echo_key_error(401))
    async with AnthropicChatClient(MODEL, api_key=KEY) as client:
        await assert_health_check_logs_hide_the_key(client)


# --- a ChatAgent tool loop against the mocked endpoint -------------------------------------------

CALL_ID = "toolu_01A09q90qw90lq917835lq9"


def _assert_second_request_carries_the_tool_result(route: respx.Route) -> None:
    first, second = sent(route, 0), sent(route, 1)
    assert first["system"] == second["system"] == "You answer weather questions."
    assert first["tools"][0]["name"] == "get_weather"
    assert second["messages"][:2] == [
        {"role": "user", "content": "What is the weather in Paris?"},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "I'll look that up."},
                {
                    "type": "tool_use",
                    "id": CALL_ID,
                    "name": "get_weather",
                    "input": {"location": "Paris"},
                },
            ],
        },
    ]
    assert second["messages"][2] == {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": CALL_ID, "content": "Sunny, 21 °C in Paris"}
        ],
    }
    assert len(second["messages"]) == 3


async def test_agent_tool_loop_against_anthropic(respx_mock: respx.MockRouter) -> None:
    tool_reply = message(
        [
            {"type": "text", "text": "I'll look that up."},
            tool_use(CALL_ID, "get_weather", {"location": "Paris"}),
        ],
        "tool_use",
        input_tokens=50,
        output_tokens=10,
    )
    text_reply = message(
        [{"type": "text", "text": "It is sunny and 21 °C in Paris."}],
        input_tokens=80,
        output_tokens=10,
    )
    route = respx_mock.post(URL).mock(
        side_effect=[httpx.Response(200, json=tool_reply), httpx.Response(200, json=text_reply)]
    )
    async with AnthropicChatClient(MODEL, api_key=KEY) as client:
        agent = ChatAgent(client, "You answer weather questions.", tools=[get_weather])
        response = await agent.run("What is the weather in Paris?")
    assert response.text == "It is sunny and 21 °C in Paris."
    assert response.usage.total_tokens == 60 + 90
    assert route.call_count == 2
    _assert_second_request_carries_the_tool_result(route)


async def test_streaming_agent_tool_loop_against_anthropic(respx_mock: respx.MockRouter) -> None:
    tool_call_stream = sse(
        message_start(50),
        text_start(0),
        text_delta(0, "I'll look that up."),
        block_stop(0),
        tool_start(1, CALL_ID),
        json_delta(1, '{"location": '),
        json_delta(1, '"Paris"}'),
        block_stop(1),
        message_delta("tool_use", 10),
    )
    route = respx_mock.post(URL).mock(
        side_effect=[
            sse_response(tool_call_stream),
            sse_response(text_stream("It is sunny ", "and 21 °C in Paris.")),
        ]
    )
    async with AnthropicChatClient(MODEL, api_key=KEY) as client:
        agent = ChatAgent(client, "You answer weather questions.", tools=[get_weather])
        texts = [u.text async for u in agent.run_stream("What is the weather in Paris?")]
    assert "".join(texts) == "I'll look that up.It is sunny and 21 °C in Paris."
    _assert_second_request_carries_the_tool_result(route)
