"""What running an invocation in this process needs: the executor's plan, delivery, failure."""

from __future__ import annotations

from typing import Any, NamedTuple

from agentic_core.graph._context import WorkflowContext
from agentic_core.graph._executor import Executor
from agentic_core.protocols._runtime import (
    ExecutorErrorInfo,
    Invocation,
    InvocationResult,
    ResponseDelivery,
)


class ExecutorPlan(NamedTuple):
    """An executor with what the hot path needs of it, resolved once at build time."""

    executor: Executor
    stateful: bool
    targets: frozenset[str]
    timeout_s: float | None
    direct_targets: tuple[str, ...] | None  # only unconditional direct edges: route inline


async def deliver_messages(
    executor: Any, messages: list[Any], ctx: WorkflowContext[Any, Any]
) -> None:
    """Every message through the executor's handlers, in order."""
    for message in messages:
        if type(message) is ResponseDelivery:
            await executor._handle_response(
                message.request_id, message.request, message.response, ctx
            )
        else:
            await executor._handle(message, ctx)


def fail(result: InvocationResult, invocation: Invocation, exc: BaseException, text: str) -> None:
    """Turn ``result`` into a failure: no effects, the error recorded."""
    result.sent.clear()
    result.outputs.clear()
    result.events.clear()
    result.state_writes.clear()
    result.state_reads = None
    result.requests.clear()
    result.exception = exc
    result.error = ExecutorErrorInfo(
        executor_id=invocation.executor_id,
        superstep=invocation.superstep,
        attempt=invocation.attempt,
        error_type=type(exc).__name__,
        message=text,
    )
