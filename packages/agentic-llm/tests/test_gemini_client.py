"""GeminiChatClient against a respx-mocked Gemini API.

Payloads follow the Gemini API reference: ``GenerateContentResponse`` objects (one per SSE
``data:`` event when streaming with ``alt=sse``) and Google's ``{"error": {"code", "message",
"status"}}`` error bodies.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
import respx
import structlog
from pydantic import BaseModel

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
    GeminiChatClient,
    InvalidRequestError,
    LLMConnectionError,
    LLMError,
    PermissionDeniedError,
    ProviderError,
    RateLimitError,
)
from tests.fixtures.llm_http import (
    assert_a_body_that_is_not_json,
    assert_a_dropped_connection_is_a_provider_error,
    assert_a_garbage_event_is_a_provider_error,
    assert_a_stalled_stream_is_a_timeout,
    assert_an_empty_stream_is_a_provider_error,
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

KEY = "AIzaSy-test-0123456789abcdef"
ROOT = "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash"
URL = f"{ROOT}:generateContent"
STREAM_URL = f"{ROOT}:streamGenerateContent"
HELLO = [ChatMessage.user("Hello!")]


@tool
def get_current_weather(location: str, unit: str = "celsius") -> str:
    """Get the current weather in a given location."""
    return f"21 {unit} in {location}"


@pytest.fixture(autouse=True)
def no_gemini_key_from_the_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)


@pytest.fixture
async def gemini() -> AsyncIterator[GeminiChatClient]:
    async with GeminiChatClient("gemini-2.5-flash", api_key=KEY) as client:
        yield client


# --- payloads (shapes from the API reference) ---------------------------------------------------


def usage(prompt: int = 8, output: int = 12) -> dict[str, Any]:
    return {
        "promptTokenCount": prompt,
        "candidatesTokenCount": output,
        "totalTokenCount": prompt + output,
        "promptTokensDetails": [{"modality": "TEXT", "tokenCount": prompt}],
    }


def response(
    *parts: dict[str, Any],
    finish: str | None = "STOP",
    usage_metadata: dict[str, Any] | None = None,
) -> dict[str, Any]:
    candidate: dict[str, Any] = {
        "content": {"role": "model", "parts": list(parts)},
        "index": 0,
    }
    if finish is not None:
        candidate["finishReason"] = finish
    body: dict[str, Any] = {
        "candidates": [candidate],
        "modelVersion": "gemini-2.5-flash",
        "responseId": "mBDTaKjWFdWgz7IPiqnNgQk",
    }
    if usage_metadata is not None:
        body["usageMetadata"] = usage_metadata
    return body


def text(value: str) -> dict[str, Any]:
    return {"text": value}


def call(name: str, **args: Any) -> dict[str, Any]:
    return {"functionCall": {"name": name, "args": args}}


def google_error(code: int, message: str, status: str, **extra: Any) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "status": status, **extra}}


def sse(*events: dict[str, Any] | str) -> bytes:
    # Gemini separates events with CRLF pairs.
    return "".join(
        f"data: {e if isinstance(e, str) else json.dumps(e)}\r\n\r\n" for e in events
    ).encode()


def stream_route(respx_mock: respx.MockRouter) -> respx.Route:
    return respx_mock.post(STREAM_URL, params={"alt": "sse"})


# --- generate ----------------------------------------------------------------------------------


async def test_plain_reply(gemini: GeminiChatClient, respx_mock: respx.MockRouter) -> None:
    route = respx_mock.post(URL).respond(
        200, json=response(text("Hello! How can I help you today?"), usage_metadata=usage(8, 9))
    )
    reply = await gemini.generate(HELLO)
    assert reply.text == "Hello! How can I help you today?"
    assert reply.finish_reason is FinishReason.STOP
    assert reply.usage == UsageDetails(input_tokens=8, output_tokens=9, total_tokens=17)
    assert reply.model == "gemini-2.5-flash"
    assert sent(route) == {"contents": [{"role": "user", "parts": [{"text": "Hello!"}]}]}


async def test_the_key_travels_in_a_header_never_in_the_url(
    gemini: GeminiChatClient, respx_mock: respx.MockRouter
) -> None:
    route = respx_mock.post(URL).respond(200, json=response(text("Hi")))
    await gemini.generate(HELLO)
    request = route.calls[0].request
    assert request.headers["x-goog-api-key"] == KEY
    assert KEY not in str(request.url)
    assert "key=" not in str(request.url)
    assert request.headers["content-type"] == "application/json"


async def test_multi_tool_call_reply(
    gemini: GeminiChatClient, respx_mock: respx.MockRouter
) -> None:
    respx_mock.post(URL).respond(
        200,
        json=response(
            call("get_current_weather", location="Boston, MA"),
            call("get_current_weather", location="Paris", unit="celsius"),
            usage_metadata=usage(70, 20),
        ),
    )
    reply = await gemini.generate(HELLO, ChatOptions(tools=[get_current_weather]))
    assert reply.finish_reason is FinishReason.TOOL_CALLS
    calls = reply.message.function_calls
    assert [(c.name, c.arguments) for c in calls] == [
        ("get_current_weather", {"location": "Boston, MA"}),
        ("get_current_weather", {"location": "Paris", "unit": "celsius"}),
    ]
    assert len({c.call_id for c in calls}) == 2  # Gemini sent no ids: each call got its own


async def test_api_call_ids_are_kept(
    gemini: GeminiChatClient, respx_mock: respx.MockRouter
) -> None:
    respx_mock.post(URL).respond(
        200,
        json=response(
            {"functionCall": {"id": "fc-1a2b", "name": "get_current_weather", "args": {}}}
        ),
    )
    reply = await gemini.generate(HELLO, ChatOptions(tools=[get_current_weather]))
    assert reply.message.function_calls == [
        FunctionCallContent(call_id="fc-1a2b", name="get_current_weather", arguments={})
    ]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("STOP", FinishReason.STOP),
        ("MAX_TOKENS", FinishReason.LENGTH),
        ("SAFETY", FinishReason.CONTENT_FILTER),
        ("RECITATION", FinishReason.CONTENT_FILTER),
        ("BLOCKLIST", FinishReason.CONTENT_FILTER),
        ("PROHIBITED_CONTENT", FinishReason.CONTENT_FILTER),
        ("SPII", FinishReason.CONTENT_FILTER),
        ("OTHER", FinishReason.ERROR),
        ("MALFORMED_FUNCTION_CALL", FinishReason.ERROR),
    ],
)
async def test_each_finish_reason(
    raw: str, expected: FinishReason, gemini: GeminiChatClient, respx_mock: respx.MockRouter
) -> None:
    respx_mock.post(URL).respond(200, json=response(text("partial"), finish=raw))
    assert (await gemini.generate(HELLO)).finish_reason is expected


async def test_a_filtered_reply_is_logged(
    gemini: GeminiChatClient, respx_mock: respx.MockRouter
) -> None:
    respx_mock.post(URL).respond(200, json=response(finish="SAFETY"))
    with structlog.testing.capture_logs() as logs:
        reply = await gemini.generate(HELLO)
    assert reply.text == ""
    assert reply.finish_reason is FinishReason.CONTENT_FILTER
    entry = next(e for e in logs if e["event"] == "llm_response_filtered")
    assert "finishReason=SAFETY" in entry["message"]


async def test_a_blocked_prompt_is_content_filter_with_a_clear_message(
    gemini: GeminiChatClient, respx_mock: respx.MockRouter
) -> None:
    respx_mock.post(URL).respond(
        200,
        json={
            "promptFeedback": {
                "blockReason": "PROHIBITED_CONTENT",
                "blockReasonMessage": "The prompt was blocked due to prohibited content.",
            },
            "usageMetadata": {"promptTokenCount": 14, "totalTokenCount": 14},
            "modelVersion": "gemini-2.5-flash",
        },
    )
    with structlog.testing.capture_logs() as logs:
        reply = await gemini.generate(HELLO)
    assert reply.text == ""
    assert reply.message.contents == []
    assert reply.finish_reason is FinishReason.CONTENT_FILTER
    assert reply.usage.input_tokens == 14
    entry = next(e for e in logs if e["event"] == "llm_prompt_blocked")
    assert entry["block_reason"] == "PROHIBITED_CONTENT"
    assert "blocked the prompt" in entry["message"]
    assert "prohibited content" in entry["message"]


async def test_a_response_without_candidates_is_a_provider_error(
    gemini: GeminiChatClient, respx_mock: respx.MockRouter
) -> None:
    respx_mock.post(URL).respond(200, json={"usageMetadata": usage()})
    with pytest.raises(ProviderError, match="without candidates"):
        await gemini.generate(HELLO)


async def test_options_reach_the_wire(
    gemini: GeminiChatClient, respx_mock: respx.MockRouter
) -> None:
    route = respx_mock.post(URL).respond(200, json=response(text("ok")))
    options = ChatOptions(
        temperature=0.0,
        max_tokens=32,
        stop=["END"],
        seed=1,
        tools=[get_current_weather],
        tool_choice="get_current_weather",
    )
    await gemini.generate([ChatMessage.system("Be brief."), *HELLO], options)
    body = sent(route)
    assert body["systemInstruction"] == {"parts": [{"text": "Be brief."}]}
    assert body["generationConfig"] == {
        "temperature": 0.0,
        "maxOutputTokens": 32,
        "stopSequences": ["END"],
        "seed": 1,
    }
    assert body["toolConfig"] == {
        "functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["get_current_weather"]}
    }
    declaration = body["tools"][0]["functionDeclarations"][0]
    assert declaration["name"] == "get_current_weather"
    assert declaration["parameters"]["type"] == "OBJECT"


async def test_a_per_call_model_changes_the_url(
    gemini: GeminiChatClient, respx_mock: respx.MockRouter
) -> None:
    route = respx_mock.post(
        "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-pro:generateContent"
    ).respond(200, json={**response(text("ok")), "modelVersion": "gemini-2.5-pro"})
    reply = await gemini.generate(HELLO, ChatOptions(model="gemini-2.5-pro"))
    assert route.called
    assert reply.model == "gemini-2.5-pro"


async def test_models_prefix_is_accepted(respx_mock: respx.MockRouter) -> None:
    route = respx_mock.post(URL).respond(200, json=response(text("ok")))
    async with GeminiChatClient("models/gemini-2.5-flash", api_key=KEY) as client:
        await client.generate(HELLO)
    assert route.called


async def test_structured_output_is_parsed_into_value(
    gemini: GeminiChatClient, respx_mock: respx.MockRouter
) -> None:
    class Weather(BaseModel):
        location: str
        temperature_c: float

    route = respx_mock.post(URL).respond(
        200, json=response(text('{"location": "Paris", "temperature_c": 21}'))
    )
    reply = await gemini.generate(HELLO, ChatOptions(response_format=Weather))
    assert reply.value == Weather(location="Paris", temperature_c=21)
    config = sent(route)["generationConfig"]
    assert config["responseMimeType"] == "application/json"
    assert config["responseSchema"]["properties"]["temperature_c"] == {"type": "NUMBER"}


async def test_thought_signatures_and_call_ids_go_back_with_the_calls(
    gemini: GeminiChatClient, respx_mock: respx.MockRouter
) -> None:
    first = response(
        {
            "functionCall": {
                "id": "fc-9",
                "name": "get_current_weather",
                "args": {"location": "Paris"},
            },
            "thoughtSignature": "CiQB0e2Kb7signature",
        }
    )
    route = respx_mock.post(URL).mock(
        side_effect=[
            httpx.Response(200, json=first),
            httpx.Response(200, json=response(text("Sunny"))),
        ]
    )
    reply = await gemini.generate(HELLO, ChatOptions(tools=[get_current_weather]))
    history = [*HELLO, reply.message, ChatMessage.tool("fc-9", "Sunny, 21 °C")]
    await gemini.generate(history, ChatOptions(tools=[get_current_weather]))
    contents = sent(route, 1)["contents"]
    assert contents[1] == {
        "role": "model",
        "parts": [
            {
                "functionCall": {
                    "name": "get_current_weather",
                    "args": {"location": "Paris"},
                    "id": "fc-9",
                },
                "thoughtSignature": "CiQB0e2Kb7signature",
            }
        ],
    }
    assert contents[2]["parts"][0]["functionResponse"] == {
        "name": "get_current_weather",
        "response": {"output": "Sunny, 21 °C"},
        "id": "fc-9",
    }


# --- errors ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "body", "error"),
    [
        (
            400,
            google_error(
                400,
                "* GenerateContentRequest.contents: contents is not specified\n",
                "INVALID_ARGUMENT",
            ),
            InvalidRequestError,
        ),
        (
            400,
            google_error(
                400,
                "The input token count (1200000) exceeds the maximum number of tokens allowed "
                "(1048576).",
                "INVALID_ARGUMENT",
            ),
            ContextLengthError,
        ),
        (
            401,
            google_error(
                401,
                "Request had invalid authentication credentials. Expected OAuth 2 access token, "
                "login cookie or other valid authentication credential.",
                "UNAUTHENTICATED",
            ),
            AuthenticationError,
        ),
        (
            403,
            google_error(
                403,
                "Method doesn't allow unregistered callers (callers without established "
                "identity). Please use API Key or other form of API consumer identity to call "
                "this API.",
                "PERMISSION_DENIED",
            ),
            PermissionDeniedError,
        ),
        (
            404,
            google_error(
                404,
                "models/gemini-9 is not found for API version v1beta, or is not supported for "
                "generateContent. Call ListModels to see the list of available models and their "
                "supported methods.",
                "NOT_FOUND",
            ),
            InvalidRequestError,
        ),
    ],
)
async def test_client_errors_are_not_retried_and_carry_googles_message(
    status: int,
    body: Any,
    error: type[LLMError],
    gemini: GeminiChatClient,
    respx_mock: respx.MockRouter,
    backoff_waits: list[float],
) -> None:
    caught = await client_error_not_retried(
        gemini, respx_mock.post(URL), HELLO, status, body, error, backoff_waits
    )
    assert caught.provider == "gemini"
    assert body["error"]["message"].strip() in str(caught)
    assert "gemini (https://generativelanguage.googleapis.com)" in str(caught)


async def test_an_invalid_key_is_an_authentication_error(
    gemini: GeminiChatClient, respx_mock: respx.MockRouter
) -> None:
    # Gemini answers a wrong key with 400 INVALID_ARGUMENT and reason API_KEY_INVALID.
    body = google_error(
        400,
        "API key not valid. Please pass a valid API key.",
        "INVALID_ARGUMENT",
        details=[
            {
                "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                "reason": "API_KEY_INVALID",
                "domain": "googleapis.com",
                "metadata": {"service": "generativelanguage.googleapis.com"},
            }
        ],
    )
    respx_mock.post(URL).respond(400, json=body)
    with pytest.raises(AuthenticationError, match=r"API key not valid.*GEMINI_API_KEY") as caught:
        await gemini.generate(HELLO)
    assert caught.value.status == 400
    stream_route(respx_mock).respond(400, json=body)
    with pytest.raises(AuthenticationError, match="API key not valid"):
        await collect(gemini.generate_stream(HELLO))


async def test_429_is_retried_after_retry_after(
    gemini: GeminiChatClient, respx_mock: respx.MockRouter, backoff_waits: list[float]
) -> None:
    limited = httpx.Response(
        429,
        headers={"retry-after": "3"},
        json=google_error(
            429,
            "You exceeded your current quota, please check your plan and billing details.",
            "RESOURCE_EXHAUSTED",
        ),
    )
    reply = await generate_after_failures(
        gemini,
        respx_mock.post(URL),
        HELLO,
        [limited],
        httpx.Response(200, json=response(text("Hi"))),
    )
    assert reply.text == "Hi"
    assert backoff_waits == [3.0]


async def test_429_after_the_retries_is_a_rate_limit_error(
    gemini: GeminiChatClient, respx_mock: respx.MockRouter, backoff_waits: list[float]
) -> None:
    route = respx_mock.post(URL)
    body = [
        google_error(429, "Resource has been exhausted (e.g. check quota).", "RESOURCE_EXHAUSTED")
    ]
    caught = await rate_limited_after_the_retries(
        gemini, route, HELLO, retry_after="5", body=body, match="Resource has been exhausted"
    )
    assert route.call_count == 4
    assert backoff_waits == [5.0, 5.0, 5.0]
    assert caught.retry_after_s == 5.0


def quota_error(retry_delay: str, code: int = 429, status: str = "RESOURCE_EXHAUSTED") -> Any:
    """Gemini's quota error: the wait is in a google.rpc.RetryInfo detail, not in a header."""
    return google_error(
        code,
        "You exceeded your current quota, please check your plan and billing details.",
        status,
        details=[
            {
                "@type": "type.googleapis.com/google.rpc.QuotaFailure",
                "violations": [
                    {
                        "quotaMetric": "generativelanguage.googleapis.com/"
                        "generate_content_free_tier_requests",
                        "quotaId": "GenerateRequestsPerMinutePerProjectPerModel-FreeTier",
                    }
                ],
            },
            {"@type": "type.googleapis.com/google.rpc.Help", "links": [{"url": "https://ai.dev"}]},
            {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": retry_delay},
        ],
    )


@pytest.mark.parametrize(("delay", "seconds"), [("12s", 12.0), ("1.5s", 1.5), ("0.250s", 0.25)])
async def test_429_waits_the_retry_delay_of_the_body(
    delay: str,
    seconds: float,
    gemini: GeminiChatClient,
    respx_mock: respx.MockRouter,
    backoff_waits: list[float],
) -> None:
    limited = httpx.Response(429, json=quota_error(delay))
    ok = httpx.Response(200, json=response(text("Hi")))
    reply = await generate_after_failures(gemini, respx_mock.post(URL), HELLO, [limited], ok)
    assert reply.text == "Hi"
    assert backoff_waits == [seconds]


async def test_503_waits_the_retry_delay_of_the_body_too(
    gemini: GeminiChatClient, respx_mock: respx.MockRouter, backoff_waits: list[float]
) -> None:
    busy = httpx.Response(503, json=quota_error("2s", 503, "UNAVAILABLE"))
    ok = httpx.Response(200, json=response(text("Hi")))
    await generate_after_failures(gemini, respx_mock.post(URL), HELLO, [busy], ok)
    assert backoff_waits == [2.0]


async def test_a_rate_limit_error_carries_the_retry_delay_of_the_body(
    gemini: GeminiChatClient, respx_mock: respx.MockRouter, backoff_waits: list[float]
) -> None:
    respx_mock.post(URL).respond(429, json=quota_error("7s"))
    with pytest.raises(RateLimitError, match=r"retry after 7 s") as caught:
        await gemini.generate(HELLO)
    assert caught.value.retry_after_s == 7.0
    assert backoff_waits == [7.0, 7.0, 7.0]


async def test_a_retry_after_header_wins_over_the_body(
    gemini: GeminiChatClient, respx_mock: respx.MockRouter, backoff_waits: list[float]
) -> None:
    limited = httpx.Response(429, headers={"retry-after": "3"}, json=quota_error("20s"))
    ok = httpx.Response(200, json=response(text("Hi")))
    await generate_after_failures(gemini, respx_mock.post(URL), HELLO, [limited], ok)
    assert backoff_waits == [3.0]


@pytest.mark.parametrize(
    ("status", "body"),
    [
        (
            500,
            google_error(
                500,
                "An internal error has occurred. Please retry or report in "
                "https://developers.generativeai.google/guide/troubleshooting",
                "INTERNAL",
            ),
        ),
        (503, google_error(503, "The model is overloaded. Please try again later.", "UNAVAILABLE")),
    ],
)
async def test_server_errors_are_retried_then_succeed(
    status: int,
    body: Any,
    gemini: GeminiChatClient,
    respx_mock: respx.MockRouter,
    backoff_waits: list[float],
) -> None:
    reply = await generate_after_failures(
        gemini,
        respx_mock.post(URL),
        HELLO,
        [httpx.Response(status, json=body), httpx.Response(status, json=body)],
        httpx.Response(200, json=response(text("Recovered"))),
    )
    assert reply.text == "Recovered"
    assert len(backoff_waits) == 2


async def test_server_errors_after_the_retries(
    gemini: GeminiChatClient, respx_mock: respx.MockRouter
) -> None:
    respx_mock.post(URL).respond(
        503, json=google_error(503, "The model is overloaded.", "UNAVAILABLE")
    )
    with pytest.raises(ProviderError, match=r"HTTP 503.*overloaded") as caught:
        await gemini.generate(HELLO)
    assert type(caught.value) is ProviderError


async def test_read_timeout_is_an_llm_timeout_error(
    gemini: GeminiChatClient, respx_mock: respx.MockRouter
) -> None:
    await assert_read_timeout_is_not_retried(gemini, respx_mock.post(URL), HELLO, timeout_s=60)


async def test_connect_errors_are_retried(respx_mock: respx.MockRouter) -> None:
    route = respx_mock.post(URL).mock(side_effect=httpx.ConnectError("Connection refused"))
    async with GeminiChatClient("gemini-2.5-flash", api_key=KEY, max_retries=1) as client:
        with pytest.raises(LLMConnectionError, match="cannot reach gemini"):
            await client.generate(HELLO)
    assert route.call_count == 2


async def test_a_body_that_is_not_json(
    gemini: GeminiChatClient, respx_mock: respx.MockRouter
) -> None:
    await assert_a_body_that_is_not_json(
        gemini, respx_mock.post(URL), HELLO, text="<html>Error 502 (Server Error)!!1</html>"
    )


async def test_an_error_object_in_a_200_body(
    gemini: GeminiChatClient, respx_mock: respx.MockRouter
) -> None:
    respx_mock.post(URL).respond(200, json=google_error(500, "Internal error", "INTERNAL"))
    with pytest.raises(ProviderError, match="answered with an error: Internal error"):
        await gemini.generate(HELLO)


# --- streaming ---------------------------------------------------------------------------------


async def test_streamed_text_with_usage(
    gemini: GeminiChatClient, respx_mock: respx.MockRouter
) -> None:
    # Every chunk carries the cumulative usage so far: only the last one counts.
    body = sse(
        response(text("Hello"), finish=None, usage_metadata=usage(8, 1)),
        response(text(" there"), finish=None, usage_metadata=usage(8, 2)),
        response(text("!"), finish="STOP", usage_metadata=usage(8, 3)),
    )
    route = stream_route(respx_mock).mock(return_value=sse_response(body, piece=9))
    updates = await collect(gemini.generate_stream(HELLO))
    assert [u.text for u in updates if u.text] == ["Hello", " there", "!"]
    reply = ChatResponse.from_updates(updates)
    assert reply.text == "Hello there!"
    assert reply.finish_reason is FinishReason.STOP
    assert reply.usage == UsageDetails(input_tokens=8, output_tokens=3, total_tokens=11)
    assert reply.model == "gemini-2.5-flash"
    request = route.calls[0].request
    assert request.url.params["alt"] == "sse"
    assert request.headers["x-goog-api-key"] == KEY
    assert "key" not in request.url.params
    assert sent(route) == {"contents": [{"role": "user", "parts": [{"text": "Hello!"}]}]}


async def test_streamed_tool_calls(gemini: GeminiChatClient, respx_mock: respx.MockRouter) -> None:
    body = sse(
        response(text("Checking both."), finish=None),
        response(call("get_current_weather", location="Boston, MA"), finish=None),
        response(
            call("get_current_weather", location="Paris", unit="celsius"),
            finish="STOP",
            usage_metadata=usage(80, 40),
        ),
    )
    stream_route(respx_mock).mock(return_value=sse_response(body, piece=16))
    updates = await collect(gemini.generate_stream(HELLO, ChatOptions(tools=[get_current_weather])))
    deltas = [d for u in updates for d in u.tool_call_deltas]
    assert [d.index for d in deltas] == [0, 1]
    assert [json.loads(d.arguments) for d in deltas] == [
        {"location": "Boston, MA"},
        {"location": "Paris", "unit": "celsius"},
    ]
    reply = ChatResponse.from_updates(updates)
    assert reply.text == "Checking both."
    assert reply.finish_reason is FinishReason.TOOL_CALLS
    assert [c.arguments["location"] for c in reply.message.function_calls] == [
        "Boston, MA",
        "Paris",
    ]
    assert len({c.call_id for c in reply.message.function_calls}) == 2
    assert reply.usage.total_tokens == 120


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("STOP", FinishReason.STOP),
        ("MAX_TOKENS", FinishReason.LENGTH),
        ("SAFETY", FinishReason.CONTENT_FILTER),
        ("OTHER", FinishReason.ERROR),
    ],
)
async def test_streamed_finish_reasons(
    raw: str, expected: FinishReason, gemini: GeminiChatClient, respx_mock: respx.MockRouter
) -> None:
    body = sse(response(text("Some"), finish=None), response(text(" text"), finish=raw))
    stream_route(respx_mock).mock(return_value=sse_response(body))
    updates = await collect(gemini.generate_stream(HELLO))
    assert ChatResponse.from_updates(updates).finish_reason is expected


