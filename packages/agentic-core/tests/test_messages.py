"""Chat messages, usage, options and the folding of streamed updates into a response."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from pydantic import BaseModel

from agentic_core._errors import AgentError
from agentic_core.protocols._chat import (
    ChatOptions,
    ChatResponse,
    ChatResponseUpdate,
    FinishReason,
    ToolCallDelta,
    parse_tool_arguments,
)
from agentic_core.protocols._messages import (
    ChatMessage,
    FunctionCallContent,
    FunctionResultContent,
    Role,
    TextContent,
    UsageDetails,
)

# --- ChatMessage -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("build", "role"),
    [
        (ChatMessage.system, Role.SYSTEM),
        (ChatMessage.user, Role.USER),
        (ChatMessage.assistant, Role.ASSISTANT),
    ],
    ids=["system", "user", "assistant"],
)
def test_text_constructors_set_the_role_and_one_text_content(
    build: Callable[..., ChatMessage], role: Role
) -> None:
    message = build("hello", author_name="ada")

    assert message.role is role
    assert message.contents == [TextContent(text="hello")]
    assert message.text == "hello"
    assert message.author_name == "ada"


def test_assistant_message_adds_given_contents_after_its_text() -> None:
    call = FunctionCallContent(call_id="1", name="search", arguments={"q": "x"})

    message = ChatMessage.assistant("Searching.", contents=[call])

    assert message.contents == [TextContent(text="Searching."), call]
    assert message.function_calls == [call]


def test_assistant_message_without_text_has_no_text_content() -> None:
    message = ChatMessage.assistant()

    assert message.contents == []
    assert message.text == ""


def test_tool_message_carries_the_result_of_a_call() -> None:
    message = ChatMessage.tool("call-1", {"temp": 21}, is_error=True)

    assert message.role is Role.TOOL
    assert message.function_results == [
        FunctionResultContent(call_id="call-1", result={"temp": 21}, is_error=True)
    ]
    assert message.text == ""


def test_text_joins_only_the_text_contents() -> None:
    message = ChatMessage(
        role=Role.ASSISTANT,
        contents=[
            TextContent(text="a"),
            FunctionCallContent(call_id="1", name="f"),
            TextContent(text="b"),
        ],
    )

    assert message.text == "ab"


def test_each_message_gets_its_own_id() -> None:
    assert ChatMessage.user("x").message_id != ChatMessage.user("x").message_id


def test_contents_keep_their_types_through_json() -> None:
    message = ChatMessage(
        role=Role.ASSISTANT,
        contents=[
            TextContent(text="Looking it up."),
            FunctionCallContent(call_id="1", name="search", arguments={"q": "paris", "n": 3}),
            FunctionResultContent(call_id="1", result=["a", "b"], is_error=False),
        ],
        author_name="helper",
    )

    restored = ChatMessage.model_validate_json(message.model_dump_json())

    assert restored == message
    assert [type(c) for c in restored.contents] == [
        TextContent,
        FunctionCallContent,
        FunctionResultContent,
    ]


def test_contents_are_told_apart_by_their_type_tag() -> None:
    data = {"role": "tool", "contents": [{"type": "function_result", "call_id": "9", "result": 1}]}

    message = ChatMessage.model_validate(data)

    assert message.contents == [FunctionResultContent(call_id="9", result=1)]


def test_a_content_with_an_unknown_type_tag_is_refused() -> None:
    with pytest.raises(ValueError, match="image"):
        ChatMessage.model_validate({"role": "user", "contents": [{"type": "image", "url": "x"}]})


# --- UsageDetails ----------------------------------------------------------------------------


def test_usage_details_add_field_by_field() -> None:
    a = UsageDetails(input_tokens=10, output_tokens=2, total_tokens=12)
    b = UsageDetails(input_tokens=5, output_tokens=3, total_tokens=8)

    assert a + b == UsageDetails(input_tokens=15, output_tokens=5, total_tokens=20)
    assert a == UsageDetails(input_tokens=10, output_tokens=2, total_tokens=12)


def test_empty_usage_is_the_identity_of_addition() -> None:
    a = UsageDetails(input_tokens=1, output_tokens=2, total_tokens=3)

    assert UsageDetails() + a == a + UsageDetails() == a


# --- ChatOptions -----------------------------------------------------------------------------


def test_merged_with_lets_explicit_fields_of_the_other_win() -> None:
    base = ChatOptions(model="m", temperature=0.1, max_tokens=100)
    override = ChatOptions(temperature=0.9, stop=["END"])

    merged = base.merged_with(override)

    assert (merged.model, merged.temperature, merged.max_tokens, merged.stop) == (
        "m",
        0.9,
        100,
        ["END"],
    )


def test_merged_with_keeps_fields_the_other_leaves_unset() -> None:
    base = ChatOptions(seed=4, tool_choice="required")

    merged = base.merged_with(ChatOptions())

    assert (merged.seed, merged.tool_choice) == (4, "required")


def test_merged_with_an_explicit_none_clears_the_field() -> None:
    merged = ChatOptions(temperature=0.5).merged_with(ChatOptions(temperature=None))

    assert merged.temperature is None


def test_merged_with_none_is_an_equal_independent_copy() -> None:
    options = ChatOptions(temperature=0.5, stop=["x"])

    merged = options.merged_with(None)

    assert merged == options
    assert merged.stop is not None
    merged.stop.append("y")
    assert options.stop == ["x"]


def test_merged_options_remember_every_field_set_for_the_next_merge() -> None:
    class Answer(BaseModel):
        value: int

    merged = ChatOptions(temperature=0.1).merged_with(ChatOptions(response_format=Answer))

    assert ChatOptions(seed=1).merged_with(merged).model_fields_set == {
        "seed",
        "temperature",
        "response_format",
    }
    assert merged.response_format is Answer


def test_merged_with_leaves_both_options_unchanged() -> None:
    base = ChatOptions(temperature=0.1)
    override = ChatOptions(max_tokens=5)

    base.merged_with(override)

    assert (base.max_tokens, override.temperature) == (None, None)


# --- ChatResponse.from_updates ---------------------------------------------------------------


def test_from_updates_concatenates_text_sums_usage_and_keeps_the_last_finish_reason() -> None:
    updates = [
        ChatResponseUpdate(text="Hel", usage=UsageDetails(input_tokens=3, total_tokens=3)),
        ChatResponseUpdate(text="lo", model="m-1"),
        ChatResponseUpdate(
            usage=UsageDetails(output_tokens=2, total_tokens=2), finish_reason=FinishReason.LENGTH
        ),
    ]

    response = ChatResponse.from_updates(updates)

    assert response.message.role is Role.ASSISTANT
    assert response.message.contents == [TextContent(text="Hello")]
    assert response.usage == UsageDetails(input_tokens=3, output_tokens=2, total_tokens=5)
    assert response.finish_reason is FinishReason.LENGTH
    assert response.model == "m-1"


def test_from_updates_joins_interleaved_argument_fragments_per_call_index() -> None:
    updates = [
        ChatResponseUpdate(tool_call_deltas=[ToolCallDelta(index=0, call_id="a", name="weather")]),
        ChatResponseUpdate(tool_call_deltas=[ToolCallDelta(index=1, call_id="b", name="time")]),
        ChatResponseUpdate(tool_call_deltas=[ToolCallDelta(index=0, arguments='{"ci')]),
        ChatResponseUpdate(
            tool_call_deltas=[
                ToolCallDelta(index=1, arguments='{"zone": '),
                ToolCallDelta(index=0, arguments='ty": "Par'),
            ]
        ),
        ChatResponseUpdate(tool_call_deltas=[ToolCallDelta(index=1, arguments='"UTC"}')]),
        ChatResponseUpdate(tool_call_deltas=[ToolCallDelta(index=0, arguments='is"}')]),
    ]

    response = ChatResponse.from_updates(updates)

    assert response.message.function_calls == [
        FunctionCallContent(call_id="a", name="weather", arguments={"city": "Paris"}),
        FunctionCallContent(call_id="b", name="time", arguments={"zone": "UTC"}),
    ]
    assert response.finish_reason is FinishReason.TOOL_CALLS


def test_from_updates_puts_text_before_tool_calls() -> None:
    updates = [
        ChatResponseUpdate(tool_call_deltas=[ToolCallDelta(call_id="a", name="f", arguments="{}")]),
        ChatResponseUpdate(text="Calling f."),
    ]

    response = ChatResponse.from_updates(updates)

    assert response.message.contents == [
        TextContent(text="Calling f."),
        FunctionCallContent(call_id="a", name="f"),
    ]


def test_from_updates_with_empty_arguments_gives_an_empty_object() -> None:
    updates = [ChatResponseUpdate(tool_call_deltas=[ToolCallDelta(call_id="a", name="now")])]

    response = ChatResponse.from_updates(updates)

    assert response.message.function_calls == [
        FunctionCallContent(call_id="a", name="now", arguments={})
    ]


def test_from_updates_names_the_tool_whose_arguments_are_malformed() -> None:
    updates = [
        ChatResponseUpdate(tool_call_deltas=[ToolCallDelta(call_id="a", name="weather")]),
        ChatResponseUpdate(tool_call_deltas=[ToolCallDelta(arguments='{"city": "Par')]),
    ]

    with pytest.raises(AgentError, match=r"tool 'weather' that are not valid JSON"):
        ChatResponse.from_updates(updates)


def test_from_updates_refuses_arguments_that_are_not_an_object() -> None:
    updates = [
        ChatResponseUpdate(
            tool_call_deltas=[ToolCallDelta(call_id="a", name="f", arguments="[1, 2]")]
        )
    ]

    with pytest.raises(AgentError, match=r"tool 'f' that are not a JSON object"):
        ChatResponse.from_updates(updates)


def test_from_updates_of_nothing_is_an_empty_reply_that_stopped() -> None:
    response = ChatResponse.from_updates([], model="m")

    assert response.message.contents == []
    assert response.finish_reason is FinishReason.STOP
    assert response.usage == UsageDetails()
    assert response.model == "m"


def test_from_updates_names_a_call_without_an_id_by_its_index() -> None:
    updates = [ChatResponseUpdate(tool_call_deltas=[ToolCallDelta(index=3, name="f")])]

    response = ChatResponse.from_updates(updates)

    assert response.message.function_calls[0].call_id == "call_3"


# --- parse_tool_arguments --------------------------------------------------------------------


@pytest.mark.parametrize("raw", ["", "   ", "\n"], ids=["empty", "spaces", "newline"])
def test_blank_arguments_are_an_empty_object(raw: str) -> None:
    assert parse_tool_arguments("f", raw) == {}


@pytest.mark.parametrize(
    "raw", ["null", '"text"', "3", "[]"], ids=["null", "string", "number", "array"]
)
def test_arguments_that_are_json_but_not_an_object_are_refused(raw: str) -> None:
    with pytest.raises(AgentError, match=r"tool 'f' that are not a JSON object"):
        parse_tool_arguments("f", raw)


def test_malformed_arguments_error_says_where_and_chains_the_cause() -> None:
    with pytest.raises(AgentError, match=r"tool 'lookup'.*at position \d+") as caught:
        parse_tool_arguments("lookup", "{'single': 'quotes'}")

    assert caught.value.__cause__ is not None
