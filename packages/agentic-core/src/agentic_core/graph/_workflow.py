"""Workflow: an immutable compiled graph that serves any number of concurrent runs."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import structlog
from pydantic import BaseModel

from agentic_core._errors import (
    CheckpointError,
    IncompatibleCheckpointError,
    SerializationError,
    WorkflowExecutionError,
    WorkflowRequestError,
)
from agentic_core.graph._edges import Edge, EdgeKind
from agentic_core.graph._executor import Executor
from agentic_core.graph._invoke import ExecutorPlan, invoke_executor
from agentic_core.graph._runner import (
    RunState,
    monotonic,
    new_run_id,
    restore_run,
    run_superstep,
)
from agentic_core.graph._runtime import LocalRuntime
from agentic_core.graph._serialization import TypeRegistry
from agentic_core.graph._typing import describe, matcher_for
from agentic_core.protocols._checkpoint import CHECKPOINT_SCHEMA_VERSION
from agentic_core.protocols._events import (
    RequestInfoEvent,
    WorkflowCompletedEvent,
    WorkflowEvent,
    WorkflowFailedEvent,
    WorkflowRunState,
    WorkflowStartedEvent,
)
from agentic_core.protocols._runtime import (
    ExecutorErrorInfo,
    Invocation,
    InvocationResult,
    ResponseDelivery,
    Runtime,
)

if TYPE_CHECKING:
    from agentic_core.protocols._agent import Agent
    from agentic_core.protocols._checkpoint import CheckpointStore

_log = structlog.get_logger(__name__)
_DEFAULT_RUNTIME = LocalRuntime()


@dataclass
class WorkflowRunResult:
    """What a run returns: status, outputs, events, pending requests and bookkeeping.

    ``events`` holds what ``run()`` keeps: custom events, ``RequestInfoEvent``s,
    ``ExecutorFailedEvent``s and ``FanInIncompleteEvent``s. Lifecycle events (superstep and
    executor started/completed, outputs) are created only for ``run_stream`` listeners.
    """

    status: WorkflowRunState
    outputs: list[Any]
    events: list[WorkflowEvent]
    superstep_count: int
    duration_s: float
    pending_requests: list[RequestInfoEvent]
    run_id: str
    last_checkpoint_id: str | None = None
    errors: list[ExecutorErrorInfo] = field(default_factory=list[ExecutorErrorInfo])

    def get_outputs(self) -> list[Any]:
        """The outputs the run yielded, in order."""
        return self.outputs


class Workflow:
    """A compiled, validated graph. Build it with ``WorkflowBuilder``; run it many times at once.

    Per-run state lives in the run, never here: one ``Workflow`` serves concurrent runs.
    """

    def __init__(
        self,
        *,
        name: str,
        executors: dict[str, Executor],
        edges: tuple[Edge, ...],
        start_executor_id: str,
        max_supersteps: int,
        checkpoint_store: CheckpointStore | None,
    ) -> None:
        self.name = name
        self.start_executor_id = start_executor_id
        self.max_supersteps = max_supersteps
        self.checkpoint_store = checkpoint_store
        self._executors = executors
        self._edges = edges
        self._edges_from: dict[str, tuple[Edge, ...]] = {}
        targets: dict[str, set[str]] = {executor_id: set() for executor_id in executors}
        for edge in edges:
            for source in edge.sources:
                self._edges_from[source] = (*self._edges_from.get(source, ()), edge)
                targets[source].update(edge.targets)
        self._targets = {k: frozenset(v) for k, v in targets.items()}
        self._plans = {
            executor_id: ExecutorPlan(
                executor,
                executor.is_stateful,
                self._targets[executor_id],
                executor.retry.timeout_s if executor.retry is not None else None,
                _direct_targets(self._edges_from.get(executor_id, ())),
            )
            for executor_id, executor in executors.items()
        }
        self._registry = TypeRegistry()
        self._registry.register(ResponseDelivery)
        self._registry.register(ExecutorErrorInfo)
        for executor in executors.values():
            for spec in executor.handlers:
                self._registry.register_annotation(spec.message_type)
                for tp in (*(spec.sends or ()), *(spec.yields or ())):
                    self._registry.register_annotation(tp)
            for spec in executor.response_handlers:
                for tp in (spec.request_type, spec.response_type, *(spec.sends or ())):
                    self._registry.register_annotation(tp)
        self._fingerprint = self._compute_fingerprint()
        self.id = f"{name}-{self._fingerprint[:12]}"
        self._paused: dict[str, RunState] = {}
        # Executors that stream while they run (agents): run_stream then relays live updates.
        self._streams_live = any(getattr(e, "streams_live", False) for e in executors.values())

    # -- structure ------------------------------------------------------------------------------

    @property
    def executors(self) -> Mapping[str, Executor]:
        """The executors by id."""
        return self._executors

    @property
    def edges(self) -> tuple[Edge, ...]:
        """The edge groups, in the order they were added."""
        return self._edges

    @property
    def type_registry(self) -> TypeRegistry:
        """The types this workflow encodes and decodes (from its handlers' annotations)."""
        return self._registry

    def plan_of(self, executor_id: str) -> ExecutorPlan:
        """What the runner needs of an executor, resolved once at build time."""
        return self._plans[executor_id]

    def get_executor(self, executor_id: str) -> Executor:
        """The executor with ``executor_id``."""
        return self._executors[executor_id]

    def edges_from(self, executor_id: str) -> tuple[Edge, ...]:
        """The outgoing edge groups of ``executor_id``."""
        return self._edges_from.get(executor_id, ())

    def targets_of(self, executor_id: str) -> frozenset[str]:
        """Every executor ``executor_id`` has an edge to."""
        return self._targets[executor_id]

    def fingerprint(self) -> str:
        """A stable hash of the graph: executor ids and kinds, start, edges."""
        return self._fingerprint

    def _compute_fingerprint(self) -> str:
        shape = {
            "start": self.start_executor_id,
            "executors": sorted([e.id, e.kind.value] for e in self._executors.values()),
            "edges": [
                [
                    e.kind.value,
                    list(e.sources),
                    list(e.targets),
                    [c is not None for c in e.conditions],
                ]
                for e in self._edges
            ],
        }
        return hashlib.sha256(json.dumps(shape, sort_keys=True).encode()).hexdigest()

    def to_mermaid(self) -> str:
        """The graph as a Mermaid flowchart."""
        from agentic_core.graph._viz import to_mermaid

        return to_mermaid(self)

    def to_dot(self) -> str:
        """The graph in Graphviz DOT."""
        from agentic_core.graph._viz import to_dot

        return to_dot(self)

    def __repr__(self) -> str:
        size = f"executors={len(self._executors)}, edges={len(self._edges)}"
        return f"Workflow(name={self.name!r}, {size})"

    # -- running --------------------------------------------------------------------------------

    async def run_invocation(self, invocation: Invocation) -> InvocationResult:
        """Run one executor invocation in this process (what every runtime's workers call)."""
        return await invoke_executor(
            self._plans[invocation.executor_id], self._registry, invocation
        )

    async def run(
        self,
        message: Any = None,
        *,
        checkpoint_id: str | None = None,
        checkpoint_store: CheckpointStore | None = None,
        responses: Mapping[str, Any] | None = None,
        runtime: Runtime | None = None,
    ) -> WorkflowRunResult:
        """Run to completion (or until it waits on requests) and return the result.

        ``message`` goes to the start executor in superstep 0. ``checkpoint_id`` resumes that
        run from that checkpoint instead (``responses`` then answers its pending requests).
        Raises ``WorkflowExecutionError`` when an executor fails after its retries.
        """
        run, store = await self._prepare(message, checkpoint_id, checkpoint_store, responses)
        return await self._drive(run, store, runtime or _DEFAULT_RUNTIME)

    async def run_stream(
        self,
        message: Any = None,
        *,
        checkpoint_id: str | None = None,
        checkpoint_store: CheckpointStore | None = None,
        responses: Mapping[str, Any] | None = None,
        runtime: Runtime | None = None,
    ) -> AsyncIterator[WorkflowEvent]:
        """Run and yield every event as each superstep's barrier passes.

        On failure it yields a ``WorkflowFailedEvent`` and stops.
        """
        run, store = await self._prepare(message, checkpoint_id, checkpoint_store, responses)
        stream: list[WorkflowEvent] = []
        run.stream = stream
        started = monotonic()
        yield WorkflowStartedEvent(run_id=run.run_id, workflow_id=self.id)
        try:
            while run.inboxes:
                if self._streams_live:
                    async for event in self._live_superstep(
                        run, runtime or _DEFAULT_RUNTIME, store
                    ):
                        yield event
                    more = bool(run.inboxes)
                else:
                    more = await run_superstep(run, runtime or _DEFAULT_RUNTIME, store)
                for event in stream:
                    yield event
                stream.clear()
                if not more:
                    break
        except WorkflowExecutionError as exc:
            for event in stream:
                yield event
            yield WorkflowFailedEvent(
                error=str(exc), superstep=exc.superstep, executor_id=exc.executor_id
            )
            return
        for event in self._finish(run):
            yield event
        yield WorkflowCompletedEvent(
            superstep_count=run.superstep, duration_s=monotonic() - started
        )

    async def _live_superstep(
        self, run: RunState, runtime: Runtime, store: CheckpointStore | None
    ) -> AsyncIterator[WorkflowEvent]:
        """One superstep, yielding executors' live updates (agent streaming) as they come."""
        queue: asyncio.Queue[WorkflowEvent] = asyncio.Queue()
        run.live = queue.put_nowait
        step = asyncio.ensure_future(run_superstep(run, runtime, store))
        try:
            while not step.done():
                getter = asyncio.ensure_future(queue.get())
                await asyncio.wait({step, getter}, return_when=asyncio.FIRST_COMPLETED)
                if getter.done():
                    yield getter.result()
                else:
                    getter.cancel()
            while not queue.empty():
                yield queue.get_nowait()
            step.result()  # re-raise a failure of the superstep
        finally:
            run.live = None
            if not step.done():
                step.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await step

    def as_agent(self, name: str | None = None) -> Agent:
        """This workflow behind the Agent interface (its start executor takes list[ChatMessage]).

        Returns a ``WorkflowAgent``.
        """
        # The agent layer builds on the graph, so the graph reaches up to it only here.
        from agentic_core.agents._workflow_agent import WorkflowAgent

        return WorkflowAgent(self, name=name)

    async def send_responses(self, responses: Mapping[str, Any]) -> WorkflowRunResult:
        """Answer pending requests of a run paused in this process, and continue it."""
        run = self._paused_run_of(responses)
        self._deliver_responses(run, responses)
        return await self._drive(run, self.checkpoint_store, _DEFAULT_RUNTIME)

    async def _prepare(
        self,
        message: Any,
        checkpoint_id: str | None,
        checkpoint_store: CheckpointStore | None,
        responses: Mapping[str, Any] | None,
    ) -> tuple[RunState, CheckpointStore | None]:
        store = checkpoint_store or self.checkpoint_store
        if checkpoint_id is not None:
            if message is not None:
                raise ValueError(
                    "pass either a message (a new run) or a checkpoint_id (resume), not both"
                )
            if store is None:
                raise CheckpointError(
                    f"cannot resume from checkpoint {checkpoint_id!r}: no checkpoint store "
                    "(pass checkpoint_store= or build with with_checkpointing)"
                )
            run = await self._restore(checkpoint_id, store)
            if responses:
                self._deliver_responses(run, responses)
            return run, store
        if responses:
            if message is not None:
                raise ValueError("pass either a message or responses, not both")
            run = self._paused_run_of(responses)
            self._deliver_responses(run, responses)
            return run, store
        run = RunState(self, new_run_id())
        run.inboxes[self.start_executor_id] = [message]
        for executor_id, executor in self._executors.items():
            if executor.is_stateful:
                run.executor_states[executor_id] = executor.snapshot_state()
        return run, store

    async def _restore(self, checkpoint_id: str, store: CheckpointStore) -> RunState:
        checkpoint = await store.load(checkpoint_id)
        if checkpoint is None:
            raise CheckpointError(f"no checkpoint with id {checkpoint_id!r} in the store")
        if checkpoint.workflow_fingerprint != self._fingerprint:
            raise IncompatibleCheckpointError(
                f"checkpoint {checkpoint_id!r} was written by a different graph "
                f"(workflow {checkpoint.workflow_name!r}, fingerprint "
                f"{checkpoint.workflow_fingerprint[:12]}) than {self.name!r} "
                f"(fingerprint {self._fingerprint[:12]})"
            )
        if checkpoint.schema_version > CHECKPOINT_SCHEMA_VERSION:
            raise CheckpointError(
                f"checkpoint {checkpoint_id!r} has schema version {checkpoint.schema_version}; "
                f"this agentic_core reads up to {CHECKPOINT_SCHEMA_VERSION}"
            )
        try:
            return restore_run(self, checkpoint)
        except CheckpointError:
            raise
        except (SerializationError, KeyError, TypeError, ValueError, AttributeError) as exc:
            raise CheckpointError(
                f"checkpoint {checkpoint_id!r} of run {checkpoint.run_id} cannot be decoded: "
                f"{type(exc).__name__}: {exc}"
            ) from exc

    def _paused_run_of(self, responses: Mapping[str, Any]) -> RunState:
        runs = {id(run): run for rid in responses if (run := self._paused.get(rid)) is not None}
        unknown = [rid for rid in responses if rid not in self._paused]
        if unknown:
            raise WorkflowRequestError(
                f"unknown request id(s) {', '.join(map(repr, unknown))}: no run of workflow "
                f"{self.name!r} paused in this process waits for them (across processes, use "
                "run(checkpoint_id=..., responses=...))"
            )
        if len(runs) != 1:
            raise WorkflowRequestError("the responses answer requests of different runs")
        return next(iter(runs.values()))

    def _deliver_responses(self, run: RunState, responses: Mapping[str, Any]) -> None:
        unknown = [rid for rid in responses if rid not in run.pending_requests]
        if unknown:
            raise WorkflowRequestError(
                f"unknown request id(s) {', '.join(map(repr, unknown))} for run {run.run_id} "
                f"(pending: {', '.join(map(repr, run.pending_requests)) or 'none'})"
            )
        for request_id, response in responses.items():
            request = run.pending_requests[request_id]
            value = _coerce_response(request, response)
            del run.pending_requests[request_id]
            self._paused.pop(request_id, None)
            run.deliver(
                request.source_executor_id, ResponseDelivery(request_id, request.data, value)
            )

    async def _drive(
        self, run: RunState, store: CheckpointStore | None, runtime: Runtime
    ) -> WorkflowRunResult:
        started = monotonic()
        run.supersteps_this_call = 0
        while run.inboxes and await run_superstep(run, runtime, store):
            pass
        self._finish(run)
        status = (
            WorkflowRunState.IDLE_WITH_PENDING_REQUESTS
            if run.pending_requests
            else WorkflowRunState.COMPLETED
        )
        outputs, run.outputs = run.outputs, []
        events, run.events = run.events, []
        run.outputs_before += len(outputs)
        return WorkflowRunResult(
            status=status,
            outputs=outputs,
            events=events,
            superstep_count=run.superstep,
            duration_s=monotonic() - started,
            pending_requests=list(run.pending_requests.values()),
            run_id=run.run_id,
            last_checkpoint_id=run.last_checkpoint_id,
            errors=[e for errors in run.errors.values() for e in errors],
        )

    def _finish(self, run: RunState) -> list[WorkflowEvent]:
        """End-of-run bookkeeping; returns the events a stream still has to yield."""
        tail: list[WorkflowEvent] = []
        for event in run.incomplete_fan_ins():
            _log.warning(
                "fan_in_incomplete",
                workflow=self.name,
                target_id=event.target_id,
                missing_source_ids=event.missing_source_ids,
            )
            run.events.append(event)
            tail.append(event)
        for request_id in run.pending_requests:
            self._paused[request_id] = run
        return tail


def _direct_targets(edges: tuple[Edge, ...]) -> tuple[str, ...] | None:
    if all(e.kind is EdgeKind.DIRECT and e.conditions[0] is None for e in edges):
        return tuple(e.targets[0] for e in edges)
    return None


def _coerce_response(request: RequestInfoEvent, response: Any) -> Any:
    expected = request.response_type
    if matcher_for(expected)(response):
        return response
    if (
        isinstance(expected, type)
        and issubclass(expected, BaseModel)
        and isinstance(response, dict)
    ):
        try:
            return expected.model_validate(response)
        except ValueError as exc:
            raise WorkflowRequestError(
                f"response to request {request.request_id!r} is not a valid "
                f"{expected.__qualname__}: {exc}"
            ) from exc
    raise WorkflowRequestError(
        f"response to request {request.request_id!r} must be {describe(expected)}, "
        f"got {type(response).__qualname__}"
    )
