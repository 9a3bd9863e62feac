"""RunRecord: what the viewer knows of one run, updated event by event, viewed as a RunView.

A change bumps ``version`` and wakes whoever waits for one (an SSE stream). Waiters hold the
``asyncio.Event`` of the version they saw: a slow reader never queues snapshots, it reads the
latest one when it gets round to it.
"""

from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from agentic_core import (
    ExecutorCompletedEvent,
    ExecutorFailedEvent,
    RequestInfoEvent,
    RunStatus,
    SuperstepStartedEvent,
    Workflow,
    WorkflowCompletedEvent,
    WorkflowEvent,
    WorkflowFailedEvent,
    WorkflowOutputEvent,
    WorkflowRunState,
    WorkflowStartedEvent,
)
from agentic_orchestrator._run_summary import RunSource
from agentic_orchestrator._viewer._describe import (
    GraphParts,
    display_text,
    event_summary,
    graph_parts,
    response_schema,
    short,
    to_json,
)
from agentic_orchestrator._viewer._limits import bounded
from agentic_orchestrator._viewer._views import (
    EventView,
    ExecutorStatus,
    OutputView,
    RequestView,
    RunView,
    SuperstepView,
)

__all__ = ["AnswerableRequest", "RunRecord", "request_from_event"]

MAX_EVENTS = 1000
"""Events kept per run (the oldest go first; ``seq`` keeps counting)."""
MAX_OUTPUTS = 500


@dataclass(frozen=True, slots=True)
class AnswerableRequest:
    """A request the viewer can answer: its view, and the type the answer is validated against.

    Not agentic-bus's public ``PendingRequest`` (a request of a run paused on the bus).
    """

    view: RequestView
    response_type: Any


def _now() -> datetime:
    return datetime.now(UTC)


def request_from_event(event: RequestInfoEvent) -> AnswerableRequest:
    """The pending request ``event`` opens."""
    view = RequestView(
        request_id=event.request_id,
        source_executor_id=event.source_executor_id,
        prompt=short(str(event.data)),
        data=bounded(to_json(event.data)),
        response_schema=response_schema(event.response_type),
    )
    return AnswerableRequest(view, event.response_type)


def _finished_status(state: WorkflowRunState) -> RunStatus:
    """A run's status once its stream ended: the words a stored run's checkpoint gives."""
    if state is WorkflowRunState.IDLE_WITH_PENDING_REQUESTS:
        return "waiting"
    if state is WorkflowRunState.CANCELLED:
        return "interrupted"  # its checkpoint holds the messages still to deliver
    if state is WorkflowRunState.FAILED:
        return "failed"
    return "completed"


