"""ScriptedChatClient and FunctionChatClient: the public test doubles for chat models."""

from __future__ import annotations

import asyncio

import pytest
from pydantic import BaseModel

from agentic_core._errors import AgentError
from agentic_core.protocols._chat import (
    ChatClient,
    ChatOptions,
    ChatResponse,
    ChatResponseUpdate,
    FinishReason,
)
from agentic_core.protocols._messages import (
    ChatMessage,
    FunctionCallContent,
    FunctionResultContent,
    Role,
    TextContent,
    UsageDetails,
)
from agentic_core.testing import FunctionChatClient, ScriptedChatClient

HELLO = [ChatMessage.user("hello")]


def weather_call(call_id: str = "call-1", city: str = "Paris") -> FunctionCallContent:
    return FunctionCallContent(
        call_id=call_id, name="get_weather", arguments={"city": city, "unit": "celsius"}
    )


async def collect(client: ChatClient, messages: list[ChatMessage]) -> list[ChatResponseUpdate]:
    return [update async for update in client.generate_stream(messages)]


# --- ScriptedChatClient: replies --------------------------------------------------------------


async def test_scripted_client_replies_in_order() -> None:
    client = ScriptedChatClient(["first", "second"])

    first = await client.generate(HELLO)
    second = await client.generate(HELLO)

    assert (first.text, second.text) == ("first", "second")


async def test_a_str_reply_is_a_plain_assistant_message_that_stops() -> None:
    client = ScriptedChatClient(["Hi there."])

    response = await client.generate(HELLO)

    assert response.message.role is Role.ASSISTANT
    assert response.message.contents == [TextContent(text="Hi there.")]
    assert response.finish_reason is FinishReason.STOP
    assert response.model == "scripted"


async def test_a_message_with_function_calls_finishes_with_tool_calls() -> None:
    reply = ChatMessage.assistant(contents=[weather_call("a"), weather_call("b", city="Oslo")])
    client = ScriptedChatClient([reply])

    response = await client.generate(HELLO)

    assert response.message.function_calls == [weather_call("a"), weather_call("b", city="Oslo")]
    assert response.finish_reason is FinishReason.TOOL_CALLS


async def test_a_chat_response_is_returned_as_given() -> None:
    given = ChatResponse(
        message=ChatMessage.assistant("cut"),
        usage=UsageDetails(input_tokens=7, output_tokens=1, total_tokens=8),
        finish_reason=FinishReason.LENGTH,
        model="big-model",
        value={"parsed": True},
    )
    client = ScriptedChatClient([given])

    response = await client.generate(HELLO)

    assert response == given


async def test_a_chat_response_gets_only_its_unset_fields_filled() -> None:
    client = ScriptedChatClient(
        [ChatResponse(message=ChatMessage.assistant(contents=[weather_call()]))]
    )

    response = await client.generate(HELLO)

    assert response.finish_reason is FinishReason.TOOL_CALLS
    assert response.model == "scripted"
    assert response.usage.output_tokens > 0


async def test_replies_are_copies_so_the_script_stays_unchanged() -> None:
    scripted = ChatMessage.assistant("original")
    client = ScriptedChatClient([scripted])

    response = await client.generate(HELLO)
    response.message.contents.append(TextContent(text=" changed"))

    assert scripted.text == "original"


def _assert_deep_copy(copied: ChatMessage, original: ChatMessage) -> None:
    expected = original.model_copy(deep=True)
    assert type(copied) is type(expected)
    assert copied == expected
    assert copied.model_fields_set == expected.model_fields_set
    for mine, theirs in zip(copied.contents, original.contents, strict=True):
        assert type(mine) is type(theirs)
        assert mine is not theirs
        assert mine.model_fields_set == theirs.model_fields_set


async def test_a_message_reply_is_a_deep_copy_sharing_nothing_mutable_with_the_script() -> None:
    nested = FunctionCallContent(
        call_id="n", name="plan", arguments={"steps": [{"go": 1}], "flag": True}
    )
    result = FunctionResultContent(call_id="r", result={"rows": [1, 2]}, is_error=False)
    scripted = ChatMessage(role=Role.ASSISTANT, contents=[TextContent(text="t"), weather_call()])
    scripted.contents.extend([nested, result])
    client = ScriptedChatClient([scripted])

    reply = (await client.generate(HELLO)).message

    _assert_deep_copy(reply, scripted)
    [flat, deep] = reply.function_calls
    flat.arguments["city"] = "Rome"
    deep.arguments["steps"][0]["go"] = 2
    reply.function_results[0].result["rows"].append(3)
    assert scripted.function_calls[0].arguments["city"] == "Paris"
    assert scripted.function_calls[1].arguments["steps"] == [{"go": 1}]
    assert scripted.function_results[0].result == {"rows": [1, 2]}


