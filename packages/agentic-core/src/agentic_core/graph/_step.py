"""The pure part of a superstep: plan invocations, decide retries, apply results, route.

Nothing here awaits a runtime, sleeps or saves: the loop (``_loop.py``) does the I/O and calls
these in order. A distributed coordinator reuses them as they are, so a superstep means the
same thing wherever its invocations ran. (Routing is ``async`` only because an edge condition
may be.)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any, NamedTuple

import structlog
from pydantic import BaseModel

from agentic_core._errors import (
    MaxSuperstepsExceededError,
    RoutingError,
    SharedStateConflictError,
    WorkflowExecutionError,
    WorkflowRequestError,
)
from agentic_core.graph._edges import route_message, route_plain
from agentic_core.graph._run_state import RunState
from agentic_core.graph._typing import describe, matcher_for
from agentic_core.protocols._events import (
    ExecutorFailedEvent,
    RequestInfoEvent,
    WorkflowEvent,
    WorkflowOutputEvent,
    executor_completed,
    executor_invoked,
    superstep_started,
)
from agentic_core.protocols._runtime import Invocation, InvocationResult, ResponseDelivery

_log = structlog.get_logger(__name__)
_ONE: tuple[tuple[None, None]] = ((None, None),)
"""The batches of an executor whose messages all go to one invocation (no allocation)."""


def plan_superstep(run: RunState) -> list[Invocation]:
    """This superstep's invocations, in executor-id order; the inboxes move into them.

    An executor without per-run state handles each of its messages as its own invocation (a
    dynamic map, run concurrently); a stateful one gets one invocation with all of them, in
    delivery order. Raises ``MaxSuperstepsExceededError`` when the run's budget is spent.
    """
    graph = run.graph
    inboxes = run.inboxes
    superstep = run.superstep
    if superstep >= run.max_supersteps:
        raise MaxSuperstepsExceededError(
            f"workflow '{graph.name}' exceeded max_supersteps={run.max_supersteps} "
            f"(still pending: {', '.join(sorted(inboxes))}); pass max_supersteps= to run() "
            "for a larger budget",
            executor_id=None,
            superstep=superstep,
        )
    run.inboxes = {}
    run_id = run.run_id
    workflow_id = graph.id
    shared = run.shared_state
    streaming = run.stream is not None
    live = run.live
    errors = run.errors
    plans = graph.plans
    invocations: list[Invocation] = []
    for executor_id in sorted(inboxes) if len(inboxes) > 1 else inboxes:
        messages = inboxes[executor_id]
        previous = errors.get(executor_id, ()) if errors else ()
        stateful = plans[executor_id].stateful
        if stateful or len(messages) == 1:
            # One invocation; a stateful one gets a fresh copy of its state (never shared).
            batches: Iterable[tuple[int | None, list[Any] | None]] = _ONE
        else:  # a dynamic map: one concurrent invocation per message
            batches = enumerate([message] for message in messages)
        for index, batch in batches:
            invocations.append(
                Invocation(
                    run_id,
                    workflow_id,
                    superstep,
                    executor_id,
                    messages if batch is None else batch,
                    shared,
                    1,
                    previous,
                    graph.type_registry.decode(run.executor_states.get(executor_id))
                    if stateful
                    else None,
                    streaming,
                    index,
                    live,
                )
            )
    return invocations


def started_events(run: RunState, invocations: list[Invocation]) -> list[WorkflowEvent]:
    """What a stream shows as a superstep starts: the superstep, then each invocation."""
    superstep = run.superstep
    if len(invocations) == 1:  # the common case, kept cheap: streams pay it every superstep
        executor_id = invocations[0].executor_id
        return [
            superstep_started(superstep, [executor_id]),
            executor_invoked(executor_id, superstep),
        ]
    ids = list(dict.fromkeys([i.executor_id for i in invocations]))  # a map repeats its id
    events: list[WorkflowEvent] = [superstep_started(superstep, ids)]
    events.extend([executor_invoked(i.executor_id, superstep) for i in invocations])
    return events


@dataclass(frozen=True, slots=True)
class RetryPlan:
    """The failed invocations to run again (at their next attempt), after ``delay_s``."""

    positions: list[int]
    invocations: list[Invocation]
    delay_s: float


def plan_retries(
    run: RunState, invocations: list[Invocation], results: list[InvocationResult]
) -> RetryPlan:
    """Record every failed result and decide its retry by the executor's ``RetryPolicy``.

    Raises ``WorkflowExecutionError`` (from the executor's exception) once one is out of
    attempts or failed in a way no retry can mend.
    """
    graph = run.graph
    positions: list[int] = []
    delay = 0.0
    for position, (invocation, result) in enumerate(zip(invocations, results, strict=True)):
        error = result.error
        if error is None:
            continue
        executor_id = invocation.executor_id
        run.errors[executor_id] = (*run.errors.get(executor_id, ()), error)
        policy = graph.get_executor(executor_id).retry
        will_retry = (
            result.retryable and policy is not None and invocation.attempt < policy.max_attempts
        )
        text = f"{error.error_type}: {error.message}"
        run.emit(
            ExecutorFailedEvent(
                executor_id=executor_id,
                superstep=invocation.superstep,
                error=text,
                will_retry=will_retry,
            )
        )
        _log.warning(
            "executor_failed",
            executor_id=executor_id,
            superstep=invocation.superstep,
            attempt=invocation.attempt,
            error=text,
            will_retry=will_retry,
        )
        if not will_retry:
            attempts = f"{invocation.attempt} attempt{'s' if invocation.attempt > 1 else ''}"
            raise WorkflowExecutionError(
                f"executor '{executor_id}' failed in superstep {invocation.superstep} after "
                f"{attempts}: {text}",
                executor_id=executor_id,
                superstep=invocation.superstep,
            ) from result.exception
        if policy is not None:
            delay = max(delay, policy.delay_before(invocation.attempt + 1))
        positions.append(position)
    retries = [_next_attempt(run, invocations[position]) for position in positions]
    return RetryPlan(positions, retries, delay)


def _next_attempt(run: RunState, invocation: Invocation) -> Invocation:
    """``invocation`` again, one attempt later, with a fresh copy of the executor's state (the
    failed attempt may have changed the object it was given)."""
    executor_id = invocation.executor_id
    state = invocation.executor_state
    if run.graph.plans[executor_id].stateful:
        state = run.graph.type_registry.decode(run.executor_states.get(executor_id))
    return replace(
        invocation,
        attempt=invocation.attempt + 1,
        previous_errors=run.errors[executor_id],
        executor_state=state,
    )


def apply_results(run: RunState, results: list[InvocationResult]) -> bool:
    """Apply a superstep's results in order (executor id, then delivery).

    Outputs, events, shared-state writes, requests and executor states apply first; then the
    sent messages are routed. When every sender has only unconditional direct edges that
    happens here and the run moves to the next superstep; otherwise this returns True and the
    caller awaits ``route_results`` (an edge condition may be async).
    """
    graph = run.graph
    superstep = run.superstep
    stream = run.stream
    plans = graph.plans
    direct = True
    for result in results:
        if result.state_reads:  # a map branch read shared state: no lost update allowed
            refuse_lost_updates(results, superstep)
            break
    run.applying = superstep  # from here until the next barrier, the run is half-way
    for result in results:
        executor_id = result.executor_id
        if result.events:
            if stream is not None:
                stream.extend(result.events)
                # run() keeps custom events too, not the outputs (it returns those itself).
                run.events.extend(e for e in result.events if type(e) is not WorkflowOutputEvent)
            else:
                run.events.extend(result.events)
        if result.outputs:
            run.outputs.extend(result.outputs)
        if result.state_writes:
            run.shared_state.update(result.state_writes)
        for request in result.requests:
            run.pending_requests[request.request_id] = request
            run.emit(request)
        if result.executor_state is not None:
            run.executor_states[executor_id] = graph.type_registry.encode(result.executor_state)
        if stream is not None:
            stream.append(executor_completed(executor_id, superstep, result.duration_s))
        if result.sent and plans[executor_id].direct_targets is None:
            direct = False
    if not direct:
        return True
    deliver = run.deliver
    for result in results:
        targets = plans[result.executor_id].direct_targets
        for message, target_id in result.sent:
            for target in targets or ():
                if target_id is None or target == target_id:
                    deliver(target, message)
    run.superstep = superstep + 1
    return False


def refuse_lost_updates(results: list[InvocationResult], superstep: int) -> None:
    """Raise ``SharedStateConflictError`` when branches of one dynamic map lost an update.

    Branches run concurrently, each on the barrier's shared state: a key that two or more of
    one executor's branches wrote, after at least one of those writers had read it, is a
    read-modify-write that would keep one update and drop the others. Blind writes are no
    conflict (they apply in delivery order, like writes of several executors in executor-id
    order). Checked before any effect applies, so the run's last checkpoint stays as it was.
    """
    writers: dict[tuple[str, str], list[InvocationResult]] = {}
    for result in results:
        for key in result.state_writes:
            writers.setdefault((result.executor_id, key), []).append(result)
    for (executor_id, key), wrote in writers.items():
        if len(wrote) < 2 or not any(r.state_reads and key in r.state_reads for r in wrote):
            continue
        raise SharedStateConflictError(
            f"executor '{executor_id}' handled several messages of superstep {superstep} as "
            f"concurrent invocations (a dynamic map), and {len(wrote)} of them wrote shared-state "
            f"key {key!r} after reading it: each read the value of the last barrier, so all but "
            "one update would be lost. Reduce with add_collect_edge(map, reduce) (the reduce "
            "gets every branch's message as one list), or give the executor per-run state "
            "(snapshot_state/restore_state) so it handles its messages one at a time",
            executor_id=executor_id,
            superstep=superstep,
            key=key,
        )


async def route_results(run: RunState, results: list[InvocationResult]) -> None:
    """Route every message the results sent along its edges, then move to the next superstep.

    A collect edge gathers the superstep's messages and delivers them last, as one list.
    """
    graph = run.graph
    deliver = run.deliver
    fan_in = run.fan_in_buffer
    collect = run.collect
    plans = graph.plans
    source = ""
    try:
        for result in results:
            sent = result.sent
            if not sent:
                continue
            source = result.executor_id
            plan = plans[source]
            direct = plan.direct_targets
            if direct is not None:  # only unconditional direct edges: no routing logic needed
                for message, target_id in sent:
                    for target in direct:
                        if target_id is None or target == target_id:
                            deliver(target, message)
            elif plan.plain_edges is not None:  # no condition to await
                for message, target_id in sent:
                    for edge in plan.plain_edges:
                        route_plain(edge, source, message, target_id, deliver, fan_in, collect)
            else:
                edges = graph.edges_from(source)
                for message, target_id in sent:
                    await route_message(edges, source, message, target_id, deliver, fan_in, collect)
    except RoutingError as exc:
        raise WorkflowExecutionError(
            f"routing failed after superstep {run.superstep}: {exc}",
            executor_id=exc.source_id,
            superstep=run.superstep,
        ) from exc
    if run.collected is not None:
        for edge, batch in run.collected.values():
            deliver(edge.targets[0], batch)
        run.collected = None
    run.superstep += 1


def deliver_responses(run: RunState, responses: Mapping[str, Any]) -> None:
    """Answer pending requests of ``run``: each answer goes to its executor's response handler.

    Raises ``WorkflowRequestError`` naming an unknown request id or a response of the wrong type.
    """
    unknown = [rid for rid in responses if rid not in run.pending_requests]
    if unknown:
        raise WorkflowRequestError(
            f"unknown request id(s) {', '.join(map(repr, unknown))} for run {run.run_id} "
            f"(pending: {', '.join(map(repr, run.pending_requests)) or 'none'})"
        )
    coerced = {
        rid: _coerce_response(run.pending_requests[rid], value) for rid, value in responses.items()
    }
    for request_id, value in coerced.items():
        request = run.pending_requests.pop(request_id)
        run.deliver(request.source_executor_id, ResponseDelivery(request_id, request.data, value))


def update_shared_state(run: RunState, updates: Mapping[str, Any]) -> None:
    """Apply edits to a (forked) run's shared state before its next superstep."""
    registry = run.graph.type_registry
    for key, value in updates.items():
        bad = registry.check(value)
        if bad is not None:
            raise WorkflowRequestError(
                f"update_state[{key!r}] holds a value of type {type(value).__qualname__} that "
                f"cannot be serialized (offending type: {bad})"
            )
    run.shared_state = {**run.shared_state, **updates}


