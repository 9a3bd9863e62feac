"""OpenAIChatClient against a respx-mocked Chat Completions endpoint.

Payloads follow the API reference: the ``chat.completion`` object, ``chat.completion.chunk``
events of a stream ending in ``data: [DONE]``, and ``{"error": {...}}`` error bodies.
"""

from __future__ import annotations

import json
import socket
from typing import Any

import httpx
import pytest
import respx
import structlog
import structlog.testing

from agentic_core import (
    ChatMessage,
    ChatOptions,
    ChatResponse,
    FinishReason,
    FunctionCallContent,
    UsageDetails,
    tool,
)
from agentic_llm import (
    AuthenticationError,
    ContextLengthError,
    InvalidRequestError,
    LLMConnectionError,
    LLMError,
    LLMTimeoutError,
    OpenAIChatClient,
    PermissionDeniedError,
    ProviderError,
    RateLimitError,
)
from tests.fixtures.llm_http import (
    assert_a_body_that_is_not_json,
    assert_a_dropped_connection_is_a_provider_error,
    assert_a_garbage_event_is_a_provider_error,
    assert_a_stalled_stream_is_a_timeout,
    assert_cancelling_a_streaming_task_closes_it,
    assert_leaving_a_stream_early_closes_it,
    assert_read_timeout_is_not_retried,
    client_error_not_retried,
    collect,
    generate_after_failures,
    health_check_failure_reason,
    rate_limited_after_the_retries,
    sent,
    sse_response,
    streamed_text_after_failures,
    updates_before_the_error,
)

URL = "https://api.openai.com/v1/chat/completions"
HELLO = [ChatMessage.user("Hello!")]


@tool
def get_current_weather(location: str, unit: str = "celsius") -> str:
    """Get the current weather in a given location."""
    return f"21 {unit} in {location}"


# --- payloads (shapes from the API reference) ---------------------------------------------------


def completion(
    content: str | None = "Hello! How can I assist you today?",
    *,
    tool_calls: list[dict[str, Any]] | None = None,
    finish_reason: str = "stop",
) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content, "refusal": None}
    if tool_calls:
        message["tool_calls"] = tool_calls
    return {
        "id": "chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT",
        "object": "chat.completion",
        "created": 1741569952,
        "model": "gpt-4o-mini-2024-07-18",
        "choices": [
            {"index": 0, "message": message, "logprobs": None, "finish_reason": finish_reason}
        ],
        "usage": {"prompt_tokens": 19, "completion_tokens": 10, "total_tokens": 29},
        "service_tier": "default",
        "system_fingerprint": "fp_44709d6fcb",
    }


def call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-123",
        "object": "chat.completion.chunk",
        "created": 1694268190,
        "model": "gpt-4o-mini",
        "system_fingerprint": "fp_44709d6fcb",
        "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}],
        "usage": None,
    }


def usage_chunk(prompt: int = 9, completion_tokens: int = 12) -> dict[str, Any]:
    return {
        **chunk({}),
        "choices": [],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt + completion_tokens,
        },
    }


def sse(*events: dict[str, Any] | str, done: bool = True) -> bytes:
    lines = [f"data: {e if isinstance(e, str) else json.dumps(e)}\n\n" for e in events]
    if done:
        lines.append("data: [DONE]\n\n")
    return "".join(lines).encode()


def error_body(message: str, code: str | None = None, kind: str = "invalid_request_error") -> Any:
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


# --- generate ----------------------------------------------------------------------------------


async def test_plain_reply(openai: OpenAIChatClient, respx_mock: respx.MockRouter) -> None:
    route = respx_mock.post(URL).respond(200, json=completion())
    response = await openai.generate(HELLO)
    assert response.text == "Hello! How can I assist you today?"
    assert response.finish_reason is FinishReason.STOP
    assert response.usage == UsageDetails(input_tokens=19, output_tokens=10, total_tokens=29)
    assert response.model == "gpt-4o-mini-2024-07-18"
    assert sent(route) == {
        "model": "gpt-4o-mini",
        "messages": [{"role": "user", "content": "Hello!"}],
    }


