"""What a stored workflow event is called: its subject, its kind, its headers and its codec.

Pure rules, no I/O: the sink (``_sink``) publishes by them, the replay (``_replay``) reads by
them. An event of run ``run`` is stored on ``agentic.workflow.{run}.{kind}`` (``event_kind``)
with headers ``Agentic-Run``, ``Agentic-Workflow``, ``Agentic-Event`` and ``Agentic-Seq``;
decisions go on ``agentic.audit.{run}.{kind}`` with ``Agentic-Audit``.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterable
from urllib.parse import quote

from agentic_bus._subjects import Subjects, subject_token
from agentic_core import (
    AgentRunUpdateEvent,
    ExecutorCompletedEvent,
    ExecutorFailedEvent,
    ExecutorInvokedEvent,
    RequestInfoEvent,
    SerializationError,
    SuperstepCompletedEvent,
    SuperstepStartedEvent,
    TypeCodec,
    TypeRegistry,
    WorkflowCompletedEvent,
    WorkflowEvent,
    WorkflowFailedEvent,
    WorkflowGraph,
    WorkflowOutputEvent,
    WorkflowStartedEvent,
)
from agentic_core.stores import subject_matches

__all__ = [
    "DEFAULT_KINDS",
    "EVENT_KINDS",
    "HEADER_AUDIT",
    "HEADER_EVENT",
    "HEADER_RUN",
    "HEADER_SEQ",
    "HEADER_WORKFLOW",
    "TERMINAL_KINDS",
    "event_codec",
    "event_kind",
    "event_subject",
    "header_value",
    "kind_patterns",
    "matches_any",
    "run_subject_prefix",
]

HEADER_RUN = "Agentic-Run"
HEADER_WORKFLOW = "Agentic-Workflow"
HEADER_EVENT = "Agentic-Event"
HEADER_SEQ = "Agentic-Seq"
HEADER_AUDIT = "Agentic-Audit"

EVENT_KINDS: dict[str, str] = {
    "started": "started",
    "superstep": "superstep.>",
    "executor": "executor.>",
    "output": "output",
    "request": "request_info.>",
    "event": "event.>",
    "live": "live.>",
    "completed": "completed",
    "failed": "failed",
}
"""The kinds ``replay_events(kinds=...)`` knows by name, and the subject suffix each stands for."""
DEFAULT_KINDS = tuple(kind for kind in EVENT_KINDS if kind != "live")
"""What a replay gives without ``kinds``: every kind but agents' streaming updates."""
TERMINAL_KINDS = ("completed", "failed")
"""The kinds that end a run (a follower stops there)."""

# Printable ASCII but ' ' and '%': kept as is in headers (nats-server trims spaces around a
# value); anything else is percent-encoded, which keeps two ids apart.
_HEADER_SAFE = "".join(chr(c) for c in range(0x21, 0x7F) if chr(c) != "%")
_PART = r"(?:[A-Za-z0-9_=-]{1,64}|\*)"
_PATTERN = re.compile(rf"{_PART}(?:\.{_PART})*(?:\.>)?|>")


def event_kind(event: WorkflowEvent) -> str:
    """The subject suffix of ``event`` after ``agentic.workflow.{run}.`` (ids escaped).

    ``started``, ``superstep.started``, ``superstep.completed``,
    ``executor.{exec}.started|completed|failed``, ``output``, ``request_info.{request}``,
    ``live.{exec}`` (agents' streaming updates), ``completed``, ``failed``, and
    ``event.{type}`` for every other event (custom events, ``FanInIncompleteEvent``).

    Example:
        ```python
        event_kind(ExecutorCompletedEvent(executor_id="a.b", superstep=1, duration_s=0.1))
        # "executor.=<hash of 'a.b'>.completed"
        ```
    """
    match event:
        case WorkflowStartedEvent():
            return "started"
        case SuperstepStartedEvent():
            return "superstep.started"
        case SuperstepCompletedEvent():
            return "superstep.completed"
        case ExecutorInvokedEvent():
            return f"executor.{subject_token(event.executor_id)}.started"
        case ExecutorCompletedEvent():
            return f"executor.{subject_token(event.executor_id)}.completed"
        case ExecutorFailedEvent():
            return f"executor.{subject_token(event.executor_id)}.failed"
        case WorkflowOutputEvent():
            return "output"
        case RequestInfoEvent():
            # Not ``request.{id}``: that subject holds NatsRuntime's answerable PendingRequest.
            return f"request_info.{subject_token(event.request_id)}"
        case AgentRunUpdateEvent():
            return f"live.{subject_token(event.executor_id)}"
        case WorkflowCompletedEvent():
            return "completed"
        case WorkflowFailedEvent():
            return "failed"
        case _:
            return f"event.{subject_token(type(event).__name__)}"