class CallOutcome(NamedTuple):
    """What one call of ``run``/``run_stream`` produced, taken out of the run."""

    outputs: list[Any]
    events: list[WorkflowEvent]
    tail: list[WorkflowEvent]
    """Events the end of the call added (partly filled fan-ins): a stream still yields them."""


def end_call(run: RunState) -> CallOutcome:
    """Close one call on ``run``: report partly filled fan-ins, hand over outputs and events."""
    tail: list[WorkflowEvent] = []
    for event in run.incomplete_fan_ins() if run.fan_in else ():
        _log.warning(
            "fan_in_incomplete",
            workflow=run.graph.name,
            target_id=event.target_id,
            missing_source_ids=event.missing_source_ids,
        )
        run.events.append(event)
        tail.append(event)
    outputs, run.outputs = run.outputs, []
    events, run.events = run.events, []
    run.outputs_before += len(outputs)
    if run.ending_outputs is not None:  # stored by the checkpoint that ended the call
        run.earlier_outputs, run.ending_outputs = run.ending_outputs, None
    return CallOutcome(outputs, events, tail)


def reissue_pending(run: RunState) -> list[RequestInfoEvent]:
    """The run's pending requests, emitted again (a resumed run says what it waits for)."""
    requests = list(run.pending_requests.values())
    for request in requests:
        run.emit(request)
    return requests


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