async def test_request_headers(openai: OpenAIChatClient, respx_mock: respx.MockRouter) -> None:
    route = respx_mock.post(URL).respond(200, json=completion())
    await openai.generate(HELLO)
    headers = route.calls[0].request.headers
    assert headers["authorization"] == "Bearer sk-test-0123456789abcdefSECRET"
    assert headers["content-type"] == "application/json"


async def test_organization_header(respx_mock: respx.MockRouter) -> None:
    route = respx_mock.post(URL).respond(200, json=completion())
    async with OpenAIChatClient("gpt-4o-mini", api_key="sk-1", organization="org-abc") as client:
        await client.generate(HELLO)
    assert route.calls[0].request.headers["openai-organization"] == "org-abc"


async def test_multi_tool_call_reply(
    openai: OpenAIChatClient, respx_mock: respx.MockRouter
) -> None:
    respx_mock.post(URL).respond(
        200,
        json=completion(
            None,
            tool_calls=[
                call("call_abc123", "get_current_weather", '{\n"location": "Boston, MA"\n}'),
                call(
                    "call_def456", "get_current_weather", '{"location": "Paris", "unit": "celsius"}'
                ),
            ],
            finish_reason="tool_calls",
        ),
    )
    response = await openai.generate(HELLO, ChatOptions(tools=[get_current_weather]))
    assert response.finish_reason is FinishReason.TOOL_CALLS
    assert response.message.function_calls == [
        FunctionCallContent(
            call_id="call_abc123", name="get_current_weather", arguments={"location": "Boston, MA"}
        ),
        FunctionCallContent(
            call_id="call_def456",
            name="get_current_weather",
            arguments={"location": "Paris", "unit": "celsius"},
        ),
    ]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("stop", FinishReason.STOP),
        ("length", FinishReason.LENGTH),
        ("content_filter", FinishReason.CONTENT_FILTER),
        ("tool_calls", FinishReason.TOOL_CALLS),
        ("function_call", FinishReason.TOOL_CALLS),
    ],
)
async def test_each_finish_reason(
    raw: str, expected: FinishReason, openai: OpenAIChatClient, respx_mock: respx.MockRouter
) -> None:
    respx_mock.post(URL).respond(200, json=completion("partial", finish_reason=raw))
    assert (await openai.generate(HELLO)).finish_reason is expected


async def test_options_reach_the_wire(
    openai: OpenAIChatClient, respx_mock: respx.MockRouter
) -> None:
    route = respx_mock.post(URL).respond(200, json=completion())
    options = ChatOptions(
        temperature=0.0,
        max_tokens=32,
        stop=["END"],
        seed=1,
        tools=[get_current_weather],
        tool_choice="get_current_weather",
    )
    await openai.generate(HELLO, options)
    body = sent(route)
    assert body["max_completion_tokens"] == 32
    assert (body["temperature"], body["stop"], body["seed"]) == (0.0, ["END"], 1)
    assert body["tool_choice"] == {"type": "function", "function": {"name": "get_current_weather"}}


async def test_compatible_server_gets_max_tokens_and_no_key(respx_mock: respx.MockRouter) -> None:
    route = respx_mock.post("http://127.0.0.1:8080/v1/chat/completions").respond(
        200, json=completion()
    )
    async with OpenAIChatClient("smollm2", base_url="http://127.0.0.1:8080/v1/") as client:
        await client.generate(HELLO, ChatOptions(max_tokens=16))
    assert sent(route)["max_tokens"] == 16
    assert "authorization" not in route.calls[0].request.headers


async def test_structured_output_is_parsed_into_value(
    openai: OpenAIChatClient, respx_mock: respx.MockRouter
) -> None:
    from pydantic import BaseModel

    class Weather(BaseModel):
        location: str
        temperature_c: float

    route = respx_mock.post(URL).respond(
        200, json=completion('{"location":"Paris","temperature_c":21}')
    )
    response = await openai.generate(HELLO, ChatOptions(response_format=Weather))
    assert response.value == Weather(location="Paris", temperature_c=21)
    assert sent(route)["response_format"]["type"] == "json_schema"


