"""Where invocations run: the Runtime protocol, LocalRuntime (asyncio) and SerializingRuntime."""

from __future__ import annotations

import asyncio
import copy
import json
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from agentic_core._errors import ExecutorError, SerializationError
from agentic_core.graph._context import WorkflowContext
from agentic_core.graph._invocation import (
    ExecutorErrorInfo,
    Invocation,
    InvocationResult,
    ResponseDelivery,
)

if TYPE_CHECKING:
    from agentic_core.graph._workflow import Workflow


@runtime_checkable
class Runtime(Protocol):
    """Runs one superstep's invocations and returns their results, in the same order.

    An invocation is data in, data out: a runtime may run it in this process (``LocalRuntime``)
    or ship it elsewhere (``NatsRuntime`` in agentic-bus). Executor exceptions come back as
    ``InvocationResult.error``; the runner applies results at the barrier.
    """

    async def execute(
        self, workflow: Workflow, invocations: Sequence[Invocation]
    ) -> list[InvocationResult]: ...


async def invoke_executor(workflow: Workflow, invocation: Invocation) -> InvocationResult:
    """Run one invocation in this process: every message through the executor's handlers."""
    executor, stateful, targets, timeout, _ = workflow.plan_of(invocation.executor_id)
    result = InvocationResult(invocation.executor_id)
    if stateful:
        executor = copy.copy(executor)  # per-run state never touches the shared instance
        executor.restore_state(invocation.executor_state)
    ctx: WorkflowContext[Any, Any] = WorkflowContext(
        invocation, result, targets, workflow.type_registry
    )
    started = time.perf_counter()
    try:
        if timeout is None:
            await _deliver(executor, invocation.messages, ctx)
        else:
            async with asyncio.timeout(timeout):
                await _deliver(executor, invocation.messages, ctx)
        if stateful:
            result.executor_state = executor.snapshot_state()
    except TimeoutError as exc:
        _fail(result, invocation, exc, f"timed out after {timeout} s")
    except (ExecutorError, SerializationError) as exc:
        _fail(result, invocation, exc, str(exc))
        result.retryable = False
    except Exception as exc:  # noqa: BLE001 - any executor error becomes a result, never a crash
        _fail(result, invocation, exc, str(exc))
    result.duration_s = time.perf_counter() - started
    return result


async def _deliver(executor: Any, messages: list[Any], ctx: WorkflowContext[Any, Any]) -> None:
    for message in messages:
        if type(message) is ResponseDelivery:
            await executor._handle_response(
                message.request_id, message.request, message.response, ctx
            )
        else:
            await executor._handle(message, ctx)


def _fail(result: InvocationResult, invocation: Invocation, exc: BaseException, text: str) -> None:
    result.sent.clear()
    result.outputs.clear()
    result.events.clear()
    result.state_writes.clear()
    result.requests.clear()
    result.exception = exc
    result.error = ExecutorErrorInfo(
        executor_id=invocation.executor_id,
        superstep=invocation.superstep,
        attempt=invocation.attempt,
        error_type=type(exc).__name__,
        message=text,
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
        self, workflow: Workflow, invocations: Sequence[Invocation]
    ) -> list[InvocationResult]:
        """Run ``invocations`` concurrently; results in the same order."""
        if len(invocations) == 1:
            return [await invoke_executor(workflow, invocations[0])]
        return await gather_or_cancel([invoke_executor(workflow, inv) for inv in invocations])


class SerializingRuntime:
    """Like ``LocalRuntime``, but every invocation and result crosses a JSON text boundary.

    It proves a workflow is ready for a distributed runtime: anything that would not survive
    the trip to another process (unregistered types, non-JSON data) fails here too.
    """

    async def execute(
        self, workflow: Workflow, invocations: Sequence[Invocation]
    ) -> list[InvocationResult]:
        """Round-trip each invocation and result through JSON text, then run it locally."""
        return await gather_or_cancel([self._one(workflow, inv) for inv in invocations])

    async def _one(self, workflow: Workflow, invocation: Invocation) -> InvocationResult:
        registry = workflow.type_registry
        wire = json.dumps(registry.encode(_invocation_to_data(invocation)))
        received = _invocation_from_data(registry.decode(json.loads(wire)))
        result = await invoke_executor(workflow, received)
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
        "previous_errors": inv.previous_errors,
        "executor_state": inv.executor_state,
        "streaming": inv.streaming,
    }


def _invocation_from_data(data: dict[str, Any]) -> Invocation:
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
