"""``LocalRuntime``'s direct path: a superstep with one invocation runs inline.

Most supersteps of most workflows (chains, loops, agents taking turns) fire one executor with
one message. ``drive_direct`` runs such a superstep without the runtime's and
``run_invocation``'s coroutines, lists and clock reads: it builds the invocation and its
result, awaits the handler, and routes what it sent. Anything else (several invocations, a
stateful executor, a ``RetryPolicy`` timeout, an answer to a request, a failure to retry, an
effect other than sending along unconditional edges) takes the full path of ``_loop.drive``,
so both paths mean the same thing; the engine tests run every workflow on ``LocalRuntime``
and ``SerializingRuntime`` (always the full path) and compare.

Used by ``Workflow.run`` when the runtime is ``LocalRuntime`` and telemetry is off (the
observed loop records every invocation's span, so it keeps the full path).
"""

from __future__ import annotations

from typing import Any

from agentic_core import _run_context
from agentic_core._run_context import CURRENT_INVOCATION
from agentic_core.graph._context import WorkflowContext
from agentic_core.graph._durability import CheckpointWrites
from agentic_core.graph._invoke import all_direct, execute_direct, record_failure
from agentic_core.graph._loop import retry, superstep
from agentic_core.graph._run_state import RunState
from agentic_core.graph._runtime import LocalRuntime
from agentic_core.graph._step import apply_results, route_results
from agentic_core.protocols._runtime import (
    Invocation,
    InvocationResult,
    ResponseDelivery,
)

_NO_ERRORS: tuple[()] = ()


async def drive_direct(
    run: RunState, runtime: LocalRuntime, writes: CheckpointWrites | None
) -> None:
    """``drive`` for ``LocalRuntime``: supersteps with one invocation run inline."""
    graph = run.graph
    plans = graph.plans
    registry = graph.type_registry
    workflow_id = graph.id
    run_id = run.run_id
    while run.inboxes:
        inboxes = run.inboxes
        if len(inboxes) == 1 and run.superstep < run.max_supersteps:
            [(executor_id, messages)] = inboxes.items()
            plan = plans[executor_id]
            if plan.direct and len(messages) == 1 and type(messages[0]) is not ResponseDelivery:
                run.inboxes = {}
                errors = run.errors
                invocation = Invocation(
                    run_id,
                    workflow_id,
                    run.superstep,
                    executor_id,
                    messages,
                    run.shared_state,
                    1,
                    errors.get(executor_id, _NO_ERRORS) if errors else _NO_ERRORS,
                )
                result = InvocationResult(executor_id)
                ctx: WorkflowContext[Any, Any] = WorkflowContext(
                    invocation, result, plan.targets, registry
                )
                token = CURRENT_INVOCATION.set(invocation) if _run_context.enabled else None
                message = messages[0]
                try:
                    executor = plan.executor
                    handle = executor._direct_handlers.get(type(message))  # pyright: ignore[reportPrivateUsage, reportUnknownArgumentType]
                    if handle is None:
                        handle = executor._direct_handler(message)  # pyright: ignore[reportPrivateUsage]
                    await handle(message, ctx)
                except Exception as exc:  # noqa: BLE001 - any executor error becomes a result
                    record_failure(result, invocation, exc)
                finally:
                    if token is not None:
                        CURRENT_INVOCATION.reset(token)
                if result.error is not None:
                    results = await retry(run, runtime, [invocation], [result])
                    if apply_results(run, results):
                        await route_results(run, results)
                elif (
                    plan.direct_targets is not None
                    and not result.outputs
                    and not result.events
                    and not result.state_writes
                    and not result.requests
                ):
                    # Only messages along unconditional edges: deliver them, next superstep.
                    sent = result.sent
                    targets = plan.direct_targets
                    if len(sent) == 1 and len(targets) == 1 and sent[0][1] in (None, targets[0]):
                        run.inboxes = {targets[0]: [sent[0][0]]}  # a chain's step
                    else:
                        deliver = run.deliver
                        for message, target_id in sent:
                            for target in targets:
                                if target_id is None or target == target_id:
                                    deliver(target, message)
                    run.superstep += 1
                elif apply_results(run, [result]):
                    await route_results(run, [result])
                if writes is not None:
                    await writes.after_superstep(run)
                continue
        if all_direct(inboxes, plans):
            await superstep(run, runtime, writes, execute_direct)
        else:
            await superstep(run, runtime, writes)