# --- errors ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "body", "error"),
    [
        (
            400,
            error_body("Invalid value for 'temperature': must be at most 2."),
            InvalidRequestError,
        ),
        (
            400,
            error_body(
                "This model's maximum context length is 128000 tokens. "
                "However, your messages resulted in 130000 tokens.",
                "context_length_exceeded",
            ),
            ContextLengthError,
        ),
        (
            401,
            error_body(
                "Incorrect API key provided: sk-test-***RET. You can find your API key at https://platform.openai.com/account/api-keys.",
                "invalid_api_key",
            ),
            AuthenticationError,
        ),
        (
            403,
            error_body(
                "Country, region, or territory not supported",
                "unsupported_country_region_territory",
                "request_forbidden",
            ),
            PermissionDeniedError,
        ),
        (
            404,
            error_body(
                "The model `gpt-9` does not exist or you do not have access to it.",
                "model_not_found",
            ),
            InvalidRequestError,
        ),
        (413, error_body("Request too large"), ContextLengthError),
    ],
)
async def test_client_errors_are_not_retried_and_carry_the_providers_message(
    status: int,
    body: Any,
    error: type[LLMError],
    openai: OpenAIChatClient,
    respx_mock: respx.MockRouter,
    backoff_waits: list[float],
) -> None:
    caught = await client_error_not_retried(
        openai, respx_mock.post(URL), HELLO, status, body, error, backoff_waits
    )
    assert body["error"]["message"] in str(caught)
    assert "openai (https://api.openai.com/v1)" in str(caught)


async def test_429_is_retried_after_retry_after(
    openai: OpenAIChatClient, respx_mock: respx.MockRouter, backoff_waits: list[float]
) -> None:
    limited = httpx.Response(
        429,
        headers={"retry-after": "2"},
        json=error_body("Rate limit reached for gpt-4o-mini", "rate_limit_exceeded", "requests"),
    )
    response = await generate_after_failures(
        openai, respx_mock.post(URL), HELLO, [limited], httpx.Response(200, json=completion())
    )
    assert response.text.startswith("Hello")
    assert backoff_waits == [2.0]


async def test_429_after_the_retries_is_a_rate_limit_error(
    openai: OpenAIChatClient, respx_mock: respx.MockRouter, backoff_waits: list[float]
) -> None:
    route = respx_mock.post(URL)
    body = error_body("Rate limit reached", "rate_limit_exceeded")
    caught = await rate_limited_after_the_retries(openai, route, HELLO, retry_after="7", body=body)
    assert route.call_count == 4  # the first try and max_retries=3 retries
    assert backoff_waits == [7.0, 7.0, 7.0]
    assert caught.retry_after_s == 7.0
    assert "Rate limit reached" in str(caught)


async def test_exhausted_quota_is_not_retried(
    openai: OpenAIChatClient, respx_mock: respx.MockRouter
) -> None:
    route = respx_mock.post(URL).respond(
        429,
        json=error_body(
            "You exceeded your current quota, please check your plan and billing details.",
            "insufficient_quota",
            "insufficient_quota",
        ),
    )
    with pytest.raises(RateLimitError, match="quota is exhausted"):
        await openai.generate(HELLO)
    assert route.call_count == 1


@pytest.mark.parametrize("status", [500, 502, 503])
async def test_server_errors_are_retried_then_succeed(
    status: int, openai: OpenAIChatClient, respx_mock: respx.MockRouter, backoff_waits: list[float]
) -> None:
    failure = httpx.Response(
        status,
        json=error_body(
            "The server had an error while processing your request.", None, "server_error"
        ),
    )
    response = await generate_after_failures(
        openai,
        respx_mock.post(URL),
        HELLO,
        [failure, failure],
        httpx.Response(200, json=completion()),
    )
    assert response.text.startswith("Hello")
    assert len(backoff_waits) == 2
    assert 0.0 <= backoff_waits[0] <= 0.5  # full jitter under 0.5 s, then under 1 s
    assert 0.0 <= backoff_waits[1] <= 1.0