async def test_a_usage_only_chunk_after_the_finish_is_read(
    gemini: GeminiChatClient, respx_mock: respx.MockRouter
) -> None:
    body = sse(
        response(text("Done."), finish="STOP"),
        {"usageMetadata": usage(5, 2), "modelVersion": "gemini-2.5-flash"},
    )
    stream_route(respx_mock).mock(return_value=sse_response(body))
    reply = ChatResponse.from_updates(await collect(gemini.generate_stream(HELLO)))
    assert reply.usage == UsageDetails(input_tokens=5, output_tokens=2, total_tokens=7)


async def test_a_streamed_prompt_block(
    gemini: GeminiChatClient, respx_mock: respx.MockRouter
) -> None:
    body = sse({"promptFeedback": {"blockReason": "SAFETY"}, "usageMetadata": usage(9, 0)})
    stream_route(respx_mock).mock(return_value=sse_response(body))
    with structlog.testing.capture_logs() as logs:
        updates = await collect(gemini.generate_stream(HELLO))
    reply = ChatResponse.from_updates(updates)
    assert reply.text == ""
    assert reply.finish_reason is FinishReason.CONTENT_FILTER
    assert any(e["event"] == "llm_prompt_blocked" for e in logs)


async def test_a_stream_cut_off_before_a_finish_reason_is_a_provider_error(
    gemini: GeminiChatClient, respx_mock: respx.MockRouter
) -> None:
    body = sse(response(text("Hello"), finish=None), response(text(" wor"), finish=None))
    stream_route(respx_mock).mock(return_value=sse_response(body))
    received = await updates_before_the_error(
        gemini, HELLO, match=r"after 2 event\(s\) without a chunk with a finishReason"
    )
    assert [u.text for u in received] == ["Hello", " wor"]


