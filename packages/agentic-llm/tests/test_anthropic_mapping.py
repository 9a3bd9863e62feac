"""The Anthropic wire format, pure: requests built from chat messages, responses parsed back.

Payloads follow the Messages API reference (the ``Message`` object, its content blocks and
``usage``) and the streaming guide's event sequences.
"""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from agentic_core import (
    ChatMessage,
    ChatOptions,
    ChatResponse,
    ChatResponseUpdate,
    FinishReason,
    FunctionCallContent,
    UsageDetails,
    tool,
)
from agentic_llm import ProviderError
from agentic_llm._anthropic._mapping import (
    RESPONSE_TOOL,
    StreamParser,
    build_messages_request,
    parse_message,
    parse_stop_reason,
    parse_usage,
    to_anthropic_messages,
    wire_id,
)


@tool
def get_weather(location: str, unit: str = "celsius") -> str:
    """Get the current weather in a given location."""
    return f"21 {unit} in {location}"


@tool
def get_time() -> str:
    """The current time."""
    return "12:00"


class Weather(BaseModel):
    """A weather report."""

    location: str
    temperature_c: float


def _request(
    options: ChatOptions | None = None,
    messages: list[ChatMessage] | None = None,
    *,
    stream: bool = False,
) -> dict[str, Any]:
    return build_messages_request(
        "claude-sonnet-4-20250514",
        messages if messages is not None else [ChatMessage.user("Hello, Claude")],
        options,
        max_tokens=1024,
        stream=stream,
    )


# --- requests ----------------------------------------------------------------------------------


def test_minimal_request_has_model_max_tokens_and_messages_only() -> None:
    assert _request() == {
        "model": "claude-sonnet-4-20250514",
        "max_tokens": 1024,
        "messages": [{"role": "user", "content": "Hello, Claude"}],
    }


def test_options_map_to_their_fields() -> None:
    body = _request(
        ChatOptions(
            model="claude-opus-4-1-20250805",
            temperature=0.2,
            max_tokens=64,
            stop=["\n\nHuman:"],
            seed=7,
        )
    )
    assert body["model"] == "claude-opus-4-1-20250805"
    assert body["max_tokens"] == 64
    assert body["temperature"] == 0.2
    assert body["stop_sequences"] == ["\n\nHuman:"]
    assert "seed" not in body  # no Anthropic equivalent
    assert "stop" not in body


def test_streaming_sets_stream() -> None:
    assert _request(stream=True)["stream"] is True


def test_system_messages_become_the_top_level_system_prompt() -> None:
    body = _request(
        messages=[
            ChatMessage.system("You are a weather bot."),
            ChatMessage.system("Answer in one sentence."),
            ChatMessage.user("Weather in Paris?"),
        ]
    )
    assert body["system"] == "You are a weather bot.\n\nAnswer in one sentence."
    assert body["messages"] == [{"role": "user", "content": "Weather in Paris?"}]


def test_no_system_field_without_system_messages() -> None:
    assert "system" not in _request()


def test_tools_have_name_description_and_input_schema() -> None:
    body = _request(ChatOptions(tools=[get_weather, get_time]))
    assert body["tools"][0] == {
        "name": "get_weather",
        "description": "Get the current weather in a given location.",
        "input_schema": get_weather.parameters,
    }
    assert body["tools"][0]["input_schema"]["type"] == "object"
    assert body["tools"][0]["input_schema"]["required"] == ["location"]
    assert body["tools"][1]["name"] == "get_time"
    assert body["tools"][1]["input_schema"]["type"] == "object"
    assert "tool_choice" not in body  # the API's default (auto) applies


@pytest.mark.parametrize(
    ("choice", "wire"),
    [
        ("auto", {"type": "auto"}),
        ("required", {"type": "any"}),
        ("none", {"type": "none"}),
        ("get_weather", {"type": "tool", "name": "get_weather"}),
    ],
)
def test_tool_choice_mapping(choice: str, wire: dict[str, Any]) -> None:
    body = _request(ChatOptions(tools=[get_weather], tool_choice=choice))
    assert body["tool_choice"] == wire


