"""Text diagrams of a workflow graph: Mermaid and Graphviz DOT.

Executor ids are text, never markup or syntax: a diagram of any graph draws one node per
executor with its id shown verbatim, and no id can add markup (``<img>``, ``<a href>``) to a page
that renders the diagram.
"""

from __future__ import annotations

import unicodedata
from typing import TYPE_CHECKING

from agentic_core.graph._edges import EdgeKind

if TYPE_CHECKING:
    from agentic_core.graph._graph import CompiledGraph

_ASCII_ALNUM = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
# Kept as they are in a Mermaid label; anything else becomes an entity code. No ":" or "#": Mermaid
# rewrites "#...;" into HTML entities, and a line with "style ... : ... #...;" before that.
_MERMAID_PLAIN = frozenset(" _-.")


def node_id(executor_id: str) -> str:
    """The diagram node id of ``executor_id``: one to one, so ``a-b`` and ``a_b`` stay apart.

    ASCII letters and digits are kept, ``_`` is doubled, any other character becomes
    ``_<hex code>_``; the ``n_`` prefix keeps ids off Mermaid's keywords (``end``).
    """
    parts = ["n_"]
    for char in executor_id:
        if char in _ASCII_ALNUM:
            parts.append(char)
        elif char == "_":
            parts.append("__")
        else:
            parts.append(f"_{ord(char):x}_")
    return "".join(parts)


def mermaid_text(text: str) -> str:
    """``text`` for a quoted Mermaid label: shown as is, never read as markup or syntax."""
    return "".join(
        char if char.isalnum() or char in _MERMAID_PLAIN else f"#{ord(char)};" for char in text
    )


def dot_text(text: str) -> str:
    """``text`` for a quoted DOT string: quotes and backslashes escaped, a newline kept as one."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    escaped = (line.replace("\\", "\\\\").replace('"', '\\"') for line in lines)
    # Other control characters have no DOT escape; they show as a space.
    return "\\n".join(
        "".join(" " if unicodedata.category(c) == "Cc" else c for c in line) for line in escaped
    )


def to_mermaid(workflow: CompiledGraph) -> str:
    """A Mermaid ``flowchart TD``: start node bold, fan-in as a join node, edge kinds as labels."""
    lines = ["flowchart TD"]
    for executor_id in workflow.executors:
        label = f'"{mermaid_text(executor_id)}"'
        shape = f"([{label}])" if executor_id == workflow.start_executor_id else f"[{label}]"
        lines.append(f"    {node_id(executor_id)}{shape}")
    for index, edge in enumerate(workflow.edges):
        if edge.kind is EdgeKind.FAN_IN:
            join = f"fanin_{index}"
            lines.append(f"    {join}((fan-in))")
            lines.extend(f"    {node_id(s)} --> {join}" for s in edge.sources)
            lines.append(f"    {join} --> {node_id(edge.targets[0])}")
            continue
        source = node_id(edge.sources[0])
        for position, target in enumerate(edge.targets):
            label = _edge_label(edge.kind, position, edge.conditions)
            arrow = "-.->" if label else "-->"
            text = f"|{label}|" if label else ""
            lines.append(f"    {source} {arrow}{text} {node_id(target)}")
    return "\n".join(lines) + "\n"


def to_dot(workflow: CompiledGraph) -> str:
    """A Graphviz ``digraph``: dashed edges are conditional, a point node joins a fan-in."""
    lines = [f'digraph "{dot_text(workflow.name)}" {{', "    rankdir=TB;", "    node [shape=box];"]
    for executor_id in workflow.executors:
        style = ' style="bold"' if executor_id == workflow.start_executor_id else ""
        lines.append(f'    {node_id(executor_id)} [label="{dot_text(executor_id)}"{style}];')
    for index, edge in enumerate(workflow.edges):
        if edge.kind is EdgeKind.FAN_IN:
            join = f"fanin_{index}"
            lines.append(f'    {join} [shape=point label=""];')
            lines.extend(f"    {node_id(s)} -> {join};" for s in edge.sources)
            lines.append(f"    {join} -> {node_id(edge.targets[0])};")
            continue
        for position, target in enumerate(edge.targets):
            label = _edge_label(edge.kind, position, edge.conditions)
            attrs = f' [label="{label}" style="dashed"]' if label else ""
            lines.append(f"    {node_id(edge.sources[0])} -> {node_id(target)}{attrs};")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _edge_label(kind: EdgeKind, position: int, conditions: tuple[object, ...]) -> str:
    if kind is EdgeKind.CONDITIONAL:
        return "if"
    if kind is EdgeKind.SWITCH:
        return "default" if conditions[position] is None else f"case {position + 1}"
    if kind is EdgeKind.FAN_OUT:
        return "fan-out"
    if kind is EdgeKind.COLLECT:
        return "collect"
    return ""
