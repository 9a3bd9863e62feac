"""The superstep loop of one run: invoke, barrier, apply in executor-id order, route, checkpoint."""

from __future__ import annotations

import asyncio
import dataclasses
import time
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import structlog

from agentic_core._errors import (
    CheckpointError,
    MaxSuperstepsExceededError,
    RoutingError,
    WorkflowExecutionError,
)
from agentic_core.graph._edges import Edge, FanInBuffer, route_message
from agentic_core.protocols._checkpoint import Checkpoint
from agentic_core.protocols._events import (
    ExecutorCompletedEvent,
    ExecutorFailedEvent,
    ExecutorInvokedEvent,
    FanInIncompleteEvent,
    RequestInfoEvent,
    SuperstepCompletedEvent,
    SuperstepStartedEvent,
    WorkflowEvent,
    WorkflowOutputEvent,
)
from agentic_core.protocols._runtime import ExecutorErrorInfo, Invocation, InvocationResult

if TYPE_CHECKING:
    from agentic_core.graph._workflow import Workflow
    from agentic_core.protocols._checkpoint import CheckpointStore
    from agentic_core.protocols._runtime import Runtime

_log = structlog.get_logger(__name__)


class RunState:
    """Everything one run owns: inboxes, fan-in buffers, shared state, requests, outputs.

    A ``Workflow`` is immutable and shared; each run has one of these.
    """

    __slots__ = (
        "errors",
        "events",
        "executor_states",
        "fan_in",
        "inboxes",
        "last_checkpoint_id",
        "live",
        "outputs",
        "outputs_before",
        "pending_requests",
        "run_id",
        "shared_state",
        "stream",
        "superstep",
        "supersteps_this_call",
        "workflow",
    )

    def __init__(self, workflow: Workflow, run_id: str) -> None:
        self.workflow = workflow
        self.run_id = run_id
        self.superstep = 0
        self.supersteps_this_call = 0
        self.inboxes: dict[str, list[Any]] = {}
        self.fan_in: dict[str, FanInBuffer] = {}
        self.shared_state: dict[str, Any] = {}
        self.pending_requests: dict[str, RequestInfoEvent] = {}
        self.executor_states: dict[str, Any] = {}
        self.errors: dict[str, tuple[ExecutorErrorInfo, ...]] = {}
        self.outputs: list[Any] = []
        self.outputs_before = 0  # outputs of earlier calls (before a resume)
        self.events: list[WorkflowEvent] = []
        self.stream: list[WorkflowEvent] | None = None
        self.live: Callable[[WorkflowEvent], None] | None = None
        self.last_checkpoint_id: str | None = None

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


async def run_superstep(run: RunState, runtime: Runtime, store: CheckpointStore | None) -> bool:
    """Run one superstep of ``run``; return whether another one has messages to process."""
    workflow = run.workflow
    inboxes = run.inboxes
    superstep = run.superstep
    if run.supersteps_this_call >= workflow.max_supersteps:
        raise MaxSuperstepsExceededError(
            f"workflow '{workflow.name}' exceeded max_supersteps={workflow.max_supersteps} "
            f"(still pending: {', '.join(sorted(inboxes))})",
            executor_id=None,
            superstep=superstep,
        )
    run.inboxes = {}
    ids = sorted(inboxes) if len(inboxes) > 1 else list(inboxes)
    stream = run.stream
    streaming = stream is not None
    if streaming:
        stream.append(SuperstepStartedEvent(superstep=superstep, executor_ids=ids))
    state = run.shared_state
    executor_states = run.executor_states
    errors = run.errors
    invocations = [
        Invocation(
            run_id=run.run_id,
            workflow_id=workflow.id,
            superstep=superstep,
            executor_id=executor_id,
            messages=inboxes[executor_id],
            shared_state=state,
            previous_errors=errors.get(executor_id, ()) if errors else (),
            executor_state=executor_states.get(executor_id) if executor_states else None,
            streaming=streaming,
            live=run.live,
        )
        for executor_id in ids
    ]
    results = await runtime.execute(workflow, invocations)
    for result in results:
        if result.error is not None:
            await _retry_failed(run, runtime, invocations, results)
            break
    _apply_results(run, results, superstep)
    deliver = run.deliver
    for result in results:
        sent = result.sent
        if not sent:
            continue
        direct = workflow.plan_of(result.executor_id).direct_targets
        if direct is not None:  # only unconditional direct edges: no routing logic needed
            for message, target_id in sent:
                for target in direct:
                    if target_id is None or target == target_id:
                        deliver(target, message)
        else:
            edges = workflow.edges_from(result.executor_id)
            for message, target_id in sent:
                try:
                    await route_message(
                        edges,
                        result.executor_id,
                        message,
                        target_id,
                        deliver,
                        run.fan_in_buffer,
                    )
                except RoutingError as exc:
                    raise WorkflowExecutionError(
                        f"routing failed after superstep {superstep}: {exc}",
                        executor_id=exc.source_id,
                        superstep=superstep,
                    ) from exc
    run.superstep = superstep + 1
    run.supersteps_this_call += 1
    if store is not None:
        await save_checkpoint(run, store)
    if streaming:
        stream.append(SuperstepCompletedEvent(superstep=superstep))
    return bool(run.inboxes)


