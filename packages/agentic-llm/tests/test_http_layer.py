"""The shared HTTP layer: backoff, Retry-After, error mapping, SSE and NDJSON readers, secrets."""

from __future__ import annotations

import pickle
import random
from collections.abc import AsyncIterator, Iterable
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
import respx

from agentic_llm import (
    AuthenticationError,
    ContextLengthError,
    InvalidRequestError,
    LLMError,
    LLMTimeoutError,
    PermissionDeniedError,
    ProviderError,
    RateLimitError,
)
from agentic_llm._http import (
    HTTPClient,
    RetryPolicy,
    SSEEvent,
    error_from_response,
    is_retryable_status,
    iter_sse_events,
    parse_retry_after,
    provider_error_message,
)
from agentic_llm._http._retry import parse_retry_info
from agentic_llm._secret import Secret

# --- backoff -----------------------------------------------------------------------------------


def test_backoff_is_full_jitter_below_an_exponential_ceiling() -> None:
    policy = RetryPolicy(initial_backoff_s=0.5, max_backoff_s=30.0)
    rng = random.Random(7)
    for attempt, ceiling in [(0, 0.5), (1, 1.0), (2, 2.0), (3, 4.0), (10, 30.0)]:
        delays = [policy.delay_s(attempt, rng=rng) for _ in range(200)]
        assert all(0.0 <= d <= ceiling for d in delays)
        assert max(delays) > ceiling * 0.8  # spread over the whole range, not a fixed wait
        assert min(delays) < ceiling * 0.2


def test_backoff_uses_retry_after_capped_at_the_maximum() -> None:
    policy = RetryPolicy(max_backoff_s=10.0)
    assert policy.delay_s(0, retry_after_s=3.0) == 3.0
    assert policy.delay_s(5, retry_after_s=120.0) == 10.0
    assert policy.delay_s(0, retry_after_s=-4.0) == 0.0


def test_retry_policy_rejects_negative_retries() -> None:
    with pytest.raises(ValueError, match="max_retries"):
        RetryPolicy(max_retries=-1)


@pytest.mark.parametrize(
    ("status", "retryable"),
    [
        (400, False),
        (401, False),
        (403, False),
        (404, False),
        (413, False),
        (422, False),
        (408, True),
        (409, True),
        (429, True),
        (500, True),
        (502, True),
        (503, True),
        (504, True),
    ],
)
def test_which_statuses_are_retried(status: int, retryable: bool) -> None:
    assert is_retryable_status(status) is retryable


# --- Retry-After -------------------------------------------------------------------------------


def test_retry_after_in_seconds() -> None:
    assert parse_retry_after(httpx.Headers({"Retry-After": "20"})) == 20.0
    assert parse_retry_after(httpx.Headers({"Retry-After": " 1.5 "})) == 1.5


def test_retry_after_as_an_http_date() -> None:
    now = datetime(2025, 3, 10, 12, 0, 0, tzinfo=UTC)
    headers = httpx.Headers({"Retry-After": "Mon, 10 Mar 2025 12:00:42 GMT"})
    assert parse_retry_after(headers, now=now) == 42.0


def test_retry_after_in_the_past_means_now() -> None:
    now = datetime(2025, 3, 10, 12, 0, 0, tzinfo=UTC)
    headers = httpx.Headers({"Retry-After": "Mon, 10 Mar 2025 11:00:00 GMT"})
    assert parse_retry_after(headers, now=now) == 0.0


def test_retry_after_ms_wins_over_retry_after() -> None:
    headers = httpx.Headers({"retry-after-ms": "250", "Retry-After": "20"})
    assert parse_retry_after(headers) == 0.25


def test_missing_or_garbage_retry_after_is_none() -> None:
    assert parse_retry_after(httpx.Headers()) is None
    assert parse_retry_after(httpx.Headers({"Retry-After": "soon"})) is None


# --- error mapping -----------------------------------------------------------------------------


def _error(status: int, body: Any, **kwargs: Any) -> LLMError:
    text = body if isinstance(body, str) else httpx.Response(200, json=body).text
    return error_from_response(
        provider="openai", label="openai (x)", status=status, text=text, **kwargs
    )


def _openai_error(
    message: str, code: str | None = None, kind: str = "invalid_request_error"
) -> Any:
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


