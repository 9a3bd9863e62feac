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
    create_task = asyncio.get_running_loop().create_task
    tasks = [create_task(c) for c in coros]
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
        wire = json.dumps(registry.encode(invocation.to_data()))
        received = Invocation.from_data(registry.decode(json.loads(wire)))
        result = await workflow.run_invocation(received)
        wire = json.dumps(registry.encode(result.to_data()))
        return InvocationResult.from_data(registry.decode(json.loads(wire)))
