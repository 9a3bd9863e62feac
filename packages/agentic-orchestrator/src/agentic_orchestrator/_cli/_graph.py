"""``agentic graph MODULE:FACTORY``: a workflow's graph as Mermaid or as a tree."""

from __future__ import annotations

import inspect
from typing import Any, Literal

from rich.console import Console

from agentic_core import ObjectReferenceError, Workflow, load_object
from agentic_orchestrator._cli._errors import UsageError
from agentic_orchestrator._cli._render import graph_tree

__all__ = ["GraphFormat", "load_workflow", "show_graph"]

GraphFormat = Literal["mermaid", "text"]


def load_workflow(reference: str) -> Workflow:
    """The workflow ``MODULE:FACTORY`` names: a ``Workflow``, a zero-argument function returning
    one, or a builder (anything with ``build()``) making one."""
    try:
        target: Any = load_object(reference, what="workflow factory")
    except ObjectReferenceError as exc:
        raise UsageError(str(exc)) from None
    if isinstance(target, Workflow):
        return target
    made: Any
    if callable(target):
        try:
            made = target()
        except Exception as exc:  # noqa: BLE001 - the user's factory: say which and why, once
            raise UsageError(f"{reference} failed: {type(exc).__name__}: {exc}") from None
    else:
        made = target
    if inspect.isawaitable(made):
        raise UsageError(f"{reference} is async; give a plain function returning a Workflow")
    build = getattr(made, "build", None)
    if not isinstance(made, Workflow) and callable(build):
        made = build()
    if not isinstance(made, Workflow):
        raise UsageError(f"{reference} gave {type(made).__name__}, not a Workflow")
    return made


def show_graph(console: Console, workflow: Workflow, fmt: GraphFormat) -> None:
    """Print the graph: Mermaid text as is (pipe it into a ``.mmd`` file), or a tree."""
    if fmt == "mermaid":
        console.out(workflow.to_mermaid(), end="", highlight=False)
    else:
        console.print(graph_tree(workflow))
