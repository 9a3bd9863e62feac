"""Gemini ``generateContent`` wire format <-> agentic's chat types (pure: no I/O).

Field names follow the Gemini API reference (``models.generateContent``,
``models.streamGenerateContent``, ``Content``/``Part``, ``FunctionDeclaration``, ``Schema``,
``GenerationConfig``, ``ToolConfig``, ``GenerateContentResponse``):
https://ai.google.dev/api/generate-content

Notes on the dialect:

- Roles are ``user`` and ``model``; system messages become the top-level ``systemInstruction``.
  Tool results travel as ``functionResponse`` parts of a ``user`` turn and must name the function,
  so the name is looked up from the earlier ``FunctionCallContent`` with the same ``call_id``.
  Consecutive turns of one role are merged into one ``Content`` (Gemini wants the results of a
  parallel call in the one turn after it, and rejects some non-alternating histories).
- Function calls may come without an ``id`` (older API versions): the reader gives each one a
  ``call_id`` of its own (``call_<response prefix>_<n>``), unique per response and stable across a
  stream. Provider-side details of a call (its API ``id``, the ``thoughtSignature`` that Gemini 3
  requires back on the ``functionCall`` part) are returned as ``call_extras`` for the client to
  re-attach when the call is sent back.
- ``parameters`` and ``responseSchema`` take an OpenAPI 3.0 subset, not JSON Schema:
  ``to_gemini_schema`` translates (``$ref`` inlined, ``anyOf`` with ``null`` -> ``nullable``,
  ``const`` -> ``enum``, unsupported keywords such as ``additionalProperties``, ``title``,
  ``$schema``, ``exclusiveMinimum`` dropped, ``default`` folded into the description). A schema
  the subset cannot express (a free-form object, an array without ``items``, a recursive type,
  an untyped value) is sent unchanged as ``parametersJsonSchema`` / ``responseJsonSchema``
  instead, the API's full JSON Schema alternative.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from typing import Any, cast

from agentic_core import (
    ChatMessage,
    ChatOptions,
    ChatResponseUpdate,
    FinishReason,
    FunctionCallContent,
    FunctionResultContent,
    Role,
    Tool,
    ToolCallDelta,
    UsageDetails,
)
from agentic_llm._errors import InvalidRequestError
from agentic_llm._json import JSONObject, as_list, as_object

# Gemini's FinishReason enum. Anything that is the model's own normal end is STOP (TOOL_CALLS when
# the reply holds function calls); a safety or policy block is CONTENT_FILTER; a stop for another
# reason (unsupported language, malformed or unexpected tool call, OTHER) is ERROR; an unknown
# future value is read as STOP (TOOL_CALLS with calls), as OpenAI's unknown values are.
_FINISH_REASONS: dict[str, FinishReason] = {
    "FINISH_REASON_UNSPECIFIED": FinishReason.STOP,
    "STOP": FinishReason.STOP,
    "MAX_TOKENS": FinishReason.LENGTH,
    "SAFETY": FinishReason.CONTENT_FILTER,
    "RECITATION": FinishReason.CONTENT_FILTER,
    "BLOCKLIST": FinishReason.CONTENT_FILTER,
    "PROHIBITED_CONTENT": FinishReason.CONTENT_FILTER,
    "SPII": FinishReason.CONTENT_FILTER,
    "IMAGE_SAFETY": FinishReason.CONTENT_FILTER,
    "IMAGE_PROHIBITED_CONTENT": FinishReason.CONTENT_FILTER,
    "LANGUAGE": FinishReason.ERROR,
    "OTHER": FinishReason.ERROR,
    "MALFORMED_FUNCTION_CALL": FinishReason.ERROR,
    "UNEXPECTED_TOOL_CALL": FinishReason.ERROR,
    "TOO_MANY_TOOL_CALLS": FinishReason.ERROR,
}

_TOOL_CHOICE_MODES = {"auto": "AUTO", "none": "NONE", "required": "ANY"}

# The OpenAPI subset of Gemini's Schema object (v1beta) that is passed through as it is.
_SCHEMA_KEYWORDS = frozenset(
    {
        "description",
        "nullable",
        "pattern",
        "example",
        "minItems",
        "maxItems",
        "minLength",
        "maxLength",
        "minProperties",
        "maxProperties",
        "minimum",
        "maximum",
    }
)
_TYPES = {
    "string": "STRING",
    "number": "NUMBER",
    "integer": "INTEGER",
    "boolean": "BOOLEAN",
    "array": "ARRAY",
    "object": "OBJECT",
}
# Formats the Gemini API accepts per type ("enum" and "date-time" only, for strings).
_FORMATS = {
    "STRING": frozenset({"enum", "date-time"}),
    "NUMBER": frozenset({"float", "double"}),
    "INTEGER": frozenset({"int32", "int64"}),
}


# -- request ------------------------------------------------------------------------------------


def build_generate_request(
    messages: Sequence[ChatMessage],
    options: ChatOptions | None,
    *,
    call_extras: Mapping[str, JSONObject] | None = None,
) -> JSONObject:
    """The JSON body of ``generateContent`` / ``streamGenerateContent`` (the model is in the URL).

    ``call_extras`` maps a ``call_id`` to what the API attached to that call (``id``,
    ``thoughtSignature``), re-sent with it.
    """
    options = options or ChatOptions()
    system, contents = to_gemini_contents(messages, call_extras=call_extras or {})
    body: JSONObject = {"contents": contents}
    if system is not None:
        body["systemInstruction"] = system
    if options.tools:
        declarations = [to_function_declaration(tool) for tool in options.tools]
        body["tools"] = [{"functionDeclarations": declarations}]
        if options.tool_choice is not None:
            body["toolConfig"] = to_tool_config(options.tool_choice)
    config = _generation_config(options)
    if config:
        body["generationConfig"] = config
    return body


def _generation_config(options: ChatOptions) -> JSONObject:
    config: JSONObject = {}
    if options.temperature is not None:
        config["temperature"] = options.temperature
    if options.max_tokens is not None:
        config["maxOutputTokens"] = options.max_tokens
    if options.stop:
        config["stopSequences"] = list(options.stop)
    if options.seed is not None:
        config["seed"] = options.seed
    if options.response_format is not None:
        schema = options.response_format.model_json_schema()
        config["responseMimeType"] = "application/json"
        converted = to_gemini_schema(schema)
        if converted is None:
            config["responseJsonSchema"] = schema
        else:
            config["responseSchema"] = converted
    return config


def to_gemini_contents(
    messages: Sequence[ChatMessage], *, call_extras: Mapping[str, JSONObject] | None = None
) -> tuple[JSONObject | None, list[JSONObject]]:
    """``(systemInstruction, contents)`` for a conversation.

    Raises ``InvalidRequestError`` for a tool result whose call is not in the conversation
    (Gemini needs the function's name, and only the call carries it).
    """
    extras = call_extras or {}
    names: dict[str, str] = {}
    system_parts: list[JSONObject] = []
    contents: list[JSONObject] = []
    for message in messages:
        if message.role is Role.SYSTEM:
            if message.text:
                system_parts.append({"text": message.text})
            continue
        role = "model" if message.role is Role.ASSISTANT else "user"
        parts: list[JSONObject] = []
        for content in message.contents:
            if isinstance(content, FunctionCallContent):
                names[content.call_id] = content.name
                parts.append(_function_call_part(content, extras.get(content.call_id, {})))
            elif isinstance(content, FunctionResultContent):
                parts.append(_function_response_part(content, names, extras))
            elif content.text:
                parts.append({"text": content.text})
        if not parts:
            continue
        if contents and contents[-1]["role"] == role:
            contents[-1]["parts"].extend(parts)
        else:
            contents.append({"role": role, "parts": parts})
    system = {"parts": system_parts} if system_parts else None
    return system, contents


def _function_call_part(call: FunctionCallContent, extras: Mapping[str, Any]) -> JSONObject:
    function_call: JSONObject = {"name": call.name, "args": call.arguments}
    if "id" in extras:
        function_call["id"] = extras["id"]
    part: JSONObject = {"functionCall": function_call}
    if "thoughtSignature" in extras:
        part["thoughtSignature"] = extras["thoughtSignature"]
    return part


def _function_response_part(
    result: FunctionResultContent,
    names: Mapping[str, str],
    extras: Mapping[str, Mapping[str, Any]],
) -> JSONObject:
    name = names.get(result.call_id)
    if name is None:
        raise InvalidRequestError(
            f"the tool result for call_id {result.call_id!r} has no matching function call "
            "earlier in the conversation: Gemini needs the function's name, which only the "
            "call carries (keep each tool call and its results together in the history)",
            provider="gemini",
        )
    # "output" / "error" are the keys the API documents for a function's outcome.
    response: JSONObject = {"error" if result.is_error else "output": result.result}
    function_response: JSONObject = {"name": name, "response": response}
    call_extras = extras.get(result.call_id, {})
    if "id" in call_extras:
        function_response["id"] = call_extras["id"]
    return {"functionResponse": function_response}


def to_function_declaration(tool: Tool) -> JSONObject:
    """A tool as a ``FunctionDeclaration`` (no ``parameters`` for a tool without any: Gemini
    rejects an OBJECT schema with no properties)."""
    declaration: JSONObject = {"name": tool.name}
    if tool.description:
        declaration["description"] = tool.description
    parameters = tool.parameters or {}
    if not parameters.get("properties"):
        return declaration
    converted = to_gemini_schema(parameters)
    if converted is None:
        declaration["parametersJsonSchema"] = parameters
    else:
        declaration["parameters"] = converted
    return declaration


def to_tool_config(choice: str) -> JSONObject:
    """``tool_choice`` as ``toolConfig``: auto -> AUTO, none -> NONE, required -> ANY, and a
    function name -> ANY restricted to that function."""
    mode = _TOOL_CHOICE_MODES.get(choice)
    if mode is not None:
        return {"functionCallingConfig": {"mode": mode}}
    return {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": [choice]}}


# -- JSON Schema -> Gemini Schema ---------------------------------------------------------------


class _InexpressibleError(Exception):
    """The schema needs something Gemini's OpenAPI subset does not have."""


def to_gemini_schema(schema: Mapping[str, Any]) -> JSONObject | None:
    """``schema`` (JSON Schema) in Gemini's ``Schema`` dialect, or ``None`` when the dialect
    cannot express it (send the JSON Schema as ``parametersJsonSchema`` then)."""
    defs: dict[str, Any] = {}
    for key in ("definitions", "$defs"):
        value = schema.get(key)
        if isinstance(value, dict):
            defs.update(cast("dict[str, Any]", value))
    try:
        return _convert(schema, defs, ())
    except _InexpressibleError:
        return None


def _convert(node: Any, defs: Mapping[str, Any], seen: tuple[str, ...]) -> JSONObject:
    if not isinstance(node, dict):
        raise _InexpressibleError  # a boolean schema
    schema = dict(cast("Mapping[str, Any]", node))
    ref = schema.pop("$ref", None)
    if ref is not None:
        name = str(ref).rsplit("/", 1)[-1]
        if name in seen or name not in defs:
            raise _InexpressibleError  # recursive, or pointing outside the document
        # Keywords beside the $ref (a field's description) win over the definition's.
        return _convert({**defs[name], **schema}, defs, (*seen, name))
    all_of = schema.pop("allOf", None)
    if isinstance(all_of, list):
        merged: JSONObject = {}
        for part in cast("list[Any]", all_of):
            merged.update(as_object(part))
        return _convert({**merged, **schema}, defs, seen)
    variants = schema.pop("anyOf", None) or schema.pop("oneOf", None)
    if isinstance(variants, list):
        return _convert_union(cast("list[Any]", variants), schema, defs, seen)
    kind = schema.get("type")
    if isinstance(kind, list):
        kinds = [str(k) for k in cast("list[Any]", kind)]
        rest = {k: v for k, v in schema.items() if k != "type"}
        return _convert_union([{"type": k} for k in kinds], rest, defs, seen)
    return _convert_typed(schema, defs, seen)


def _convert_union(
    variants: list[Any], schema: JSONObject, defs: Mapping[str, Any], seen: tuple[str, ...]
) -> JSONObject:
    others = [v for v in variants if as_object(v).get("type") != "null"]
    nullable = len(others) < len(variants)
    converted: JSONObject
    if len(others) == 1:
        converted = _convert({**as_object(others[0]), **schema}, defs, seen)
    elif not others:
        converted = _convert({**schema, "type": "string"}, defs, seen)
    else:
        converted = {"anyOf": [_convert(v, defs, seen) for v in others], **_keywords(schema)}
    if nullable:
        converted["nullable"] = True
    return converted


def _convert_typed(
    schema: JSONObject, defs: Mapping[str, Any], seen: tuple[str, ...]
) -> JSONObject:
    if "const" in schema:
        schema["enum"] = [schema.pop("const")]
    raw_type = schema.get("type")
    if raw_type is None:
        if "properties" in schema:
            raw_type = "object"
        elif isinstance(schema.get("enum"), list) and all(
            isinstance(v, str) or v is None for v in cast("list[Any]", schema["enum"])
        ):
            raw_type = "string"
        else:
            raise _InexpressibleError  # any value at all
    gemini_type = _TYPES.get(str(raw_type))
    if gemini_type is None:
        raise _InexpressibleError
    converted: JSONObject = {"type": gemini_type, **_keywords(schema)}
    fmt = schema.get("format")
    if isinstance(fmt, str) and fmt in _FORMATS.get(gemini_type, ()):
        converted["format"] = fmt
    enum = schema.get("enum")
    if isinstance(enum, list):
        values = cast("list[Any]", enum)
        if None in values:
            converted["nullable"] = True
        choices = [v for v in values if v is not None]
        if gemini_type == "STRING":
            converted["enum"] = [str(v) for v in choices]
        else:  # Gemini enums are strings: keep the type, say the choices
            _describe(converted, "one of: " + ", ".join(json.dumps(v) for v in choices))
    if "default" in schema:
        _describe(converted, f"default: {json.dumps(schema['default'], default=str)}")
    if gemini_type == "OBJECT":
        properties = as_object(schema.get("properties"))
        if not properties:
            raise _InexpressibleError  # a free-form object: Gemini wants its properties
        converted["properties"] = {
            name: _convert(value, defs, seen) for name, value in properties.items()
        }
        required = [r for r in as_list(schema.get("required")) if r in properties]
        if required:
            converted["required"] = required
        if len(properties) > 1:
            converted["propertyOrdering"] = list(properties)
    elif gemini_type == "ARRAY":
        items = schema.get("items")
        if not isinstance(items, dict) or "prefixItems" in schema:
            raise _InexpressibleError  # tuples, or arrays of anything
        converted["items"] = _convert(items, defs, seen)
    return converted


def _keywords(schema: Mapping[str, Any]) -> JSONObject:
    return {k: v for k, v in schema.items() if k in _SCHEMA_KEYWORDS}


def _describe(schema: JSONObject, note: str) -> None:
    description = str(schema.get("description") or "").strip()
    schema["description"] = f"{description} ({note})" if description else note.capitalize()


# -- response -----------------------------------------------------------------------------------


class GeminiResponseReader:
    """Reads ``GenerateContentResponse`` objects (one reply, or each chunk of a stream) into
    updates; ``final_update()`` then carries the usage and the finish reason.

    It tracks what the client needs afterwards: ``finished`` (a chunk had a ``finishReason``, or
    the prompt was blocked), ``block_reason``/``block_message`` (``promptFeedback``),
    ``raw_finish_reason`` and ``call_extras`` (``call_id`` -> ``id``/``thoughtSignature``).
    Usage is cumulative in a stream, so only the last ``usageMetadata`` counts.
    """

    def __init__(self) -> None:
        self._prefix = uuid.uuid4().hex[:16]
        self._calls = 0
        self._usage: UsageDetails | None = None
        self.model: str | None = None
        self.candidates_seen = False
        self.finished = False
        self.raw_finish_reason: str | None = None
        self.block_reason: str | None = None
        self.block_message: str | None = None
        self.call_extras: dict[str, JSONObject] = {}

    def read(self, payload: Any) -> ChatResponseUpdate | None:
        """One response object as an update (``None`` when it carries no text and no call)."""
        body = as_object(payload)
        if body.get("modelVersion"):
            self.model = str(body["modelVersion"])
        usage = parse_usage(body.get("usageMetadata"))
        if usage is not None:
            self._usage = usage
        feedback = as_object(body.get("promptFeedback"))
        if feedback.get("blockReason"):
            self.block_reason = str(feedback["blockReason"])
            self.block_message = str(feedback.get("blockReasonMessage") or "") or None
            self.finished = True
        candidates = as_list(body.get("candidates"))
        if not candidates:
            return None
        self.candidates_seen = True
        candidate = as_object(candidates[0])
        if candidate.get("finishReason"):
            self.raw_finish_reason = str(candidate["finishReason"])
            self.finished = True
        text: list[str] = []
        deltas: list[ToolCallDelta] = []
        for part in (
            as_object(p) for p in as_list(as_object(candidate.get("content")).get("parts"))
        ):
            if "functionCall" in part:
                deltas.append(self._call_delta(part))
            elif isinstance(part.get("text"), str) and not part.get("thought"):
                text.append(part["text"])
        if not (text or deltas):
            return None
        return ChatResponseUpdate(text="".join(text), tool_call_deltas=deltas)

    def _call_delta(self, part: JSONObject) -> ToolCallDelta:
        call = as_object(part.get("functionCall"))
        index = self._calls
        self._calls += 1
        api_id = call.get("id")
        call_id = str(api_id) if api_id else f"call_{self._prefix}_{index}"
        extras: JSONObject = {}
        if api_id:
            extras["id"] = str(api_id)
        if part.get("thoughtSignature"):
            extras["thoughtSignature"] = part["thoughtSignature"]
        if extras:
            self.call_extras[call_id] = extras
        return ToolCallDelta(
            index=index,
            call_id=call_id,
            name=str(call.get("name") or ""),
            arguments=json.dumps(call.get("args") or {}, ensure_ascii=False),
        )

    @property
    def finish_reason(self) -> FinishReason:
        """The reply's finish reason so far."""
        if self.block_reason is not None:
            return FinishReason.CONTENT_FILTER
        return parse_finish_reason(self.raw_finish_reason, has_tool_calls=self._calls > 0)

    def final_update(self) -> ChatResponseUpdate:
        """The closing update: usage (the last seen), finish reason and model version."""
        return ChatResponseUpdate(
            usage=self._usage, finish_reason=self.finish_reason, model=self.model
        )


def parse_usage(payload: Any) -> UsageDetails | None:
    """``usageMetadata`` as ``UsageDetails`` (None if absent).

    Input counts the prompt (plus ``toolUsePromptTokenCount``); output counts the candidates plus
    ``thoughtsTokenCount`` (thinking is billed as output); the total is ``totalTokenCount``.
    """
    if not isinstance(payload, dict):
        return None
    usage = cast("JSONObject", payload)
    prompt = int(usage.get("promptTokenCount") or 0) + int(
        usage.get("toolUsePromptTokenCount") or 0
    )
    output = int(usage.get("candidatesTokenCount") or 0) + int(usage.get("thoughtsTokenCount") or 0)
    total = int(usage.get("totalTokenCount") or prompt + output)
    return UsageDetails(input_tokens=prompt, output_tokens=output, total_tokens=total)


def parse_finish_reason(raw: Any, *, has_tool_calls: bool = False) -> FinishReason:
    """Gemini's ``finishReason`` (see ``_FINISH_REASONS``); STOP with calls is TOOL_CALLS."""
    known = _FINISH_REASONS.get(str(raw)) if raw is not None else None
    if known is None or known is FinishReason.STOP:
        return FinishReason.TOOL_CALLS if has_tool_calls else FinishReason.STOP
    return known
