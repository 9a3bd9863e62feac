"""What each served agent or workflow is as an MCP tool: its name, description and input schema,
and how the call's arguments become the agent's message or the workflow's start message."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import UnionType
from typing import Any, Literal, Union, cast, get_args, get_origin

from pydantic import TypeAdapter, ValidationError

from agentic_core import Agent, AgentExecutorResponse, ChatMessage, Workflow
from agentic_mcp._errors import MCPServeError

__all__ = ["ServedTarget", "Targets", "served_targets"]

Targets = Agent | Workflow | Sequence[Agent | Workflow] | Mapping[str, Agent | Workflow]
"""What ``serve_mcp`` serves: one agent or workflow, several, or several by tool name."""

_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
_MESSAGE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"message": {"type": "string", "description": "The message to send."}},
    "required": ["message"],
}


@dataclass(frozen=True)
class ServedTarget:
    """One agent or workflow and the tool it is."""

    name: str
    kind: Literal["agent", "workflow"]
    target: Any
    description: str
    input_schema: dict[str, Any]
    input_form: Literal["message", "object", "wrapped"]
    """How arguments become the input: a ``message`` string, the object itself, or ``input``."""
    adapter: TypeAdapter[Any] | None = None
    chat_form: Literal["str", "message", "messages"] = "str"
    """For a ``message`` workflow: what its start executor takes."""

    def workflow_input(self, arguments: Mapping[str, Any]) -> Any:
        """The start executor's message for ``arguments`` (ValueError with the reason)."""
        if self.input_form == "message":
            text = message_argument(arguments)
            if self.chat_form == "message":
                return ChatMessage.user(text)
            if self.chat_form == "messages":
                return [ChatMessage.user(text)]
            return text
        adapter = self.adapter
        if adapter is None:
            raise ValueError(f"{self.name!r} takes no structured input")
        value = arguments.get("input") if self.input_form == "wrapped" else dict(arguments)
        try:
            return adapter.validate_python(value)
        except ValidationError as exc:
            raise ValueError(f"invalid arguments for {self.name!r}: {exc}") from None


def message_argument(arguments: Mapping[str, Any]) -> str:
    """The ``message`` string of a call (ValueError when missing or not a string)."""
    message = arguments.get("message")
    if not isinstance(message, str):
        raise ValueError("the tool takes one argument, 'message': a string")
    return message


def served_targets(targets: Targets) -> list[ServedTarget]:
    """The tools for ``targets``, named after each target (or its key), unique."""
    named: list[tuple[str | None, Any]]
    if isinstance(targets, Mapping):
        named = [(key, value) for key, value in cast("Mapping[str, Any]", targets).items()]
    elif isinstance(targets, Workflow | Agent):
        named = [(None, targets)]
    else:
        named = [(None, value) for value in cast("Sequence[Any]", targets)]
    if not named:
        raise MCPServeError("nothing to serve: give at least one agent or workflow")
    served: list[ServedTarget] = []
    taken: set[str] = set()
    for key, target in named:
        item = _served(key, target)
        if item.name in taken:
            raise MCPServeError(
                f"two targets would both be the tool {item.name!r}: give them distinct names "
                "(a mapping {tool_name: target} names them)"
            )
        taken.add(item.name)
        served.append(item)
    return served


def _served(key: str | None, target: Any) -> ServedTarget:
    if isinstance(target, Workflow):
        name = _tool_name(key, target.name, "workflow")
        return _workflow_target(name, target)
    if isinstance(target, Agent):
        name = _tool_name(key, target.name, "agent")
        description = getattr(target, "description", None) or f"Ask the agent {target.name!r}."
        return ServedTarget(
            name=name,
            kind="agent",
            target=target,
            description=str(description),
            input_schema=dict(_MESSAGE_SCHEMA),
            input_form="message",
        )
    raise MCPServeError(
        f"cannot serve a {type(target).__name__} over MCP: give agentic agents or workflows"
    )


def _tool_name(key: str | None, name: str | None, kind: str) -> str:
    if key is not None:
        if not _NAME.match(key):
            raise MCPServeError(
                f"tool name {key!r} is not valid for MCP: use 1 to 64 of A-Z a-z 0-9 _ -"
            )
        return key
    return (_UNSAFE.sub("_", name or "") or kind)[:64]


def _workflow_target(name: str, workflow: Workflow) -> ServedTarget:
    start = workflow.executors[workflow.start_executor_id]
    # A pattern's first agent also takes the previous agent's response (how agents chain
    # inside a graph); no caller from outside sends one, so it is not part of the tool.
    types = tuple(t for t in _flat(start.input_types) if t is not Any)
    types = tuple(t for t in types if t is not AgentExecutorResponse) or types
    description = getattr(workflow, "description", None) or f"Run the workflow {workflow.name!r}."
    if not types or all(_is_chat_input(t) for t in types):
        return ServedTarget(
            name=name,
            kind="workflow",
            target=workflow,
            description=str(description),
            input_schema=dict(_MESSAGE_SCHEMA),
            input_form="message",
            chat_form=_chat_form(types),
        )
    input_type: Any = types[0] if len(types) == 1 else Union[types]  # noqa: UP007 - runtime union
    adapter: TypeAdapter[Any] = TypeAdapter(input_type)
    schema = adapter.json_schema()
    if schema.get("type") == "object":
        return ServedTarget(
            name=name,
            kind="workflow",
            target=workflow,
            description=str(description),
            input_schema=schema,
            input_form="object",
            adapter=adapter,
        )
    defs = schema.pop("$defs", None)
    wrapped: dict[str, Any] = {
        "type": "object",
        "properties": {"input": schema},
        "required": ["input"],
    }
    if defs is not None:
        wrapped["$defs"] = defs
    return ServedTarget(
        name=name,
        kind="workflow",
        target=workflow,
        description=str(description),
        input_schema=wrapped,
        input_form="wrapped",
        adapter=adapter,
    )


def _flat(types: Sequence[Any]) -> tuple[Any, ...]:
    """``types`` with each union spread into its members (``str | ChatMessage`` is two)."""
    flat: list[Any] = []
    for tp in types:
        if get_origin(tp) in (Union, UnionType):
            flat.extend(_flat(get_args(tp)))
        elif tp not in flat:
            flat.append(tp)
    return tuple(flat)


def _is_chat_input(tp: Any) -> bool:
    """Whether ``tp`` takes a text message: ``str``, ``ChatMessage``, a list of messages."""
    if tp is str or tp is ChatMessage:
        return True
    origin = get_origin(tp)
    if origin in (list, Sequence, tuple):
        args = get_args(tp)
        return bool(args) and args[0] is ChatMessage
    return False


def _chat_form(types: tuple[Any, ...]) -> Literal["str", "message", "messages"]:
    if not types or str in types:
        return "str"
    if ChatMessage in types:
        return "message"
    return "messages"
