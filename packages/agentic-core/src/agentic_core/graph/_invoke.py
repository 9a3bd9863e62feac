"""What running an invocation in this process needs: the executor's plan, delivery, failure."""

from __future__ import annotations

import asyncio
from typing import Any, NamedTuple

from agentic_core._errors import ExecutorError, SerializationError
from agentic_core.graph._context import WorkflowContext
from agentic_core.graph._edges import Edge
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
    plain_edges: tuple[Edge, ...] | None
    """The outgoing edges when none has a condition (routed without awaiting), else None."""
    direct: bool
    """Runs inline on ``LocalRuntime``'s direct path: no per-run state, no timeout, the
    executor's own dispatch (``_handle`` not overridden)."""


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


def record_failure(
    result: InvocationResult,
    invocation: Invocation,
    exc: Exception,
    timeout: float | None = None,
    deadline: asyncio.Timeout | None = None,
) -> None:
    """Turn ``result`` into the failure ``exc`` is: an executor's exception never escapes.

    Only the ``RetryPolicy``'s own ``deadline`` is a timeout; a ``TimeoutError`` the handler
    raised (an LLM client's, say) is an ordinary failure with its own message. An
    ``ExecutorError`` or ``SerializationError`` is a mistake no retry can mend.
    """
    if isinstance(exc, TimeoutError):
        expired = deadline is not None and deadline.expired()
        fail(result, invocation, exc, f"timed out after {timeout} s" if expired else str(exc))
    else:
        fail(result, invocation, exc, str(exc))
        if isinstance(exc, ExecutorError | SerializationError):
            result.retryable = False


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