async def test_a_value_shared_inside_a_scripted_message_stays_shared_in_its_copy() -> None:
    shared = {"city": "Paris"}
    first = FunctionCallContent(call_id="a", name="get_weather", arguments=shared)
    second = FunctionCallContent(call_id="b", name="get_weather", arguments=shared)
    scripted = ChatMessage(role=Role.ASSISTANT, contents=[first, second])
    for content in (first, second):  # validation copied the dict: share it again
        object.__setattr__(content, "arguments", shared)
    client = ScriptedChatClient([scripted])

    [a, b] = (await client.generate(HELLO)).message.function_calls

    assert a.arguments is b.arguments  # as model_copy(deep=True) keeps it
    assert a.arguments is not shared


async def test_a_reply_holding_subclasses_is_copied_as_those_subclasses() -> None:
    class Quoted(TextContent):
        source: str = "book"

    class Signed(ChatMessage):
        signature: str = "ada"

    quoted = Signed(role=Role.ASSISTANT, contents=[TextContent(text="x")])
    with_quote = ChatMessage(role=Role.ASSISTANT)
    with_quote.contents.append(Quoted(text="q", source="paper"))
    client = ScriptedChatClient([quoted, with_quote])

    first = (await client.generate(HELLO)).message
    second = (await client.generate(HELLO)).message

    _assert_deep_copy(first, quoted)
    _assert_deep_copy(second, with_quote)
    assert type(second.contents[0]) is Quoted


async def test_usage_is_estimated_at_four_characters_per_token_rounded_up() -> None:
    client = ScriptedChatClient(["12345678"])  # 8 characters: 2 tokens

    response = await client.generate([ChatMessage.system("abcd"), ChatMessage.user("e")])  # 5: 2

    assert response.usage == UsageDetails(input_tokens=2, output_tokens=2, total_tokens=4)


async def test_options_model_names_the_response_model() -> None:
    client = ScriptedChatClient(["ok"], model="scripted-default")

    response = await client.generate(HELLO, ChatOptions(model="asked-for"))

    assert response.model == "asked-for"


async def test_a_str_reply_is_not_parsed_even_when_a_response_format_is_asked() -> None:
    class Weather(BaseModel):
        city: str

    client = ScriptedChatClient(['{"city": "Paris"}'])

    response = await client.generate(HELLO, ChatOptions(response_format=Weather))

    assert response.text == '{"city": "Paris"}'
    assert response.value is None


# --- ScriptedChatClient: exhaustion and bad scripts --------------------------------------------


async def test_running_out_of_replies_says_how_many_were_scripted_and_called() -> None:
    client = ScriptedChatClient(["only one"])
    await client.generate(HELLO)

    with pytest.raises(AgentError, match=r"ran out of replies: 1 scripted, 2 calls made") as caught:
        await client.generate([ChatMessage.user("and again?")])

    assert "'and again?'" in str(caught.value)


async def test_running_out_of_replies_while_streaming_raises_on_iteration() -> None:
    client = ScriptedChatClient([])

    with pytest.raises(AgentError, match=r"0 scripted, 1 calls made"):
        await collect(client, HELLO)


def test_a_reply_of_the_wrong_type_is_refused_when_scripted() -> None:
    with pytest.raises(AgentError, match=r"reply 2 is a int; a reply must be a str"):
        ScriptedChatClient(["fine", 42])  # type: ignore[list-item]


def test_chunk_size_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="chunk_size must be at least 1"):
        ScriptedChatClient(["x"], chunk_size=0)


# --- .calls ----------------------------------------------------------------------------------


async def test_calls_record_each_request_with_its_options() -> None:
    client = ScriptedChatClient(["a", "b"])
    options = ChatOptions(temperature=0.2)
    again = [ChatMessage.user("again")]

    await client.generate(HELLO, options)
    await client.generate(again)

    assert client.calls == [(HELLO, options), (again, None)]
    assert client.calls[0][1] is options


