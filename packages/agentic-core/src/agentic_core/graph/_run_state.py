"""RunState: everything one run owns, and its conversions to and from a Checkpoint.

A ``Workflow`` is immutable and shared; each run has one of these. Executor states are kept
*encoded* (JSON-able data from the type registry): every invocation decodes a fresh copy and
every result is encoded again, so no object an executor's ``restore_state`` keeps can ever be
seen by another run or by another attempt, whatever the runtime.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

from agentic_core._errors import CheckpointError
from agentic_core.graph._edges import Edge, FanInBuffer
from agentic_core.graph._graph import CompiledGraph
from agentic_core.protocols._checkpoint import (
    CHECKPOINT_OUTPUTS_MAX_BYTES,
    CHECKPOINT_OUTPUTS_MAX_COUNT,
    CHECKPOINT_SCHEMA_VERSION,
    Checkpoint,
    trusted_checkpoint,
)
from agentic_core.protocols._events import FanInIncompleteEvent, RequestInfoEvent, WorkflowEvent
from agentic_core.protocols._runtime import ExecutorErrorInfo
from agentic_core.protocols._trusted import new_id

_BUDGET_KEY = "max_supersteps"
_ERRORS_KEY = "errors"


class RunState:
    """Inboxes, fan-in buffers, shared state, requests, executor states, outputs of one run."""

    __slots__ = (
        "applying",
        "collected",
        "earlier_outputs",
        "ending_outputs",
        "errors",
        "events",
        "executor_states",
        "fan_in",
        "graph",
        "inboxes",
        "last_checkpoint_id",
        "live",
        "max_supersteps",
        "max_supersteps_overridden",
        "outputs",
        "outputs_before",
        "parent_checkpoint_id",
        "pending_requests",
        "run_id",
        "shared_state",
        "stream",
        "superstep",
    )

    def __init__(
        self, graph: CompiledGraph, run_id: str, *, max_supersteps: int | None = None
    ) -> None:
        self.graph = graph
        self.run_id = run_id
        self.superstep = 0
        self.max_supersteps = graph.max_supersteps if max_supersteps is None else max_supersteps
        """This run's budget: supersteps across every resume and response."""
        self.max_supersteps_overridden = max_supersteps is not None
        self.inboxes: dict[str, list[Any]] = {}
        self.fan_in: dict[str, FanInBuffer] = {}
        self.shared_state: dict[str, Any] = {}
        self.pending_requests: dict[str, RequestInfoEvent] = {}
        self.executor_states: dict[str, Any] = {}
        """Executor id -> its last ``snapshot_state()``, encoded."""
        self.errors: dict[str, tuple[ExecutorErrorInfo, ...]] = {}
        self.outputs: list[Any] = []
        self.outputs_before = 0
        """Outputs of earlier calls of this run (before a resume)."""
        self.earlier_outputs: list[Any] = []
        """The newest outputs of earlier calls, encoded and capped (``Checkpoint.outputs``)."""
        self.ending_outputs: list[Any] | None = None
        """What the checkpoint ending this call stored as ``outputs`` (``end_call`` takes it)."""
        self.events: list[WorkflowEvent] = []
        self.stream: list[WorkflowEvent] | None = None
        """Where lifecycle events go while someone streams the run."""
        self.live: Callable[[WorkflowEvent], None] | None = None
        """Where executors' streaming updates go at once (agents streaming)."""
        self.last_checkpoint_id: str | None = None
        self.parent_checkpoint_id: str | None = None
        """Set on a fork until its first checkpoint records it."""
        self.collected: dict[str, tuple[Edge, list[Any]]] | None = None
        """While routing a superstep: what each collect edge gathered so far."""
        self.applying = -1
        """The superstep whose results ``apply_results`` last began to apply: while it equals
        ``superstep``, the run is between two barriers (a failure there leaves it half-way)."""

    def deliver(self, target: str, message: Any) -> None:
        """Queue ``message`` for ``target`` in the next superstep."""
        inbox = self.inboxes.get(target)
        if inbox is None:
            self.inboxes[target] = [message]
        else:
            inbox.append(message)

    def fan_in_buffer(self, edge: Edge) -> FanInBuffer:
        """This run's buffer of a fan-in edge (created on first use)."""
        buffer = self.fan_in.get(edge.key)
        if buffer is None:
            buffer = self.fan_in[edge.key] = FanInBuffer(edge)
        return buffer

    def collect(self, edge: Edge) -> list[Any]:
        """This superstep's gathering list of a collect edge (created on first use)."""
        collected = self.collected
        if collected is None:
            collected = self.collected = {}
        entry = collected.get(edge.key)
        if entry is None:
            entry = collected[edge.key] = (edge, [])
        return entry[1]

    def emit(self, event: WorkflowEvent) -> None:
        """Record an event for ``run()``'s result, and for the stream when one listens."""
        self.events.append(event)
        if self.stream is not None:
            self.stream.append(event)

    def incomplete_fan_ins(self) -> list[FanInIncompleteEvent]:
        """A ``FanInIncompleteEvent`` per fan-in edge left partly filled."""
        found: list[FanInIncompleteEvent] = []
        for buffer in self.fan_in.values():
            missing = buffer.missing()
            if missing:
                found.append(
                    FanInIncompleteEvent(
                        target_id=buffer.edge.targets[0], missing_source_ids=missing
                    )
                )
        return found


def new_run_id() -> str:
    """A fresh run id: a random UUID4's 32 hex digits (``new_id``: every run pays it)."""
    return new_id()


