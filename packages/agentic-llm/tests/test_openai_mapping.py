"""The OpenAI wire format, pure: requests built from chat messages, responses parsed back.

Payloads follow the Chat Completions API reference (the ``chat.completion`` and
``chat.completion.chunk`` objects).
"""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from agentic_core import (
    AgentError,
    ChatMessage,
    ChatOptions,
    FinishReason,
    FunctionCallContent,
    UsageDetails,
    tool,
)
from agentic_llm import ProviderError
from agentic_llm._openai._mapping import (
    build_chat_request,
    parse_chat_completion,
    parse_chunk,
    parse_finish_reason,
    to_openai_messages,
)


@tool
def get_current_weather(location: str, unit: str = "celsius") -> str:
    """Get the current weather in a given location."""
    return f"21 {unit} in {location}"


class Weather(BaseModel):
    location: str
    temperature_c: float


def _request(options: ChatOptions | None = None, *, stream: bool = False) -> dict[str, Any]:
    return build_chat_request(
        "gpt-4o-mini",
        [ChatMessage.user("Hi")],
        options,
        stream=stream,
        max_tokens_field="max_completion_tokens",
    )


# --- requests ----------------------------------------------------------------------------------


def test_minimal_request_sends_model_and_messages_only() -> None:
    assert _request() == {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "Hi"}]}


def test_options_map_to_their_fields() -> None:
    body = _request(
        ChatOptions(model="gpt-4.1", temperature=0.2, max_tokens=64, stop=["\n\n"], seed=7)
    )
    assert body["model"] == "gpt-4.1"
    assert body["temperature"] == 0.2
    assert body["max_completion_tokens"] == 64
    assert "max_tokens" not in body
    assert body["stop"] == ["\n\n"]
    assert body["seed"] == 7


def test_max_tokens_field_is_chosen_by_the_caller() -> None:
    body = build_chat_request(
        "m", [], ChatOptions(max_tokens=5), stream=False, max_tokens_field="max_tokens"
    )
    assert body["max_tokens"] == 5


def test_tools_are_function_tools_with_their_schema() -> None:
    body = _request(ChatOptions(tools=[get_current_weather]))
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "get_current_weather",
                "description": "Get the current weather in a given location.",
                "parameters": get_current_weather.parameters,
            },
        }
    ]
    assert body["tools"][0]["function"]["parameters"]["required"] == ["location"]


@pytest.mark.parametrize(
    ("choice", "wire"),
    [
        ("auto", "auto"),
        ("none", "none"),
        ("required", "required"),
        ("get_current_weather", {"type": "function", "function": {"name": "get_current_weather"}}),
    ],
)
def test_tool_choice_mapping(choice: str, wire: Any) -> None:
    body = _request(ChatOptions(tools=[get_current_weather], tool_choice=choice))
    assert body["tool_choice"] == wire


def test_tool_choice_is_not_sent_without_tools() -> None:
    # The agent's last iteration asks for tool_choice="none" with no tools: OpenAI would 400.
    assert "tool_choice" not in _request(ChatOptions(tool_choice="none"))


def test_response_format_is_a_non_strict_json_schema() -> None:
    body = _request(ChatOptions(response_format=Weather))
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "Weather", "schema": Weather.model_json_schema(), "strict": False},
    }


def test_streaming_asks_for_usage() -> None:
    body = _request(stream=True)
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}


def test_conversation_with_tool_calls_maps_to_openai_messages() -> None:
    call = FunctionCallContent(
        call_id="call_abc123", name="get_current_weather", arguments={"location": "Boston, MA"}
    )
    messages = [
        ChatMessage.system("Be brief."),
        ChatMessage.user("Weather in Boston?"),
        ChatMessage.assistant(contents=[call], author_name="agent"),
        ChatMessage.tool("call_abc123", {"temperature": 21, "unit": "celsius"}),
        ChatMessage.tool("call_def", "Error: boom", is_error=True),
        ChatMessage.assistant("It is 21 °C."),
    ]
    assert to_openai_messages(messages) == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather in Boston?"},
        {
            "role": "assistant",
            "content": "",  # never null: llama.cpp's server answers 500 to null
            "tool_calls": [
                {
                    "id": "call_abc123",
                    "type": "function",
                    "function": {
                        "name": "get_current_weather",
                        "arguments": '{"location": "Boston, MA"}',
                    },
                }
            ],
        },
        {
            "role": "tool",
            "tool_call_id": "call_abc123",
            "content": '{"temperature": 21, "unit": "celsius"}',
        },
        {"role": "tool", "tool_call_id": "call_def", "content": "Error: boom"},
        {"role": "assistant", "content": "It is 21 °C."},
    ]


# --- responses ---------------------------------------------------------------------------------


def _completion(message: dict[str, Any], finish_reason: str | None = "stop") -> dict[str, Any]:
    return {
        "id": "chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT",
        "object": "chat.completion",
        "created": 1741569952,
        "model": "gpt-4o-mini-2024-07-18",
        "choices": [
            {"index": 0, "message": message, "logprobs": None, "finish_reason": finish_reason}
        ],
        "usage": {
            "prompt_tokens": 19,
            "completion_tokens": 10,
            "total_tokens": 29,
            "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0},
        },
        "service_tier": "default",
    }


def _parse(payload: Any, response_format: type[BaseModel] | None = None) -> Any:
    return parse_chat_completion(
        payload, label="openai (x)", provider="openai", response_format=response_format
    )


