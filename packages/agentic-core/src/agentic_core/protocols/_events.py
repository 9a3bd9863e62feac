"""Workflow events: pydantic models, made only when someone listens (and the few run() keeps)."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict

from agentic_core.protocols._trusted import trusted


class WorkflowRunState(StrEnum):
    """How a run ended (or paused)."""

    COMPLETED = "completed"
    IDLE_WITH_PENDING_REQUESTS = "idle_with_pending_requests"
    FAILED = "failed"
    CANCELLED = "cancelled"


class WorkflowEvent(BaseModel):
    """Base of every workflow event; subclass it for custom events sent with ``ctx.add_event``."""

    # defer_build: a model builds its validator on first use, not at import (most events are
    # only made while someone streams).
    model_config = ConfigDict(arbitrary_types_allowed=True, defer_build=True)


class WorkflowStartedEvent(WorkflowEvent):
    """A run started (or resumed)."""

    run_id: str
    workflow_id: str


class SuperstepStartedEvent(WorkflowEvent):
    """A superstep began; ``executor_ids`` run in it (sorted)."""

    superstep: int
    executor_ids: list[str]


class SuperstepCompletedEvent(WorkflowEvent):
    """A superstep's barrier passed and its messages were routed."""

    superstep: int


class ExecutorInvokedEvent(WorkflowEvent):
    """An executor ran in a superstep."""

    executor_id: str
    superstep: int


class ExecutorCompletedEvent(WorkflowEvent):
    """An executor finished its invocation."""

    executor_id: str
    superstep: int
    duration_s: float


class ExecutorFailedEvent(WorkflowEvent):
    """An executor attempt raised; ``will_retry`` says whether its RetryPolicy tries again."""

    executor_id: str
    superstep: int
    error: str
    will_retry: bool


class WorkflowOutputEvent(WorkflowEvent):
    """An executor yielded a workflow output."""

    data: Any
    source_executor_id: str


class RequestInfoEvent(WorkflowEvent):
    """An executor asked for outside input; answer with ``responses={request_id: value}``.

    ``run_id`` names the run that waits, to resume it from any process with
    ``run(checkpoint_id=..., responses=...)``.
    """

    request_id: str
    source_executor_id: str
    data: Any
    response_type: Any
    run_id: str = ""


class AgentRunUpdateEvent(WorkflowEvent):
    """A streaming update of an agent running inside the graph."""

    executor_id: str
    update: Any


class WorkflowCompletedEvent(WorkflowEvent):
    """The run ended: ``status`` says completed, or idle with pending requests (paused)."""

    superstep_count: int
    duration_s: float
    status: WorkflowRunState = WorkflowRunState.COMPLETED


class WorkflowFailedEvent(WorkflowEvent):
    """The run failed; ``run_stream`` stops after this event."""

    error: str
    superstep: int
    executor_id: str | None = None


class FanInIncompleteEvent(WorkflowEvent):
    """The run ended with a fan-in partly filled: ``missing_source_ids`` never sent."""

    target_id: str
    missing_source_ids: list[str]


# -- the lifecycle events a stream gets every superstep, built without re-validating what the
# engine built (each tested equal to the validated construction, fields set included)


def superstep_started(superstep: int, executor_ids: list[str]) -> SuperstepStartedEvent:
    """``SuperstepStartedEvent(superstep=..., executor_ids=...)``, unvalidated."""
    return trusted(
        SuperstepStartedEvent,
        {"superstep": superstep, "executor_ids": executor_ids},
        {"superstep", "executor_ids"},
    )


def executor_invoked(executor_id: str, superstep: int) -> ExecutorInvokedEvent:
    """``ExecutorInvokedEvent(executor_id=..., superstep=...)``, unvalidated."""
    return trusted(
        ExecutorInvokedEvent,
        {"executor_id": executor_id, "superstep": superstep},
        {"executor_id", "superstep"},
    )


def executor_completed(
    executor_id: str, superstep: int, duration_s: float
) -> ExecutorCompletedEvent:
    """``ExecutorCompletedEvent(executor_id=..., superstep=..., duration_s=...)``, unvalidated."""
    return trusted(
        ExecutorCompletedEvent,
        {"executor_id": executor_id, "superstep": superstep, "duration_s": duration_s},
        {"executor_id", "superstep", "duration_s"},
    )


def superstep_completed(superstep: int) -> SuperstepCompletedEvent:
    """``SuperstepCompletedEvent(superstep=...)``, unvalidated."""
    return trusted(SuperstepCompletedEvent, {"superstep": superstep}, {"superstep"})
