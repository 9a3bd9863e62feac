"""The Runtime protocol and the data it moves: invocations in, invocation results out.

A runtime runs one superstep's executor invocations somewhere (this process, a worker pool)
and returns their results; the engine plans the invocations and applies the results.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, fields
from types import MappingProxyType
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

from agentic_core.protocols._events import RequestInfoEvent, WorkflowEvent


class ExecutorErrorInfo(BaseModel):
    """One failed attempt of an executor, as ``ctx.previous_errors`` shows it."""

    model_config = ConfigDict(defer_build=True)  # built on first failure, not at import

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
    previous_errors: tuple[ExecutorErrorInfo, ...] = ()
    """Errors of this executor's earlier attempts in this run (immutable: shared freely)."""
    executor_state: Any = None
    streaming: bool = False
    index: int | None = None
    """The message's position when an executor's messages of one superstep run as separate,
    concurrent invocations (a dynamic map); None when one invocation takes them all."""
    live: Callable[[WorkflowEvent], None] | None = None
    """Where events go at once, while the invocation runs (local runtimes only)."""

    def to_data(self) -> dict[str, Any]:
        """Every field but ``live``, for a codec to encode (the wire form of an invocation)."""
        data = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "live"}
        data["previous_errors"] = list(self.previous_errors)
        return data

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> Invocation:
        """The invocation of ``to_data()`` (after the codec decoded it)."""
        fields_: dict[str, Any] = dict(data)
        fields_["previous_errors"] = tuple(data.get("previous_errors", ()))
        return cls(**fields_)

    @property
    def invocation_id(self) -> str:
        """``<run>.<superstep>.<executor>.<attempt>``: the idempotency key of side effects.

        A branch of a dynamic map is ``<run>.<superstep>.<executor>[<index>].<attempt>``.
        """
        executor = self.executor_id if self.index is None else f"{self.executor_id}[{self.index}]"
        return f"{self.run_id}.{self.superstep}.{executor}.{self.attempt}"


NO_EFFECTS: Any = ()
"""The value of an effect list nothing was added to: one shared, immutable empty tuple, so a
result costs no list it does not use. Code that adds an effect assigns a new list instead of
appending to it (``WorkflowContext`` does)."""
NO_WRITES: Any = MappingProxyType[str, Any]({})
"""``NO_EFFECTS`` for ``state_writes``."""


class InvocationResult:
    """Everything one invocation produced, applied by the engine at the barrier.

    ``exception`` is set by local runtimes only (never serialized). The effect lists (``sent``,
    ``outputs``, ``events``, ``requests``) and ``state_writes`` start as ``NO_EFFECTS`` /
    ``NO_WRITES`` unless given: read them freely; to add an effect, assign a new list.
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
        "state_reads",
        "state_writes",
    )

    def __init__(
        self,
        executor_id: str,
        sent: list[tuple[Any, str | None]] | None = None,
        outputs: list[Any] | None = None,
        events: list[WorkflowEvent] | None = None,
        state_writes: dict[str, Any] | None = None,
        state_reads: Iterable[str] | None = None,
        requests: list[RequestInfoEvent] | None = None,
        executor_state: Any = None,
        error: ExecutorErrorInfo | None = None,
        retryable: bool = True,
        duration_s: float = 0.0,
        exception: BaseException | None = None,
    ) -> None:
        self.executor_id = executor_id
        self.sent: list[tuple[Any, str | None]] = NO_EFFECTS if sent is None else sent
        self.outputs: list[Any] = NO_EFFECTS if outputs is None else outputs
        self.events: list[WorkflowEvent] = NO_EFFECTS if events is None else events
        self.state_writes: dict[str, Any] = NO_WRITES if state_writes is None else state_writes
        self.state_reads: set[str] | None = None if state_reads is None else set(state_reads)
        """Shared-state keys a branch of a dynamic map read from the barrier's state (not its
        own writes); None when it read none or is not a map branch. The engine uses them to
        refuse lost updates (``SharedStateConflictError``)."""
        self.requests: list[RequestInfoEvent] = NO_EFFECTS if requests is None else requests
        self.executor_state = executor_state
        self.error = error
        self.retryable = retryable
        self.duration_s = duration_s
        self.exception = exception

    def to_data(self) -> dict[str, Any]:
        """Everything but ``exception``, for a codec to encode (the wire form of a result)."""
        return {
            "executor_id": self.executor_id,
            "sent": [[message, target] for message, target in self.sent],
            "outputs": list(self.outputs),
            "events": list(self.events),
            "state_writes": dict(self.state_writes),
            "state_reads": sorted(self.state_reads) if self.state_reads else None,
            "requests": list(self.requests),
            "executor_state": self.executor_state,
            "error": self.error,
            "retryable": self.retryable,
            "duration_s": self.duration_s,
        }

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> InvocationResult:
        """The result of ``to_data()`` (after the codec decoded it)."""
        fields_: dict[str, Any] = dict(data)
        fields_["sent"] = [(message, target) for message, target in data["sent"]]
        return cls(**fields_)


@runtime_checkable
class TypeCodec(Protocol):
    """Turns a workflow's values into JSON-able, type-tagged data and back."""

    def encode(self, value: Any) -> Any: ...

    def decode(self, data: Any) -> Any: ...


@runtime_checkable
class WorkflowGraph(Protocol):
    """What a runtime needs of a compiled workflow (a ``Workflow`` is one).

    ``run_invocation`` runs one invocation on this process's executors: the one function every
    runtime (and every remote worker) calls, so results never depend on where they ran.
    """

    @property
    def id(self) -> str: ...

    @property
    def name(self) -> str: ...

    def fingerprint(self) -> str: ...

    @property
    def type_registry(self) -> TypeCodec: ...

    async def run_invocation(self, invocation: Invocation) -> InvocationResult: ...


@runtime_checkable
class Runtime(Protocol):
    """Runs one superstep's invocations and returns their results, in the same order.

    An invocation is data in, data out: a runtime may run it in this process (``LocalRuntime``)
    or ship it elsewhere (a worker pool). Executor exceptions come back as
    ``InvocationResult.error``; the engine applies results at the barrier.
    """

    async def execute(
        self, workflow: WorkflowGraph, invocations: Sequence[Invocation]
    ) -> list[InvocationResult]: ...
