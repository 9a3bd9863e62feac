"""A Gemini API key never appears in the client's str/repr, a URL, a raised error or a log line."""

from __future__ import annotations

import json
import pickle

import httpx
import pytest
import respx

from agentic_core import ChatMessage
from agentic_llm import GeminiChatClient
from tests.fixtures.llm_http import (
    assert_a_stream_error_hides_the_key,
    assert_errors_and_logs_hide_the_key,
    assert_health_check_logs_hide_the_key,
    assert_stream_errors_and_logs_hide_the_key,
    assert_transport_errors_and_logs_hide_the_key,
    shown_by,
)

KEY = "AIzaSyGEMINI-SUPERSECRET-0123456789"
ROOT = "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash"
URL = f"{ROOT}:generateContent"
STREAM_URL = f"{ROOT}:streamGenerateContent"
HELLO = [ChatMessage.user("Hello!")]


@pytest.fixture(autouse=True)
def no_gemini_key_from_the_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)


def _echo_key_error(status: int) -> httpx.Response:
    """A server that (wrongly) echoes the key back, in the message and in the details."""
    body = {
        "error": {
            "code": status,
            "message": f"API key {KEY} is not valid for https://x.example/?key={KEY}",
            "status": "INVALID_ARGUMENT",
            "details": [{"reason": "API_KEY_INVALID", "metadata": {"key": KEY}}],
        }
    }
    return httpx.Response(status, json=body)


def test_client_str_and_repr_hide_the_key() -> None:
    client = GeminiChatClient("gemini-2.5-flash", api_key=KEY)
    assert all("SUPERSECRET" not in text for text in shown_by(client))


async def test_the_key_is_not_in_the_connection_pools_defaults() -> None:
    client = GeminiChatClient("gemini-2.5-flash", api_key=KEY)
    pool = await client._http._client()  # this loop's pool
    assert all(KEY not in value for value in pool.headers.values())
    assert KEY not in str(pool.base_url)
    assert KEY not in str(pool.params)


def test_a_client_cannot_be_pickled_with_its_key() -> None:
    with pytest.raises(TypeError):
        pickle.dumps(GeminiChatClient("gemini-2.5-flash", api_key=KEY))


async def test_the_key_is_never_in_a_request_url(respx_mock: respx.MockRouter) -> None:
    plain = respx_mock.post(URL).respond(
        200,
        json={"candidates": [{"content": {"parts": [{"text": "Hi"}]}, "finishReason": "STOP"}]},
    )
    event = {"candidates": [{"content": {"parts": [{"text": "Hi"}]}, "finishReason": "STOP"}]}
    streamed = respx_mock.post(STREAM_URL, params={"alt": "sse"}).respond(
        200,
        headers={"content-type": "text/event-stream"},
        content=f"data: {json.dumps(event)}\n\n".encode(),
    )
    probe = respx_mock.get(ROOT).respond(200, json={"name": "models/gemini-2.5-flash"})
    async with GeminiChatClient("gemini-2.5-flash", api_key=KEY) as client:
        await client.generate(HELLO)
        _ = [u async for u in client.generate_stream(HELLO)]
        assert await client.health_check()
    for route in (plain, streamed, probe):
        request = route.calls[0].request
        assert "SUPERSECRET" not in str(request.url)
        assert request.headers["x-goog-api-key"] == KEY


@pytest.mark.parametrize("status", [400, 401, 403, 404, 429, 500, 503])
async def test_errors_and_logs_never_contain_the_key(
    status: int, respx_mock: respx.MockRouter
) -> None:
    respx_mock.post(URL).mock(return_value=_echo_key_error(status))
    async with GeminiChatClient("gemini-2.5-flash", api_key=KEY, max_retries=1) as client:
        await assert_errors_and_logs_hide_the_key(
            client, HELLO, masked="API key ********** is not valid"
        )


async def test_stream_errors_and_logs_never_contain_the_key(respx_mock: respx.MockRouter) -> None:
    respx_mock.post(STREAM_URL, params={"alt": "sse"}).mock(return_value=_echo_key_error(401))
    async with GeminiChatClient("gemini-2.5-flash", api_key=KEY) as client:
        await assert_stream_errors_and_logs_hide_the_key(client, HELLO)


async def test_mid_stream_events_never_show_the_key(respx_mock: respx.MockRouter) -> None:
    for event in (
        f'data: {{"error": {{"code": 500, "message": "bad key {KEY}"}}}}\n\n',
        f'data: {{"broken": "{KEY}"\n\n',
    ):
        respx_mock.post(STREAM_URL, params={"alt": "sse"}).respond(
            200, headers={"content-type": "text/event-stream"}, content=event.encode()
        )
        async with GeminiChatClient("gemini-2.5-flash", api_key=KEY) as client:
            await assert_a_stream_error_hides_the_key(client, HELLO)


async def test_transport_errors_and_logs_never_contain_the_key(
    respx_mock: respx.MockRouter,
) -> None:
    respx_mock.post(URL).mock(side_effect=httpx.ConnectError(f"refused for key {KEY}"))
    async with GeminiChatClient("gemini-2.5-flash", api_key=KEY, max_retries=1) as client:
        await assert_transport_errors_and_logs_hide_the_key(client, HELLO)


async def test_health_check_logs_never_contain_the_key(respx_mock: respx.MockRouter) -> None:
    respx_mock.get(ROOT).mock(return_value=_echo_key_error(403))
    async with GeminiChatClient("gemini-2.5-flash", api_key=KEY) as client:
        await assert_health_check_logs_hide_the_key(client)