def start_run(graph: CompiledGraph, message: Any, *, max_supersteps: int | None) -> RunState:
    """A new run whose superstep 0 delivers ``message`` to the start executor."""
    run = RunState(graph, new_run_id(), max_supersteps=max_supersteps)
    run.inboxes[graph.start_executor_id] = [message]
    if graph.stateful_ids:
        encode = graph.type_registry.encode
        for executor_id in graph.stateful_ids:
            # Encoded at once: the executor object's own state never reaches a run.
            run.executor_states[executor_id] = encode(graph.executors[executor_id].snapshot_state())
    return run


def checkpoint_of(run: RunState) -> Checkpoint:
    """The run's state after its last barrier, as a checkpoint (a fresh one: nothing in it is
    shared with the run but encoded executor states, which the run replaces, never changes)."""
    graph = run.graph
    encode = graph.type_registry.encode
    metadata: dict[str, Any] = {}
    if run.errors:
        metadata[_ERRORS_KEY] = encode({k: list(v) for k, v in run.errors.items()})
    if run.max_supersteps_overridden:
        metadata[_BUDGET_KEY] = run.max_supersteps
    inboxes = run.inboxes
    outputs: list[Any] | None = None
    if not inboxes:  # the call ends here: the run completed or waits for answers
        outputs = run.ending_outputs = newest_outputs(run)
    fan_in = run.fan_in
    shared_state = run.shared_state
    requests = run.pending_requests
    # Built without validation (the values are the registry's own encoding), and empty parts
    # skip the encoder: this runs at every superstep of every checkpointed run.
    return trusted_checkpoint(
        {
            "id": new_id(),
            "workflow_id": graph.id,
            "workflow_name": graph.name,
            "run_id": run.run_id,
            "superstep": run.superstep - 1,
            "workflow_fingerprint": graph.fingerprint(),
            "schema_version": CHECKPOINT_SCHEMA_VERSION,
            "created_at": datetime.now(UTC),
            "pending_messages": {k: encode(v) for k, v in inboxes.items()},
            "fan_in_buffers": {
                key: {s: encode(list(queue)) for s, queue in buffer.queues.items() if queue}
                for key, buffer in fan_in.items()
                if buffer.filled
            }
            if fan_in
            else {},
            "shared_state": encode(shared_state) if shared_state else {},
            "pending_requests": [encode(r) for r in requests.values()] if requests else [],
            "executor_states": dict(run.executor_states),
            "outputs_so_far": run.outputs_before + len(run.outputs),
            "outputs": outputs,
            "metadata": metadata,
            "parent_checkpoint_id": run.parent_checkpoint_id,
        }
    )


def newest_outputs(run: RunState) -> list[Any]:
    """The run's newest outputs, encoded, within the caps of ``Checkpoint.outputs``.

    Newest first until a cap is reached, so the list is always the run's last ``len(list)``
    outputs, in order. Bytes are those of the compact, ASCII-escaped JSON of each output.
    """
    kept: list[Any] = []
    size = 0
    for encoded in _encoded_newest_first(run):
        size += len(json.dumps(encoded, separators=(",", ":")))
        if len(kept) == CHECKPOINT_OUTPUTS_MAX_COUNT or size > CHECKPOINT_OUTPUTS_MAX_BYTES:
            break
        kept.append(encoded)
    kept.reverse()
    return kept


def _encoded_newest_first(run: RunState) -> Iterator[Any]:
    encode = run.graph.type_registry.encode  # outputs are checked as they are yielded
    for output in reversed(run.outputs):
        yield encode(output)
    yield from reversed(run.earlier_outputs)


def restore_run(
    graph: CompiledGraph,
    checkpoint: Checkpoint,
    *,
    run_id: str | None = None,
    max_supersteps: int | None = None,
) -> RunState:
    """The run of ``checkpoint`` (already verified against the graph), or a fork of it.

    ``run_id`` starts a new run (a fork) from the checkpoint; ``max_supersteps`` overrides the
    budget the run had.
    """
    decode = graph.type_registry.decode
    if max_supersteps is None and _BUDGET_KEY in checkpoint.metadata:
        max_supersteps = int(checkpoint.metadata[_BUDGET_KEY])
    run = RunState(graph, run_id or checkpoint.run_id, max_supersteps=max_supersteps)
    run.superstep = checkpoint.superstep + 1
    run.inboxes = {k: decode(v) for k, v in checkpoint.pending_messages.items()}
    edges = {edge.key: edge for edge in graph.edges}
    for key, queues in checkpoint.fan_in_buffers.items():
        edge = edges.get(key)
        if edge is None:
            raise CheckpointError(
                f"checkpoint {checkpoint.id} names an unknown fan-in edge {key!r}"
            )
        buffer = run.fan_in_buffer(edge)
        for source, messages in queues.items():
            for message in decode(messages):
                buffer.queues[source].append(message)
        buffer.filled = sum(1 for q in buffer.queues.values() if q)
    run.shared_state = decode(checkpoint.shared_state)
    for data in checkpoint.pending_requests:
        request = decode(data)
        if request.run_id != run.run_id:  # a fork waits for them too (or an old checkpoint)
            request = request.model_copy(update={"run_id": run.run_id})
        run.pending_requests[request.request_id] = request
    run.executor_states = dict(checkpoint.executor_states)
    if _ERRORS_KEY in checkpoint.metadata:
        errors: dict[str, list[ExecutorErrorInfo]] = decode(checkpoint.metadata[_ERRORS_KEY])
        run.errors = {executor_id: tuple(infos) for executor_id, infos in errors.items()}
    run.outputs_before = checkpoint.outputs_so_far
    run.earlier_outputs = list(checkpoint.outputs or ())
    run.last_checkpoint_id = checkpoint.id
    return run
