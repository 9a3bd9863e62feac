"""An executor invocation as data: what goes in, what comes out. Runtimes move these around."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from agentic_core.graph._events import RequestInfoEvent, WorkflowEvent


class ExecutorErrorInfo(BaseModel):
    """One failed attempt of an executor, as ``ctx.previous_errors`` shows it."""

    executor_id: str
    superstep: int
    attempt: int
    error_type: str
    message: str


@dataclass(frozen=True, slots=True)
class ResponseDelivery:
    """The answer to a ``request_info``, delivered to the requesting executor as a message."""

    request_id: str
    request: Any
    response: Any


NO_STATE: Any = None


@dataclass(slots=True)
class Invocation:
    """One executor's work in one superstep: its messages and the run's view at the barrier."""

    run_id: str
    workflow_id: str
    superstep: int
    executor_id: str
    messages: list[Any]
    shared_state: dict[str, Any]
    attempt: int = 1
    previous_errors: list[ExecutorErrorInfo] = field(default_factory=list[ExecutorErrorInfo])
    executor_state: Any = NO_STATE
    streaming: bool = False
    live: Callable[[WorkflowEvent], None] | None = None
    """Where streaming updates (``AgentRunUpdateEvent``) go at once; local runtimes only."""

    @property
    def invocation_id(self) -> str:
        """``<run>.<superstep>.<executor>.<attempt>``: the idempotency key of side effects."""
        return f"{self.run_id}.{self.superstep}.{self.executor_id}.{self.attempt}"


class InvocationResult:
    """Everything one invocation produced, applied by the runner at the barrier.

    ``exception`` is set by local runtimes only (never serialized).
    """

    __slots__ = (
        "duration_s",
        "error",
        "events",
        "exception",
        "executor_id",
        "executor_state",
        "outputs",
        "requests",
        "retryable",
        "sent",
        "state_writes",
    )

    def __init__(
        self,
        executor_id: str,
        sent: list[tuple[Any, str | None]] | None = None,
        outputs: list[Any] | None = None,
        events: list[WorkflowEvent] | None = None,
        state_writes: dict[str, Any] | None = None,
        requests: list[RequestInfoEvent] | None = None,
        executor_state: Any = NO_STATE,
        error: ExecutorErrorInfo | None = None,
        retryable: bool = True,
        duration_s: float = 0.0,
        exception: BaseException | None = None,
    ) -> None:
        self.executor_id = executor_id
        self.sent: list[tuple[Any, str | None]] = [] if sent is None else sent
        self.outputs: list[Any] = [] if outputs is None else outputs
        self.events: list[WorkflowEvent] = [] if events is None else events
        self.state_writes: dict[str, Any] = {} if state_writes is None else state_writes
        self.requests: list[RequestInfoEvent] = [] if requests is None else requests
        self.executor_state = executor_state
        self.error = error
        self.retryable = retryable
        self.duration_s = duration_s
        self.exception = exception