async def test_an_empty_stream_is_a_provider_error(
    gemini: GeminiChatClient, respx_mock: respx.MockRouter
) -> None:
    await assert_an_empty_stream_is_a_provider_error(
        gemini, stream_route(respx_mock), HELLO, sse_response(b"")
    )


async def test_a_dropped_connection_mid_stream_is_a_provider_error(
    gemini: GeminiChatClient, respx_mock: respx.MockRouter
) -> None:
    first = sse(response(text("Hel"), finish=None))
    await assert_a_dropped_connection_is_a_provider_error(
        gemini, stream_route(respx_mock), HELLO, first
    )


async def test_a_stalled_stream_is_a_timeout(
    gemini: GeminiChatClient, respx_mock: respx.MockRouter
) -> None:
    first = sse(response(text("Hel"), finish=None))
    await assert_a_stalled_stream_is_a_timeout(gemini, stream_route(respx_mock), HELLO, first)


async def test_a_garbage_event_is_a_provider_error(
    gemini: GeminiChatClient, respx_mock: respx.MockRouter
) -> None:
    body = sse(response(text("Hi"), finish=None), '{"candidates": [{"content": {"parts": [{"te')
    await assert_a_garbage_event_is_a_provider_error(
        gemini, stream_route(respx_mock), HELLO, sse_response(body)
    )