async def test_calls_record_a_copy_of_the_messages_list() -> None:
    client = ScriptedChatClient(["a"])
    history = [ChatMessage.user("hello")]

    response = await client.generate(history)
    history.append(response.message)

    recorded, _ = client.calls[0]
    assert recorded == history[:1]
    assert recorded is not history


async def test_a_stream_is_recorded_when_requested_not_when_iterated() -> None:
    client = ScriptedChatClient(["a"])
    history = [ChatMessage.user("hello")]

    stream = client.generate_stream(history)
    history.append(ChatMessage.user("added later"))

    assert len(client.calls) == 1
    assert len(client.calls[0][0]) == 1
    assert [u async for u in stream][-1].finish_reason is FinishReason.STOP


async def test_concurrent_requests_each_get_their_own_reply() -> None:
    client = ScriptedChatClient([f"reply {n}" for n in range(20)])

    responses = await asyncio.gather(*(client.generate(HELLO) for _ in range(20)))

    assert sorted(r.text for r in responses) == sorted(f"reply {n}" for n in range(20))
    assert len(client.calls) == 20


# --- Streaming -------------------------------------------------------------------------------


async def test_text_streams_in_word_chunks_that_fold_back_to_the_reply() -> None:
    client = ScriptedChatClient([" The weather  is\nsunny. "])

    updates = await collect(client, HELLO)

    assert [u.text for u in updates[:-1]] == [" ", "The ", "weather  ", "is\n", "sunny. "]
    folded = ChatResponse.from_updates(updates)
    assert folded.text == " The weather  is\nsunny. "


async def test_chunk_size_streams_text_in_fixed_size_pieces() -> None:
    client = ScriptedChatClient(["abcdefg"], chunk_size=3)

    updates = await collect(client, HELLO)

    assert [u.text for u in updates[:-1]] == ["abc", "def", "g"]


async def test_each_tool_call_streams_id_and_name_first_then_argument_fragments() -> None:
    client = ScriptedChatClient([ChatMessage.assistant(contents=[weather_call()])], chunk_size=5)

    updates = await collect(client, HELLO)

    deltas = [d for u in updates for d in u.tool_call_deltas]
    assert (deltas[0].call_id, deltas[0].name, deltas[0].arguments) == ("call-1", "get_weather", "")
    fragments = [d.arguments for d in deltas[1:]]
    assert len(fragments) > 1
    assert all(d.call_id is None and d.name is None for d in deltas[1:])
    assert "".join(fragments) == '{"city": "Paris", "unit": "celsius"}'


async def test_the_last_update_carries_usage_finish_reason_and_model() -> None:
    client = ScriptedChatClient(["Sunny."])

    updates = await collect(client, HELLO)

    assert all(u.usage is None and u.finish_reason is None for u in updates[:-1])
    assert updates[-1].text == ""
    assert updates[-1].usage is not None
    assert updates[-1].finish_reason is FinishReason.STOP
    assert updates[-1].model == "scripted"


@pytest.mark.parametrize("chunk_size", [None, 1, 4, 1000], ids=["words", "1", "4", "1000"])
async def test_a_stream_folds_back_into_the_same_response(chunk_size: int | None) -> None:
    reply = ChatMessage.assistant(
        "Let me check both cities.",
        contents=[weather_call("a"), weather_call("b", city="Oslo"), _empty_call("c")],
    )
    client = ScriptedChatClient([reply, reply], chunk_size=chunk_size)
    whole = await client.generate(HELLO)

    folded = ChatResponse.from_updates(await collect(client, HELLO))

    assert folded.message.contents == whole.message.contents
    assert folded.usage == whole.usage
    assert folded.finish_reason is whole.finish_reason is FinishReason.TOOL_CALLS
    assert folded.model == whole.model


async def test_a_given_chat_response_streams_its_own_usage_and_finish_reason() -> None:
    usage = UsageDetails(input_tokens=100, output_tokens=3, total_tokens=103)
    given = ChatResponse(
        message=ChatMessage.assistant("cut off"), usage=usage, finish_reason=FinishReason.LENGTH
    )
    client = ScriptedChatClient([given])

    folded = ChatResponse.from_updates(await collect(client, HELLO))

    assert (folded.text, folded.usage, folded.finish_reason) == (
        "cut off",
        usage,
        FinishReason.LENGTH,
    )


