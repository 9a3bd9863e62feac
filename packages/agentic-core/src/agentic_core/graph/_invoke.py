"""Running one invocation in this process: every message through the executor's handlers."""

from __future__ import annotations

import asyncio
import copy
import time
from typing import Any, NamedTuple

from agentic_core._errors import ExecutorError, SerializationError
from agentic_core.graph._context import WorkflowContext
from agentic_core.graph._executor import Executor
from agentic_core.graph._serialization import TypeRegistry
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


async def invoke_executor(
    plan: ExecutorPlan, registry: TypeRegistry, invocation: Invocation
) -> InvocationResult:
    """Run one invocation in this process: every message through the executor's handlers."""
    executor, stateful, targets, timeout, _ = plan
    result = InvocationResult(invocation.executor_id)
    if stateful:
        executor = copy.copy(executor)  # per-run state never touches the shared instance
        executor.restore_state(invocation.executor_state)
    ctx: WorkflowContext[Any, Any] = WorkflowContext(invocation, result, targets, registry)
    started = time.perf_counter()
    deadline: asyncio.Timeout | None = None
    try:
        if timeout is None:
            await _deliver(executor, invocation.messages, ctx)
        else:
            async with asyncio.timeout(timeout) as deadline:
                await _deliver(executor, invocation.messages, ctx)
        if stateful:
            result.executor_state = executor.snapshot_state()
    except TimeoutError as exc:
        # Only the RetryPolicy's own deadline is a timeout; a TimeoutError the handler raised
        # (an LLM client's, say) is an ordinary failure with its own message.
        expired = deadline is not None and deadline.expired()
        _fail(result, invocation, exc, f"timed out after {timeout} s" if expired else str(exc))
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
