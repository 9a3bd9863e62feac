"""Text diagrams of a workflow graph: Mermaid and Graphviz DOT."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from agentic_core.graph._edges import EdgeKind

if TYPE_CHECKING:
    from agentic_core.graph._graph import CompiledGraph

_SAFE = re.compile(r"[^A-Za-z0-9_]")


def _node(executor_id: str) -> str:
    return "n_" + _SAFE.sub("_", executor_id)


def _label(text: str) -> str:
    return text.replace('"', "'")


def to_mermaid(workflow: CompiledGraph) -> str:
    """A Mermaid ``flowchart TD``: start node bold, fan-in as a join node, edge kinds as labels."""
    lines = ["flowchart TD"]
    for executor_id in workflow.executors:
        shape = (
            f'(["{_label(executor_id)}"])'
            if executor_id == workflow.start_executor_id
            else f'["{_label(executor_id)}"]'
        )
        lines.append(f"    {_node(executor_id)}{shape}")
    for index, edge in enumerate(workflow.edges):
        if edge.kind is EdgeKind.FAN_IN:
            join = f"fanin_{index}"
            lines.append(f"    {join}((fan-in))")
            lines.extend(f"    {_node(s)} --> {join}" for s in edge.sources)
            lines.append(f"    {join} --> {_node(edge.targets[0])}")
            continue
        source = _node(edge.sources[0])
        for position, target in enumerate(edge.targets):
            label = _edge_label(edge.kind, position, edge.conditions)
            arrow = "-.->" if label else "-->"
            text = f"|{label}|" if label else ""
            lines.append(f"    {source} {arrow}{text} {_node(target)}")
    return "\n".join(lines) + "\n"


def to_dot(workflow: CompiledGraph) -> str:
    """A Graphviz ``digraph``: dashed edges are conditional, a point node joins a fan-in."""
    lines = [f'digraph "{_label(workflow.name)}" {{', "    rankdir=TB;", "    node [shape=box];"]
    for executor_id in workflow.executors:
        style = ' style="bold"' if executor_id == workflow.start_executor_id else ""
        lines.append(f'    "{_label(executor_id)}" [label="{_label(executor_id)}"{style}];')
    for index, edge in enumerate(workflow.edges):
        if edge.kind is EdgeKind.FAN_IN:
            join = f"fanin_{index}"
            lines.append(f'    "{join}" [shape=point label=""];')
            lines.extend(f'    "{_label(s)}" -> "{join}";' for s in edge.sources)
            lines.append(f'    "{join}" -> "{_label(edge.targets[0])}";')
            continue
        for position, target in enumerate(edge.targets):
            label = _edge_label(edge.kind, position, edge.conditions)
            attrs = f' [label="{label}" style="dashed"]' if label else ""
            lines.append(f'    "{_label(edge.sources[0])}" -> "{_label(target)}"{attrs};')
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
