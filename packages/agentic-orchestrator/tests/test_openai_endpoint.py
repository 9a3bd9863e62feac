"""The OpenAI-compatible endpoint over a real uvicorn server, called by the ``openai`` SDK:
agents and a sequential workflow answer as models, plain and streamed (chunks, finish reason,
usage chunk), parsed by the SDK without error; ``/v1/models`` lists them."""

from __future__ import annotations

import openai
import pytest
from openai import AsyncOpenAI
from openai.types.chat import ChatCompletionChunk, ChatCompletionToolUnionParam

from agentic_core import ChatAgent, ChatMessage, ChatResponse, UsageDetails, Workflow
from agentic_core.testing import ScriptedChatClient
from agentic_orchestrator import SequentialBuilder

from ._openai_support import served

pytestmark = [pytest.mark.slow, pytest.mark.timeout(60)]


def poet() -> ChatAgent:
    usage = UsageDetails(input_tokens=7, output_tokens=5, total_tokens=12)
    reply = ChatResponse(
        message=ChatMessage.assistant("roses are red, violets are blue"), usage=usage
    )
    return ChatAgent(ScriptedChatClient([reply]), name="poet")


def pipeline() -> Workflow:
    writer = ChatAgent(ScriptedChatClient(["a draft"]), name="writer")
    editor = ChatAgent(ScriptedChatClient(["the edited text"]), name="editor")
    return SequentialBuilder(participants=[writer, editor], name="pipeline").build()


def client(base_url: str, api_key: str = "unused") -> AsyncOpenAI:
    """The SDK's client of the endpoint (no retries: every answer is the first)."""
    return AsyncOpenAI(base_url=base_url, api_key=api_key, max_retries=0)


async def test_the_models_list_names_every_target() -> None:
    async with served([poet(), pipeline()]) as base, client(base) as sdk:
        models = await sdk.models.list()

    assert [m.id for m in models.data] == ["poet", "pipeline"]
    assert {m.object for m in models.data} == {"model"}


async def test_an_agent_answers_a_plain_completion_with_its_usage() -> None:
    async with served([poet()]) as base, client(base) as sdk:
        answer = await sdk.chat.completions.create(
            model="poet",
            messages=[
                {"role": "system", "content": "You rhyme."},
                {"role": "user", "content": "A poem, please."},
            ],
        )

    assert answer.object == "chat.completion"
    assert answer.model == "poet"
    [choice] = answer.choices
    assert choice.message.role == "assistant"
    assert choice.message.content == "roses are red, violets are blue"
    assert choice.finish_reason == "stop"
    assert answer.usage is not None
    assert (answer.usage.prompt_tokens, answer.usage.completion_tokens) == (7, 5)
    assert answer.usage.total_tokens == 12


async def test_an_agent_streams_chunks_a_finish_and_a_usage_chunk() -> None:
    async with served([poet()]) as base, client(base) as sdk:
        stream = await sdk.chat.completions.create(
            model="poet",
            messages=[{"role": "user", "content": "A poem, please."}],
            stream=True,
            stream_options={"include_usage": True},
        )
        chunks: list[ChatCompletionChunk] = [chunk async for chunk in stream]

    assert {c.object for c in chunks} == {"chat.completion.chunk"}
    assert len({c.id for c in chunks}) == 1
    assert chunks[0].choices[0].delta.role == "assistant"
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "roses are red, violets are blue"
    assert len([c for c in chunks if c.choices and c.choices[0].delta.content]) > 1
    finish = [c.choices[0].finish_reason for c in chunks if c.choices]
    assert finish[-1] == "stop"
    assert all(reason is None for reason in finish[:-1])
    usage_chunk = chunks[-1]
    assert usage_chunk.choices == []
    assert usage_chunk.usage is not None
    assert usage_chunk.usage.total_tokens == 12
    assert all(c.usage is None for c in chunks[:-1])


async def test_a_stream_without_include_usage_has_no_usage_chunk() -> None:
    async with served([poet()]) as base, client(base) as sdk:
        stream = await sdk.chat.completions.create(
            model="poet", messages=[{"role": "user", "content": "hi"}], stream=True
        )
        chunks = [chunk async for chunk in stream]

    assert all(c.choices for c in chunks)
    assert chunks[-1].choices[0].finish_reason == "stop"


async def test_a_sequential_workflow_answers_with_its_last_agent() -> None:
    async with served([pipeline()]) as base, client(base) as sdk:
        answer = await sdk.chat.completions.create(
            model="pipeline", messages=[{"role": "user", "content": "write about cats"}]
        )

    assert answer.choices[0].message.content == "the edited text"


async def test_a_sequential_workflow_streams_its_last_agents_answer() -> None:
    async with served({"team": pipeline()}) as base, client(base) as sdk:
        stream = await sdk.chat.completions.create(
            model="team", messages=[{"role": "user", "content": "write about cats"}], stream=True
        )
        chunks = [chunk async for chunk in stream]

    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "the edited text"
    assert chunks[-1].choices[0].finish_reason == "stop"
    assert {c.model for c in chunks} == {"team"}


async def test_earlier_turns_and_tool_results_reach_the_agent() -> None:
    model = ScriptedChatClient(["noted"])
    agent = ChatAgent(model, name="memo")
    async with served([agent]) as base, client(base) as sdk:
        await sdk.chat.completions.create(
            model="memo",
            messages=[
                {"role": "developer", "content": "Be brief."},
                {"role": "user", "content": [{"type": "text", "text": "weather?"}]},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "call-1",
                            "type": "function",
                            "function": {"name": "weather", "arguments": '{"city": "Oslo"}'},
                        }
                    ],
                },
                {"role": "tool", "tool_call_id": "call-1", "content": "snow"},
                {"role": "user", "content": "and so?"},
            ],
        )

    [(messages, _)] = model.calls
    roles = [m.role.value for m in messages]
    assert roles == ["system", "user", "assistant", "tool", "user"]
    [call] = messages[2].function_calls
    assert (call.call_id, call.name, call.arguments) == ("call-1", "weather", {"city": "Oslo"})
    [result] = messages[3].function_results
    assert (result.call_id, result.result) == ("call-1", "snow")


async def test_an_unknown_model_is_404_in_openais_shape() -> None:
    async with served([poet()]) as base, client(base) as sdk:
        with pytest.raises(openai.NotFoundError) as caught:
            await sdk.chat.completions.create(
                model="gpt-17", messages=[{"role": "user", "content": "hi"}]
            )

    error = caught.value.body
    assert isinstance(error, dict)
    assert error["code"] == "model_not_found"
    assert error["type"] == "invalid_request_error"
    assert "gpt-17" in error["message"]
    assert "poet" in error["message"]


async def test_tools_in_the_request_are_refused() -> None:
    tools: list[ChatCompletionToolUnionParam] = [
        {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}
    ]
    async with served([poet()]) as base, client(base) as sdk:
        with pytest.raises(openai.BadRequestError) as caught:
            await sdk.chat.completions.create(
                model="poet",
                messages=[{"role": "user", "content": "hi"}],
                tools=tools,
            )

    assert "run their own tools" in caught.value.message
    assert caught.value.code == "tools_not_supported"
