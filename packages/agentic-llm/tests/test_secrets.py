"""An API key never appears in a client's str/repr, in a raised error, or in a log line."""

from __future__ import annotations

import pickle

import httpx
import pytest
import respx

from agentic_core import ChatMessage
from agentic_llm import LLMError, OpenAIChatClient
from tests.fixtures.llm_http import (
    assert_a_stream_error_hides_the_key,
    assert_errors_and_logs_hide_the_key,
    assert_health_check_logs_hide_the_key,
    assert_stream_errors_and_logs_hide_the_key,
    assert_transport_errors_and_logs_hide_the_key,
    shown_by,
)

KEY = "sk-proj-SUPERSECRET0123456789"
URL = "https://api.openai.com/v1/chat/completions"
HELLO = [ChatMessage.user("Hello!")]


def _echo_key_error(status: int) -> httpx.Response:
    """A server that (wrongly) echoes the whole key back in its error message."""
    message = f"Incorrect API key provided: {KEY}. Bearer {KEY} is not valid."
    return httpx.Response(
        status, json={"error": {"message": message, "type": "invalid_request_error", "code": None}}
    )


def test_client_str_and_repr_hide_the_key() -> None:
    client = OpenAIChatClient("gpt-4o-mini", api_key=KEY)
    shown = shown_by(client)
    assert all(KEY not in text for text in shown)
    assert all("SUPERSECRET" not in text for text in shown)


async def test_the_key_is_not_in_the_connection_pools_default_headers() -> None:
    client = OpenAIChatClient("gpt-4o-mini", api_key=KEY)
    pool = await client._http._client()  # this loop's pool
    assert KEY not in repr(pool.headers)
    assert all(KEY not in value for value in pool.headers.values())


def test_a_client_cannot_be_pickled_with_its_key() -> None:
    client = OpenAIChatClient("gpt-4o-mini", api_key=KEY)
    with pytest.raises(TypeError):
        pickle.dumps(client)


@pytest.mark.parametrize("status", [400, 401, 403, 404, 413, 429, 500])
async def test_errors_and_logs_never_contain_the_key(
    status: int, respx_mock: respx.MockRouter
) -> None:
    respx_mock.post(URL).mock(return_value=_echo_key_error(status))
    async with OpenAIChatClient("gpt-4o-mini", api_key=KEY, max_retries=1) as client:
        await assert_errors_and_logs_hide_the_key(
            client, HELLO, masked="Incorrect API key provided: **********"
        )


async def test_stream_errors_and_logs_never_contain_the_key(respx_mock: respx.MockRouter) -> None:
    respx_mock.post(URL).mock(return_value=_echo_key_error(401))
    async with OpenAIChatClient("gpt-4o-mini", api_key=KEY) as client:
        await assert_stream_errors_and_logs_hide_the_key(client, HELLO)


async def test_transport_errors_and_logs_never_contain_the_key(
    respx_mock: respx.MockRouter,
) -> None:
    respx_mock.post(URL).mock(side_effect=httpx.ConnectError(f"refused for Bearer {KEY}"))
    async with OpenAIChatClient("gpt-4o-mini", api_key=KEY, max_retries=1) as client:
        await assert_transport_errors_and_logs_hide_the_key(client, HELLO)


async def test_health_check_logs_never_contain_the_key(respx_mock: respx.MockRouter) -> None:
    respx_mock.get("https://api.openai.com/v1/models").mock(return_value=_echo_key_error(401))
    async with OpenAIChatClient("gpt-4o-mini", api_key=KEY) as client:
        await assert_health_check_logs_hide_the_key(client)


async def test_mid_stream_error_event_never_contains_the_key(respx_mock: respx.MockRouter) -> None:
    event = f'data: {{"error": {{"message": "bad key {KEY}", "type": "server_error"}}}}\n\n'
    respx_mock.post(URL).respond(
        200, headers={"content-type": "text/event-stream"}, content=event.encode()
    )
    async with OpenAIChatClient("gpt-4o-mini", api_key=KEY) as client:
        await assert_a_stream_error_hides_the_key(client, HELLO)


async def test_malformed_stream_event_never_shows_the_key(respx_mock: respx.MockRouter) -> None:
    event = f'data: {{"broken": "{KEY}"\n\n'
    respx_mock.post(URL).respond(
        200, headers={"content-type": "text/event-stream"}, content=event.encode()
    )
    async with OpenAIChatClient("gpt-4o-mini", api_key=KEY) as client:
        with pytest.raises(LLMError, match="malformed stream event") as caught:
            async for _ in client.generate_stream(HELLO):
                pass
    assert "SUPERSECRET" not in str(caught.value)
    assert "SUPERSECRET" not in caught.value.body
