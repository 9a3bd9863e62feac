"""What running an invocation in this process needs: the executor's plan, delivery, failure,
and the direct path's lean invocation (``invoke_direct``) for ``LocalRuntime``."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from time import perf_counter
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, cast

from agentic_core import _run_context
from agentic_core._errors import ExecutorError, SerializationError
from agentic_core._run_context import CURRENT_INVOCATION
from agentic_core.graph._context import WorkflowContext
from agentic_core.graph._edges import Edge
from agentic_core.graph._executor import Executor
from agentic_core.graph._runtime import gather_or_cancel
from agentic_core.protocols._runtime import (
    NO_EFFECTS,
    NO_WRITES,
    ExecutorErrorInfo,
    Invocation,
    InvocationResult,
    ResponseDelivery,
    WorkflowGraph,
)

if TYPE_CHECKING:
    from agentic_core.graph._serialization import TypeRegistry


class _Planned(Protocol):
    """What the direct path needs of a graph (``CompiledGraph``, which imports this module)."""

    @property
    def plans(self) -> Mapping[str, ExecutorPlan]: ...

    @property
    def type_registry(self) -> TypeRegistry: ...


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
    result.sent = NO_EFFECTS
    result.outputs = NO_EFFECTS
    result.events = NO_EFFECTS
    result.state_writes = NO_WRITES
    result.state_reads = None
    result.requests = NO_EFFECTS
    result.exception = exc
    result.error = ExecutorErrorInfo(
        executor_id=invocation.executor_id,
        superstep=invocation.superstep,
        attempt=invocation.attempt,
        error_type=type(exc).__name__,
        message=text,
    )


def all_direct(inboxes: dict[str, list[Any]], plans: Mapping[str, ExecutorPlan]) -> bool:
    """Whether every invocation of this superstep can run on the direct path."""
    for executor_id, messages in inboxes.items():
        if not plans[executor_id].direct:
            return False
        for message in messages:
            if type(message) is ResponseDelivery:
                return False
    return True


async def execute_direct(
    workflow: WorkflowGraph, invocations: Sequence[Invocation]
) -> list[InvocationResult]:
    """``LocalRuntime.execute`` for invocations that may take the direct path (concurrent)."""
    graph = cast("_Planned", workflow)  # the engine's own graph: only it takes the direct path
    plans = graph.plans
    registry = graph.type_registry
    if len(invocations) == 1:  # awaited directly: no task
        invocation = invocations[0]
        return [await invoke_direct(plans[invocation.executor_id], invocation, registry)]
    return await gather_or_cancel(
        [invoke_direct(plans[i.executor_id], i, registry) for i in invocations]
    )


async def invoke_direct(
    plan: ExecutorPlan, invocation: Invocation, registry: TypeRegistry
) -> InvocationResult:
    """``run_invocation`` for an executor on the direct path (``drive_direct`` inlines it).

    The clock is read only for a streamed run (its ``ExecutorCompletedEvent`` shows it).
    """
    started = perf_counter() if invocation.streaming else 0.0
    result = InvocationResult(invocation.executor_id)
    ctx: WorkflowContext[Any, Any] = WorkflowContext(invocation, result, plan.targets, registry)
    token = CURRENT_INVOCATION.set(invocation) if _run_context.enabled else None
    message = invocation.messages[0]
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
    if started:
        result.duration_s = perf_counter() - started
    return result
