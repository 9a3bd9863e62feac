"""OpenAI Chat Completions wire format <-> agentic's chat types (pure: no I/O, no state).

Field names follow the API reference (``POST /chat/completions``, the ``chat.completion`` and
``chat.completion.chunk`` objects): https://platform.openai.com/docs/api-reference/chat
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, Literal, TypeAlias, cast

from pydantic import BaseModel

from agentic_core import (
    ChatMessage,
    ChatOptions,
    ChatResponse,
    ChatResponseUpdate,
    FinishReason,
    FunctionResultContent,
    Role,
    Tool,
    ToolCallDelta,
    UsageDetails,
)
from agentic_llm._errors import ProviderError
from agentic_llm._json import JSONObject, as_list, as_object, parse_structured_value

MaxTokensField: TypeAlias = Literal["max_tokens", "max_completion_tokens"]

_FINISH_REASONS: dict[str, FinishReason] = {
    "stop": FinishReason.STOP,
    "length": FinishReason.LENGTH,
    "tool_calls": FinishReason.TOOL_CALLS,
    "function_call": FinishReason.TOOL_CALLS,  # deprecated spelling of tool_calls
    "content_filter": FinishReason.CONTENT_FILTER,
    "error": FinishReason.ERROR,  # vLLM and some proxies
}
_SCHEMA_NAME = re.compile(r"[^A-Za-z0-9_-]")


# -- request ------------------------------------------------------------------------------------


def build_chat_request(
    model: str,
    messages: Sequence[ChatMessage],
    options: ChatOptions | None,
    *,
    stream: bool,
    max_tokens_field: MaxTokensField,
) -> JSONObject:
    """The JSON body of ``POST /chat/completions``; options left ``None`` are not sent."""
    options = options or ChatOptions()
    body: JSONObject = {"model": options.model or model, "messages": to_openai_messages(messages)}
    if options.temperature is not None:
        body["temperature"] = options.temperature
    if options.max_tokens is not None:
        body[max_tokens_field] = options.max_tokens
    if options.stop:
        body["stop"] = list(options.stop)
    if options.seed is not None:
        body["seed"] = options.seed
    if options.tools:
        body["tools"] = [to_openai_tool(tool) for tool in options.tools]
        # tool_choice without tools is a 400 at OpenAI: only sent alongside them.
        if options.tool_choice is not None:
            body["tool_choice"] = to_openai_tool_choice(options.tool_choice)
    if options.response_format is not None:
        body["response_format"] = to_openai_response_format(options.response_format)
    if stream:
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
    return body


def to_openai_messages(messages: Sequence[ChatMessage]) -> list[JSONObject]:
    """Chat messages as OpenAI messages; each tool result becomes its own ``tool`` message."""
    wire: list[JSONObject] = []
    for message in messages:
        results = message.function_results
        if results:
            wire.extend(_tool_message(result) for result in results)
            continue
        if message.role is Role.ASSISTANT:
            wire.append(_assistant_message(message))
        else:
            role = "user" if message.role is Role.TOOL else message.role.value
            wire.append({"role": role, "content": message.text})
    return wire


def _assistant_message(message: ChatMessage) -> JSONObject:
    # content is "" (never null) even beside tool_calls: OpenAI accepts both, but llama.cpp's
    # server answers HTTP 500 to a null or missing content.
    wire: JSONObject = {"role": "assistant", "content": message.text}
    calls = message.function_calls
    if calls:
        wire["tool_calls"] = [
            {
                "id": call.call_id,
                "type": "function",
                "function": {
                    "name": call.name,
                    "arguments": json.dumps(call.arguments, ensure_ascii=False),
                },
            }
            for call in calls
        ]
    return wire


def _tool_message(result: FunctionResultContent) -> JSONObject:
    return {"role": "tool", "tool_call_id": result.call_id, "content": _as_text(result.result)}


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def to_openai_tool(tool: Tool) -> JSONObject:
    """A tool as an OpenAI function tool."""
    function: JSONObject = {"name": tool.name, "description": tool.description}
    if tool.parameters:
        function["parameters"] = tool.parameters
    return {"type": "function", "function": function}


def to_openai_tool_choice(choice: str) -> str | JSONObject:
    """``"auto"``, ``"none"``, ``"required"`` as they are; any other string names a function."""
    if choice in ("auto", "none", "required"):
        return choice
    return {"type": "function", "function": {"name": choice}}


def to_openai_response_format(model: type[BaseModel]) -> JSONObject:
    """Structured output: the model's JSON schema, non-strict (strict mode restricts schemas)."""
    return {
        "type": "json_schema",
        "json_schema": {
            "name": _SCHEMA_NAME.sub("_", model.__name__)[:64] or "response",
            "schema": model.model_json_schema(),
            "strict": False,
        },
    }