def test_tool_choice_is_not_sent_without_tools() -> None:
    body = _request(ChatOptions(tool_choice="none"))
    assert "tool_choice" not in body
    assert "tools" not in body


def test_conversation_with_tool_calls_maps_to_anthropic_messages() -> None:
    messages = [
        ChatMessage.system("Be brief."),
        ChatMessage.user("Weather in San Francisco and Paris?"),
        ChatMessage.assistant(
            "I'll check both.",
            contents=[
                FunctionCallContent(
                    call_id="toolu_01A09q90qw90lq917835lq9",
                    name="get_weather",
                    arguments={"location": "San Francisco, CA"},
                ),
                FunctionCallContent(
                    call_id="toolu_01B", name="get_weather", arguments={"location": "Paris"}
                ),
            ],
        ),
        ChatMessage.tool("toolu_01A09q90qw90lq917835lq9", "15 degrees"),
        ChatMessage.tool("toolu_01B", {"error": "station offline"}, is_error=True),
        ChatMessage.assistant("San Francisco: 15 degrees; Paris is unavailable."),
        ChatMessage.user("Thanks!"),
    ]
    system, wire = to_anthropic_messages(messages)
    assert system == "Be brief."
    assert wire == [
        {"role": "user", "content": "Weather in San Francisco and Paris?"},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "I'll check both."},
                {
                    "type": "tool_use",
                    "id": "toolu_01A09q90qw90lq917835lq9",
                    "name": "get_weather",
                    "input": {"location": "San Francisco, CA"},
                },
                {
                    "type": "tool_use",
                    "id": "toolu_01B",
                    "name": "get_weather",
                    "input": {"location": "Paris"},
                },
            ],
        },
        {
            # Both results in ONE user message, right after the tool_use turn.
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_01A09q90qw90lq917835lq9",
                    "content": "15 degrees",
                },
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_01B",
                    "content": '{"error": "station offline"}',
                    "is_error": True,
                },
            ],
        },
        {"role": "assistant", "content": "San Francisco: 15 degrees; Paris is unavailable."},
        {"role": "user", "content": "Thanks!"},
    ]


def test_consecutive_same_role_messages_are_merged() -> None:
    _, wire = to_anthropic_messages(
        [
            ChatMessage.user("First."),
            ChatMessage.user("Second."),
            ChatMessage.assistant("A."),
            ChatMessage.assistant("B."),
        ]
    )
    assert wire == [
        {
            "role": "user",
            "content": [{"type": "text", "text": "First."}, {"type": "text", "text": "Second."}],
        },
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "A."}, {"type": "text", "text": "B."}],
        },
    ]


def test_tool_results_come_first_in_a_merged_user_message() -> None:
    call = FunctionCallContent(call_id="toolu_1", name="get_time", arguments={})
    _, wire = to_anthropic_messages(
        [
            ChatMessage.user("What time is it?"),
            ChatMessage.assistant(contents=[call]),
            ChatMessage.user("(be quick)"),
            ChatMessage.tool("toolu_1", "12:00"),
        ]
    )
    assert wire[2] == {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "12:00"},
            {"type": "text", "text": "(be quick)"},
        ],
    }


def test_empty_messages_are_dropped_and_alternation_kept() -> None:
    _, wire = to_anthropic_messages(
        [ChatMessage.user("Hi"), ChatMessage.assistant(""), ChatMessage.user("Hello?")]
    )
    assert wire == [
        {
            "role": "user",
            "content": [{"type": "text", "text": "Hi"}, {"type": "text", "text": "Hello?"}],
        }
    ]


def test_call_ids_from_other_providers_are_made_valid() -> None:
    assert wire_id("toolu_01A09q90qw90lq917835lq9") == "toolu_01A09q90qw90lq917835lq9"
    assert wire_id("call:1/x") == "call_1_x"
    assert wire_id("") == "call"


def test_history_with_tools_but_none_offered_declares_them_and_forbids_calls() -> None:
    # An agent's last iteration: no tools, tool_choice "none", tool blocks in the history.
    call = FunctionCallContent(call_id="toolu_1", name="get_time", arguments={})
    body = _request(
        ChatOptions(tool_choice="none"),
        [
            ChatMessage.user("What time is it?"),
            ChatMessage.assistant(contents=[call]),
            ChatMessage.tool("toolu_1", "12:00"),
        ],
    )
    assert [t["name"] for t in body["tools"]] == ["get_time"]
    assert body["tool_choice"] == {"type": "none"}