def _apply_results(run: RunState, results: list[InvocationResult], superstep: int) -> None:
    """Apply every result, in executor-id order (results come sorted by id)."""
    stream = run.stream
    for result in results:
        executor_id = result.executor_id
        if stream is not None:
            stream.append(ExecutorInvokedEvent(executor_id=executor_id, superstep=superstep))
            stream.extend(result.events)
        elif result.events:
            run.events.extend(result.events)
        if result.outputs:
            run.outputs.extend(result.outputs)
        if result.state_writes:
            run.shared_state.update(result.state_writes)
        for request in result.requests:
            run.pending_requests[request.request_id] = request
            run.emit(request)
        if result.executor_state is not None:
            run.executor_states[executor_id] = result.executor_state
        if stream is not None:
            stream.append(
                ExecutorCompletedEvent(
                    executor_id=executor_id, superstep=superstep, duration_s=result.duration_s
                )
            )
    if stream is not None:
        # Keep run()'s view too: custom events (not outputs or lifecycle) go in the result.
        for result in results:
            run.events.extend(e for e in result.events if type(e) is not WorkflowOutputEvent)


async def _retry_failed(
    run: RunState,
    runtime: Runtime,
    invocations: list[Invocation],
    results: list[InvocationResult],
) -> None:
    """Retry failed invocations per their RetryPolicy; raise once one is out of attempts."""
    workflow = run.workflow
    failed = [i for i, result in enumerate(results) if result.error is not None]
    while failed:
        delay = 0.0
        for index in failed:
            invocation, result = invocations[index], results[index]
            error = result.error
            if error is None:  # pragma: no cover - failed holds only errored results
                continue
            run.errors[invocation.executor_id] = (
                *run.errors.get(invocation.executor_id, ()),
                error,
            )
            policy = workflow.get_executor(invocation.executor_id).retry
            will_retry = (
                result.retryable and policy is not None and invocation.attempt < policy.max_attempts
            )
            run.emit(
                ExecutorFailedEvent(
                    executor_id=invocation.executor_id,
                    superstep=invocation.superstep,
                    error=f"{error.error_type}: {error.message}",
                    will_retry=will_retry,
                )
            )
            _log.warning(
                "executor_failed",
                executor_id=invocation.executor_id,
                superstep=invocation.superstep,
                attempt=invocation.attempt,
                error=f"{error.error_type}: {error.message}",
                will_retry=will_retry,
            )
            if not will_retry:
                attempts = f"{invocation.attempt} attempt{'s' if invocation.attempt > 1 else ''}"
                raise WorkflowExecutionError(
                    f"executor '{invocation.executor_id}' failed in superstep "
                    f"{invocation.superstep} after {attempts}: {error.error_type}: {error.message}",
                    executor_id=invocation.executor_id,
                    superstep=invocation.superstep,
                ) from result.exception
            if policy is not None:
                delay = max(delay, policy.delay_before(invocation.attempt + 1))
        if delay > 0:
            await asyncio.sleep(delay)
        retries = [
            dataclasses.replace(
                invocations[i],
                attempt=invocations[i].attempt + 1,
                previous_errors=run.errors[invocations[i].executor_id],
            )
            for i in failed
        ]
        retried = await runtime.execute(workflow, retries)
        for index, invocation, result in zip(failed, retries, retried, strict=True):
            invocations[index] = invocation
            results[index] = result
        failed = [i for i in failed if results[i].error is not None]


async def save_checkpoint(run: RunState, store: CheckpointStore) -> None:
    """Write the run's state after the barrier as one checkpoint (atomic in the store)."""
    workflow = run.workflow
    encode = workflow.type_registry.encode
    checkpoint = Checkpoint(
        id=uuid.uuid4().hex,
        workflow_id=workflow.id,
        workflow_name=workflow.name,
        run_id=run.run_id,
        superstep=run.superstep - 1,
        workflow_fingerprint=workflow.fingerprint(),
        pending_messages={k: encode(v) for k, v in run.inboxes.items()},
        fan_in_buffers={
            key: {source: encode(list(queue)) for source, queue in buffer.queues.items() if queue}
            for key, buffer in run.fan_in.items()
            if buffer.filled
        },
        shared_state=encode(run.shared_state),
        pending_requests=[encode(request) for request in run.pending_requests.values()],
        executor_states={k: encode(v) for k, v in run.executor_states.items()},
        outputs_so_far=run.outputs_before + len(run.outputs),
        metadata={"errors": encode({k: list(v) for k, v in run.errors.items()})}
        if run.errors
        else {},
    )
    try:
        run.last_checkpoint_id = await store.save(checkpoint)
    except CheckpointError:
        raise
    except Exception as exc:
        raise CheckpointError(
            f"saving the checkpoint of run {run.run_id} at superstep {checkpoint.superstep} "
            f"failed: {type(exc).__name__}: {exc}"
        ) from exc


def restore_run(workflow: Workflow, checkpoint: Checkpoint) -> RunState:
    """A run state rebuilt from ``checkpoint`` (already verified against the workflow)."""
    decode = workflow.type_registry.decode
    run = RunState(workflow, checkpoint.run_id)
    run.superstep = checkpoint.superstep + 1
    run.inboxes = {k: decode(v) for k, v in checkpoint.pending_messages.items()}
    edges = {edge.key: edge for edge in workflow.edges}
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
        run.pending_requests[request.request_id] = request
    run.executor_states = {k: decode(v) for k, v in checkpoint.executor_states.items()}
    if "errors" in checkpoint.metadata:
        errors: dict[str, list[ExecutorErrorInfo]] = decode(checkpoint.metadata["errors"])
        run.errors = {executor_id: tuple(infos) for executor_id, infos in errors.items()}
    run.outputs_before = checkpoint.outputs_so_far
    run.last_checkpoint_id = checkpoint.id
    return run


def new_run_id() -> str:
    """A fresh run id."""
    return uuid.uuid4().hex


def monotonic() -> float:
    """Seconds from a monotonic clock (for durations)."""
    return time.perf_counter()
