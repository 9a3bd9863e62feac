"""OllamaChatClient against a respx-mocked Ollama server.

Payloads follow Ollama's API reference: ``/api/chat`` replies (one JSON object, or NDJSON lines
ending with ``"done": true``) and ``{"error": "..."}`` error bodies.
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
    UsageDetails,
    tool,
)
from agentic_llm import (
    AuthenticationError,
    ContextLengthError,
    InvalidRequestError,
    LLMConnectionError,
    LLMError,
    OllamaChatClient,
    PermissionDeniedError,
    ProviderError,
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
    ndjson_response,
    rate_limited_after_the_retries,
    sent,
    streamed_text_after_failures,
    updates_before_the_error,
)

HOST = "http://127.0.0.1:11434"
URL = f"{HOST}/api/chat"
HELLO = [ChatMessage.user("Hello!")]


@tool
def get_temperature(city: str) -> str:
    """Get the current temperature for a city."""
    return "22°C"


@pytest.fixture(autouse=True)
def no_ollama_host_from_the_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OLLAMA_HOST", raising=False)


@pytest.fixture
async def ollama() -> AsyncIterator[OllamaChatClient]:
    async with OllamaChatClient("llama3.2") as client:
        yield client


# --- payloads (shapes from the API reference) ---------------------------------------------------


def reply(
    content: str = "Hello! How are you today?",
    *,
    tool_calls: list[dict[str, Any]] | None = None,
    done_reason: str = "stop",
) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    return {
        "model": "llama3.2",
        "created_at": "2023-12-12T14:13:43.416799Z",
        "message": message,
        "done_reason": done_reason,
        "done": True,
        "total_duration": 5191566416,
        "load_duration": 2154458,
        "prompt_eval_count": 26,
        "prompt_eval_duration": 383809000,
        "eval_count": 298,
        "eval_duration": 4799921000,
    }


def chunk(content: str = "", tool_calls: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    return {
        "model": "llama3.2",
        "created_at": "2023-08-04T08:52:19.385406455-07:00",
        "message": message,
        "done": False,
    }


def final(done_reason: str = "stop", prompt: int = 26, output: int = 282) -> dict[str, Any]:
    return {
        "model": "llama3.2",
        "created_at": "2023-08-04T19:22:45.499127Z",
        "message": {"role": "assistant", "content": ""},
        "done": True,
        "done_reason": done_reason,
        "total_duration": 4883583458,
        "load_duration": 1334875,
        "prompt_eval_count": prompt,
        "prompt_eval_duration": 342546000,
        "eval_count": output,
        "eval_duration": 4535599000,
    }


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"function": {"name": name, "arguments": arguments}}


def ndjson(*lines: dict[str, Any] | str) -> bytes:
    return "".join(f"{e if isinstance(e, str) else json.dumps(e)}\n" for e in lines).encode()


# --- generate ----------------------------------------------------------------------------------


async def test_plain_reply(ollama: OllamaChatClient, respx_mock: respx.MockRouter) -> None:
    route = respx_mock.post(URL).respond(200, json=reply())
    response = await ollama.generate(HELLO)
    assert response.text == "Hello! How are you today?"
    assert response.finish_reason is FinishReason.STOP
    assert response.usage == UsageDetails(input_tokens=26, output_tokens=298, total_tokens=324)
    assert response.model == "llama3.2"
    assert sent(route) == {
        "model": "llama3.2",
        "messages": [{"role": "user", "content": "Hello!"}],
        "stream": False,
    }
    assert "authorization" not in route.calls[0].request.headers


async def test_multi_tool_call_reply(
    ollama: OllamaChatClient, respx_mock: respx.MockRouter
) -> None:
    route = respx_mock.post(URL).respond(
        200,
        json=reply(
            "",
            tool_calls=[
                call("get_temperature", city="New York"),
                call("get_temperature", city="London"),
            ],
        ),
    )
    response = await ollama.generate(HELLO, ChatOptions(tools=[get_temperature]))
    assert response.finish_reason is FinishReason.TOOL_CALLS
    calls = response.message.function_calls
    assert [(c.name, c.arguments) for c in calls] == [
        ("get_temperature", {"city": "New York"}),
        ("get_temperature", {"city": "London"}),
    ]
    assert len({c.call_id for c in calls}) == 2
    assert sent(route)["tools"][0]["function"]["name"] == "get_temperature"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("stop", FinishReason.STOP),
        ("length", FinishReason.LENGTH),
        ("load", FinishReason.STOP),
        ("unload", FinishReason.STOP),
    ],
)
async def test_each_done_reason(
    raw: str, expected: FinishReason, ollama: OllamaChatClient, respx_mock: respx.MockRouter
) -> None:
    respx_mock.post(URL).respond(200, json=reply("partial", done_reason=raw))
    assert (await ollama.generate(HELLO)).finish_reason is expected


async def test_options_reach_the_wire(
    ollama: OllamaChatClient, respx_mock: respx.MockRouter
) -> None:
    route = respx_mock.post(URL).respond(200, json=reply())
    await ollama.generate(
        [ChatMessage.system("Be brief."), *HELLO],
        ChatOptions(temperature=0, max_tokens=32, stop=["END"], seed=101, model="qwen3"),
    )
    body = sent(route)
    assert body["model"] == "qwen3"
    assert body["messages"][0] == {"role": "system", "content": "Be brief."}
    assert body["options"] == {"temperature": 0, "num_predict": 32, "stop": ["END"], "seed": 101}


async def test_structured_output_is_parsed_into_value(
    ollama: OllamaChatClient, respx_mock: respx.MockRouter
) -> None:
    class Answer(BaseModel):
        age: int
        available: bool

    route = respx_mock.post(URL).respond(200, json=reply('{"age": 22, "available": false}'))
    response = await ollama.generate(HELLO, ChatOptions(response_format=Answer))
    assert response.value == Answer(age=22, available=False)
    assert sent(route)["format"]["required"] == ["age", "available"]


async def test_a_reply_without_done_is_a_provider_error(
    ollama: OllamaChatClient, respx_mock: respx.MockRouter
) -> None:
    respx_mock.post(URL).respond(200, json=chunk("half"))
    with pytest.raises(ProviderError, match='without "done": true'):
        await ollama.generate(HELLO)


# --- errors ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "message", "error"),
    [
        (400, "registry.ollama.ai/library/gemma:2b does not support tools", InvalidRequestError),
        (
            400,
            "json: cannot unmarshal string into Go value of type []api.Message",
            InvalidRequestError,
        ),
        (401, "unauthorized", AuthenticationError),
        (403, "forbidden", PermissionDeniedError),
        (404, 'model "llama9" not found, try pulling it first', InvalidRequestError),
        (413, "request entity too large", ContextLengthError),
    ],
)
async def test_client_errors_are_not_retried_and_carry_ollamas_message(
    status: int,
    message: str,
    error: type[LLMError],
    ollama: OllamaChatClient,
    respx_mock: respx.MockRouter,
    backoff_waits: list[float],
) -> None:
    caught = await client_error_not_retried(
        ollama, respx_mock.post(URL), HELLO, status, {"error": message}, error, backoff_waits
    )
    assert caught.provider == "ollama"
    assert message in str(caught)
    assert "ollama (http://127.0.0.1:11434)" in str(caught)


async def test_a_missing_model_says_to_check_the_name(
    ollama: OllamaChatClient, respx_mock: respx.MockRouter
) -> None:
    respx_mock.post(URL).respond(404, json={"error": 'model "llama9" not found'})
    with pytest.raises(InvalidRequestError, match="check the model name"):
        await ollama.generate(HELLO)


async def test_429_is_retried_after_retry_after(
    ollama: OllamaChatClient, respx_mock: respx.MockRouter, backoff_waits: list[float]
) -> None:
    response = await generate_after_failures(
        ollama,
        respx_mock.post(URL),
        HELLO,
        [httpx.Response(429, headers={"retry-after": "2"}, json={"error": "too many requests"})],
        httpx.Response(200, json=reply()),
    )
    assert response.text
    assert backoff_waits == [2.0]


async def test_429_after_the_retries_is_a_rate_limit_error(
    ollama: OllamaChatClient, respx_mock: respx.MockRouter, backoff_waits: list[float]
) -> None:
    route = respx_mock.post(URL)
    body = {"error": "too many requests"}
    caught = await rate_limited_after_the_retries(
        ollama, route, HELLO, retry_after="4", body=body, match="too many requests"
    )
    assert route.call_count == 3  # the first try and max_retries=2 retries
    assert backoff_waits == [4.0, 4.0]
    assert caught.retry_after_s == 4.0


@pytest.mark.parametrize(
    ("status", "message"),
    [
        (500, "llama runner process has terminated: signal: killed"),
        (503, "server busy, please try again.  maximum pending requests exceeded"),
    ],
)
async def test_server_errors_are_retried_then_succeed(
    status: int,
    message: str,
    ollama: OllamaChatClient,
    respx_mock: respx.MockRouter,
    backoff_waits: list[float],
) -> None:
    response = await generate_after_failures(
        ollama,
        respx_mock.post(URL),
        HELLO,
        [httpx.Response(status, json={"error": message})],
        httpx.Response(200, json=reply("Recovered")),
    )
    assert response.text == "Recovered"
    assert len(backoff_waits) == 1


async def test_server_errors_after_the_retries(
    ollama: OllamaChatClient, respx_mock: respx.MockRouter
) -> None:
    respx_mock.post(URL).respond(500, json={"error": "llama runner process has terminated"})
    with pytest.raises(ProviderError, match=r"HTTP 500.*llama runner process has terminated"):
        await ollama.generate(HELLO)


async def test_read_timeout_is_an_llm_timeout_error(
    ollama: OllamaChatClient, respx_mock: respx.MockRouter
) -> None:
    await assert_read_timeout_is_not_retried(ollama, respx_mock.post(URL), HELLO, timeout_s=120)


async def test_a_server_that_is_not_running(
    ollama: OllamaChatClient, respx_mock: respx.MockRouter
) -> None:
    route = respx_mock.post(URL).mock(side_effect=httpx.ConnectError("Connection refused"))
    with pytest.raises(LLMConnectionError, match=r"cannot reach ollama.*Connection refused"):
        await ollama.generate(HELLO)
    assert route.call_count == 3


async def test_a_body_that_is_not_json(
    ollama: OllamaChatClient, respx_mock: respx.MockRouter
) -> None:
    await assert_a_body_that_is_not_json(
        ollama, respx_mock.post(URL), HELLO, text="404 page not found"
    )


async def test_an_error_object_in_a_200_body(
    ollama: OllamaChatClient, respx_mock: respx.MockRouter
) -> None:
    respx_mock.post(URL).respond(200, json={"error": "an unknown error was encountered"})
    with pytest.raises(ProviderError, match="answered with an error: an unknown error"):
        await ollama.generate(HELLO)


# --- streaming ---------------------------------------------------------------------------------


async def test_streamed_text_with_usage(
    ollama: OllamaChatClient, respx_mock: respx.MockRouter
) -> None:
    body = ndjson(chunk("The"), chunk(" sky"), chunk(" is blue."), final("stop", 26, 282))
    route = respx_mock.post(URL).mock(return_value=ndjson_response(body, piece=11))
    updates = await collect(ollama.generate_stream(HELLO))
    assert [u.text for u in updates if u.text] == ["The", " sky", " is blue."]
    response = ChatResponse.from_updates(updates)
    assert response.text == "The sky is blue."
    assert response.finish_reason is FinishReason.STOP
    assert response.usage == UsageDetails(input_tokens=26, output_tokens=282, total_tokens=308)
    assert response.model == "llama3.2"
    assert sent(route)["stream"] is True


async def test_streamed_tool_calls(ollama: OllamaChatClient, respx_mock: respx.MockRouter) -> None:
    # Ollama streams each tool call whole, in a chunk of its own.
    body = ndjson(
        chunk("", [call("get_temperature", city="New York")]),
        chunk("", [call("get_temperature", city="London")]),
        final("stop", 120, 40),
    )
    respx_mock.post(URL).mock(return_value=ndjson_response(body, piece=17))
    updates = await collect(ollama.generate_stream(HELLO, ChatOptions(tools=[get_temperature])))
    deltas = [d for u in updates for d in u.tool_call_deltas]
    assert [d.index for d in deltas] == [0, 1]
    assert [json.loads(d.arguments) for d in deltas] == [{"city": "New York"}, {"city": "London"}]
    response = ChatResponse.from_updates(updates)
    assert response.finish_reason is FinishReason.TOOL_CALLS
    assert [c.arguments["city"] for c in response.message.function_calls] == ["New York", "London"]
    assert len({c.call_id for c in response.message.function_calls}) == 2
    assert response.usage.total_tokens == 160


@pytest.mark.parametrize(
    ("raw", "expected"), [("stop", FinishReason.STOP), ("length", FinishReason.LENGTH)]
)
async def test_streamed_done_reasons(
    raw: str, expected: FinishReason, ollama: OllamaChatClient, respx_mock: respx.MockRouter
) -> None:
    respx_mock.post(URL).mock(return_value=ndjson_response(ndjson(chunk("Hi"), final(raw))))
    updates = await collect(ollama.generate_stream(HELLO))
    assert ChatResponse.from_updates(updates).finish_reason is expected


async def test_a_stream_without_done_is_a_provider_error(
    ollama: OllamaChatClient, respx_mock: respx.MockRouter
) -> None:
    respx_mock.post(URL).mock(return_value=ndjson_response(ndjson(chunk("Hello"), chunk(" wor"))))
    received = await updates_before_the_error(
        ollama, HELLO, match=r'after 2 event\(s\) without a final line with "done"'
    )
    assert [u.text for u in received] == ["Hello", " wor"]


async def test_an_empty_stream_is_a_provider_error(
    ollama: OllamaChatClient, respx_mock: respx.MockRouter
) -> None:
    await assert_an_empty_stream_is_a_provider_error(
        ollama, respx_mock.post(URL), HELLO, ndjson_response(b"")
    )


async def test_a_dropped_connection_mid_stream_is_a_provider_error(
    ollama: OllamaChatClient, respx_mock: respx.MockRouter
) -> None:
    await assert_a_dropped_connection_is_a_provider_error(
        ollama, respx_mock.post(URL), HELLO, ndjson(chunk("Hel"))
    )


async def test_a_stalled_stream_is_a_timeout(
    ollama: OllamaChatClient, respx_mock: respx.MockRouter
) -> None:
    await assert_a_stalled_stream_is_a_timeout(
        ollama, respx_mock.post(URL), HELLO, ndjson(chunk("Hel"))
    )


async def test_a_garbage_line_is_a_provider_error(
    ollama: OllamaChatClient, respx_mock: respx.MockRouter
) -> None:
    body = ndjson(chunk("Hi"), '{"model": "llama3.2", "message": {"content": "x"')
    await assert_a_garbage_event_is_a_provider_error(
        ollama, respx_mock.post(URL), HELLO, ndjson_response(body)
    )


async def test_an_error_line_mid_stream_is_a_provider_error(
    ollama: OllamaChatClient, respx_mock: respx.MockRouter
) -> None:
    body = ndjson(chunk("Hi"), {"error": "llama runner process has terminated: exit status 2"})
    respx_mock.post(URL).mock(return_value=ndjson_response(body))
    with pytest.raises(ProviderError, match="mid-stream: llama runner process has terminated"):
        await collect(ollama.generate_stream(HELLO))


async def test_lines_after_done_are_not_read(
    ollama: OllamaChatClient, respx_mock: respx.MockRouter
) -> None:
    body = ndjson(chunk("Hi"), final(), "not json at all")
    respx_mock.post(URL).mock(return_value=ndjson_response(body))
    assert ChatResponse.from_updates(await collect(ollama.generate_stream(HELLO))).text == "Hi"


async def test_stream_errors_before_the_body_are_retried(
    ollama: OllamaChatClient, respx_mock: respx.MockRouter, backoff_waits: list[float]
) -> None:
    ok = ndjson_response(ndjson(chunk("ok"), final()))
    busy = httpx.Response(503, json={"error": "server busy, please try again."})
    text = await streamed_text_after_failures(ollama, respx_mock.post(URL), HELLO, [busy], ok)
    assert text == "ok"
    assert len(backoff_waits) == 1


async def test_stream_model_not_found(
    ollama: OllamaChatClient, respx_mock: respx.MockRouter
) -> None:
    respx_mock.post(URL).respond(404, json={"error": 'model "llama9" not found'})
    with pytest.raises(InvalidRequestError, match="not found"):
        await collect(ollama.generate_stream(HELLO))


async def test_leaving_a_stream_early_closes_the_response(
    ollama: OllamaChatClient, respx_mock: respx.MockRouter
) -> None:
    await assert_leaving_a_stream_early_closes_it(
        ollama, respx_mock.post(URL), HELLO, ndjson(chunk("one")), first_text="one"
    )


# --- health check, configuration -----------------------------------------------------------------


async def test_health_check_lists_the_local_models(
    ollama: OllamaChatClient, respx_mock: respx.MockRouter
) -> None:
    respx_mock.get(f"{HOST}/api/tags").respond(
        200,
        json={
            "models": [
                {
                    "name": "llama3.2:latest",
                    "model": "llama3.2:latest",
                    "modified_at": "2025-05-04T17:37:44.706015396-07:00",
                    "size": 2019393189,
                    "digest": "a80c4f17acd55265feec403c7aef86be0c25983ab279d83f3bcd3abbcb5b8b72",
                    "details": {"format": "gguf", "family": "llama", "parameter_size": "3.2B"},
                }
            ]
        },
    )
    assert await ollama.health_check() is True


async def test_health_check_of_a_stopped_server_is_false(
    ollama: OllamaChatClient, respx_mock: respx.MockRouter
) -> None:
    route = respx_mock.get(f"{HOST}/api/tags").mock(side_effect=httpx.ConnectError("refused"))
    assert "refused" in await health_check_failure_reason(ollama, route)


@pytest.mark.parametrize(
    ("environment", "argument", "expected"),
    [
        (None, None, "http://127.0.0.1:11434"),
        ("10.0.0.5:11434", None, "http://10.0.0.5:11434"),
        ("gpu-box", None, "http://gpu-box:11434"),
        ("http://10.0.0.5:9000", "127.0.0.1:8080", "http://127.0.0.1:8080"),
    ],
)
def test_the_host_comes_from_the_argument_the_environment_or_the_default(
    environment: str | None,
    argument: str | None,
    expected: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if environment is not None:
        monkeypatch.setenv("OLLAMA_HOST", environment)
    client = OllamaChatClient("llama3.2", host=argument)
    assert client.host == expected
    assert client.base_url == expected


async def test_requests_go_to_the_host_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, respx_mock: respx.MockRouter
) -> None:
    monkeypatch.setenv("OLLAMA_HOST", "gpu-box")
    route = respx_mock.post("http://gpu-box:11434/api/chat").respond(200, json=reply())
    async with OllamaChatClient("llama3.2") as client:
        await client.generate(HELLO)
    assert route.called


async def test_proxy_headers_are_sent_and_hidden(respx_mock: respx.MockRouter) -> None:
    credentials = "Bearer proxy-SUPERSECRET-token"
    route = respx_mock.post("https://ollama.example.com/api/chat").respond(
        401, json={"error": f"token {credentials} expired"}
    )
    client = OllamaChatClient(
        "llama3.2", host="https://ollama.example.com", headers={"Authorization": credentials}
    )
    assert "SUPERSECRET" not in repr(client)
    assert "SUPERSECRET" not in repr(vars(client._http))
    with (
        structlog.testing.capture_logs() as logs,
        pytest.raises(
            AuthenticationError, match="check the credentials passed with headers="
        ) as caught,
    ):
        await client.generate(HELLO)
    await client.aclose()
    assert route.calls[0].request.headers["authorization"] == credentials
    assert "SUPERSECRET" not in str(caught.value)
    assert "SUPERSECRET" not in caught.value.body
    assert "SUPERSECRET" not in repr(logs)


def test_repr_shows_model_and_host() -> None:
    client = OllamaChatClient("llama3.2:3b", host="127.0.0.1:11434")
    assert (
        repr(client) == "OllamaChatClient(model='llama3.2:3b', base_url='http://127.0.0.1:11434')"
    )
    assert client.provider == "ollama"