def test_structured_output_forces_the_answer_tool() -> None:
    body = _request(ChatOptions(response_format=Weather))
    assert body["tools"] == [
        {
            "name": RESPONSE_TOOL,
            "description": (
                "Give the final answer as a Weather object (A weather report.): call this tool "
                "once with the complete answer as its input."
            ),
            "input_schema": Weather.model_json_schema(),
        }
    ]
    assert body["tool_choice"] == {"type": "tool", "name": RESPONSE_TOOL}


@pytest.mark.parametrize(
    ("choice", "wire"),
    [
        (None, {"type": "any"}),
        ("auto", {"type": "any"}),
        ("required", {"type": "any"}),
        ("none", {"type": "tool", "name": RESPONSE_TOOL}),
        ("get_weather", {"type": "tool", "name": "get_weather"}),
    ],
)
def test_structured_output_beside_own_tools(choice: str | None, wire: dict[str, Any]) -> None:
    body = _request(ChatOptions(tools=[get_weather], tool_choice=choice, response_format=Weather))
    assert [t["name"] for t in body["tools"]] == ["get_weather", RESPONSE_TOOL]
    assert body["tool_choice"] == wire


# --- responses ---------------------------------------------------------------------------------


def _message(
    content: list[dict[str, Any]], stop_reason: str | None = "end_turn", **usage: int
) -> dict[str, Any]:
    return {
        "id": "msg_013Zva2CMHLNnXjNJJKqJ2EF",
        "type": "message",
        "role": "assistant",
        "content": content,
        "model": "claude-sonnet-4-20250514",
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": usage or {"input_tokens": 2095, "output_tokens": 503},
    }


def _parse(payload: Any, response_format: type[BaseModel] | None = None) -> ChatResponse:
    return parse_message(
        payload, label="anthropic (x)", provider="anthropic", response_format=response_format
    )


def test_text_reply_usage_and_model() -> None:
    response = _parse(_message([{"type": "text", "text": "Hi! My name is Claude."}]))
    assert response.text == "Hi! My name is Claude."
    assert response.usage == UsageDetails(input_tokens=2095, output_tokens=503, total_tokens=2598)
    assert response.finish_reason is FinishReason.STOP
    assert response.model == "claude-sonnet-4-20250514"
    assert response.value is None


def test_text_and_tool_use_blocks() -> None:
    response = _parse(
        _message(
            [
                {"type": "text", "text": "I'll check the weather in both cities."},
                {
                    "type": "tool_use",
                    "id": "toolu_01A09q90qw90lq917835lq9",
                    "name": "get_weather",
                    "input": {"location": "San Francisco, CA", "unit": "celsius"},
                },
                {
                    "type": "tool_use",
                    "id": "toolu_01B",
                    "name": "get_weather",
                    "input": {"location": "Paris"},
                },
            ],
            "tool_use",
        )
    )
    assert response.text == "I'll check the weather in both cities."
    assert response.finish_reason is FinishReason.TOOL_CALLS
    assert response.message.function_calls == [
        FunctionCallContent(
            call_id="toolu_01A09q90qw90lq917835lq9",
            name="get_weather",
            arguments={"location": "San Francisco, CA", "unit": "celsius"},
        ),
        FunctionCallContent(
            call_id="toolu_01B", name="get_weather", arguments={"location": "Paris"}
        ),
    ]


def test_thinking_blocks_are_not_part_of_the_reply() -> None:
    response = _parse(
        _message(
            [
                {"type": "thinking", "thinking": "Let me think...", "signature": "EqQBCgIYAhIM"},
                {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix"},
                {"type": "text", "text": "42"},
            ]
        )
    )
    assert response.text == "42"
    assert response.message.function_calls == []


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("end_turn", FinishReason.STOP),
        ("stop_sequence", FinishReason.STOP),
        ("max_tokens", FinishReason.LENGTH),
        ("model_context_window_exceeded", FinishReason.LENGTH),
        ("refusal", FinishReason.CONTENT_FILTER),
        ("pause_turn", FinishReason.STOP),
        ("something_new", FinishReason.STOP),
        (None, FinishReason.STOP),
    ],
)
def test_each_stop_reason(raw: str | None, expected: FinishReason) -> None:
    assert _parse(_message([{"type": "text", "text": "x"}], raw)).finish_reason is expected


