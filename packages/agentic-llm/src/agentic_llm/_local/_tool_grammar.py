"""Tool calls for models without a tool-calling template: a JSON reply constrained by a grammar.

Small local models (SmolLM2-135M's GGUF template knows no tools) answer "use the add tool" in
prose when offered tools. Instead the reply is one JSON object whose schema llama.cpp turns
into a grammar: ``{"tool": <name>, "arguments": <that tool's parameters>}`` per tool, and
(unless a tool call is required) ``{"answer": <text>}``. The sampler cannot leave the schema, so
every tool call names a real tool with schema-valid arguments. Pure: no llama.cpp, no I/O.
"""

from __future__ import annotations

import copy
import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final, cast

from pydantic import BaseModel

from agentic_core import ChatOptions, FunctionCallContent, Tool
from agentic_llm._errors import ProviderError
from agentic_llm._json import JSONObject, as_object

TOOL_KEY: Final = "tool"
ARGUMENTS_KEY: Final = "arguments"
ANSWER_KEY: Final = "answer"
_DEFS: Final = "$defs"
_REF_PREFIX: Final = "#/$defs/"


def uses_tool_grammar(options: ChatOptions | None, *, enabled: bool) -> bool:
    """Whether a request goes through the tool grammar: tools offered and the choice left to
    the model (``"auto"``, ``"required"`` or unset). A named tool is forced by the engine
    (the reply constrained to its arguments' schema); ``"none"`` offers no tool."""
    if not enabled or options is None or not options.tools:
        return False
    return options.tool_choice in (None, "auto", "required")


@dataclass(frozen=True)
class ToolReplyFormat:
    """The reply shapes one request allows, and how to read a reply.

    ``allow_tools`` False keeps the tools for the prompt but lets the model only answer;
    ``answer_format``: the ``response_format`` the answer branch must follow (its text is then
    that model's JSON), else the answer is free text.
    """

    tools: tuple[Tool, ...]
    allow_tools: bool = True
    allow_answer: bool = True
    answer_format: type[BaseModel] | None = None

    @property
    def tool_names(self) -> list[str]:
        """The offered tools' names, in order."""
        return [tool.name for tool in self.tools]

    def answer_only(self) -> ToolReplyFormat:
        """The same request with the tool branches removed (the model must answer)."""
        return ToolReplyFormat(
            tools=self.tools, allow_tools=False, allow_answer=True, answer_format=self.answer_format
        )

    def schema(self) -> JSONObject:
        """The JSON schema of the reply: ``anyOf`` one branch per tool, then the answer."""
        defs: JSONObject = {}
        branches: list[JSONObject] = []
        for tool in self.tools if self.allow_tools else ():
            parameters = _hoisted(_parameters_schema(tool), f"{tool.name}__", defs)
            branches.append(
                _object_branch({TOOL_KEY: {"const": tool.name}, ARGUMENTS_KEY: parameters})
            )
        if self.allow_answer:
            answer: JSONObject = {"type": "string"}
            if self.answer_format is not None:
                answer = _hoisted(self.answer_format.model_json_schema(), "answer__", defs)
            branches.append(_object_branch({ANSWER_KEY: answer}))
        if not branches:
            raise ValueError("a tool reply needs at least one tool or the answer branch")
        schema: JSONObject = branches[0] if len(branches) == 1 else {"anyOf": branches}
        if defs:
            schema = {**schema, _DEFS: defs}
        return schema

    def parse(self, text: str, *, label: str, provider: str) -> ToolReply:
        """The reply ``text`` as a tool call or an answer. Raises ``ProviderError`` naming the
        problem when it is not one of the allowed shapes (only possible without the grammar,
        or when ``max_tokens`` cut the reply short)."""
        try:
            reply = json.loads(text)
        except json.JSONDecodeError as exc:
            raise self._malformed(text, f"it is not JSON ({exc.msg})", label, provider) from exc
        if not isinstance(reply, dict):
            raise self._malformed(text, "it is not a JSON object", label, provider)
        body = cast("JSONObject", reply)
        if TOOL_KEY in body and self.allow_tools:
            name = body[TOOL_KEY]
            if name not in self.tool_names:
                known = ", ".join(self.tool_names)
                raise self._malformed(
                    text, f"it names no offered tool (offered: {known})", label, provider
                )
            arguments = body.get(ARGUMENTS_KEY, {})
            if not isinstance(arguments, dict):
                raise self._malformed(text, "its arguments are not a JSON object", label, provider)
            call = FunctionCallContent(
                call_id=new_call_id(), name=str(name), arguments=cast("JSONObject", arguments)
            )
            return ToolReply(call=call)
        if ANSWER_KEY in body and self.allow_answer:
            answer = body[ANSWER_KEY]
            if self.answer_format is not None:
                return ToolReply(text=json.dumps(answer, ensure_ascii=False))
            if not isinstance(answer, str):
                raise self._malformed(text, "its answer is not a string", label, provider)
            return ToolReply(text=answer)
        expected = " or ".join(
            [f'{{"{TOOL_KEY}": ..., "{ARGUMENTS_KEY}": ...}}'] * self.allow_tools
            + [f'{{"{ANSWER_KEY}": ...}}'] * self.allow_answer
        )
        raise self._malformed(text, f"it is neither of {expected}", label, provider)

    @staticmethod
    def _malformed(text: str, why: str, label: str, provider: str) -> ProviderError:
        return ProviderError(
            f"{label} sent a reply that is not a tool call or an answer: {why}: {text[:300]!r}",
            provider=provider,
            body=text[:4000],
        )