async def test_an_error_event_mid_stream_is_a_provider_error(
    gemini: GeminiChatClient, respx_mock: respx.MockRouter
) -> None:
    body = sse(
        response(text("Hi"), finish=None),
        google_error(500, "An internal error has occurred.", "INTERNAL"),
    )
    stream_route(respx_mock).mock(return_value=sse_response(body))
    with pytest.raises(ProviderError, match="mid-stream: An internal error has occurred"):
        await collect(gemini.generate_stream(HELLO))


async def test_stream_errors_before_the_body_are_retried(
    gemini: GeminiChatClient, respx_mock: respx.MockRouter, backoff_waits: list[float]
) -> None:
    ok = sse_response(sse(response(text("ok"))))
    overloaded = httpx.Response(503, json=google_error(503, "overloaded", "UNAVAILABLE"))
    streamed = await streamed_text_after_failures(
        gemini, stream_route(respx_mock), HELLO, [overloaded], ok
    )
    assert streamed == "ok"
    assert len(backoff_waits) == 1


async def test_leaving_a_stream_early_closes_the_response(
    gemini: GeminiChatClient, respx_mock: respx.MockRouter
) -> None:
    first = sse(response(text("one"), finish=None))
    await assert_leaving_a_stream_early_closes_it(
        gemini, stream_route(respx_mock), HELLO, first, first_text="one"
    )


