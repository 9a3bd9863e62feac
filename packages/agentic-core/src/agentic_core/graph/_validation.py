"""Build-time checks of a graph; each failure names the executors and types involved."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from agentic_core._errors import GraphValidationError
from agentic_core.graph._edges import Edge, EdgeKind
from agentic_core.graph._executor import Executor
from agentic_core.graph._typing import accepts_list, can_accept, describe, list_element


def validate_graph(
    start: str | None,
    executors: Mapping[str, Executor],
    edges: Sequence[Edge],
    duplicates: Sequence[str],
) -> str:
    """Check the graph; return the start executor id."""
    if duplicates:
        raise GraphValidationError(
            "duplicate executor id(s): "
            + ", ".join(f"'{d}'" for d in sorted(set(duplicates)))
            + " (two different executor objects share an id)"
        )
    if start is None:
        raise GraphValidationError("no start executor: call set_start_executor(...)")
    for executor_id in (start, *(i for e in edges for i in (*e.sources, *e.targets))):
        if executor_id not in executors:
            raise GraphValidationError(
                f"unknown executor id '{executor_id}': pass the Executor object or add it with "
                f"add_executor (known: {', '.join(sorted(executors)) or 'none'})"
            )
    _check_reachable(start, executors, edges)
    for edge in edges:
        _check_types(edge, executors)
    return start


def _check_reachable(start: str, executors: Mapping[str, Executor], edges: Sequence[Edge]) -> None:
    adjacency: dict[str, set[str]] = {}
    for edge in edges:
        for source in edge.sources:
            adjacency.setdefault(source, set()).update(edge.targets)
    seen = {start}
    stack = [start]
    while stack:
        for nxt in adjacency.get(stack.pop(), ()):
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    unreachable = sorted(set(executors) - seen)
    if unreachable:
        raise GraphValidationError(
            f"executor(s) unreachable from the start executor '{start}': "
            + ", ".join(f"'{u}'" for u in unreachable)
        )


def _check_types(edge: Edge, executors: Mapping[str, Executor]) -> None:
    if edge.kind is EdgeKind.FAN_IN or edge.kind is EdgeKind.COLLECT:
        what = "fan-in" if edge.kind is EdgeKind.FAN_IN else "collect"
        target = executors[edge.targets[0]]
        list_handlers = [s.message_type for s in target.handlers if accepts_list(s.message_type)]
        if not list_handlers:
            raise GraphValidationError(
                f"{what} target '{target.id}' has no handler for a list (it accepts "
                f"{_accepted(target)}); annotate a handler with list[T]"
            )
        for source_id in edge.sources:
            produced = executors[source_id].output_types
            if produced and not any(
                can_accept(list_element(h), p) for p in produced for h in list_handlers
            ):
                raise GraphValidationError(
                    f"{what} edge {source_id} -> {target.id}: '{source_id}' sends "
                    f"{_names(produced)} but '{target.id}' accepts only "
                    f"{', '.join(describe(h) for h in list_handlers)}"
                )
        return
    for source_id in edge.sources:
        source = executors[source_id]
        for target_id in edge.targets:
            target = executors[target_id]
            if not target.handlers:
                raise GraphValidationError(
                    f"edge {source_id} -> {target_id}: '{target_id}' has no @handler"
                )
            produced = source.output_types
            if produced and not any(
                can_accept(s.message_type, p) for p in produced for s in target.handlers
            ):
                raise GraphValidationError(
                    f"edge {source_id} -> {target_id}: '{source_id}' sends "
                    f"{_names(produced)} but no handler of '{target_id}' accepts it "
                    f"(it accepts {_accepted(target)})"
                )


def _accepted(executor: Executor) -> str:
    return ", ".join(describe(s.message_type) for s in executor.handlers) or "nothing"


def _names(types: tuple[object, ...]) -> str:
    return " | ".join(describe(t) for t in types)
