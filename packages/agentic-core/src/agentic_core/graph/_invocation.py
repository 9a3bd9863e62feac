"""An executor invocation as data: what goes in, what comes out. Runtimes move these around."""

from __future__ import annotations

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

    @property
    def invocation_id(self) -> str:
        """``<run>.<superstep>.<executor>.<attempt>``: the idempotency key of side effects."""
        return f"{self.run_id}.{self.superstep}.{self.executor_id}.{self.attempt}"


@dataclass(slots=True)
class InvocationResult:
    """Everything one invocation produced, applied by the runner at the barrier."""

    executor_id: str
    sent: list[tuple[Any, str | None]] = field(default_factory=list[tuple[Any, "str | None"]])
    outputs: list[Any] = field(default_factory=list[Any])
    events: list[WorkflowEvent] = field(default_factory=list[WorkflowEvent])
    state_writes: dict[str, Any] = field(default_factory=dict[str, Any])
    requests: list[RequestInfoEvent] = field(default_factory=list[RequestInfoEvent])
    executor_state: Any = NO_STATE
    error: ExecutorErrorInfo | None = None
    retryable: bool = True
    duration_s: float = 0.0
    exception: BaseException | None = None  # local runtimes only; never serialized