async def test_streamed_calls_remember_their_thought_signatures(
    gemini: GeminiChatClient, respx_mock: respx.MockRouter
) -> None:
    body = sse(
        response(
            {
                "functionCall": {"name": "get_current_weather", "args": {"location": "Oslo"}},
                "thoughtSignature": "c2ln",
            },
        )
    )
    stream_route(respx_mock).mock(return_value=sse_response(body))
    reply = ChatResponse.from_updates(await collect(gemini.generate_stream(HELLO)))
    route = respx_mock.post(URL).respond(200, json=response(text("Cold.")))
    call_id = reply.message.function_calls[0].call_id
    await gemini.generate([*HELLO, reply.message, ChatMessage.tool(call_id, "-3 °C")])
    model_turn = sent(route)["contents"][1]
    assert model_turn["parts"][0]["thoughtSignature"] == "c2ln"
    assert "id" not in model_turn["parts"][0]["functionCall"]  # the API gave none


# --- health check, configuration -----------------------------------------------------------------


async def test_health_check_gets_the_model(
    gemini: GeminiChatClient, respx_mock: respx.MockRouter
) -> None:
    route = respx_mock.get(ROOT).respond(
        200,
        json={
            "name": "models/gemini-2.5-flash",
            "version": "001",
            "displayName": "Gemini 2.5 Flash",
            "inputTokenLimit": 1048576,
            "outputTokenLimit": 65536,
            "supportedGenerationMethods": ["generateContent", "countTokens"],
        },
    )
    assert await gemini.health_check() is True
    assert route.calls[0].request.headers["x-goog-api-key"] == KEY


