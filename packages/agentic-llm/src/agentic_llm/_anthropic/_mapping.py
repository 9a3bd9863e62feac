"""Anthropic Messages API wire format <-> agentic's chat types (pure: no I/O).

Field names follow the API reference (``POST /v1/messages``, the ``Message`` object and its
content blocks) and the streaming guide (``message_start``, ``content_block_start/delta/stop``,
``message_delta``, ``message_stop``, ``ping``, ``error``):
https://docs.anthropic.com/en/api/messages and
https://docs.anthropic.com/en/docs/build-with-claude/streaming

Structured output (``ChatOptions.response_format``) uses the documented "tool use for JSON"
pattern: the model's JSON schema becomes the ``input_schema`` of one extra tool,
``structured_response``, that the model is made to call (``tool_choice`` ``tool``, or ``any``
when the caller's own tools are offered too). The tool's ``input`` *is* the answer: it is
returned as the reply's text (its JSON) and parsed into ``ChatResponse.value``; it is never a
tool call the agent would try to run. This works on every Claude model and API version, unlike
the newer ``output_config.format`` JSON outputs, which only some models accept.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, cast

from pydantic import BaseModel, ValidationError

from agentic_core import (
    ChatMessage,
    ChatOptions,
    ChatResponse,
    ChatResponseUpdate,
    Content,
    FinishReason,
    FunctionCallContent,
    FunctionResultContent,
    Role,
    TextContent,
    Tool,
    ToolCallDelta,
    UsageDetails,
)
from agentic_llm._errors import ProviderError
from agentic_llm._json import JSONObject, as_object

RESPONSE_TOOL = "structured_response"
"""The name of the tool that carries a structured (``response_format``) answer."""

_STOP_REASONS: dict[str, FinishReason] = {
    "end_turn": FinishReason.STOP,
    "stop_sequence": FinishReason.STOP,
    "max_tokens": FinishReason.LENGTH,
    "model_context_window_exceeded": FinishReason.LENGTH,
    "tool_use": FinishReason.TOOL_CALLS,
    "refusal": FinishReason.CONTENT_FILTER,
    # A server-tool loop paused; the turn is complete as far as this client is concerned.
    "pause_turn": FinishReason.STOP,
}
_INVALID_ID_CHARS = re.compile(r"[^A-Za-z0-9_-]")
_EMPTY_SCHEMA: JSONObject = {"type": "object", "properties": {}}


# -- request ------------------------------------------------------------------------------------


def build_messages_request(
    model: str,
    messages: Sequence[ChatMessage],
    options: ChatOptions | None,
    *,
    max_tokens: int,
    stream: bool,
) -> JSONObject:
    """The JSON body of ``POST /v1/messages``; options left ``None`` are not sent.

    ``max_tokens`` is required by the API: ``options.max_tokens`` when set, else the client's
    default. ``seed`` has no Anthropic equivalent and is not sent.
    """
    options = options or ChatOptions()
    system, wire_messages = to_anthropic_messages(messages)
    body: JSONObject = {
        "model": options.model or model,
        "max_tokens": options.max_tokens if options.max_tokens is not None else max_tokens,
        "messages": wire_messages,
    }
    if system:
        body["system"] = system
    if options.temperature is not None:
        body["temperature"] = options.temperature
    if options.stop:
        body["stop_sequences"] = list(options.stop)
    tools = [to_anthropic_tool(tool) for tool in options.tools]
    choice = to_anthropic_tool_choice(options.tool_choice) if options.tool_choice else None
    if options.response_format is not None:
        tools.append(response_tool(options.response_format))
        choice = _structured_tool_choice(options.tool_choice, has_own_tools=bool(options.tools))
    elif not tools and _uses_tools(wire_messages):
        # The history holds tool_use/tool_result blocks but no tools are offered this turn
        # (an agent's last, tool-less iteration). The API wants the tools that appear in the
        # history declared: declare them by name, and forbid calling them.
        tools = _placeholder_tools(wire_messages)
        choice = {"type": "none"}
    if tools:
        body["tools"] = tools
        # tool_choice without tools would be refused: only sent alongside them.
        if choice is not None:
            body["tool_choice"] = choice
    if stream:
        body["stream"] = True
    return body


def to_anthropic_messages(messages: Sequence[ChatMessage]) -> tuple[str, list[JSONObject]]:
    """The top-level ``system`` prompt and the alternating ``user``/``assistant`` messages.

    System messages (wherever they are) are joined, in order, into ``system``. Tool results
    become ``tool_result`` blocks in a ``user`` message. Consecutive messages of one role are
    merged into one, as the API wants the roles to alternate; in a merged user message the
    ``tool_result`` blocks come first, as the API requires after a ``tool_use``. Messages with
    no content left (empty text) are dropped: the API refuses empty text blocks.
    """
    system: list[str] = []
    turns: list[tuple[str, list[JSONObject]]] = []
    for message in messages:
        if message.role is Role.SYSTEM:
            if message.text:
                system.append(message.text)
            continue
        role = "assistant" if message.role is Role.ASSISTANT else "user"
        blocks = _blocks(message, assistant=role == "assistant")
        if not blocks:
            continue
        if turns and turns[-1][0] == role:
            turns[-1][1].extend(blocks)
        else:
            turns.append((role, blocks))
    wire: list[JSONObject] = []
    for role, blocks in turns:
        if role == "user":
            # Stable: tool results first, then the rest in their order.
            blocks.sort(key=_not_a_tool_result)
        if len(blocks) == 1 and blocks[0]["type"] == "text":
            wire.append({"role": role, "content": blocks[0]["text"]})  # the string shorthand
        else:
            wire.append({"role": role, "content": blocks})
    return "\n\n".join(system), wire


def _not_a_tool_result(block: JSONObject) -> bool:
    return block["type"] != "tool_result"


def _blocks(message: ChatMessage, *, assistant: bool) -> list[JSONObject]:
    blocks: list[JSONObject] = []
    for content in message.contents:
        if isinstance(content, TextContent):
            if content.text:
                blocks.append({"type": "text", "text": content.text})
        elif isinstance(content, FunctionCallContent):
            if assistant:
                blocks.append(
                    {
                        "type": "tool_use",
                        "id": wire_id(content.call_id),
                        "name": content.name,
                        "input": content.arguments,
                    }
                )
        else:
            blocks.append(_tool_result(content))
    return blocks


def _tool_result(result: FunctionResultContent) -> JSONObject:
    block: JSONObject = {
        "type": "tool_result",
        "tool_use_id": wire_id(result.call_id),
        "content": _as_text(result.result),
    }
    if result.is_error:
        block["is_error"] = True
    return block


def wire_id(call_id: str) -> str:
    """``call_id`` as a tool-use id the API accepts (``^[a-zA-Z0-9_-]+$``): ids minted by other
    providers keep working in a conversation that moves to Claude."""
    return _INVALID_ID_CHARS.sub("_", call_id) or "call"


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def to_anthropic_tool(tool: Tool) -> JSONObject:
    """A tool as an Anthropic client tool (``name``, ``description``, ``input_schema``)."""
    wire: JSONObject = {"name": tool.name}
    if tool.description:
        wire["description"] = tool.description
    wire["input_schema"] = tool.parameters or dict(_EMPTY_SCHEMA)
    return wire


def to_anthropic_tool_choice(choice: str) -> JSONObject:
    """``auto`` -> ``auto``, ``required`` -> ``any``, ``none`` -> ``none``; any other string
    names the tool the model must call."""
    if choice == "auto":
        return {"type": "auto"}
    if choice == "required":
        return {"type": "any"}
    if choice == "none":
        return {"type": "none"}
    return {"type": "tool", "name": choice}


def response_tool(model: type[BaseModel]) -> JSONObject:
    """The tool whose input is a ``model`` instance: how a structured answer is asked for."""
    schema = model.model_json_schema()
    about = f" ({schema['description']})" if schema.get("description") else ""
    return {
        "name": RESPONSE_TOOL,
        "description": (
            f"Give the final answer as a {model.__name__} object{about}: call this tool once "
            "with the complete answer as its input."
        ),
        "input_schema": schema,
    }


def _structured_tool_choice(choice: str | None, *, has_own_tools: bool) -> JSONObject:
    if choice not in (None, "auto", "required", "none"):
        return {"type": "tool", "name": choice}  # the caller forces one of its own tools
    if has_own_tools and choice != "none":
        # Its own tools stay usable; the turn ends with them or with the answer tool.
        return {"type": "any"}
    return {"type": "tool", "name": RESPONSE_TOOL}


def _uses_tools(messages: list[JSONObject]) -> bool:
    return any(block["type"] in ("tool_use", "tool_result") for block in _all_blocks(messages))


def _placeholder_tools(messages: list[JSONObject]) -> list[JSONObject]:
    names = dict.fromkeys(
        str(block["name"]) for block in _all_blocks(messages) if block["type"] == "tool_use"
    )
    return [
        {
            "name": name,
            "description": "Used earlier in this conversation; not available now.",
            "input_schema": dict(_EMPTY_SCHEMA),
        }
        for name in names or ["unavailable_tool"]
    ]


def _all_blocks(messages: list[JSONObject]) -> list[JSONObject]:
    blocks: list[JSONObject] = []
    for message in messages:
        content = message["content"]
        if isinstance(content, list):
            blocks.extend(cast("list[JSONObject]", content))
    return blocks


# -- response -----------------------------------------------------------------------------------


def parse_message(
    payload: Any, *, label: str, provider: str, response_format: type[BaseModel] | None
) -> ChatResponse:
    """A ``Message`` object as a ``ChatResponse``: text blocks joined, ``tool_use`` blocks as
    ``FunctionCallContent`` (the structured-answer tool as text and ``value`` instead)."""
    body = as_object(payload)
    blocks = body.get("content")
    if body.get("type") == "error" or not isinstance(blocks, list):
        shown = json.dumps(payload, default=str)
        raise ProviderError(
            f"{label} answered with something that is not a message: {shown[:300]}",
            provider=provider,
            body=shown[:4000],
        )
    text: list[str] = []
    calls: list[FunctionCallContent] = []
    value: BaseModel | None = None
    for block in (as_object(b) for b in cast("list[Any]", blocks)):
        kind = block.get("type")
        if kind == "text":
            text.append(str(block.get("text") or ""))
        elif kind == "tool_use":
            arguments = as_object(block.get("input"))
            if response_format is not None and block.get("name") == RESPONSE_TOOL:
                text.append(json.dumps(arguments, ensure_ascii=False))
                value = parse_structured_value(arguments, response_format)
            else:
                calls.append(
                    FunctionCallContent(
                        call_id=str(block.get("id") or f"call_{len(calls)}"),
                        name=str(block.get("name") or ""),
                        arguments=arguments,
                    )
                )
        # thinking, redacted_thinking and server-tool blocks carry nothing for the caller
    contents: list[Content] = [TextContent(text="".join(text))] if any(text) else []
    contents.extend(calls)
    return ChatResponse(
        message=ChatMessage(role=Role.ASSISTANT, contents=contents),
        usage=parse_usage(body.get("usage")) or UsageDetails(),
        finish_reason=parse_stop_reason(body.get("stop_reason"), has_tool_calls=bool(calls)),
        model=str(body.get("model") or ""),
        value=value,
    )


def parse_usage(payload: Any) -> UsageDetails | None:
    """``usage`` as ``UsageDetails`` (None if absent). Input counts the cache writes and reads
    too: the API's total input is ``input_tokens`` + ``cache_creation_input_tokens`` +
    ``cache_read_input_tokens``."""
    if not isinstance(payload, dict):
        return None
    usage = cast("JSONObject", payload)
    prompt = sum(
        int(usage.get(name) or 0)
        for name in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    )
    completion = int(usage.get("output_tokens") or 0)
    return UsageDetails(
        input_tokens=prompt, output_tokens=completion, total_tokens=prompt + completion
    )


def parse_stop_reason(raw: Any, *, has_tool_calls: bool = False) -> FinishReason:
    """Anthropic's ``stop_reason``; a ``tool_use`` stop without tool calls left for the caller
    (only the structured answer) is STOP; a missing or unknown reason is STOP (TOOL_CALLS with
    calls)."""
    known = _STOP_REASONS.get(str(raw)) if raw is not None else None
    if known is FinishReason.TOOL_CALLS and not has_tool_calls:
        return FinishReason.STOP
    if known is not None:
        return known
    return FinishReason.TOOL_CALLS if has_tool_calls else FinishReason.STOP


def parse_structured_value(
    arguments: JSONObject, response_format: type[BaseModel]
) -> BaseModel | None:
    """The answer tool's input as a ``response_format`` instance, or None (the agent then asks
    again)."""
    try:
        return response_format.model_validate(arguments)
    except ValidationError:
        return None


class StreamParser:
    """Folds a ``/v1/messages`` event stream into ``ChatResponseUpdate``s (one stream each).

    ``feed`` takes one event's JSON and returns the update it carries, or None. Text comes as
    it is produced; a ``tool_use`` block starts a tool call (id and name) whose ``input``
    arrives as ``input_json_delta`` fragments, all keyed by the block's ``index``. Usage is
    the ``message_start`` input count and the last (cumulative) ``message_delta`` output count;
    it comes once, with the finish reason, on the terminal ``message_stop`` (``done`` is then
    True). ``ping``, ``content_block_stop``, thinking blocks and unknown events carry nothing.
    ``error`` events are the caller's to raise.
    """

    def __init__(self, *, response_format: type[BaseModel] | None = None) -> None:
        self.done = False
        self._structured = response_format is not None
        self._model: str | None = None
        self._usage: JSONObject = {}
        self._stop_reason: str | None = None
        self._tool_blocks: set[int] = set()
        self._answer_blocks: set[int] = set()

    def feed(self, event: JSONObject) -> ChatResponseUpdate | None:
        """The update carried by one event (its ``type`` says which)."""
        kind = event.get("type")
        if kind == "message_start":
            message = as_object(event.get("message"))
            self._model = str(message.get("model") or "") or None
            self._usage.update(as_object(message.get("usage")))
        elif kind == "content_block_start":
            return self._block_start(_index(event), as_object(event.get("content_block")))
        elif kind == "content_block_delta":
            return self._block_delta(_index(event), as_object(event.get("delta")))
        elif kind == "message_delta":
            delta = as_object(event.get("delta"))
            if delta.get("stop_reason") is not None:
                self._stop_reason = str(delta["stop_reason"])
            # Counts here are cumulative: they replace the message_start placeholders.
            self._usage.update(as_object(event.get("usage")))
        elif kind == "message_stop":
            self.done = True
            return ChatResponseUpdate(
                usage=parse_usage(self._usage) or UsageDetails(),
                finish_reason=parse_stop_reason(
                    self._stop_reason, has_tool_calls=bool(self._tool_blocks)
                ),
                model=self._model,
            )
        return None

    def _block_start(self, index: int, block: JSONObject) -> ChatResponseUpdate | None:
        kind = block.get("type")
        if kind == "text":
            text = str(block.get("text") or "")
            return ChatResponseUpdate(text=text) if text else None
        if kind != "tool_use":
            return None
        initial = as_object(block.get("input"))
        if self._structured and block.get("name") == RESPONSE_TOOL:
            # The structured answer streams as text: its JSON is the reply.
            self._answer_blocks.add(index)
            return ChatResponseUpdate(text=json.dumps(initial)) if initial else None
        self._tool_blocks.add(index)
        delta = ToolCallDelta(
            index=index,
            call_id=str(block.get("id") or "") or None,
            name=str(block.get("name") or "") or None,
            arguments=json.dumps(initial) if initial else "",
        )
        return ChatResponseUpdate(tool_call_deltas=[delta])

    def _block_delta(self, index: int, delta: JSONObject) -> ChatResponseUpdate | None:
        kind = delta.get("type")
        if kind == "text_delta":
            text = str(delta.get("text") or "")
            return ChatResponseUpdate(text=text) if text else None
        if kind != "input_json_delta":
            return None  # thinking_delta, signature_delta, citations_delta, ...
        fragment = str(delta.get("partial_json") or "")
        if not fragment:
            return None
        if index in self._answer_blocks:
            return ChatResponseUpdate(text=fragment)
        if index in self._tool_blocks:
            return ChatResponseUpdate(
                tool_call_deltas=[ToolCallDelta(index=index, arguments=fragment)]
            )
        return None  # input of a block this client does not surface (server tools)


def _index(event: JSONObject) -> int:
    index = event.get("index")
    return index if isinstance(index, int) else 0
