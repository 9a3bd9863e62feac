"""The run viewer's JSON: what ``/api/runs`` and ``/api/runs/{id}`` return (the browser's contract).

Plain pydantic models, built by the hub (live runs) and the sources (checkpoint stores); the web
pages render them as they are. A runs-list row is the :class:`RunSummary` ``agentic runs`` prints
too, with the same status rule (core's ``stored_run_status``).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agentic_core import RunStatus
from agentic_orchestrator._run_summary import RunSource, RunSummary

__all__ = [
    "EventView",
    "ExecutorStatus",
    "OutputView",
    "RequestView",
    "RunList",
    "RunView",
    "SuperstepView",
    "WorkflowInfo",
    "WorkflowList",
]

ExecutorStatus = Literal["running", "completed", "failed", "retrying", "pending"]
"""``pending``: had messages waiting at the last checkpoint, not run yet."""


class _View(BaseModel):
    model_config = ConfigDict(frozen=True)


class RunList(_View):
    """``GET /api/runs``: newest first; ``errors`` names the sources that could not be read."""

    runs: list[RunSummary]
    errors: list[str] = Field(default_factory=list[str])


class WorkflowInfo(_View):
    """A workflow the viewer holds (it can start and resume its runs)."""

    name: str
    id: str
    start_executor_id: str


class WorkflowList(_View):
    """``GET /api/workflows``."""

    workflows: list[WorkflowInfo]


class SuperstepView(_View):
    """What each executor did in one superstep."""

    superstep: int
    executors: dict[str, ExecutorStatus]


class EventView(_View):
    """One line of the event log."""

    seq: int
    type: str
    superstep: int | None
    executor_id: str | None
    summary: str
    time: datetime


class OutputView(_View):
    """A workflow output: ``text`` is ``str(data)``, ``data`` its JSON form."""

    source_executor_id: str
    text: str
    data: Any


class RequestView(_View):
    """A pending ``request_info`` request and the JSON schema its answer must match."""

    request_id: str
    source_executor_id: str
    prompt: str
    data: Any
    response_schema: dict[str, Any]


class RunView(_View):
    """``GET /api/runs/{run_id}`` and every ``run`` event of its stream."""

    run_id: str
    workflow_id: str
    workflow_name: str
    status: RunStatus
    source: RunSource
    mermaid: str | None
    node_ids: dict[str, str]
    executor_ids: list[str]
    supersteps: list[SuperstepView]
    events: list[EventView]
    outputs: list[OutputView]
    pending_requests: list[RequestView]
    error: str | None
    can_answer: bool
    superstep_count: int
    updated_at: datetime

    def summary(self) -> RunSummary:
        """This run as a row of the runs list."""
        last = self.supersteps[-1].executors if self.supersteps else {}
        return RunSummary(
            run_id=self.run_id,
            workflow_id=self.workflow_id,
            workflow_name=self.workflow_name,
            status=self.status,
            superstep_count=self.superstep_count,
            updated_at=self.updated_at,
            source=self.source,
            pending_executors=sorted(e for e, s in last.items() if s == "pending"),
            pending_request_ids=[r.request_id for r in self.pending_requests],
        )