async def test_health_check_failure_is_false_with_a_logged_reason(
    gemini: GeminiChatClient, respx_mock: respx.MockRouter
) -> None:
    route = respx_mock.get(ROOT).respond(
        404, json=google_error(404, "models/gemini-2.5-flash is not found", "NOT_FOUND")
    )
    assert "is not found" in await health_check_failure_reason(gemini, route)


def test_missing_key_names_both_variables() -> None:
    with pytest.raises(AuthenticationError, match=r"GEMINI_API_KEY.*GOOGLE_API_KEY"):
        GeminiChatClient("gemini-2.5-flash")


@pytest.mark.parametrize(
    ("variables", "expected"),
    [
        ({"GEMINI_API_KEY": "from-gemini"}, "from-gemini"),
        ({"GOOGLE_API_KEY": "from-google"}, "from-google"),
        ({"GEMINI_API_KEY": "from-gemini", "GOOGLE_API_KEY": "from-google"}, "from-gemini"),
    ],
)
async def test_key_from_the_environment(
    variables: dict[str, str],
    expected: str,
    monkeypatch: pytest.MonkeyPatch,
    respx_mock: respx.MockRouter,
) -> None:
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    route = respx_mock.post(URL).respond(200, json=response(text("Hi")))
    async with GeminiChatClient("gemini-2.5-flash") as client:
        await client.generate(HELLO)
    assert route.calls[0].request.headers["x-goog-api-key"] == expected


async def test_a_custom_base_url_does_not_read_the_environment(
    monkeypatch: pytest.MonkeyPatch, respx_mock: respx.MockRouter
) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", "from-env")
    route = respx_mock.post(
        "http://127.0.0.1:8089/v1beta/models/gemini-2.5-flash:generateContent"
    ).respond(200, json=response(text("Hi")))
    async with GeminiChatClient("gemini-2.5-flash", base_url="http://127.0.0.1:8089/") as client:
        await client.generate(HELLO)
    assert "x-goog-api-key" not in route.calls[0].request.headers


def test_repr_shows_model_and_base_url() -> None:
    client = GeminiChatClient("gemini-2.5-flash", api_key=KEY)
    assert repr(client) == (
        "GeminiChatClient(model='gemini-2.5-flash', "
        "base_url='https://generativelanguage.googleapis.com')"
    )
    assert client.provider == "gemini"