def event_subject(subjects: Subjects, run_id: str, event: WorkflowEvent) -> str:
    """``agentic.workflow.{run}.{kind}``: where ``event`` of run ``run_id`` is published.

    Example:
        ```python
        event_subject(Subjects(), "r1", WorkflowOutputEvent(data=1, source_executor_id="a"))
        # "agentic.workflow.r1.output"
        ```
    """
    return subjects.workflow(run_id, event_kind(event))


def run_subject_prefix(subjects: Subjects, run_id: str) -> str:
    """``agentic.workflow.{run}.``: what every subject of run ``run_id`` starts with."""
    return subjects.workflow_all(run_id).removesuffix(">")


def kind_patterns(kinds: Iterable[str] | None) -> list[str]:
    """The subject suffixes ``kinds`` stand for (deduplicated, in order; default every kind
    but ``live``): names from ``EVENT_KINDS``, or suffixes such as ``executor.*.completed``."""
    if isinstance(kinds, str):
        raise TypeError("kinds is a list of kinds, e.g. kinds=['output'], not one string")
    found: list[str] = []
    for kind in DEFAULT_KINDS if kinds is None else kinds:
        pattern = EVENT_KINDS.get(kind, kind)
        if pattern.split(".", 1)[0] == "committed":
            raise ValueError(
                "committed entries are the distributed runtime's log, not workflow events"
            )
        if not _PATTERN.fullmatch(pattern):
            raise ValueError(
                f"unknown event kind {kind!r}: use one of {', '.join(EVENT_KINDS)} or a subject "
                "suffix such as 'executor.*.completed' (ids escaped with subject_token)"
            )
        if pattern not in found:
            found.append(pattern)
    if not found:
        raise ValueError("kinds names no kind of event")
    return found


def matches_any(patterns: Iterable[str], suffix: str) -> bool:
    """Whether the subject suffix ``suffix`` matches one of ``patterns``."""
    return any(subject_matches(pattern, suffix) for pattern in patterns)


def header_value(value: str) -> str:
    """``value`` as a one-line header value: kept as is when it is printable ASCII without
    spaces and ``%``, percent-encoded otherwise (so two ids never share a ``Nats-Msg-Id``).

    Example:
        ```python
        header_value("run-1")  # "run-1"
        header_value("run 1\\n")  # "run%201%0A" (urllib.parse.unquote gives it back)
        ```
    """
    return quote(value, safe=_HEADER_SAFE)


def event_codec(workflow: WorkflowGraph | None = None) -> TypeCodec:
    """The codec of events: ``workflow.type_registry`` (it knows the workflow's own types), else
    a fresh one; either way taught every ``WorkflowEvent`` class this process defines and the
    types of their fields (``WorkflowRunState``, a custom event's enums, ...)."""
    codec = workflow.type_registry if workflow is not None else TypeRegistry()
    if isinstance(codec, TypeRegistry):
        stack: list[type[WorkflowEvent]] = [WorkflowEvent]
        while stack:
            cls = stack.pop()
            stack.extend(cls.__subclasses__())
            with contextlib.suppress(SerializationError):  # two classes, one tag: left to fail
                codec.register_annotation(cls)
    return codec