class RunRecord:
    """One run as the viewer saw it (live, or as far as checkpoints and replays told)."""

    def __init__(
        self,
        run_id: str,
        *,
        source: RunSource,
        workflow: Workflow | None = None,
        workflow_id: str = "",
        workflow_name: str = "",
    ) -> None:
        self.run_id = run_id
        self.source: RunSource = source
        self.workflow = workflow
        self.workflow_id = workflow.id if workflow else workflow_id
        self.workflow_name = workflow.name if workflow else workflow_name
        self.status: RunStatus = "running"
        self.error: str | None = None
        self.supersteps: dict[int, dict[str, ExecutorStatus]] = {}
        self.executors_seen: list[str] = []
        self.requests: dict[str, AnswerableRequest] = {}
        self.updated_at = _now()
        self.version = 0
        self.driving = False
        """A stream of this run is being consumed in this process right now."""
        self.resumable = False
        """The viewer can resume this run (it holds the workflow, and a store or the paused run)."""
        self._events: deque[EventView] = deque(maxlen=MAX_EVENTS)
        self._outputs: deque[OutputView] = deque(maxlen=MAX_OUTPUTS)
        self._seq = 0
        self._changed = asyncio.Event()
        self._graph: GraphParts | None = None

    # -- changes ---------------------------------------------------------------------------------

    def changed(self) -> None:
        """Note a change: a new version, and every waiter wakes."""
        self.version += 1
        self.updated_at = _now()
        self._changed.set()
        self._changed = asyncio.Event()

    async def wait_for_change(self, version: int) -> None:
        """Return once the record is newer than ``version``."""
        while self.version <= version:
            await self._changed.wait()

    def seed(self, view: RunView) -> None:
        """Start from what checkpoints told of the run (before a resume or a replay)."""
        for step in view.supersteps:
            self.supersteps[step.superstep] = dict(step.executors)
        for executor_id in view.executor_ids:
            self._saw(executor_id)
        self.status = view.status
        self.error = view.error
        self.changed()

    def fail(self, error: str) -> None:
        """The stream of this run broke: the run is failed as far as the viewer can tell."""
        self.status = "failed"
        self.error = error
        self.changed()

    def answered(self, request_ids: list[str]) -> None:
        """These requests got their answers (the resumed stream says how the run goes on)."""
        for request_id in request_ids:
            self.requests.pop(request_id, None)
        self.changed()

    def apply(self, event: WorkflowEvent) -> None:
        """Record ``event``: the event log, and what it says of statuses, outputs, requests."""
        self._log(event)
        match event:
            case WorkflowStartedEvent():
                self.status, self.error = "running", None
            case SuperstepStartedEvent():
                step = self.supersteps.setdefault(event.superstep, {})
                for executor_id in event.executor_ids:
                    step[executor_id] = "running"
                    self._saw(executor_id)
            case ExecutorCompletedEvent():
                self._executor(event.superstep, event.executor_id, "completed")
            case ExecutorFailedEvent():
                status: ExecutorStatus = "retrying" if event.will_retry else "failed"
                self._executor(event.superstep, event.executor_id, status)
            case WorkflowOutputEvent():
                self._outputs.append(
                    OutputView(
                        source_executor_id=event.source_executor_id,
                        text=short(display_text(event.data)),
                        data=bounded(to_json(event.data)),
                    )
                )
            case RequestInfoEvent():
                self.requests[event.request_id] = request_from_event(event)
            case WorkflowCompletedEvent():
                self.status = _finished_status(event.status)
            case WorkflowFailedEvent():
                if event.executor_id is not None:
                    self._executor(event.superstep, event.executor_id, "failed")
                self.status, self.error = "failed", event.error
            case _:
                pass
        self.changed()

    def _log(self, event: WorkflowEvent) -> None:
        superstep = getattr(event, "superstep", None)
        executor_id = getattr(event, "executor_id", None) or getattr(
            event, "source_executor_id", None
        )
        self._events.append(
            EventView(
                seq=self._seq,
                type=type(event).__name__,
                superstep=superstep if isinstance(superstep, int) else None,
                executor_id=executor_id if isinstance(executor_id, str) else None,
                summary=event_summary(event),
                time=_now(),
            )
        )
        self._seq += 1

    def _executor(self, superstep: int, executor_id: str, status: ExecutorStatus) -> None:
        self.supersteps.setdefault(superstep, {})[executor_id] = status
        self._saw(executor_id)

    def _saw(self, executor_id: str) -> None:
        if executor_id not in self.executors_seen:
            self.executors_seen.append(executor_id)

    # -- the view --------------------------------------------------------------------------------

    def view(self) -> RunView:
        """The run as the browser sees it now."""
        mermaid: str | None = None
        node_ids: dict[str, str] = {}
        executor_ids = list(self.executors_seen)
        if self.workflow is not None:
            if self._graph is None:  # drawn once: a workflow's graph never changes
                self._graph = graph_parts(self.workflow)
            parts = self._graph
            mermaid, node_ids = parts.mermaid, parts.node_ids
            executor_ids = parts.executor_ids + [e for e in executor_ids if e not in node_ids]
        steps = [
            SuperstepView(superstep=index, executors=dict(self.supersteps[index]))
            for index in sorted(self.supersteps)
        ]
        return RunView(
            run_id=self.run_id,
            workflow_id=self.workflow_id,
            workflow_name=self.workflow_name,
            status=self.status,
            source=self.source,
            mermaid=mermaid,
            node_ids=node_ids,
            executor_ids=executor_ids,
            supersteps=steps,
            events=list(self._events),
            outputs=list(self._outputs),
            pending_requests=[r.view for r in self.requests.values()],
            error=None if self.error is None else short(self.error),
            can_answer=self.resumable and self.workflow is not None,
            superstep_count=max(self.supersteps) + 1 if self.supersteps else 0,
            updated_at=self.updated_at,
        )
