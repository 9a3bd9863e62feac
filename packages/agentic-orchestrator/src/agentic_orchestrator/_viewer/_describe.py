"""How the viewer shows engine things: a graph's Mermaid ids, values as JSON, events as one line,
the JSON schema an answer must match."""

from __future__ import annotations

from typing import Any, cast

from pydantic import BaseModel, TypeAdapter
from pydantic_core import to_jsonable_python

from agentic_core import (
    AgentResponse,
    AgentRunUpdateEvent,
    ChatMessage,
    ExecutorCompletedEvent,
    ExecutorFailedEvent,
    ExecutorInvokedEvent,
    FanInIncompleteEvent,
    RequestInfoEvent,
    SuperstepCompletedEvent,
    SuperstepStartedEvent,
    Workflow,
    WorkflowCompletedEvent,
    WorkflowEvent,
    WorkflowFailedEvent,
    WorkflowOutputEvent,
    WorkflowStartedEvent,
)

__all__ = [
    "GraphParts",
    "display_text",
    "event_summary",
    "graph_parts",
    "response_schema",
    "short",
    "to_json",
]

_MAX_TEXT = 2000


class GraphParts(BaseModel):
    """What a run view shows of a workflow's graph."""

    mermaid: str
    node_ids: dict[str, str]
    executor_ids: list[str]


def graph_parts(workflow: Workflow) -> GraphParts:
    """The Mermaid text of ``workflow`` and the node id of each of its executors.

    The node ids come from core (the browser finds each executor's node in the SVG by them);
    executor ids appear in the text only as escaped labels, never as markup.
    """
    return GraphParts(
        mermaid=workflow.to_mermaid(),
        node_ids=workflow.mermaid_node_ids(),
        executor_ids=list(workflow.executors),
    )


def to_json(value: Any) -> Any:
    """``value`` as JSON-able data (pydantic models, dataclasses...; anything else as its str)."""
    return to_jsonable_python(value, fallback=str)


def display_text(value: Any) -> str:
    """How a person reads ``value``: a conversation as ``speaker: text`` lines, an agent's
    response as its text, anything else as ``str(value)``."""
    if isinstance(value, ChatMessage):
        return f"{value.author_name or value.role.value}: {value.text}"
    if isinstance(value, list):
        items = cast("list[object]", value)
        if items and all(isinstance(m, ChatMessage) for m in items):
            return "\n".join(display_text(m) for m in items)
    if isinstance(value, AgentResponse):
        return value.text
    return str(cast("object", value))


def short(text: str) -> str:
    """``text`` cut to a length a page can show."""
    return text if len(text) <= _MAX_TEXT else text[: _MAX_TEXT - 1] + "…"


def response_schema(response_type: Any) -> dict[str, Any]:
    """The JSON schema of ``response_type`` ({} when it has none: any JSON is accepted)."""
    try:
        schema = TypeAdapter(response_type).json_schema()
    except Exception:  # noqa: BLE001 - any type pydantic cannot describe: no constraint shown
        return {}
    return dict(schema)


def event_summary(event: WorkflowEvent) -> str:
    """One human line for ``event``; a custom event with its own ``__str__`` speaks for itself."""
    if type(event).__str__ is not BaseModel.__str__:
        return short(str(event))
    match event:
        case WorkflowStartedEvent():
            return f"run {event.run_id} started"
        case SuperstepStartedEvent():
            return f"superstep {event.superstep} started: {', '.join(event.executor_ids)}"
        case SuperstepCompletedEvent():
            return f"superstep {event.superstep} completed"
        case ExecutorInvokedEvent():
            return f"{event.executor_id} invoked"
        case ExecutorCompletedEvent():
            return f"{event.executor_id} completed in {event.duration_s:.3f} s"
        case ExecutorFailedEvent():
            then = "will retry" if event.will_retry else "gave up"
            return short(f"{event.executor_id} failed ({then}): {event.error}")
        case WorkflowOutputEvent():
            return short(f"output from {event.source_executor_id}: {event.data}")
        case RequestInfoEvent():
            return short(f"{event.source_executor_id} asks: {event.data}")
        case AgentRunUpdateEvent():
            return short(f"{event.executor_id}: {getattr(event.update, 'text', event.update)}")
        case WorkflowCompletedEvent():
            return (
                f"run {event.status.value.replace('_', ' ')} after {event.superstep_count} "
                f"supersteps ({event.duration_s:.2f} s)"
            )
        case WorkflowFailedEvent():
            return short(f"run failed at superstep {event.superstep}: {event.error}")
        case FanInIncompleteEvent():
            return f"fan-in into {event.target_id} missing {', '.join(event.missing_source_ids)}"
        case _:
            return short(f"{type(event).__name__} {event.model_dump_json()}")
