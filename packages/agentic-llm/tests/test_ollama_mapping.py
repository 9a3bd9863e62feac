"""The Ollama ``/api/chat`` wire format, pure: requests built from chat messages, chunks read
back. Payloads follow Ollama's API reference and tool-calling guide."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from agentic_core import (
    ChatMessage,
    ChatOptions,
    ChatResponse,
    FinishReason,
    FunctionCallContent,
    UsageDetails,
    tool,
)
from agentic_llm._ollama._client import normalize_host
from agentic_llm._ollama._mapping import (
    OllamaResponseReader,
    build_chat_request,
    parse_finish_reason,
    to_ollama_messages,
)


@tool
def get_temperature(city: str) -> str:
    """Get the current temperature for a city."""
    return "22°C"


@tool
def get_conditions(city: str) -> str:
    """Get the current weather conditions for a city."""
    return "Partly cloudy"


@tool
def list_cities() -> list[str]:
    """List the known cities."""
    return ["New York"]


class Answer(BaseModel):
    age: int
    available: bool


def _request(options: ChatOptions | None = None, *, stream: bool = False) -> dict[str, Any]:
    return build_chat_request("llama3.2", [ChatMessage.user("Hi")], options, stream=stream)


def test_minimal_request() -> None:
    assert _request() == {
        "model": "llama3.2",
        "messages": [{"role": "user", "content": "Hi"}],
        "stream": False,
    }
    assert _request(stream=True)["stream"] is True


def test_options_map_to_model_options() -> None:
    body = _request(ChatOptions(model="qwen3", temperature=0, max_tokens=64, stop=["\n"], seed=42))
    assert body["model"] == "qwen3"
    assert body["options"] == {"temperature": 0, "num_predict": 64, "stop": ["\n"], "seed": 42}


def test_structured_output_is_the_format_schema() -> None:
    assert _request(ChatOptions(response_format=Answer))["format"] == Answer.model_json_schema()


def test_tools_are_function_tools() -> None:
    body = _request(ChatOptions(tools=[get_temperature, list_cities]))
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "get_temperature",
                "description": "Get the current temperature for a city.",
                "parameters": get_temperature.parameters,
            },
        },
        {
            "type": "function",
            "function": {
                "name": "list_cities",
                "description": "List the known cities.",
                "parameters": list_cities.parameters,
            },
        },
    ]


@pytest.mark.parametrize(
    ("choice", "names"),
    [
        (None, ["get_temperature", "get_conditions"]),
        ("auto", ["get_temperature", "get_conditions"]),
        ("required", ["get_temperature", "get_conditions"]),
        ("get_conditions", ["get_conditions"]),
        ("none", []),
    ],
)
def test_tool_choice_selects_the_tools_offered(choice: str | None, names: list[str]) -> None:
    body = _request(ChatOptions(tools=[get_temperature, get_conditions], tool_choice=choice))
    assert [t["function"]["name"] for t in body.get("tools", [])] == names


def test_parallel_tool_loop_history() -> None:
    # The tool-calling guide's "parallel tool calling" conversation.
    calls = [
        FunctionCallContent(call_id="a", name="get_temperature", arguments={"city": "New York"}),
        FunctionCallContent(call_id="b", name="get_conditions", arguments={"city": "New York"}),
    ]
    messages = [
        ChatMessage.system("You are a weather bot."),
        ChatMessage.user("What are the conditions and temperature in New York?"),
        ChatMessage.assistant(contents=calls),
        ChatMessage.tool("a", "22°C"),
        ChatMessage.tool("b", {"sky": "Partly cloudy"}),
    ]
    assert to_ollama_messages(messages) == [
        {"role": "system", "content": "You are a weather bot."},
        {"role": "user", "content": "What are the conditions and temperature in New York?"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "type": "function",
                    "function": {
                        "index": 0,
                        "name": "get_temperature",
                        "arguments": {"city": "New York"},
                    },
                },
                {
                    "type": "function",
                    "function": {
                        "index": 1,
                        "name": "get_conditions",
                        "arguments": {"city": "New York"},
                    },
                },
            ],
        },
        {"role": "tool", "content": "22°C", "tool_name": "get_temperature"},
        {"role": "tool", "content": '{"sky": "Partly cloudy"}', "tool_name": "get_conditions"},
    ]


def test_a_result_without_its_call_is_sent_without_a_name() -> None:
    assert to_ollama_messages([ChatMessage.tool("lost", "42")]) == [
        {"role": "tool", "content": "42"}
    ]


# --- chunks ------------------------------------------------------------------------------------


def _chunk(content: str = "", *, done: bool = False, **extra: Any) -> dict[str, Any]:
    return {
        "model": "llama3.2",
        "created_at": "2023-08-04T08:52:19.385406455-07:00",
        "message": {"role": "assistant", "content": content, **extra.pop("message", {})},
        "done": done,
        **extra,
    }


def test_reader_reads_text_then_the_done_chunk() -> None:
    reader = OllamaResponseReader()
    first = reader.read(_chunk("The"))
    assert first is not None
    assert first.text == "The"
    assert first.usage is None
    assert reader.read(_chunk("")) is None
    last = reader.read(_chunk(done=True, done_reason="stop", prompt_eval_count=26, eval_count=282))
    assert reader.done
    assert last is not None
    assert last.usage == UsageDetails(input_tokens=26, output_tokens=282, total_tokens=308)
    assert last.finish_reason is FinishReason.STOP
    assert last.model == "llama3.2"


def test_reader_gives_each_tool_call_its_own_id() -> None:
    reader = OllamaResponseReader()
    first = reader.read(
        _chunk(
            message={
                "tool_calls": [
                    {"function": {"name": "get_temperature", "arguments": {"city": "New York"}}},
                    {"function": {"name": "get_temperature", "arguments": {"city": "London"}}},
                ]
            }
        )
    )
    last = reader.read(_chunk(done=True, done_reason="stop"))
    assert first is not None
    assert last is not None
    response = ChatResponse.from_updates([first, last])
    assert response.finish_reason is FinishReason.TOOL_CALLS
    calls = response.message.function_calls
    assert [c.arguments for c in calls] == [{"city": "New York"}, {"city": "London"}]
    assert len({c.call_id for c in calls}) == 2


def test_reader_uses_an_id_when_ollama_sends_one_and_parses_text_arguments() -> None:
    reader = OllamaResponseReader()
    update = reader.read(
        _chunk(
            done=True,
            message={
                "tool_calls": [
                    {
                        "id": "call_k3f8",
                        "function": {"name": "get_temperature", "arguments": '{"city": "Oslo"}'},
                    }
                ]
            },
        )
    )
    assert update is not None
    assert ChatResponse.from_updates([update]).message.function_calls == [
        FunctionCallContent(call_id="call_k3f8", name="get_temperature", arguments={"city": "Oslo"})
    ]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("stop", FinishReason.STOP),
        ("length", FinishReason.LENGTH),
        ("load", FinishReason.STOP),
        ("unload", FinishReason.STOP),
        ("something-new", FinishReason.STOP),
        (None, FinishReason.STOP),
    ],
)
def test_done_reasons(raw: str | None, expected: FinishReason) -> None:
    assert parse_finish_reason(raw) is expected


def test_length_with_calls_stays_length() -> None:
    assert parse_finish_reason("stop", has_tool_calls=True) is FinishReason.TOOL_CALLS
    assert parse_finish_reason("length", has_tool_calls=True) is FinishReason.LENGTH


@pytest.mark.parametrize(
    ("host", "url"),
    [
        ("127.0.0.1:11434", "http://127.0.0.1:11434"),
        ("localhost", "http://localhost:11434"),
        ("gpu-box:8080", "http://gpu-box:8080"),
        (":8080", "http://127.0.0.1:8080"),
        ("0.0.0.0", "http://0.0.0.0:11434"),  # noqa: S104 - OLLAMA_HOST as a server sets it
        ("[::1]", "http://[::1]:11434"),
        ("http://127.0.0.1:11434/", "http://127.0.0.1:11434"),
        ("https://ollama.example.com", "https://ollama.example.com"),
        ("https://proxy.example/ollama/", "https://proxy.example/ollama"),
        ("  http://localhost:11434  ", "http://localhost:11434"),
    ],
)
def test_host_forms(host: str, url: str) -> None:
    assert normalize_host(host) == url
