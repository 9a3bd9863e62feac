"""OpenAIChatClient against a real OpenAI-compatible server: llama.cpp's, on SmolLM2, offline.

The server (``llama_server`` fixture) is llama.cpp's own (``tools/server``, from the xllamacpp
wheel) with the chat template ``tests/fixtures/smollm2_tools.jinja``: SmolLM2's ChatML plus
tools, from which llama.cpp derives its tool-call parser and grammar. Replies are kept short
(``max_tokens``) and greedy (``temperature=0``) so the module takes seconds.

What this server does with tools: ``tool_choice="required"`` makes its grammar refuse to end the
reply without a call (text before the call stays allowed); a named ``tool_choice`` (an object) is
not supported: it logs "Wrong type supplied for parameter 'tool_choice'" and goes on as
``"auto"``. The template shows one example call, so SmolLM2-135M calls the tool either way. Tool
calls stream as argument fragments, with ``tool_choice="auto"`` too, and streams carry usage
(``stream_options.include_usage``).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
import structlog.testing

from agentic_core import (
    ChatAgent,
    ChatMessage,
    ChatOptions,
    ChatResponse,
    FinishReason,
    FunctionCallContent,
    FunctionResultContent,
    Role,
    tool,
)
from agentic_llm import OpenAIChatClient
from tests.fixtures.llm import LLAMA_SERVER_MODEL

pytestmark = pytest.mark.slow

SHORT = ChatOptions(max_tokens=16, temperature=0)
calls: list[str] = []


@tool
def get_weather(city: str) -> str:
    """The current weather in a city."""
    calls.append(city)
    return f"Sunny, 21 °C in {city}"


FORCED_TOOL = ChatOptions(max_tokens=32, temperature=0, tools=[get_weather], tool_choice="required")


@pytest.fixture
async def client(llama_server: str) -> AsyncIterator[OpenAIChatClient]:
    async with OpenAIChatClient(LLAMA_SERVER_MODEL, base_url=llama_server, timeout_s=60) as c:
        yield c


async def test_health_check_lists_the_model(client: OpenAIChatClient) -> None:
    assert await client.health_check()


async def test_generate_returns_text_usage_and_finish_reason(client: OpenAIChatClient) -> None:
    response = await client.generate([ChatMessage.user("Say hello in French.")], SHORT)
    assert response.text.strip()
    assert response.finish_reason in (FinishReason.STOP, FinishReason.LENGTH)
    usage = response.usage
    assert usage.input_tokens > 0
    assert 0 < usage.output_tokens <= 16
    assert usage.total_tokens == usage.input_tokens + usage.output_tokens


async def test_max_tokens_cuts_the_reply_with_finish_reason_length(
    client: OpenAIChatClient,
) -> None:
    options = ChatOptions(max_tokens=3, temperature=0)
    response = await client.generate([ChatMessage.user("Write a long story about a cat.")], options)
    assert response.finish_reason is FinishReason.LENGTH
    assert response.usage.output_tokens == 3


async def test_stream_yields_text_pieces_and_a_finish_reason(client: OpenAIChatClient) -> None:
    updates = [u async for u in client.generate_stream([ChatMessage.user("Count to 5.")], SHORT)]
    pieces = [u.text for u in updates if u.text]
    assert len(pieces) > 1  # token by token, not one block
    response = ChatResponse.from_updates(updates)
    assert response.text.strip()
    assert response.finish_reason in (FinishReason.STOP, FinishReason.LENGTH)


async def test_stream_and_generate_agree_when_greedy(client: OpenAIChatClient) -> None:
    messages = [ChatMessage.user("Name a colour.")]
    complete = await client.generate(messages, SHORT)
    streamed = ChatResponse.from_updates([u async for u in client.generate_stream(messages, SHORT)])
    assert streamed.text == complete.text


async def test_forced_tool_call_is_parsed_into_function_call_content(
    client: OpenAIChatClient,
) -> None:
    response = await client.generate(
        [ChatMessage.user("What is the weather in Paris?")], FORCED_TOOL
    )
    [call] = response.message.function_calls
    assert isinstance(call, FunctionCallContent)
    assert call.name == "get_weather"
    assert isinstance(call.arguments["city"], str)
    assert call.call_id
    assert response.finish_reason is FinishReason.TOOL_CALLS
    assert response.usage.output_tokens > 0


async def test_forced_tool_call_streams_argument_fragments(client: OpenAIChatClient) -> None:
    updates = [
        u
        async for u in client.generate_stream(
            [ChatMessage.user("What is the weather in Paris?")], FORCED_TOOL
        )
    ]
    fragments = [d for u in updates for d in u.tool_call_deltas]
    assert len(fragments) > 1
    [call] = ChatResponse.from_updates(updates).message.function_calls
    assert call.name == "get_weather"
    assert isinstance(call.arguments["city"], str)


async def test_auto_tool_choice_lets_the_model_call_the_tool(client: OpenAIChatClient) -> None:
    options = ChatOptions(max_tokens=32, temperature=0, tools=[get_weather], tool_choice="auto")
    response = await client.generate([ChatMessage.user("What is the weather in Paris?")], options)
    [call] = response.message.function_calls
    assert call.name == "get_weather"
    assert response.finish_reason is FinishReason.TOOL_CALLS


async def test_a_named_tool_choice_is_accepted_and_the_model_calls_the_tool(
    client: OpenAIChatClient,
) -> None:
    # Sent as OpenAI's {"type": "function", "function": {"name": ...}}: llama.cpp's server
    # answers 200 (taking it as "auto"), and the model calls the tool on its own.
    options = ChatOptions(
        max_tokens=32, temperature=0, tools=[get_weather], tool_choice="get_weather"
    )
    response = await client.generate([ChatMessage.user("What is the weather in Paris?")], options)
    [call] = response.message.function_calls
    assert call.name == "get_weather"


async def test_streaming_with_auto_tool_choice_streams_the_call(
    client: OpenAIChatClient,
) -> None:
    # llama-cpp-python's server answered this streamed request with an empty body (the client
    # then asks again without streaming); llama.cpp's streams the call in fragments.
    options = ChatOptions(max_tokens=32, temperature=0, tools=[get_weather], tool_choice="auto")
    with structlog.testing.capture_logs() as logs:
        updates = [
            update
            async for update in client.generate_stream(
                [ChatMessage.user("What is the weather in Paris?")], options
            )
        ]
    assert not [log for log in logs if log["event"] == "llm_empty_stream_fallback"]
    assert len([d for u in updates for d in u.tool_call_deltas]) > 1
    response = ChatResponse.from_updates(updates)
    [call] = response.message.function_calls
    assert call.name == "get_weather"
    assert response.finish_reason is FinishReason.TOOL_CALLS


async def test_a_stream_reports_usage(client: OpenAIChatClient) -> None:
    updates = [u async for u in client.generate_stream([ChatMessage.user("Count to 5.")], SHORT)]
    usage = ChatResponse.from_updates(updates).usage
    assert usage.input_tokens > 0
    assert 0 < usage.output_tokens <= 16


def test_one_client_serves_two_asyncio_run_calls(llama_server: str) -> None:
    # A script (or notebook cell) per asyncio.run: the second must not meet the first loop's
    # pooled connection ("Event loop is closed").
    client = OpenAIChatClient(LLAMA_SERVER_MODEL, base_url=llama_server)
    first = asyncio.run(client.generate([ChatMessage.user("Say hi.")], SHORT))
    agent = ChatAgent(client, options=SHORT)
    second = asyncio.run(agent.run("Say hello."))
    assert first.text.strip()
    assert second.text.strip()
    assert client._http.open_pools == 0


async def test_chat_agent_runs_a_full_tool_loop(client: OpenAIChatClient) -> None:
    # The first model call must call the tool ("required"); the agent runs it and sends the
    # result back (an assistant message with tool_calls and content "", then a tool message);
    # with max_tool_iterations=1 the second call has no tools, so the model answers in text.
    calls.clear()
    agent = ChatAgent(
        client,
        "You answer weather questions with the get_weather tool.",
        tools=[get_weather],
        max_tool_iterations=1,
        options=ChatOptions(max_tokens=32, temperature=0, tool_choice="required"),
    )
    response = await agent.run("What is the weather in Paris?")
    roles = [m.role for m in response.messages]
    assert roles == [Role.ASSISTANT, Role.TOOL, Role.ASSISTANT]
    [call] = response.messages[0].function_calls
    [result] = response.messages[1].contents
    assert isinstance(result, FunctionResultContent)
    assert result.call_id == call.call_id
    assert not result.is_error
    assert calls == [call.arguments["city"]]
    assert response.text.strip()
    assert response.usage.input_tokens > 0
    assert response.usage.output_tokens > 0
