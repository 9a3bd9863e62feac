"""Ollama ``/api/chat`` wire format <-> agentic's chat types (pure: no I/O).

Field names follow Ollama's API reference (``POST /api/chat``: ``messages`` with ``role``,
``content``, ``tool_calls`` and, for tool results, ``tool_name``; ``tools``; ``format``;
``options``; ``stream``) and its tool-calling guide:
https://docs.ollama.com/api/chat and https://docs.ollama.com/capabilities/tool-calling

Notes on the dialect:

- Tool-call arguments are JSON objects (not JSON text as in OpenAI's format).
- Tool calls have no ids: the reader gives each one a ``call_id`` of its own
  (``call_<response prefix>_<n>``, unique per response, stable across a stream); a tool result
  is sent back with the function's name (``tool_name``), looked up from the earlier call with
  the same ``call_id``.
- There is no ``tool_choice``: ``"none"`` sends no tools, a function name sends only that tool,
  ``"auto"`` and ``"required"`` send them all (the model may still answer in text).
- A stream is NDJSON: one chunk per line, the last one with ``"done": true``, ``done_reason``
  and the token counts (``prompt_eval_count``, ``eval_count``).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from typing import Any

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
from agentic_llm._json import JSONObject, as_list, as_object

# done_reason values: "stop" (end of turn or a stop sequence), "length" (num_predict reached),
# "load" / "unload" (an empty request that only (un)loaded the model). Unknown ones read as STOP.
_DONE_REASONS: dict[str, FinishReason] = {
    "stop": FinishReason.STOP,
    "length": FinishReason.LENGTH,
    "load": FinishReason.STOP,
    "unload": FinishReason.STOP,
}


# -- request ------------------------------------------------------------------------------------


def build_chat_request(
    model: str, messages: Sequence[ChatMessage], options: ChatOptions | None, *, stream: bool
) -> JSONObject:
    """The JSON body of ``POST /api/chat``; options left ``None`` are not sent."""
    options = options or ChatOptions()
    body: JSONObject = {
        "model": options.model or model,
        "messages": to_ollama_messages(messages),
        "stream": stream,
    }
    tools = _offered_tools(options)
    if tools:
        body["tools"] = [to_ollama_tool(tool) for tool in tools]
    if options.response_format is not None:
        body["format"] = options.response_format.model_json_schema()
    model_options: JSONObject = {}
    if options.temperature is not None:
        model_options["temperature"] = options.temperature
    if options.max_tokens is not None:
        model_options["num_predict"] = options.max_tokens
    if options.stop:
        model_options["stop"] = list(options.stop)
    if options.seed is not None:
        model_options["seed"] = options.seed
    if model_options:
        body["options"] = model_options
    return body


def _offered_tools(options: ChatOptions) -> list[Tool]:
    choice = options.tool_choice
    if choice is None or choice in ("auto", "required"):
        return list(options.tools)
    if choice == "none":
        return []
    return [tool for tool in options.tools if tool.name == choice]


def to_ollama_messages(messages: Sequence[ChatMessage]) -> list[JSONObject]:
    """Chat messages as Ollama messages; each tool result becomes its own ``tool`` message."""
    names: dict[str, str] = {}
    wire: list[JSONObject] = []
    for message in messages:
        calls = message.function_calls
        names.update((call.call_id, call.name) for call in calls)
        results = message.function_results
        if results:
            wire.extend(_tool_message(result, names) for result in results)
            continue
        if message.role is Role.ASSISTANT:
            wire.append(_assistant_message(message.text, calls))
        else:
            role = "user" if message.role is Role.TOOL else message.role.value
            wire.append({"role": role, "content": message.text})
    return wire


def _assistant_message(text: str, calls: list[FunctionCallContent]) -> JSONObject:
    wire: JSONObject = {"role": "assistant", "content": text}
    if calls:
        wire["tool_calls"] = [
            {
                "type": "function",
                "function": {"index": index, "name": call.name, "arguments": call.arguments},
            }
            for index, call in enumerate(calls)
        ]
    return wire


def _tool_message(result: FunctionResultContent, names: dict[str, str]) -> JSONObject:
    wire: JSONObject = {"role": "tool", "content": _as_text(result.result)}
    name = names.get(result.call_id)
    if name is not None:  # older Ollama versions match results by order, without a name
        wire["tool_name"] = name
    return wire


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def to_ollama_tool(tool: Tool) -> JSONObject:
    """A tool as an Ollama function tool (OpenAI's shape; ``parameters`` is required)."""
    function: JSONObject = {
        "name": tool.name,
        "description": tool.description,
        "parameters": tool.parameters or {"type": "object", "properties": {}},
    }
    return {"type": "function", "function": function}


# -- response -----------------------------------------------------------------------------------


class OllamaResponseReader:
    """Reads ``/api/chat`` responses (one reply, or each NDJSON chunk of a stream) into updates.

    The chunk with ``"done": true`` also carries the usage and the finish reason; ``done`` says
    whether it was seen.
    """

    def __init__(self) -> None:
        self._prefix = uuid.uuid4().hex[:16]
        self._calls = 0
        self.done = False
        self.model: str | None = None

    def read(self, payload: Any) -> ChatResponseUpdate | None:
        """One chunk as an update (``None`` when it carries nothing)."""
        body = as_object(payload)
        if body.get("model"):
            self.model = str(body["model"])
        message = as_object(body.get("message"))
        deltas = [self._call_delta(as_object(call)) for call in as_list(message.get("tool_calls"))]
        update = ChatResponseUpdate(text=str(message.get("content") or ""), tool_call_deltas=deltas)
        if body.get("done"):
            self.done = True
            update.usage = parse_usage(body)
            update.finish_reason = parse_finish_reason(
                body.get("done_reason"), has_tool_calls=self._calls > 0
            )
            update.model = self.model
            return update
        if not (update.text or deltas):
            return None
        return update

    def _call_delta(self, call: JSONObject) -> ToolCallDelta:
        function = as_object(call.get("function"))
        index = self._calls
        self._calls += 1
        arguments = function.get("arguments")
        return ToolCallDelta(
            index=index,
            call_id=str(call.get("id") or f"call_{self._prefix}_{index}"),
            name=str(function.get("name") or ""),
            # An object per the API; a model that sends JSON text is parsed like OpenAI's.
            arguments=(
                arguments
                if isinstance(arguments, str)
                else json.dumps(arguments or {}, ensure_ascii=False)
            ),
        )


def parse_usage(body: JSONObject) -> UsageDetails:
    """``prompt_eval_count`` (input) and ``eval_count`` (output) of a final chunk."""
    prompt = int(body.get("prompt_eval_count") or 0)
    output = int(body.get("eval_count") or 0)
    return UsageDetails(input_tokens=prompt, output_tokens=output, total_tokens=prompt + output)


def parse_finish_reason(raw: Any, *, has_tool_calls: bool = False) -> FinishReason:
    """Ollama's ``done_reason`` (see ``_DONE_REASONS``); "stop" with calls is TOOL_CALLS."""
    known = _DONE_REASONS.get(str(raw)) if raw is not None else None
    if known is None or known is FinishReason.STOP:
        return FinishReason.TOOL_CALLS if has_tool_calls else FinishReason.STOP
    return known