def test_text_reply_usage_and_model() -> None:
    response = _parse(
        _completion(
            {"role": "assistant", "content": "Hello! How can I assist you today?", "refusal": None}
        )
    )
    assert response.text == "Hello! How can I assist you today?"
    assert response.usage == UsageDetails(input_tokens=19, output_tokens=10, total_tokens=29)
    assert response.finish_reason is FinishReason.STOP
    assert response.model == "gpt-4o-mini-2024-07-18"


def test_tool_calls_with_null_content() -> None:
    message = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {
                    "name": "get_current_weather",
                    "arguments": '{\n"location": "Boston, MA"\n}',
                },
            },
            {
                "id": "call_2",
                "type": "function",
                "function": {
                    "name": "get_current_weather",
                    "arguments": '{"location": "Paris", "unit": "celsius"}',
                },
            },
        ],
    }
    response = _parse(_completion(message, "tool_calls"))
    assert response.text == ""
    assert response.message.function_calls == [
        FunctionCallContent(
            call_id="call_1", name="get_current_weather", arguments={"location": "Boston, MA"}
        ),
        FunctionCallContent(
            call_id="call_2",
            name="get_current_weather",
            arguments={"location": "Paris", "unit": "celsius"},
        ),
    ]
    assert response.finish_reason is FinishReason.TOOL_CALLS


def test_tool_call_arguments_that_are_not_json_raise_naming_the_tool() -> None:
    message = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c", "type": "function", "function": {"name": "lookup", "arguments": "{oops"}}
        ],
    }
    with pytest.raises(AgentError, match="lookup"):
        _parse(_completion(message, "tool_calls"))


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("stop", FinishReason.STOP),
        ("length", FinishReason.LENGTH),
        ("tool_calls", FinishReason.TOOL_CALLS),
        ("content_filter", FinishReason.CONTENT_FILTER),
        ("function_call", FinishReason.TOOL_CALLS),
        ("error", FinishReason.ERROR),
        ("eos", FinishReason.STOP),
        (None, FinishReason.STOP),
    ],
)
def test_each_finish_reason(raw: str | None, expected: FinishReason) -> None:
    response = _parse(_completion({"role": "assistant", "content": "x"}, raw))
    assert response.finish_reason is expected


def test_unknown_finish_reason_with_tool_calls_is_tool_calls() -> None:
    assert parse_finish_reason("eos", has_tool_calls=True) is FinishReason.TOOL_CALLS


def test_structured_value_is_parsed_when_valid() -> None:
    text = '{"location": "Paris", "temperature_c": 21.5}'
    response = _parse(_completion({"role": "assistant", "content": text}), Weather)
    assert response.value == Weather(location="Paris", temperature_c=21.5)


def test_structured_value_is_none_when_invalid() -> None:
    response = _parse(_completion({"role": "assistant", "content": "not json"}), Weather)
    assert response.value is None
    assert response.text == "not json"


def test_a_completion_without_choices_is_a_provider_error() -> None:
    with pytest.raises(ProviderError, match="without choices"):
        _parse({"id": "x", "object": "chat.completion", "choices": []})


def test_missing_usage_is_zero() -> None:
    payload = _completion({"role": "assistant", "content": "x"})
    del payload["usage"]
    assert _parse(payload).usage == UsageDetails()


# --- chunks ------------------------------------------------------------------------------------


def _chunk(delta: dict[str, Any], finish_reason: str | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "id": "chatcmpl-123",
        "object": "chat.completion.chunk",
        "created": 1694268190,
        "model": "gpt-4o-mini",
        "system_fingerprint": "fp_44709d6fcb",
        "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}],
        **extra,
    }


def test_role_only_first_chunk_carries_nothing() -> None:
    assert parse_chunk(_chunk({"role": "assistant", "content": ""})) is None


def test_prompt_filter_chunk_without_choices_carries_nothing() -> None:
    # Azure OpenAI sends one before the first token.
    assert (
        parse_chunk(
            {
                "id": "",
                "choices": [],
                "created": 0,
                "model": "",
                "object": "",
                "prompt_filter_results": [],
            }
        )
        is None
    )


def test_text_chunk() -> None:
    update = parse_chunk(_chunk({"content": "Hello"}))
    assert update is not None
    assert (update.text, update.finish_reason, update.model) == ("Hello", None, "gpt-4o-mini")


def test_tool_call_fragments_keep_their_index() -> None:
    first = parse_chunk(
        _chunk(
            {
                "tool_calls": [
                    {
                        "index": 1,
                        "id": "call_b",
                        "type": "function",
                        "function": {"name": "f", "arguments": ""},
                    }
                ]
            }
        )
    )
    later = parse_chunk(
        _chunk(
            {
                "tool_calls": [
                    {
                        "index": 1,
                        "id": None,
                        "type": None,
                        "function": {"arguments": '{"a"', "name": None},
                    }
                ]
            }
        )
    )
    assert first is not None
    assert later is not None
    assert first.tool_call_deltas[0].model_dump() == {
        "index": 1,
        "call_id": "call_b",
        "name": "f",
        "arguments": "",
    }
    assert later.tool_call_deltas[0].model_dump() == {
        "index": 1,
        "call_id": None,
        "name": None,
        "arguments": '{"a"',
    }


def test_usage_chunk_has_no_choices() -> None:
    update = parse_chunk(
        {
            **_chunk({}),
            "choices": [],
            "usage": {"prompt_tokens": 9, "completion_tokens": 12, "total_tokens": 21},
        }
    )
    assert update is not None
    assert update.usage == UsageDetails(input_tokens=9, output_tokens=12, total_tokens=21)


def test_finish_chunk() -> None:
    update = parse_chunk(_chunk({}, "length", usage=None))
    assert update is not None
    assert update.finish_reason is FinishReason.LENGTH
    assert update.usage is None