# -- response -----------------------------------------------------------------------------------


def parse_chat_completion(
    payload: Any, *, label: str, provider: str, response_format: type[BaseModel] | None
) -> ChatResponse:
    """A ``chat.completion`` object as a ``ChatResponse`` (the first choice)."""
    body = as_object(payload)
    choices = as_list(body.get("choices"))
    if not choices:
        raise ProviderError(
            f"{label} returned a completion without choices: {json.dumps(payload)[:300]}",
            provider=provider,
            body=json.dumps(payload)[:4000],
        )
    choice = as_object(choices[0])
    message = as_object(choice.get("message"))
    text = message.get("content") or message.get("refusal") or ""
    deltas = [
        ToolCallDelta(
            index=index,
            call_id=call.get("id"),
            name=function.get("name"),
            arguments=function.get("arguments") or "",
        )
        for index, call in enumerate(as_object(c) for c in as_list(message.get("tool_calls")))
        for function in [as_object(call.get("function"))]
    ]
    update = ChatResponseUpdate(
        text=str(text),
        tool_call_deltas=deltas,
        usage=parse_usage(body.get("usage")),
        finish_reason=parse_finish_reason(choice.get("finish_reason"), has_tool_calls=bool(deltas)),
    )
    # One complete reply is one update: from_updates parses the tool arguments (core's
    # parse_tool_arguments) exactly as it does for a stream.
    response = ChatResponse.from_updates([update], model=str(body.get("model") or ""))
    if response_format is not None:
        response.value = parse_structured_value(response.text, response_format)
    return response


def parse_chunk(payload: Any) -> ChatResponseUpdate | None:
    """A ``chat.completion.chunk`` as an update, or ``None`` when it carries nothing new
    (the role-only first chunk, Azure's prompt-filter chunk with no choices)."""
    body = as_object(payload)
    choices = as_list(body.get("choices"))
    choice = as_object(choices[0]) if choices else {}
    delta = as_object(choice.get("delta"))
    deltas = [
        ToolCallDelta(
            index=int(call.get("index") or 0),
            call_id=call.get("id") or None,
            name=function.get("name") or None,
            arguments=function.get("arguments") or "",
        )
        for call in (as_object(c) for c in as_list(delta.get("tool_calls")))
        for function in [as_object(call.get("function"))]
    ]
    raw_finish = choice.get("finish_reason")
    update = ChatResponseUpdate(
        text=str(delta.get("content") or delta.get("refusal") or ""),
        tool_call_deltas=deltas,
        usage=parse_usage(body.get("usage")),
        finish_reason=None if raw_finish is None else parse_finish_reason(raw_finish),
        model=body.get("model") or None,
    )
    if not (update.text or deltas or update.usage or update.finish_reason):
        return None
    return update


def response_as_update(response: ChatResponse) -> ChatResponseUpdate:
    """A whole reply as one streamed update (text, every tool call, usage, finish reason)."""
    deltas = [
        ToolCallDelta(
            index=index, call_id=call.call_id, name=call.name, arguments=json.dumps(call.arguments)
        )
        for index, call in enumerate(response.message.function_calls)
    ]
    return ChatResponseUpdate(
        text=response.text,
        tool_call_deltas=deltas,
        usage=response.usage,
        finish_reason=response.finish_reason,
        model=response.model or None,
    )


def parse_usage(payload: Any) -> UsageDetails | None:
    """``{prompt_tokens, completion_tokens, total_tokens}`` as ``UsageDetails`` (None if absent)."""
    if not isinstance(payload, dict):
        return None
    usage = cast("JSONObject", payload)
    prompt = int(usage.get("prompt_tokens") or 0)
    completion = int(usage.get("completion_tokens") or 0)
    total = int(usage.get("total_tokens") or prompt + completion)
    return UsageDetails(input_tokens=prompt, output_tokens=completion, total_tokens=total)


def parse_finish_reason(raw: Any, *, has_tool_calls: bool = False) -> FinishReason:
    """OpenAI's ``finish_reason``; a missing or unknown one is STOP (TOOL_CALLS with calls)."""
    known = _FINISH_REASONS.get(str(raw)) if raw is not None else None
    if known is not None:
        return known
    return FinishReason.TOOL_CALLS if has_tool_calls else FinishReason.STOP