@dataclass(frozen=True)
class ToolReply:
    """A parsed reply: a tool call, or the answer's text."""

    call: FunctionCallContent | None = None
    text: str = ""


def new_call_id() -> str:
    """A fresh tool-call id (the model's JSON carries none)."""
    return f"call_{uuid.uuid4().hex[:24]}"


def tool_call_json(name: str, arguments: JSONObject) -> str:
    """A tool call written as the model writes it (for the history and the examples)."""
    return json.dumps({TOOL_KEY: name, ARGUMENTS_KEY: arguments}, ensure_ascii=False)


def answer_json(text: str) -> str:
    """An answer written as the model writes it."""
    return json.dumps({ANSWER_KEY: text}, ensure_ascii=False)


def reply_format_for(options: ChatOptions) -> ToolReplyFormat:
    """The reply shapes ``options`` allow: every tool, and the answer unless one is required."""
    return ToolReplyFormat(
        tools=tuple(options.tools),
        allow_answer=options.tool_choice != "required",
        answer_format=options.response_format,
    )


def _object_branch(properties: JSONObject) -> JSONObject:
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


def _parameters_schema(tool: Tool) -> JSONObject:
    parameters = as_object(copy.deepcopy(tool.parameters))
    return parameters or {"type": "object", "properties": {}, "additionalProperties": False}


def _hoisted(schema: JSONObject, prefix: str, defs: JSONObject) -> JSONObject:
    """``schema`` without its ``$defs``, which move to ``defs`` renamed with ``prefix`` (two tools
    may both define a ``Point``); its ``$ref``s follow. The grammar resolves refs from the root."""
    own = as_object(schema.pop(_DEFS, None))
    renamed = _renamed_refs(schema, prefix)
    for name, definition in own.items():
        defs[prefix + name] = _renamed_refs(definition, prefix)
    return cast("JSONObject", renamed)


def _renamed_refs(node: Any, prefix: str) -> Any:
    if isinstance(node, dict):
        result: JSONObject = {}
        for key, value in cast("JSONObject", node).items():
            if key == "$ref" and isinstance(value, str) and value.startswith(_REF_PREFIX):
                result[key] = _REF_PREFIX + prefix + value.removeprefix(_REF_PREFIX)
            else:
                result[key] = _renamed_refs(value, prefix)
        return result
    if isinstance(node, list):
        return [_renamed_refs(item, prefix) for item in cast("Sequence[Any]", node)]
    return node