@pytest.mark.parametrize(
    ("status", "body", "expected"),
    [
        (400, _openai_error("'messages' must contain the word 'json'"), InvalidRequestError),
        (401, _openai_error("Incorrect API key provided", "invalid_api_key"), AuthenticationError),
        (
            403,
            _openai_error(
                "Country, region, or territory not supported",
                "unsupported_country_region_territory",
                "request_forbidden",
            ),
            PermissionDeniedError,
        ),
        (
            404,
            _openai_error("The model `gpt-9` does not exist", "model_not_found"),
            InvalidRequestError,
        ),
        (413, "<html><body>413 Request Entity Too Large</body></html>", ContextLengthError),
        (422, {"detail": [{"msg": "field required"}]}, InvalidRequestError),
        (
            429,
            _openai_error("Rate limit reached for requests", "rate_limit_exceeded", "requests"),
            RateLimitError,
        ),
        (
            500,
            _openai_error(
                "The server had an error while processing your request.", None, "server_error"
            ),
            ProviderError,
        ),
        (503, "upstream connect error", ProviderError),
    ],
)
def test_each_status_maps_to_its_error(status: int, body: Any, expected: type[LLMError]) -> None:
    error = _error(status, body)
    assert type(error) is expected
    assert error.status == status
    assert error.provider == "openai"
    assert f"HTTP {status}" in str(error)
    assert "openai (x)" in str(error)


def test_the_message_carries_the_providers_own_words() -> None:
    error = _error(404, _openai_error("The model `gpt-9` does not exist", "model_not_found"))
    assert "The model `gpt-9` does not exist" in str(error)
    assert "check the model name" in str(error)


def test_context_length_is_recognised_by_code_and_by_words() -> None:
    by_code = _error(400, _openai_error("too long", "context_length_exceeded"))
    by_words = _error(
        400,
        {
            "type": "error",
            "error": {
                "type": "invalid_request_error",
                "message": "prompt is too long: 210000 tokens > 200000 maximum",
            },
        },
    )
    assert isinstance(by_code, ContextLengthError)
    assert isinstance(by_words, ContextLengthError)
    assert isinstance(by_code, InvalidRequestError)  # and so a ProviderError too


def test_rate_limit_error_carries_retry_after() -> None:
    error = _error(429, _openai_error("slow down", "rate_limit_exceeded"), retry_after_s=20.0)
    assert isinstance(error, RateLimitError)
    assert error.retry_after_s == 20.0
    assert "retry after 20 s" in str(error)


def test_auth_errors_carry_the_hint() -> None:
    error = _error(401, _openai_error("Incorrect API key provided"), auth_hint="set OPENAI_API_KEY")
    assert "set OPENAI_API_KEY" in str(error)


@pytest.mark.parametrize(
    ("body", "message", "code"),
    [
        ('{"error": {"message": "m1", "type": "t", "code": "c"}}', "m1", "c"),  # OpenAI
        (
            '{"type": "error", "error": {"type": "overloaded_error", "message": "m2"}}',
            "m2",
            "overloaded_error",
        ),  # Anthropic
        (
            '{"error": {"code": 400, "message": "m3", "status": "INVALID_ARGUMENT"}}',
            "m3",
            "400",
        ),  # Gemini
        ('{"error": "model \\"x\\" not found"}', 'model "x" not found', None),  # Ollama
        (
            '[{"error": {"code": 429, "message": "m5", "status": "RESOURCE_EXHAUSTED"}}]',
            "m5",
            "429",
        ),
        ("Bad Gateway", "Bad Gateway", None),
    ],
)
def test_provider_messages_of_every_shape(body: str, message: str, code: str | None) -> None:
    details = provider_error_message(body)
    assert (details.message, details.code) == (message, code)


def test_errors_survive_pickling_with_their_attributes() -> None:
    error = RateLimitError("slow down", provider="openai", body="{}", retry_after_s=3.0)
    copy = pickle.loads(pickle.dumps(error))  # noqa: S301 - our own object
    assert (type(copy), str(copy), copy.retry_after_s, copy.status) == (
        RateLimitError,
        "slow down",
        3.0,
        429,
    )


def test_timeout_error_is_also_a_builtin_timeout_error() -> None:
    assert issubclass(LLMTimeoutError, TimeoutError)


# --- SSE ---------------------------------------------------------------------------------------


async def _lines(lines: Iterable[str]) -> AsyncIterator[str]:
    for line in lines:
        yield line


async def _events(lines: Iterable[str]) -> list[SSEEvent]:
    return [event async for event in iter_sse_events(_lines(lines))]