async def test_an_empty_reply_streams_only_the_last_update() -> None:
    client = ScriptedChatClient([""])

    updates = await collect(client, HELLO)

    assert len(updates) == 1
    assert ChatResponse.from_updates(updates).message.contents == []


def _empty_call(call_id: str) -> FunctionCallContent:
    return FunctionCallContent(call_id=call_id, name="list_cities", arguments={})


# --- FunctionChatClient ----------------------------------------------------------------------


async def test_function_client_answers_with_a_sync_function() -> None:
    def echo(messages: list[ChatMessage], options: ChatOptions | None) -> str:
        return f"you said: {messages[-1].text}"

    client = FunctionChatClient(echo)

    response = await client.generate([ChatMessage.user("hi")])

    assert response.text == "you said: hi"
    assert response.model == "function"


async def test_function_client_answers_with_an_async_function() -> None:
    async def call_a_tool(messages: list[ChatMessage], options: ChatOptions | None) -> ChatMessage:
        await asyncio.sleep(0)
        return ChatMessage.assistant(contents=[weather_call()])

    client = FunctionChatClient(call_a_tool)

    response = await client.generate(HELLO)

    assert response.message.function_calls == [weather_call()]
    assert response.finish_reason is FinishReason.TOOL_CALLS


async def test_function_client_passes_the_messages_and_options_it_records() -> None:
    seen: list[tuple[list[ChatMessage], ChatOptions | None]] = []

    def record(messages: list[ChatMessage], options: ChatOptions | None) -> str:
        seen.append((messages, options))
        return "ok"

    client = FunctionChatClient(record)
    options = ChatOptions(seed=7)

    await client.generate(HELLO, options)

    assert seen == client.calls == [(HELLO, options)]


async def test_function_client_can_decide_from_the_conversation() -> None:
    def tool_then_answer(
        messages: list[ChatMessage], options: ChatOptions | None
    ) -> ChatMessage | str:
        if any(m.role is Role.TOOL for m in messages):
            return "It is sunny."
        return ChatMessage.assistant(contents=[weather_call()])

    client = FunctionChatClient(tool_then_answer)

    first = await client.generate(HELLO)
    second = await client.generate([*HELLO, first.message, ChatMessage.tool("call-1", "sunny")])

    assert first.finish_reason is FinishReason.TOOL_CALLS
    assert second.text == "It is sunny."


async def test_function_client_streams_like_the_scripted_one() -> None:
    reply = ChatResponse(
        message=ChatMessage.assistant("Checking.", contents=[weather_call()]),
        usage=UsageDetails(input_tokens=5, output_tokens=5, total_tokens=10),
    )

    async def answer(messages: list[ChatMessage], options: ChatOptions | None) -> ChatResponse:
        return reply

    client = FunctionChatClient(answer, chunk_size=3)

    folded = ChatResponse.from_updates(await collect(client, HELLO))

    assert folded.message.contents == reply.message.contents
    assert folded.usage == reply.usage
    assert folded.finish_reason is FinishReason.TOOL_CALLS
    assert len(client.calls) == 1


async def test_function_client_refuses_a_reply_of_the_wrong_type() -> None:
    client = FunctionChatClient(lambda messages, options: 3)  # type: ignore[arg-type, return-value]

    with pytest.raises(AgentError, match=r"FunctionChatClient reply to call 1 is a int"):
        await client.generate(HELLO)


async def test_function_client_errors_reach_the_caller() -> None:
    def fail(messages: list[ChatMessage], options: ChatOptions | None) -> str:
        raise RuntimeError("model down")

    client = FunctionChatClient(fail)

    with pytest.raises(RuntimeError, match="model down"):
        await client.generate(HELLO)


# --- Both ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "client",
    [ScriptedChatClient(["x"]), FunctionChatClient(lambda messages, options: "x")],
    ids=["scripted", "function"],
)
async def test_both_are_chat_clients_and_healthy(client: ChatClient) -> None:
    assert isinstance(client, ChatClient)
    assert await client.health_check() is True


def test_providers_name_the_double() -> None:
    assert ScriptedChatClient([]).provider == "scripted"
    assert FunctionChatClient(lambda messages, options: "x").provider == "function"
