"""How the command line shows things: a graph as a tree, outputs as text, events as JSON."""

from __future__ import annotations

import json
from typing import Any, cast

from pydantic import BaseModel
from pydantic_core import to_jsonable_python
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from rich.tree import Tree

from agentic_core import (
    AgentExecutorResponse,
    AgentResponse,
    ChatMessage,
    Role,
    Workflow,
    WorkflowEvent,
)

__all__ = ["event_json", "graph_tree", "output_renderable", "output_text"]

_EDGE_WORDS = {
    "direct": "",
    "conditional": "if",
    "switch": "case",
    "fan_out": "fan-out",
    "fan_in": "fan-in",
    "collect": "collect",
}


def graph_tree(workflow: Workflow) -> Tree:
    """The graph from its start executor: children are where messages go; a node seen before
    (a loop, a join) is named again with ``↺`` instead of being expanded twice."""
    outgoing: dict[str, list[tuple[str, str]]] = {}
    for edge in workflow.edges:
        word = _EDGE_WORDS.get(str(edge.kind), str(edge.kind))
        if str(edge.kind) == "fan_in":
            word = f"fan-in of {', '.join(edge.sources)}"
        for source in edge.sources:
            for target in edge.targets:
                outgoing.setdefault(source, []).append((target, word))
    root = Tree(Text(f"{workflow.name}", style="bold"))
    seen: set[str] = set()

    def grow(branch: Tree, executor_id: str, word: str) -> None:
        label = Text(executor_id, style="cyan")
        if word:
            label.append(f"  ({word})", style="dim")
        if executor_id in seen:
            label.append("  ↺", style="yellow")
            branch.add(label)
            return
        seen.add(executor_id)
        child = branch.add(label)
        for target, target_word in outgoing.get(executor_id, []):
            grow(child, target, target_word)

    grow(root, workflow.start_executor_id, "start")
    for executor_id in workflow.executors:
        if executor_id not in seen:  # reached only through dynamic routes (handoffs)
            grow(root, executor_id, "")
    return root


def output_text(data: Any) -> str:
    """The answer an output carries, as plain text.

    A conversation (``list[ChatMessage]``) gives its last reply that is not the user's; an
    agent response its text; a pydantic model its own ``__str__`` when its class writes one,
    else its JSON; anything else ``str()``.
    """
    if isinstance(data, str):
        return data
    if isinstance(data, ChatMessage):
        return data.text
    if isinstance(data, AgentResponse):
        return data.text
    if isinstance(data, AgentExecutorResponse):
        return data.agent_response.text
    messages = _conversation(data)
    if messages is not None:
        replies = [m for m in messages if m.role is not Role.USER and m.text]
        return (replies or messages)[-1].text
    if isinstance(data, BaseModel) and not _own_str(data):
        return data.model_dump_json(indent=2)
    return str(cast("object", data))


def _own_str(model: BaseModel) -> bool:
    """Whether ``model``'s class says how it reads (overrides pydantic's ``__str__``)."""
    return type(model).__str__ is not BaseModel.__str__


def _conversation(data: Any) -> list[ChatMessage] | None:
    """``data`` as a non-empty ``list[ChatMessage]``, or None."""
    if not isinstance(data, list):
        return None
    items = cast("list[object]", data)
    if items and all(isinstance(m, ChatMessage) for m in items):
        return cast("list[ChatMessage]", items)
    return None


def output_renderable(data: Any) -> RenderableType:
    """An output for the terminal: a conversation turn by turn, else :func:`output_text`."""
    messages = _conversation(data)
    if messages is not None:
        lines: list[RenderableType] = []
        for message in messages:
            if not message.text:
                continue
            who = message.author_name or str(message.role)
            line = Text(f"{who}: ", style="bold")
            line.append(message.text)
            lines.append(line)
        return Group(*lines)
    if (
        isinstance(data, BaseModel)
        and not isinstance(data, (ChatMessage, AgentResponse))
        and not _own_str(data)
    ):
        # Field by field, text as text: code and multi-line answers stay readable.
        table = Table(box=None, show_header=False, pad_edge=False)
        table.add_column(style="bold", no_wrap=True)
        table.add_column()
        for name, value in data.model_dump(mode="json").items():
            shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
            table.add_row(name, Text(shown))
        return table
    return Text(output_text(data))


def event_json(event: WorkflowEvent) -> str:
    """One event as one JSON line: ``{"event": "<class name>", ...its fields}``."""
    fields = to_jsonable_python(event, fallback=_unknown, serialize_unknown=True)
    return json.dumps({"event": type(event).__name__, **fields}, ensure_ascii=False)


def _unknown(value: Any) -> Any:
    if isinstance(value, type):
        return f"{value.__module__}.{value.__qualname__}"
    return repr(value)