async def test_sse_events_are_dispatched_on_blank_lines() -> None:
    events = await _events(['data: {"a":1}', "", "data: [DONE]", ""])
    assert [e.data for e in events] == ['{"a":1}', "[DONE]"]
    assert all(e.event == "message" for e in events)


async def test_sse_multi_line_data_is_joined_with_newlines() -> None:
    events = await _events(["data: first", "data: second", ""])
    assert events == [SSEEvent(data="first\nsecond")]


async def test_sse_comments_and_unknown_fields_are_ignored() -> None:
    events = await _events([": keep-alive", "retry: 100", "foo: bar", "data: x", ""])
    assert events == [SSEEvent(data="x")]


async def test_sse_event_names_and_ids_are_kept() -> None:
    events = await _events(["event: message_start", "id: 7", 'data: {"type":"x"}', ""])
    assert events == [SSEEvent(data='{"type":"x"}', event="message_start", id="7")]


async def test_sse_value_without_space_after_colon() -> None:
    assert await _events(["data:x", ""]) == [SSEEvent(data="x")]


async def test_sse_last_event_without_blank_line_is_still_read() -> None:
    assert await _events(["data: a", "", "data: [DONE]"]) == [
        SSEEvent(data="a"),
        SSEEvent(data="[DONE]"),
    ]


async def test_sse_blank_lines_alone_dispatch_nothing() -> None:
    assert await _events(["", "", ": ping", ""]) == []


# --- Secret ------------------------------------------------------------------------------------


def test_secret_never_shows_its_value() -> None:
    secret = Secret("sk-live-123")
    shown = [repr(secret), str(secret), f"{secret}", f"{secret!r}", f"{[secret]}"]
    assert all("sk-live-123" not in text for text in shown)
    assert secret.reveal() == "sk-live-123"


def test_secret_redacts_itself_from_text() -> None:
    assert Secret("sk-1").redact("key sk-1 was wrong") == "key ********** was wrong"
    assert Secret("").redact("nothing") == "nothing"


def test_secret_refuses_pickling() -> None:
    with pytest.raises(TypeError, match="cannot be pickled"):
        pickle.dumps(Secret("sk-1"))


# --- HTTPClient, provider-neutral --------------------------------------------------------------


def _http_client() -> HTTPClient:
    return HTTPClient(
        provider="ollama",
        base_url="http://127.0.0.1:11434",
        timeout_s=5.0,
        retry=RetryPolicy(max_retries=0),
        secret_headers={"x-api-key": Secret("sk-ndjson-SECRET")},
    )


async def test_ndjson_stream_through_the_http_client(respx_mock: respx.MockRouter) -> None:
    body = b'{"message": {"content": "Hel"}, "done": false}\n\n{"done": true}\n'
    route = respx_mock.post("http://127.0.0.1:11434/api/chat").respond(200, content=body)
    client = _http_client()
    async with client.stream("POST", "api/chat", json_body={"stream": True}) as stream:
        values = [value async for value in stream.ndjson()]
    await client.aclose()
    assert values == [{"message": {"content": "Hel"}, "done": False}, {"done": True}]
    assert route.calls[0].request.headers["x-api-key"] == "sk-ndjson-SECRET"


async def test_ndjson_malformed_line_is_redacted(respx_mock: respx.MockRouter) -> None:
    body = b'{"done": false}\n{"echo": "sk-ndjson-SECRET"\n'
    respx_mock.post("http://127.0.0.1:11434/api/chat").respond(200, content=body)
    client = _http_client()
    with pytest.raises(ProviderError, match="malformed stream event") as caught:
        async with client.stream("POST", "api/chat") as stream:
            _ = [value async for value in stream.ndjson()]
    await client.aclose()
    assert "SECRET" not in str(caught.value)
    assert "SECRET" not in caught.value.body
    assert caught.value.provider == "ollama"


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            '{"error": {"details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", '
            '"retryDelay": "37s"}]}}',
            37.0,
        ),
        (
            '{"error": {"details": [{"@type": "x/google.rpc.RetryInfo", "retryDelay": "0.5s"}]}}',
            0.5,
        ),
        ('{"error": {"details": [{"@type": "google.rpc.RetryInfo", "retryDelay": "soon"}]}}', None),
        ('{"error": {"details": "google.rpc.RetryInfo"}}', None),
        ("google.rpc.RetryInfo but not JSON", None),
        ('{"error": {"message": "no details"}}', None),
        ("", None),
    ],
)
def test_parse_retry_info_reads_googles_retry_delay(body: str, expected: float | None) -> None:
    assert parse_retry_info(body) == expected