def test_tool_use_stop_reason() -> None:
    assert parse_stop_reason("tool_use", has_tool_calls=True) is FinishReason.TOOL_CALLS
    assert parse_stop_reason("something_new", has_tool_calls=True) is FinishReason.TOOL_CALLS


def test_usage_counts_cache_writes_and_reads_as_input() -> None:
    usage = parse_usage(
        {
            "input_tokens": 50,
            "cache_creation_input_tokens": 2051,
            "cache_read_input_tokens": 100,
            "output_tokens": 503,
            "service_tier": "standard",
        }
    )
    assert usage == UsageDetails(input_tokens=2201, output_tokens=503, total_tokens=2704)
    assert parse_usage(None) is None


def test_structured_answer_becomes_text_and_value_not_a_tool_call() -> None:
    response = _parse(
        _message(
            [
                {
                    "type": "tool_use",
                    "id": "toolu_01Q",
                    "name": RESPONSE_TOOL,
                    "input": {"location": "Paris", "temperature_c": 21.5},
                }
            ],
            "tool_use",
        ),
        Weather,
    )
    assert response.value == Weather(location="Paris", temperature_c=21.5)
    assert Weather.model_validate_json(response.text) == response.value
    assert response.message.function_calls == []
    assert response.finish_reason is FinishReason.STOP


def test_invalid_structured_answer_has_no_value() -> None:
    response = _parse(
        _message(
            [{"type": "tool_use", "id": "t", "name": RESPONSE_TOOL, "input": {"location": 3}}],
            "tool_use",
        ),
        Weather,
    )
    assert response.value is None
    assert response.text == '{"location": 3}'


def test_the_answer_tool_name_is_an_ordinary_call_without_response_format() -> None:
    response = _parse(
        _message([{"type": "tool_use", "id": "t", "name": RESPONSE_TOOL, "input": {}}], "tool_use")
    )
    assert [c.name for c in response.message.function_calls] == [RESPONSE_TOOL]


@pytest.mark.parametrize(
    "payload",
    [
        {"type": "error", "error": {"type": "api_error", "message": "Internal server error"}},
        {"id": "msg_1", "type": "message"},
        ["not", "a", "message"],
    ],
)
def test_a_body_that_is_not_a_message_is_a_provider_error(payload: Any) -> None:
    with pytest.raises(ProviderError, match="not a message"):
        _parse(payload)


# --- stream events -----------------------------------------------------------------------------

