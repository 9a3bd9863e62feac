"""The prompt of a tool-grammar request: the tools and the reply rule in the system message, one
worked example per tool, and the history written the way the model itself replies.

Chat templates of small models know only system, user and assistant turns (SmolLM2's renders a
``tool`` role it was never trained on; llama.cpp's function-calling template drops it), so tool
calls are written as the JSON the model produced and tool results as a user turn
("Tool add returned: 42"). Examples work far better than rules for a 135M model: with them it
picks the right tool of two for a question it has never seen (see the README's measurements).
Pure: no llama.cpp, no I/O.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator, Sequence
from typing import Any, Final, cast

from agentic_core import ChatMessage, Role, Tool
from agentic_llm._json import JSONObject, as_object
from agentic_llm._local._tool_grammar import (
    ANSWER_KEY,
    ARGUMENTS_KEY,
    TOOL_KEY,
    ToolReplyFormat,
    answer_json,
    tool_call_json,
)

DEFAULT_INSTRUCTIONS: Final = "You are a helpful assistant with tools."
MAX_EXAMPLES: Final = 8
"""Worked examples for the first tools only: each costs some 30 prompt tokens."""
_INTEGERS: Final = (2, 3, 5, 4, 6, 7, 8, 9)
_NUMBERS: Final = (1.5, 2.5, 3.5, 4.5)
_EXAMPLE_RESULTS: Final = ("5", "9", "8", "13")


def render_tool_prompt(
    messages: Sequence[ChatMessage], reply_format: ToolReplyFormat
) -> list[JSONObject]:
    """``messages`` as plain ``{"role", "content"}`` chat messages for the model: one system
    message (the caller's instructions, the tools and the reply rule), the worked examples
    (only when ``reply_format`` offers tools), then the conversation."""
    instructions = [m.text for m in messages if m.role is Role.SYSTEM and m.text]
    system = "\n\n".join([*(instructions or [DEFAULT_INSTRUCTIONS]), _rules(reply_format)])
    rendered: list[JSONObject] = [{"role": "system", "content": system}]
    if reply_format.tools:
        # Worked examples only for a request that offers tools: shown to an agent without any,
        # a small model repeats their "The result is 5." instead of answering.
        rendered.extend(
            _examples(reply_format.tools[:MAX_EXAMPLES], answered=not reply_format.allow_tools)
        )
    names = _call_names(messages)
    for message in messages:
        if message.role is Role.SYSTEM:
            continue
        results = message.function_results
        if results:
            lines = [_result_line(names.get(r.call_id), r.result, r.is_error) for r in results]
            _append(rendered, "user", "\n".join(lines))
        elif message.role is Role.ASSISTANT:
            _append(rendered, "assistant", _assistant_text(message))
        else:
            _append(rendered, "user", message.text)
    return rendered


def _rules(reply_format: ToolReplyFormat) -> str:
    lines = [_signature(tool) for tool in reply_format.tools]
    call = f'{{"{TOOL_KEY}": "<name>", "{ARGUMENTS_KEY}": {{...}}}}'
    answer = f'{{"{ANSWER_KEY}": "..."}}'
    if not reply_format.tools:
        return f"Reply with JSON: {answer}."
    # The same rule whether or not the grammar still allows calls: the prompt's prefix, and so
    # llama.cpp's evaluated tokens, stay shared between the call and the answer after it.
    shapes = f"{call} or {answer}" if reply_format.allow_answer else call
    return "\n".join(
        [
            "Tools:",
            *lines,
            "Pick the tool that matches the question. When a tool returned the result, answer "
            "with it.",
            f"Reply with JSON: {shapes}.",
        ]
    )


def _signature(tool: Tool) -> str:
    """``name(a: integer, b: integer) - description``."""
    properties = as_object(as_object(tool.parameters).get("properties"))
    arguments = ", ".join(f"{name}: {_type_name(schema)}" for name, schema in properties.items())
    description = f" - {tool.description}" if tool.description else ""
    return f"{tool.name}({arguments}){description}"


def _type_name(schema: Any) -> str:
    node = as_object(schema)
    if "enum" in node:
        return " | ".join(json.dumps(v) for v in cast("list[Any]", node["enum"]))
    return str(node.get("type", "any"))


def _examples(tools: Sequence[Tool], *, answered: bool) -> list[JSONObject]:
    """One question and its tool call per tool, made from the tool's description and schema;
    ``answered``: each followed by the tool's result and the answer that uses it. (Only when the
    model must answer: examples ending in answers make a small model skip the tools.)"""
    examples: list[JSONObject] = []
    integers, numbers = itertools.cycle(_INTEGERS), itertools.cycle(_NUMBERS)
    for tool in tools:
        arguments = _example_arguments(tool, integers, numbers)
        if arguments is None:
            continue  # a schema too rich to invent values for: no example beats a wrong one
        request = (tool.description or tool.name).strip().rstrip(".")
        values = " and ".join(str(v) for v in arguments.values())
        examples.append({"role": "user", "content": f"{request}: {values}" if values else request})
        examples.append({"role": "assistant", "content": tool_call_json(tool.name, arguments)})
        if answered:
            result = _EXAMPLE_RESULTS[len(examples) // 4 % len(_EXAMPLE_RESULTS)]
            examples.append({"role": "user", "content": _result_line(tool.name, result, False)})
            examples.append(
                {"role": "assistant", "content": answer_json(f"The result is {result}.")}
            )
    return examples


def _example_arguments(
    tool: Tool, integers: Iterator[int], numbers: Iterator[float]
) -> JSONObject | None:
    parameters = as_object(tool.parameters)
    properties = as_object(parameters.get("properties"))
    required = set(cast("list[str]", parameters.get("required") or []))
    arguments: JSONObject = {}
    for name, raw in properties.items():
        if name not in required:
            continue
        schema = as_object(raw)
        if "const" in schema:
            arguments[name] = schema["const"]
        elif schema.get("enum"):
            arguments[name] = cast("list[Any]", schema["enum"])[0]
        elif schema.get("type") == "integer":
            arguments[name] = next(integers)
        elif schema.get("type") == "number":
            arguments[name] = next(numbers)
        elif schema.get("type") == "string":
            arguments[name] = name  # {"city": "city"}: a value the model will not copy blindly
        elif schema.get("type") == "boolean":
            arguments[name] = True
        else:
            return None
    return arguments


def _call_names(messages: Sequence[ChatMessage]) -> dict[str, str]:
    """Tool name of every call id in the history (results carry only the id)."""
    return {call.call_id: call.name for m in messages for call in m.function_calls}


def _result_line(name: str | None, result: Any, is_error: bool) -> str:
    tool = f"Tool {name}" if name else "The tool"
    text = (
        result if isinstance(result, str) else json.dumps(result, ensure_ascii=False, default=str)
    )
    return f"{tool} failed: {text}" if is_error else f"{tool} returned: {text}"


def _assistant_text(message: ChatMessage) -> str:
    """An earlier reply as the model would have written it under the grammar."""
    calls = [tool_call_json(c.name, c.arguments) for c in message.function_calls]
    return "\n".join(calls) if calls else answer_json(message.text)


def _append(rendered: list[JSONObject], role: str, content: str) -> None:
    """Add a turn; two turns of one role in a row become one (templates expect alternation)."""
    last = rendered[-1]
    if last["role"] == role and role == "user" and len(rendered) > 1:
        last["content"] = f"{last['content']}\n{content}"
        return
    rendered.append({"role": role, "content": content})
