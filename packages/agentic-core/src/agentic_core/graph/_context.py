"""The context an executor's handler gets: it buffers effects until the superstep's barrier."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Generic, Never

from typing_extensions import TypeVar

from agentic_core._errors import ExecutorError, SerializationError

if TYPE_CHECKING:
    from agentic_core.graph._serialization import TypeRegistry
    from agentic_core.protocols._events import WorkflowEvent
    from agentic_core.protocols._runtime import ExecutorErrorInfo, Invocation, InvocationResult

# The event classes load on first use: defining executors (which imports this module for
# annotations) does not pay for pydantic's model machinery.

TMessage = TypeVar("TMessage", default=Never)
TOutput = TypeVar("TOutput", default=Never)

_SCALARS: frozenset[type] = frozenset({str, int, float, bool, type(None)})
_REQUEST_NAMESPACE = uuid.UUID("6f1d4c1e-0b7a-4c55-9d59-4f0c2a9a7a11")


class WorkflowContext(Generic[TMessage, TOutput]):
    """What a handler may do: send messages, yield outputs, emit events, use shared state, ask.

    Annotate a handler's context as ``WorkflowContext[TMessage, TOutput]``: ``TMessage`` is what
    it sends along its edges, ``TOutput`` what it yields as workflow output (both default to
    ``Never``). Effects are buffered and applied at the superstep's barrier, in executor-id
    order; shared-state writes are visible to the writer at once and to others next superstep.
    """

    __slots__ = ("_invocation", "_n_requests", "_registry", "_result", "_targets")

    def __init__(
        self,
        invocation: Invocation,
        result: InvocationResult,
        targets: frozenset[str],
        registry: TypeRegistry,
    ) -> None:
        self._invocation = invocation
        self._result = result
        self._targets = targets
        self._registry = registry
        self._n_requests = 0

    @property
    def executor_id(self) -> str:
        """Id of the executor this context belongs to."""
        return self._invocation.executor_id

    @property
    def workflow_id(self) -> str:
        """Id of the workflow being run."""
        return self._invocation.workflow_id

    @property
    def run_id(self) -> str:
        """Id of the run (the same across resumes)."""
        return self._invocation.run_id

    @property
    def superstep(self) -> int:
        """The current superstep (0 delivers the run's input)."""
        return self._invocation.superstep

    @property
    def attempt(self) -> int:
        """1-based attempt number of this invocation (see ``RetryPolicy``)."""
        return self._invocation.attempt

    @property
    def invocation_id(self) -> str:
        """``<run>.<superstep>.<executor>.<attempt>``: the idempotency key of side effects."""
        return self._invocation.invocation_id

    @property
    def is_streaming(self) -> bool:
        """True while the run is streamed (``run_stream``): worth streaming agent updates."""
        return self._invocation.streaming

    @property
    def previous_errors(self) -> Sequence[ExecutorErrorInfo]:
        """Errors of this executor's earlier attempts in this run (an immutable sequence)."""
        return self._invocation.previous_errors

    def _check(self, value: Any, what: str) -> None:
        bad = self._registry.check(value)
        if bad is not None:
            raise SerializationError(
                f"executor '{self.executor_id}' tried to {what} a value of type "
                f"{type(value).__qualname__} that cannot be serialized (offending type: {bad}); "
                "use pydantic models, dataclasses, enums, primitives, or lists and dicts of those"
            )

    async def send_message(self, message: TMessage, *, target_id: str | None = None) -> None:
        """Send ``message`` along this executor's outgoing edges (or only to ``target_id``)."""
        if target_id is not None and target_id not in self._targets:
            raise ExecutorError(
                f"executor '{self.executor_id}' has no edge to '{target_id}' "
                f"(its targets: {', '.join(sorted(self._targets)) or 'none'})",
                executor_id=self.executor_id,
            )
        if type(message) not in _SCALARS:
            self._check(message, "send")
        result = self._result
        if result.sent:
            result.sent.append((message, target_id))
        else:  # the first: the result's empty list is shared (NO_EFFECTS)
            result.sent = [(message, target_id)]

    async def yield_output(self, output: TOutput) -> None:
        """Yield ``output`` as a workflow output, visible to the caller."""
        if type(output) not in _SCALARS:
            self._check(output, "yield")
        result = self._result
        if result.outputs:
            result.outputs.append(output)
        else:
            result.outputs = [output]
        if self._invocation.streaming:
            from agentic_core.protocols._events import WorkflowOutputEvent

            self._add_event(WorkflowOutputEvent(data=output, source_executor_id=self.executor_id))

    async def add_event(self, event: WorkflowEvent) -> None:
        """Emit a custom event (a ``WorkflowEvent`` subclass) to the run's listeners."""
        from agentic_core.protocols._events import AgentRunUpdateEvent, WorkflowEvent

        if not isinstance(event, WorkflowEvent):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise ExecutorError(
                f"executor '{self.executor_id}' can only add WorkflowEvent instances, "
                f"not {type(event).__qualname__}",
                executor_id=self.executor_id,
            )
        live = self._invocation.live
        if live is not None and type(event) is AgentRunUpdateEvent:
            live(event)  # shown while the agent streams, not at the barrier
            return
        self._add_event(event)

    def _add_event(self, event: WorkflowEvent) -> None:
        result = self._result
        if result.events:
            result.events.append(event)
        else:
            result.events = [event]

    async def set_shared_state(self, key: str, value: Any) -> None:
        """Write shared state: visible here at once, to every executor from the next superstep."""
        self._check(value, "store in shared state")
        result = self._result
        if result.state_writes:
            result.state_writes[key] = value
        else:
            result.state_writes = {key: value}

    async def get_shared_state(self, key: str, default: Any = None) -> Any:
        """Read shared state as of the last barrier (plus this invocation's own writes).

        A branch of a dynamic map (one of several concurrent invocations of this executor) sees
        the barrier's value, never a sibling's write: a read-modify-write of one key by two
        branches fails the run with ``SharedStateConflictError`` instead of losing an update.
        """
        result = self._result
        writes = result.state_writes
        if key in writes:
            return writes[key]
        if self._invocation.index is not None:  # a map branch: remember what it read
            if result.state_reads is None:
                result.state_reads = {key}
            else:
                result.state_reads.add(key)
        return self._invocation.shared_state.get(key, default)

    async def request_info(self, request: Any, response_type: type[Any] | Any) -> str:
        """Ask for outside input; returns the request id the answer must carry.

        The run pauses (``IDLE_WITH_PENDING_REQUESTS``) once nothing else is left to run; the
        answer reaches this executor's ``@response_handler``. Ids are stable: the same
        invocation asking again (a re-delivery) gets the same id.
        """
        from agentic_core.protocols._events import RequestInfoEvent

        self._check(request, "request")
        self._n_requests += 1
        request_id = str(uuid.uuid5(_REQUEST_NAMESPACE, f"{self.invocation_id}#{self._n_requests}"))
        result = self._result
        if not result.requests:
            result.requests = []
        result.requests.append(
            RequestInfoEvent(
                request_id=request_id,
                source_executor_id=self.executor_id,
                data=request,
                response_type=response_type,
                run_id=self.run_id,
            )
        )
        return request_id