# The streaming guide's "Streaming request with tool use" response, as event JSON.
TOOL_STREAM: list[dict[str, Any]] = [
    {
        "type": "message_start",
        "message": {
            "id": "msg_014p7gG3wDgGV9EUtLvnow3U",
            "type": "message",
            "role": "assistant",
            "model": "claude-opus-4-1-20250805",
            "stop_sequence": None,
            "usage": {"input_tokens": 472, "output_tokens": 2},
            "content": [],
            "stop_reason": None,
        },
    },
    {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    {"type": "ping"},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Okay"}},
    {
        "type": "content_block_delta",
        "index": 0,
        "delta": {"type": "text_delta", "text": ", let's check the weather:"},
    },
    {"type": "content_block_stop", "index": 0},
    {
        "type": "content_block_start",
        "index": 1,
        "content_block": {
            "type": "tool_use",
            "id": "toolu_01T1x1fJ34qAmk2tNTrN7Up6",
            "name": "get_weather",
            "input": {},
        },
    },
    {
        "type": "content_block_delta",
        "index": 1,
        "delta": {"type": "input_json_delta", "partial_json": ""},
    },
    {
        "type": "content_block_delta",
        "index": 1,
        "delta": {"type": "input_json_delta", "partial_json": '{"location":'},
    },
    {
        "type": "content_block_delta",
        "index": 1,
        "delta": {"type": "input_json_delta", "partial_json": ' "San Francisco, CA"'},
    },
    {
        "type": "content_block_delta",
        "index": 1,
        "delta": {"type": "input_json_delta", "partial_json": ', "unit": "fahrenheit"}'},
    },
    {"type": "content_block_stop", "index": 1},
    {
        "type": "message_delta",
        "delta": {"stop_reason": "tool_use", "stop_sequence": None},
        "usage": {"output_tokens": 89},
    },
    {"type": "message_stop"},
]


def _feed(parser: StreamParser, events: list[dict[str, Any]]) -> list[ChatResponseUpdate]:
    return [u for u in (parser.feed(e) for e in events) if u is not None]


def test_tool_use_stream_folds_into_a_response() -> None:
    parser = StreamParser()
    updates = _feed(parser, TOOL_STREAM)
    assert parser.done
    response = ChatResponse.from_updates(updates)
    assert response.text == "Okay, let's check the weather:"
    assert response.message.function_calls == [
        FunctionCallContent(
            call_id="toolu_01T1x1fJ34qAmk2tNTrN7Up6",
            name="get_weather",
            arguments={"location": "San Francisco, CA", "unit": "fahrenheit"},
        )
    ]
    assert response.finish_reason is FinishReason.TOOL_CALLS
    # Usage once: input from message_start, the cumulative output from message_delta.
    assert response.usage == UsageDetails(input_tokens=472, output_tokens=89, total_tokens=561)
    assert response.model == "claude-opus-4-1-20250805"
    assert sum(1 for u in updates if u.usage is not None) == 1


def test_tool_fragments_are_keyed_by_block_index() -> None:
    updates = _feed(StreamParser(), TOOL_STREAM)
    deltas = [d for u in updates for d in u.tool_call_deltas]
    assert {d.index for d in deltas} == {1}
    assert deltas[0].call_id == "toolu_01T1x1fJ34qAmk2tNTrN7Up6"
    assert deltas[0].name == "get_weather"
    assert "".join(d.arguments for d in deltas) == (
        '{"location": "San Francisco, CA", "unit": "fahrenheit"}'
    )


def test_events_that_carry_nothing() -> None:
    parser = StreamParser()
    for event in (
        {"type": "ping"},
        {"type": "content_block_stop", "index": 0},
        {"type": "a_future_event", "index": 0},
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "thinking", "thinking": ""},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "thinking_delta", "thinking": "Let me solve this step by step"},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "signature_delta", "signature": "EqQB"},
        },
    ):
        assert parser.feed(event) is None
    assert not parser.done


def test_message_delta_input_tokens_replace_the_start_counts() -> None:
    parser = StreamParser()
    _feed(
        parser,
        [
            {
                "type": "message_start",
                "message": {"model": "m", "usage": {"input_tokens": 10, "output_tokens": 1}},
            },
            {
                "type": "message_delta",
                "delta": {"stop_reason": "max_tokens"},
                "usage": {"input_tokens": 12, "output_tokens": 5, "cache_read_input_tokens": 3},
            },
        ],
    )
    final = parser.feed({"type": "message_stop"})
    assert final is not None
    assert final.usage == UsageDetails(input_tokens=15, output_tokens=5, total_tokens=20)
    assert final.finish_reason is FinishReason.LENGTH


def test_streamed_structured_answer_is_text() -> None:
    parser = StreamParser(response_format=Weather)
    updates = _feed(
        parser,
        [
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {
                    "type": "tool_use",
                    "id": "toolu_9",
                    "name": RESPONSE_TOOL,
                    "input": {},
                },
            },
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "input_json_delta", "partial_json": '{"location": "Par'},
            },
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "input_json_delta", "partial_json": 'is", "temperature_c": 21}'},
            },
            {
                "type": "message_delta",
                "delta": {"stop_reason": "tool_use"},
                "usage": {"output_tokens": 20},
            },
            {"type": "message_stop"},
        ],
    )
    response = ChatResponse.from_updates(updates)
    assert Weather.model_validate_json(response.text) == Weather(location="Paris", temperature_c=21)
    assert response.message.function_calls == []
    assert response.finish_reason is FinishReason.STOP
