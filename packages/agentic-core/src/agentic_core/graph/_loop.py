"""The I/O of a run: call the runtime, sleep between retries, save checkpoints, relay events.

Each superstep is plan (pure) -> execute (runtime, retries) -> apply and route (pure) -> the
barrier's checkpoint writes (``CheckpointWrites.after_superstep``: written now, started, or only
noted, by the call's durability mode). ``drive`` runs supersteps for ``Workflow.run``;
``Workflow.run_stream`` calls the same phases (``execute`` or ``execute_live``, then
``finish_superstep``) and yields between them.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence

from agentic_core._telemetry_spans import RunObservation
from agentic_core.graph._durability import CheckpointWrites
from agentic_core.graph._run_state import RunState
from agentic_core.graph._step import apply_results, plan_retries, plan_superstep, route_results
from agentic_core.protocols._events import WorkflowEvent, superstep_completed
from agentic_core.protocols._runtime import (
    Invocation,
    InvocationResult,
    Runtime,
    WorkflowGraph,
)

Execute = Callable[[WorkflowGraph, Sequence[Invocation]], Awaitable[list[InvocationResult]]]
"""How a superstep's invocations run (``Runtime.execute``, or the direct path's)."""


async def execute(
    run: RunState,
    runtime: Runtime,
    invocations: list[Invocation],
    first: Execute | None = None,
) -> list[InvocationResult]:
    """Run the invocations on ``runtime``, retrying failures by their ``RetryPolicy``.

    ``first`` runs the first attempt instead of ``runtime.execute`` (the direct path's).
    """
    results = await (first or runtime.execute)(run.graph, invocations)
    for result in results:
        if result.error is not None:
            return await retry(run, runtime, list(invocations), results)
    return results


async def retry(
    run: RunState,
    runtime: Runtime,
    invocations: list[Invocation],
    results: list[InvocationResult],
) -> list[InvocationResult]:
    while True:
        plan = plan_retries(run, invocations, results)
        if not plan.positions:
            return results
        if plan.delay_s > 0:
            await asyncio.sleep(plan.delay_s)
        retried = await runtime.execute(run.graph, plan.invocations)
        for position, invocation, result in zip(
            plan.positions, plan.invocations, retried, strict=True
        ):
            invocations[position] = invocation
            results[position] = result


async def finish_superstep(
    run: RunState, results: list[InvocationResult], writes: CheckpointWrites | None
) -> None:
    """Apply and route the results, then the barrier's checkpoint writes (when a store is set)."""
    superstep = run.superstep
    if apply_results(run, results):
        await route_results(run, results)
    if writes is not None:
        await writes.after_superstep(run)
    if run.stream is not None:
        run.stream.append(superstep_completed(superstep))


async def drive(run: RunState, runtime: Runtime, writes: CheckpointWrites | None) -> None:
    """Run supersteps until no message is pending (or the run waits on requests)."""
    while run.inboxes:
        await superstep(run, runtime, writes)


async def superstep(
    run: RunState,
    runtime: Runtime,
    writes: CheckpointWrites | None,
    execute: Execute | None = None,
) -> None:
    """One superstep: plan, execute (with retries), apply and route, save.

    ``execute`` runs the first attempt instead of ``runtime.execute`` (retries use the runtime).
    """
    # execute() and finish_superstep() inlined: this is the engine's hot path.
    invocations = plan_superstep(run)
    results = await (execute or runtime.execute)(run.graph, invocations)
    for result in results:
        if result.error is not None:
            results = await retry(run, runtime, list(invocations), results)
            break
    if apply_results(run, results):
        await route_results(run, results)
    if writes is not None:
        await writes.after_superstep(run)


async def drive_observed(
    run: RunState,
    runtime: Runtime,
    writes: CheckpointWrites | None,
    observed: RunObservation,
) -> None:
    """``drive`` with telemetry on: each superstep in its span, current while it runs (so a
    runtime that ships invocations elsewhere propagates it to them)."""
    try:
        with observed.current():
            while run.inboxes:
                invocations = plan_superstep(run)
                with observed.superstep(invocations):
                    results = await execute(run, runtime, invocations)
                    await finish_superstep(run, results, writes)
    except BaseException as exc:
        observed.fail(exc)
        raise


async def execute_live(
    run: RunState,
    runtime: Runtime,
    invocations: list[Invocation],
    results: list[InvocationResult],
    observed: RunObservation | None = None,
) -> AsyncIterator[WorkflowEvent]:
    """``execute``, yielding executors' live updates (agents streaming) as they come.

    With ``observed``, its open superstep span is current in the task that runs them.
    """
    queue: asyncio.Queue[WorkflowEvent] = asyncio.Queue()
    run.live = queue.put_nowait
    for invocation in invocations:
        invocation.live = run.live
    if observed is None:
        step = asyncio.ensure_future(execute(run, runtime, invocations))
    else:
        with observed.in_superstep():  # the task copies the context as it is created
            step = asyncio.ensure_future(execute(run, runtime, invocations))
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
        results.extend(step.result())  # re-raises a failure of the superstep
    finally:
        run.live = None
        if not step.done():
            step.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await step


def monotonic() -> float:
    """Seconds from a monotonic clock (for durations)."""
    return time.perf_counter()
