"""The Gemini wire format, pure: requests built from chat messages, responses read back.

Payloads follow the Gemini API reference (``GenerateContentRequest``, ``Content``/``Part``,
``FunctionDeclaration``, ``Schema``, ``GenerateContentResponse``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import pytest
from pydantic import BaseModel

from agentic_core import (
    ChatMessage,
    ChatOptions,
    ChatResponse,
    FinishReason,
    FunctionCallContent,
    Role,
    UsageDetails,
    tool,
)
from agentic_llm import InvalidRequestError
from agentic_llm._gemini._mapping import (
    GeminiResponseReader,
    build_generate_request,
    parse_finish_reason,
    parse_usage,
    to_function_declaration,
    to_gemini_contents,
    to_gemini_schema,
    to_tool_config,
)


@tool
def get_current_weather(location: str, unit: Literal["celsius", "fahrenheit"] = "celsius") -> str:
    """Get the current weather in a given location."""
    return f"21 {unit} in {location}"


@tool
def list_cities() -> list[str]:
    """List the cities with a weather station."""
    return ["Paris"]


class SchemaTool:
    """A tool with a hand-written JSON schema (as MCP servers send them)."""

    def __init__(self, parameters: dict[str, Any], name: str = "lookup") -> None:
        self.name = name
        self.description = "Look something up."
        self.parameters = parameters

    async def invoke(self, arguments: Mapping[str, Any]) -> Any:
        return dict(arguments)


class Weather(BaseModel):
    location: str
    temperature_c: float


class Address(BaseModel):
    street: str
    zip_code: str | None = None


@tool
def ship(address: Address, express: bool = False) -> str:
    """Ship a parcel."""
    return "ok"


def _call(call_id: str, name: str = "get_current_weather", **arguments: Any) -> FunctionCallContent:
    return FunctionCallContent(call_id=call_id, name=name, arguments=arguments)


# --- requests ----------------------------------------------------------------------------------


def test_minimal_request_has_contents_only() -> None:
    assert build_generate_request([ChatMessage.user("Hi")], None) == {
        "contents": [{"role": "user", "parts": [{"text": "Hi"}]}]
    }


def test_system_messages_become_the_system_instruction() -> None:
    body = build_generate_request(
        [
            ChatMessage.system("You are a cat."),
            ChatMessage.system("Be brief."),
            ChatMessage.user("Hi"),
        ],
        None,
    )
    assert body["systemInstruction"] == {
        "parts": [{"text": "You are a cat."}, {"text": "Be brief."}]
    }
    assert body["contents"] == [{"role": "user", "parts": [{"text": "Hi"}]}]


def test_options_map_to_the_generation_config() -> None:
    body = build_generate_request(
        [ChatMessage.user("Hi")],
        ChatOptions(temperature=0.2, max_tokens=64, stop=["\n\n"], seed=7, model="ignored-here"),
    )
    assert body["generationConfig"] == {
        "temperature": 0.2,
        "maxOutputTokens": 64,
        "stopSequences": ["\n\n"],
        "seed": 7,
    }
    assert "model" not in body  # the model is part of the URL


def test_structured_output_asks_for_json_with_a_schema() -> None:
    body = build_generate_request([ChatMessage.user("Hi")], ChatOptions(response_format=Weather))
    assert body["generationConfig"] == {
        "responseMimeType": "application/json",
        "responseSchema": {
            "type": "OBJECT",
            "properties": {"location": {"type": "STRING"}, "temperature_c": {"type": "NUMBER"}},
            "required": ["location", "temperature_c"],
            "propertyOrdering": ["location", "temperature_c"],
        },
    }


def test_structured_output_the_subset_cannot_express_goes_as_json_schema() -> None:
    class Scores(BaseModel):
        by_player: dict[str, int]

    config = build_generate_request([ChatMessage.user("Hi")], ChatOptions(response_format=Scores))[
        "generationConfig"
    ]
    assert config["responseMimeType"] == "application/json"
    assert "responseSchema" not in config
    assert config["responseJsonSchema"] == Scores.model_json_schema()


def test_tools_are_function_declarations_in_one_tool() -> None:
    body = build_generate_request(
        [ChatMessage.user("Hi")], ChatOptions(tools=[get_current_weather, list_cities])
    )
    assert body["tools"] == [
        {
            "functionDeclarations": [
                {
                    "name": "get_current_weather",
                    "description": "Get the current weather in a given location.",
                    "parameters": {
                        "type": "OBJECT",
                        "properties": {
                            "location": {"type": "STRING"},
                            "unit": {
                                "type": "STRING",
                                "enum": ["celsius", "fahrenheit"],
                                "description": 'Default: "celsius"',
                            },
                        },
                        "required": ["location"],
                        "propertyOrdering": ["location", "unit"],
                    },
                },
                # No parameters at all: Gemini rejects an OBJECT schema without properties.
                {"name": "list_cities", "description": "List the cities with a weather station."},
            ]
        }
    ]
    assert "toolConfig" not in body


@pytest.mark.parametrize(
    ("choice", "config"),
    [
        ("auto", {"functionCallingConfig": {"mode": "AUTO"}}),
        ("none", {"functionCallingConfig": {"mode": "NONE"}}),
        ("required", {"functionCallingConfig": {"mode": "ANY"}}),
        (
            "get_current_weather",
            {
                "functionCallingConfig": {
                    "mode": "ANY",
                    "allowedFunctionNames": ["get_current_weather"],
                }
            },
        ),
    ],
)
def test_tool_choice_is_the_function_calling_mode(choice: str, config: dict[str, Any]) -> None:
    assert to_tool_config(choice) == config
    body = build_generate_request(
        [ChatMessage.user("Hi")], ChatOptions(tools=[get_current_weather], tool_choice=choice)
    )
    assert body["toolConfig"] == config


def test_tool_choice_without_tools_is_not_sent() -> None:
    body = build_generate_request([ChatMessage.user("Hi")], ChatOptions(tool_choice="required"))
    assert "toolConfig" not in body


# --- JSON Schema -> Gemini Schema --------------------------------------------------------------


def test_refs_are_inlined_and_unsupported_keywords_dropped() -> None:
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "LookupArguments",
        "type": "object",
        "additionalProperties": False,
        "$defs": {
            "Address": {
                "title": "Address",
                "type": "object",
                "properties": {
                    "street": {"type": "string", "title": "Street"},
                    "zip": {"type": "string", "pattern": "^[0-9]{5}$"},
                },
                "required": ["street", "city"],
                "additionalProperties": False,
            }
        },
        "properties": {
            "address": {"$ref": "#/$defs/Address", "description": "Where to look."},
            "count": {"type": "integer", "minimum": 1, "exclusiveMaximum": 10, "format": "int32"},
            "when": {"type": "string", "format": "date-time"},
            "site": {"type": "string", "format": "uri"},
        },
        "required": ["address"],
    }
    assert to_gemini_schema(schema) == {
        "type": "OBJECT",
        "properties": {
            "address": {
                "type": "OBJECT",
                "description": "Where to look.",
                "properties": {
                    "street": {"type": "STRING"},
                    "zip": {"type": "STRING", "pattern": "^[0-9]{5}$"},
                },
                # "city" is not a property: Gemini rejects required names it cannot find
                "required": ["street"],
                "propertyOrdering": ["street", "zip"],
            },
            "count": {"type": "INTEGER", "minimum": 1, "format": "int32"},
            "when": {"type": "STRING", "format": "date-time"},
            "site": {"type": "STRING"},  # the Gemini API takes only enum and date-time formats
        },
        "required": ["address"],
        "propertyOrdering": ["address", "count", "when", "site"],
    }


def test_nullable_unions_const_and_type_lists() -> None:
    schema = {
        "type": "object",
        "properties": {
            "a": {"anyOf": [{"type": "integer"}, {"type": "null"}], "description": "A number."},
            "b": {"type": ["string", "null"]},
            "c": {"const": "fixed"},
            "d": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
            "e": {"allOf": [{"type": "boolean"}], "description": "Flag."},
            "f": {"enum": [1, 2, 3], "type": "integer"},
            "g": {"enum": ["x", None]},
        },
    }
    assert to_gemini_schema(schema) == {
        "type": "OBJECT",
        "properties": {
            "a": {"type": "INTEGER", "description": "A number.", "nullable": True},
            "b": {"type": "STRING", "nullable": True},
            "c": {"type": "STRING", "enum": ["fixed"]},
            "d": {"anyOf": [{"type": "STRING"}, {"type": "INTEGER"}]},
            "e": {"type": "BOOLEAN", "description": "Flag."},
            "f": {"type": "INTEGER", "description": "One of: 1, 2, 3"},
            "g": {"type": "STRING", "enum": ["x"], "nullable": True},
        },
        "propertyOrdering": ["a", "b", "c", "d", "e", "f", "g"],
    }


@pytest.mark.parametrize(
    "prop",
    [
        {"type": "object", "additionalProperties": {"type": "integer"}},  # dict[str, int]
        {"type": "array"},  # list without item type
        {"type": "array", "prefixItems": [{"type": "string"}], "items": {"type": "string"}},
        {},  # any value
        {"$ref": "#/$defs/Node"},  # recursive
        {"$ref": "https://example.com/other.json"},
    ],
)
def test_schemas_the_subset_cannot_express(prop: dict[str, Any]) -> None:
    schema = {
        "type": "object",
        "properties": {"x": prop},
        "$defs": {"Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}}}},
    }
    assert to_gemini_schema(schema) is None
    declaration = to_function_declaration(SchemaTool(schema))
    assert declaration["parametersJsonSchema"] == schema
    assert "parameters" not in declaration


def test_a_pydantic_model_parameter_keeps_its_structure() -> None:
    parameters = to_function_declaration(ship)["parameters"]
    assert parameters["properties"]["address"] == {
        "type": "OBJECT",
        "properties": {
            "street": {"type": "STRING"},
            "zip_code": {"type": "STRING", "description": "Default: null", "nullable": True},
        },
        "required": ["street"],
        "propertyOrdering": ["street", "zip_code"],
    }
    assert parameters["required"] == ["address"]


# --- conversation ------------------------------------------------------------------------------


def test_a_tool_loop_history_maps_to_user_and_model_turns() -> None:
    messages = [
        ChatMessage.system("You answer weather questions."),
        ChatMessage.user("Weather in Boston and Paris?"),
        ChatMessage.assistant(
            "Let me check.",
            contents=[_call("c1", location="Boston, MA"), _call("c2", location="Paris")],
        ),
        ChatMessage.tool("c1", "22 celsius in Boston, MA"),
        ChatMessage.tool("c2", {"temperature": 18, "unit": "celsius"}),
        ChatMessage.user("And in Rome?"),
    ]
    system, contents = to_gemini_contents(messages)
    assert system == {"parts": [{"text": "You answer weather questions."}]}
    assert contents == [
        {"role": "user", "parts": [{"text": "Weather in Boston and Paris?"}]},
        {
            "role": "model",
            "parts": [
                {"text": "Let me check."},
                {
                    "functionCall": {
                        "name": "get_current_weather",
                        "args": {"location": "Boston, MA"},
                    }
                },
                {"functionCall": {"name": "get_current_weather", "args": {"location": "Paris"}}},
            ],
        },
        # Both results (and the next user text) in the one turn after the calls.
        {
            "role": "user",
            "parts": [
                {
                    "functionResponse": {
                        "name": "get_current_weather",
                        "response": {"output": "22 celsius in Boston, MA"},
                    }
                },
                {
                    "functionResponse": {
                        "name": "get_current_weather",
                        "response": {"output": {"temperature": 18, "unit": "celsius"}},
                    }
                },
                {"text": "And in Rome?"},
            ],
        },
    ]


def test_a_failed_tool_is_reported_under_the_error_key() -> None:
    messages = [
        ChatMessage.assistant(contents=[_call("c1", location="Atlantis")]),
        ChatMessage.tool("c1", "unknown city: Atlantis", is_error=True),
    ]
    _, contents = to_gemini_contents(messages)
    assert contents[1]["parts"][0]["functionResponse"]["response"] == {
        "error": "unknown city: Atlantis"
    }


def test_a_result_without_its_call_is_a_clear_error() -> None:
    with pytest.raises(InvalidRequestError, match=r"call_id 'lost'.*function's name"):
        to_gemini_contents([ChatMessage.user("Hi"), ChatMessage.tool("lost", "42")])


def test_call_ids_and_thought_signatures_are_sent_back() -> None:
    messages = [
        ChatMessage.user("Weather?"),
        ChatMessage.assistant(contents=[_call("api-id-1", location="Paris")]),
        ChatMessage.tool("api-id-1", "sunny"),
    ]
    extras = {"api-id-1": {"id": "api-id-1", "thoughtSignature": "c2lnbmF0dXJl"}}
    _, contents = to_gemini_contents(messages, call_extras=extras)
    assert contents[1]["parts"] == [
        {
            "functionCall": {
                "name": "get_current_weather",
                "args": {"location": "Paris"},
                "id": "api-id-1",
            },
            "thoughtSignature": "c2lnbmF0dXJl",
        }
    ]
    assert contents[2]["parts"][0]["functionResponse"]["id"] == "api-id-1"


def test_empty_messages_are_skipped() -> None:
    _, contents = to_gemini_contents([ChatMessage.user(""), ChatMessage.user("Hi")])
    assert contents == [{"role": "user", "parts": [{"text": "Hi"}]}]


# --- responses ---------------------------------------------------------------------------------


def _response(parts: list[dict[str, Any]], finish: str | None = "STOP", **extra: Any) -> Any:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    if finish is not None:
        candidate["finishReason"] = finish
    return {"candidates": [candidate], "modelVersion": "gemini-2.5-flash", **extra}


def test_reader_reads_text_and_skips_thought_summaries() -> None:
    reader = GeminiResponseReader()
    update = reader.read(
        _response([{"text": "Thinking about it...", "thought": True}, {"text": "Hello"}])
    )
    assert update is not None
    assert update.text == "Hello"
    assert reader.finished
    assert reader.final_update().finish_reason is FinishReason.STOP


def test_reader_gives_calls_ids_unique_per_response_and_across_responses() -> None:
    reader = GeminiResponseReader()
    payload = _response(
        [
            {"functionCall": {"name": "get_current_weather", "args": {"location": "Boston"}}},
            {"functionCall": {"name": "get_current_weather", "args": {"location": "Paris"}}},
        ]
    )
    update = reader.read(payload)
    assert update is not None
    ids = [d.call_id for d in update.tool_call_deltas]
    assert len(set(ids)) == 2
    assert all(i and i.startswith("call_") for i in ids)
    other = GeminiResponseReader().read(payload)
    assert other is not None
    assert not set(ids) & {d.call_id for d in other.tool_call_deltas}
    response = ChatResponse.from_updates([update, reader.final_update()])
    assert response.finish_reason is FinishReason.TOOL_CALLS
    assert [c.arguments for c in response.message.function_calls] == [
        {"location": "Boston"},
        {"location": "Paris"},
    ]
    assert reader.call_extras == {}


def test_reader_keeps_api_call_ids_and_thought_signatures() -> None:
    reader = GeminiResponseReader()
    update = reader.read(
        _response(
            [
                {
                    "functionCall": {"id": "fc-7", "name": "list_cities", "args": {}},
                    "thoughtSignature": "Q2lRQk...",
                }
            ]
        )
    )
    assert update is not None
    assert update.tool_call_deltas[0].call_id == "fc-7"
    assert update.tool_call_deltas[0].arguments == "{}"
    assert reader.call_extras == {"fc-7": {"id": "fc-7", "thoughtSignature": "Q2lRQk..."}}


def test_usage_counts_thoughts_as_output() -> None:
    assert parse_usage(
        {
            "promptTokenCount": 12,
            "candidatesTokenCount": 30,
            "thoughtsTokenCount": 100,
            "totalTokenCount": 142,
            "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 12}],
        }
    ) == UsageDetails(input_tokens=12, output_tokens=130, total_tokens=142)
    assert parse_usage({"promptTokenCount": 5}) == UsageDetails(
        input_tokens=5, output_tokens=0, total_tokens=5
    )
    assert parse_usage(None) is None


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("STOP", FinishReason.STOP),
        ("FINISH_REASON_UNSPECIFIED", FinishReason.STOP),
        ("MAX_TOKENS", FinishReason.LENGTH),
        ("SAFETY", FinishReason.CONTENT_FILTER),
        ("RECITATION", FinishReason.CONTENT_FILTER),
        ("BLOCKLIST", FinishReason.CONTENT_FILTER),
        ("PROHIBITED_CONTENT", FinishReason.CONTENT_FILTER),
        ("SPII", FinishReason.CONTENT_FILTER),
        ("IMAGE_SAFETY", FinishReason.CONTENT_FILTER),
        ("LANGUAGE", FinishReason.ERROR),
        ("OTHER", FinishReason.ERROR),
        ("MALFORMED_FUNCTION_CALL", FinishReason.ERROR),
        ("UNEXPECTED_TOOL_CALL", FinishReason.ERROR),
        ("SOMETHING_NEW", FinishReason.STOP),
        (None, FinishReason.STOP),
    ],
)
def test_finish_reasons(raw: str | None, expected: FinishReason) -> None:
    assert parse_finish_reason(raw) is expected


def test_stop_with_calls_is_tool_calls_but_a_filter_stays_a_filter() -> None:
    assert parse_finish_reason("STOP", has_tool_calls=True) is FinishReason.TOOL_CALLS
    assert parse_finish_reason("SAFETY", has_tool_calls=True) is FinishReason.CONTENT_FILTER


def test_a_blocked_prompt_finishes_with_content_filter() -> None:
    reader = GeminiResponseReader()
    update = reader.read(
        {
            "promptFeedback": {
                "blockReason": "SAFETY",
                "safetyRatings": [
                    {"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "HIGH"}
                ],
            },
            "usageMetadata": {"promptTokenCount": 9, "totalTokenCount": 9},
        }
    )
    assert update is None
    assert reader.finished
    assert reader.block_reason == "SAFETY"
    final = reader.final_update()
    assert final.finish_reason is FinishReason.CONTENT_FILTER
    assert final.usage == UsageDetails(input_tokens=9, output_tokens=0, total_tokens=9)


def test_reader_ignores_non_object_payloads() -> None:
    reader = GeminiResponseReader()
    assert reader.read(["not", "an", "object"]) is None
    assert not reader.finished
    assert reader.final_update().model is None
    assert ChatResponse.from_updates([reader.final_update()]).message.role is Role.ASSISTANT
