"""Where invocations run: LocalRuntime (asyncio) and SerializingRuntime (the Runtime protocol
lives in ``agentic_core.protocols``)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import Any

from agentic_core.protocols._runtime import (
    Invocation,
    InvocationResult,
    WorkflowGraph,
)


async def gather_or_cancel(coros: Sequence[Any]) -> list[Any]:
    """Await coroutines concurrently; if this is cancelled or one raises, cancel the rest."""
    tasks = [asyncio.ensure_future(c) for c in coros]
    try:
        return list(await asyncio.gather(*tasks))
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


class LocalRuntime:
    """The default runtime: invocations run concurrently with asyncio in this process.

    A single invocation is awaited directly, without a Task.
    """

    async def execute(
        self, workflow: WorkflowGraph, invocations: Sequence[Invocation]
    ) -> list[InvocationResult]:
        """Run ``invocations`` concurrently; results in the same order."""
        if len(invocations) == 1:
            return [await workflow.run_invocation(invocations[0])]
        return await gather_or_cancel([workflow.run_invocation(inv) for inv in invocations])


class SerializingRuntime:
    """Like ``LocalRuntime``, but every invocation and result crosses a JSON text boundary.

    It proves a workflow is ready for a distributed runtime: anything that would not survive
    the trip to another process (unregistered types, non-JSON data) fails here too.
    """

    async def execute(
        self, workflow: WorkflowGraph, invocations: Sequence[Invocation]
    ) -> list[InvocationResult]:
        """Round-trip each invocation and result through JSON text, then run it locally."""
        return await gather_or_cancel([self._one(workflow, inv) for inv in invocations])

    async def _one(self, workflow: WorkflowGraph, invocation: Invocation) -> InvocationResult:
        registry = workflow.type_registry
        wire = json.dumps(registry.encode(_invocation_to_data(invocation)))
        received = _invocation_from_data(registry.decode(json.loads(wire)))
        result = await workflow.run_invocation(received)
        wire = json.dumps(registry.encode(_result_to_data(result)))
        return _result_from_data(registry.decode(json.loads(wire)))


def _invocation_to_data(inv: Invocation) -> dict[str, Any]:
    return {
        "run_id": inv.run_id,
        "workflow_id": inv.workflow_id,
        "superstep": inv.superstep,
        "executor_id": inv.executor_id,
        "messages": inv.messages,
        "shared_state": inv.shared_state,
        "attempt": inv.attempt,
        "previous_errors": list(inv.previous_errors),
        "executor_state": inv.executor_state,
        "streaming": inv.streaming,
    }


def _invocation_from_data(data: dict[str, Any]) -> Invocation:
    data["previous_errors"] = tuple(data["previous_errors"])
    return Invocation(**data)


def _result_to_data(result: InvocationResult) -> dict[str, Any]:
    return {
        "executor_id": result.executor_id,
        "sent": [[message, target] for message, target in result.sent],
        "outputs": result.outputs,
        "events": result.events,
        "state_writes": result.state_writes,
        "requests": result.requests,
        "executor_state": result.executor_state,
        "error": result.error,
        "retryable": result.retryable,
        "duration_s": result.duration_s,
    }


def _result_from_data(data: dict[str, Any]) -> InvocationResult:
    data["sent"] = [(message, target) for message, target in data["sent"]]
    return InvocationResult(**data)