async def test_server_errors_after_the_retries_are_a_provider_error(
    respx_mock: respx.MockRouter, backoff_waits: list[float]
) -> None:
    route = respx_mock.post(URL).respond(
        503, text="The engine is currently overloaded, please try again later"
    )
    async with OpenAIChatClient("gpt-4o-mini", api_key="sk-1", max_retries=1) as client:
        with pytest.raises(
            ProviderError, match="HTTP 503 Service Unavailable: The engine is currently overloaded"
        ):
            await client.generate(HELLO)
    assert route.call_count == 2
    assert len(backoff_waits) == 1


async def test_retry_after_on_503_is_honoured(
    openai: OpenAIChatClient, respx_mock: respx.MockRouter, backoff_waits: list[float]
) -> None:
    busy = httpx.Response(
        503, headers={"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, text="busy"
    )
    respx_mock.post(URL).mock(side_effect=[busy, httpx.Response(200, json=completion())])
    await openai.generate(HELLO)
    assert backoff_waits == [0.0]  # a date in the past: retry at once


async def test_no_retries_when_max_retries_is_zero(respx_mock: respx.MockRouter) -> None:
    route = respx_mock.post(URL).respond(500, json=error_body("boom", None, "server_error"))
    async with OpenAIChatClient("gpt-4o-mini", api_key="sk-1", max_retries=0) as client:
        with pytest.raises(ProviderError):
            await client.generate(HELLO)
    assert route.call_count == 1


async def test_read_timeout_is_an_llm_timeout_error_and_not_retried(
    openai: OpenAIChatClient, respx_mock: respx.MockRouter
) -> None:
    await assert_read_timeout_is_not_retried(openai, respx_mock.post(URL), HELLO, timeout_s=60)


async def test_connect_timeout_is_retried_then_an_llm_timeout_error(
    openai: OpenAIChatClient, respx_mock: respx.MockRouter, backoff_waits: list[float]
) -> None:
    route = respx_mock.post(URL).mock(side_effect=httpx.ConnectTimeout("timed out"))
    with pytest.raises(LLMTimeoutError, match="connecting"):
        await openai.generate(HELLO)
    assert route.call_count == 4
    assert len(backoff_waits) == 3


async def test_connect_error_is_retried_then_succeeds(
    openai: OpenAIChatClient, respx_mock: respx.MockRouter
) -> None:
    response = await generate_after_failures(
        openai,
        respx_mock.post(URL),
        HELLO,
        [httpx.ConnectError("Connection refused")],
        httpx.Response(200, json=completion()),
    )
    assert response.text


@pytest.mark.parametrize(
    "dropped",
    [httpx.ReadError("[Errno 104] Connection reset by peer"), httpx.WriteError("broken pipe")],
)
async def test_a_kept_alive_connection_the_server_dropped_is_retried(
    dropped: httpx.TransportError, openai: OpenAIChatClient, respx_mock: respx.MockRouter
) -> None:
    response = await generate_after_failures(
        openai, respx_mock.post(URL), HELLO, [dropped], httpx.Response(200, json=completion())
    )
    assert response.text


async def test_connect_error_after_the_retries(respx_mock: respx.MockRouter) -> None:
    respx_mock.post(URL).mock(side_effect=httpx.ConnectError("Connection refused"))
    async with OpenAIChatClient("gpt-4o-mini", api_key="sk-1", max_retries=1) as client:
        with pytest.raises(LLMConnectionError, match=r"cannot reach openai .*Connection refused"):
            await client.generate(HELLO)


async def test_a_real_server_that_never_answers_times_out() -> None:
    # No mock here: a loopback socket that accepts and then says nothing, so the httpx timeout
    # configuration itself is exercised.
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        async with OpenAIChatClient(
            "m", base_url=f"http://127.0.0.1:{port}/v1", timeout_s=0.2
        ) as client:
            with pytest.raises(LLMTimeoutError, match=r"timed out after 0\.2 s"):
                await client.generate(HELLO)


async def test_a_body_that_is_not_json(
    openai: OpenAIChatClient, respx_mock: respx.MockRouter
) -> None:
    await assert_a_body_that_is_not_json(
        openai, respx_mock.post(URL), HELLO, text="<html>proxy login</html>"
    )


async def test_a_closed_client_says_so(respx_mock: respx.MockRouter) -> None:
    client = OpenAIChatClient("gpt-4o-mini", api_key="sk-1")
    await client.aclose()
    with pytest.raises(LLMError, match="closed"):
        await client.generate(HELLO)


# --- streaming ---------------------------------------------------------------------------------


async def test_streamed_text_with_usage(
    openai: OpenAIChatClient, respx_mock: respx.MockRouter
) -> None:
    body = sse(
        chunk({"role": "assistant", "content": ""}),
        chunk({"content": "Hello"}),
        chunk({"content": " there!"}),
        chunk({}, "stop"),
        usage_chunk(9, 12),
    )
    route = respx_mock.post(URL).mock(return_value=sse_response(body, piece=7))
    updates = await collect(openai.generate_stream(HELLO))
    assert "".join(u.text for u in updates) == "Hello there!"
    response = ChatResponse.from_updates(updates)
    assert response.text == "Hello there!"
    assert response.finish_reason is FinishReason.STOP
    assert response.usage == UsageDetails(input_tokens=9, output_tokens=12, total_tokens=21)
    assert sent(route)["stream"] is True
    assert sent(route)["stream_options"] == {"include_usage": True}


async def test_streamed_tool_calls_with_fragmented_arguments(
    openai: OpenAIChatClient, respx_mock: respx.MockRouter
) -> None:
    def fragment(index: int, arguments: str) -> dict[str, Any]:
        return chunk(
            {
                "tool_calls": [
                    {
                        "index": index,
                        "id": None,
                        "type": None,
                        "function": {"name": None, "arguments": arguments},
                    }
                ]
            }
        )

    def start(index: int, call_id: str) -> dict[str, Any]:
        return chunk(
            {
                "tool_calls": [
                    {
                        "index": index,
                        "id": call_id,
                        "type": "function",
                        "function": {"name": "get_current_weather", "arguments": ""},
                    }
                ]
            }
        )

    body = sse(
        chunk({"role": "assistant", "content": None}),
        start(0, "call_TMbEoYn9q0ZKtoxav5LpD9Ts"),
        fragment(0, '{"lo'),
        fragment(0, 'cation": "Bos'),
        start(1, "call_Y2xhc3NpY2FsbHk"),
        fragment(1, '{"location": '),
        fragment(0, 'ton, MA"}'),
        fragment(1, '"Paris", "unit": "celsius"}'),
        chunk({}, "tool_calls"),
        usage_chunk(80, 40),
    )
    respx_mock.post(URL).mock(return_value=sse_response(body, piece=13))
    updates = await collect(openai.generate_stream(HELLO, ChatOptions(tools=[get_current_weather])))
    assert sum(len(u.tool_call_deltas) for u in updates) == 7
    response = ChatResponse.from_updates(updates)
    assert response.finish_reason is FinishReason.TOOL_CALLS
    assert response.message.function_calls == [
        FunctionCallContent(
            call_id="call_TMbEoYn9q0ZKtoxav5LpD9Ts",
            name="get_current_weather",
            arguments={"location": "Boston, MA"},
        ),
        FunctionCallContent(
            call_id="call_Y2xhc3NpY2FsbHk",
            name="get_current_weather",
            arguments={"location": "Paris", "unit": "celsius"},
        ),
    ]
    assert response.usage.total_tokens == 120


async def test_a_stream_cut_off_before_done_is_a_provider_error(
    openai: OpenAIChatClient, respx_mock: respx.MockRouter
) -> None:
    body = sse(chunk({"content": "Hello"}), chunk({"content": " wor"}), done=False)
    respx_mock.post(URL).mock(return_value=sse_response(body))
    received = await updates_before_the_error(
        openai, HELLO, match=r"without the terminal \[DONE\] event.*incomplete"
    )
    assert [u.text for u in received] == ["Hello", " wor"]


async def test_an_empty_stream_falls_back_to_one_request_without_streaming(
    openai: OpenAIChatClient, respx_mock: respx.MockRouter
) -> None:
    # llama.cpp's server answers some streamed tool requests with an empty 200 body.
    whole = completion(None, tool_calls=[call("c1", "get_current_weather", '{"location": "Oslo"}')])
    route = respx_mock.post(URL).mock(
        side_effect=[sse_response(b""), httpx.Response(200, json=whole)]
    )
    with structlog.testing.capture_logs() as logs:
        updates = await collect(openai.generate_stream(HELLO))
    assert [bool(sent(route, i).get("stream")) for i in range(2)] == [True, False]
    folded = ChatResponse.from_updates(updates)
    assert folded.message.function_calls == [
        FunctionCallContent(
            call_id="c1", name="get_current_weather", arguments={"location": "Oslo"}
        )
    ]
    assert folded.usage.total_tokens == 29
    [fallback] = [e for e in logs if e["event"] == "llm_empty_stream_fallback"]
    assert fallback["log_level"] == "debug"


async def test_a_failing_fallback_request_is_reported_as_itself(
    openai: OpenAIChatClient, respx_mock: respx.MockRouter
) -> None:
    respx_mock.post(URL).mock(
        side_effect=[sse_response(b""), httpx.Response(400, json=error_body("bad tools"))]
    )
    with pytest.raises(InvalidRequestError, match="bad tools"):
        await collect(openai.generate_stream(HELLO))


async def test_a_dropped_connection_mid_stream_is_a_provider_error(
    openai: OpenAIChatClient, respx_mock: respx.MockRouter
) -> None:
    first = sse(chunk({"content": "Hel"}), done=False)
    await assert_a_dropped_connection_is_a_provider_error(
        openai, respx_mock.post(URL), HELLO, first
    )


async def test_a_stalled_stream_is_a_timeout(
    openai: OpenAIChatClient, respx_mock: respx.MockRouter
) -> None:
    first = sse(chunk({"content": "Hel"}), done=False)
    await assert_a_stalled_stream_is_a_timeout(openai, respx_mock.post(URL), HELLO, first)


async def test_a_garbage_event_is_a_provider_error(
    openai: OpenAIChatClient, respx_mock: respx.MockRouter
) -> None:
    body = sse(
        chunk({"content": "Hi"}), '{"id": "chatcmpl-123", "choices": [{"delta": {"content": "x"'
    )
    await assert_a_garbage_event_is_a_provider_error(
        openai, respx_mock.post(URL), HELLO, sse_response(body)
    )


async def test_an_error_event_mid_stream_is_a_provider_error(
    openai: OpenAIChatClient, respx_mock: respx.MockRouter
) -> None:
    body = sse(
        chunk({"content": "Hi"}),
        error_body("The server had an error while processing your request.", None, "server_error"),
    )
    respx_mock.post(URL).mock(return_value=sse_response(body))
    with pytest.raises(ProviderError, match="mid-stream: The server had an error"):
        await collect(openai.generate_stream(HELLO))


async def test_stream_errors_before_the_body_are_retried(
    openai: OpenAIChatClient, respx_mock: respx.MockRouter, backoff_waits: list[float]
) -> None:
    ok = sse_response(sse(chunk({"content": "ok"}), chunk({}, "stop")))
    text = await streamed_text_after_failures(
        openai, respx_mock.post(URL), HELLO, [httpx.Response(502, text="Bad Gateway")], ok
    )
    assert text == "ok"


async def test_stream_auth_error(openai: OpenAIChatClient, respx_mock: respx.MockRouter) -> None:
    respx_mock.post(URL).respond(
        401, json=error_body("Incorrect API key provided", "invalid_api_key")
    )
    with pytest.raises(AuthenticationError, match="Incorrect API key"):
        await collect(openai.generate_stream(HELLO))


async def test_leaving_a_stream_early_closes_the_response(
    openai: OpenAIChatClient, respx_mock: respx.MockRouter
) -> None:
    first = sse(chunk({"content": "one"}), done=False)
    await assert_leaving_a_stream_early_closes_it(
        openai, respx_mock.post(URL), HELLO, first, first_text="one"
    )


async def test_cancelling_a_streaming_task_closes_the_response(
    openai: OpenAIChatClient, respx_mock: respx.MockRouter
) -> None:
    first = sse(chunk({"content": "one"}), done=False)
    await assert_cancelling_a_streaming_task_closes_it(openai, respx_mock.post(URL), HELLO, first)


# --- health check, configuration -----------------------------------------------------------------


async def test_health_check_lists_models(
    openai: OpenAIChatClient, respx_mock: respx.MockRouter
) -> None:
    respx_mock.get("https://api.openai.com/v1/models").respond(
        200,
        json={
            "object": "list",
            "data": [
                {
                    "id": "gpt-4o-mini",
                    "object": "model",
                    "created": 1721172741,
                    "owned_by": "system",
                }
            ],
        },
    )
    assert await openai.health_check() is True


async def test_health_check_failure_is_false_with_a_logged_reason(
    openai: OpenAIChatClient, respx_mock: respx.MockRouter
) -> None:
    route = respx_mock.get("https://api.openai.com/v1/models").respond(
        401, json=error_body("Incorrect API key provided", "invalid_api_key")
    )
    assert "Incorrect API key provided" in await health_check_failure_reason(openai, route)


async def test_health_check_of_an_unreachable_server_is_false(respx_mock: respx.MockRouter) -> None:
    respx_mock.get("http://127.0.0.1:9/v1/models").mock(side_effect=httpx.ConnectError("refused"))
    async with OpenAIChatClient("m", base_url="http://127.0.0.1:9/v1") as client:
        assert await client.health_check() is False


def test_missing_key_names_the_variable() -> None:
    with pytest.raises(AuthenticationError, match="OPENAI_API_KEY"):
        OpenAIChatClient("gpt-4o-mini")


async def test_key_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, respx_mock: respx.MockRouter
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    route = respx_mock.post(URL).respond(200, json=completion())
    async with OpenAIChatClient("gpt-4o-mini") as client:
        await client.generate(HELLO)
    assert route.calls[0].request.headers["authorization"] == "Bearer sk-from-env"


async def test_the_environment_key_is_not_sent_to_another_server(
    monkeypatch: pytest.MonkeyPatch, respx_mock: respx.MockRouter
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    route = respx_mock.post("http://localhost:8000/v1/chat/completions").respond(
        200, json=completion()
    )
    async with OpenAIChatClient("local", base_url="http://localhost:8000/v1") as client:
        await client.generate(HELLO)
    assert "authorization" not in route.calls[0].request.headers


async def test_unauthorised_without_a_key_says_none_was_sent(respx_mock: respx.MockRouter) -> None:
    respx_mock.post("http://localhost:8000/v1/chat/completions").respond(
        401, json=error_body("missing key")
    )
    async with OpenAIChatClient("local", base_url="http://localhost:8000/v1") as client:
        with pytest.raises(AuthenticationError, match="no API key was sent"):
            await client.generate(HELLO)


def test_repr_shows_model_and_base_url() -> None:
    client = OpenAIChatClient(
        "gpt-4o-mini", api_key="sk-1", base_url="http://u:p@localhost:8000/v1/"
    )
    assert (
        repr(client) == "OpenAIChatClient(model='gpt-4o-mini', base_url='http://localhost:8000/v1')"
    )
    assert client.provider == "openai"
    assert client.base_url == "http://u:p@localhost:8000/v1"
