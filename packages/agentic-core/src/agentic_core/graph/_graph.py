"""CompiledGraph: the immutable structure of a workflow, resolved once at build time.

It holds what the engine reads on every superstep (executor plans, edges by source, the type
registry) and nothing of any run. ``Workflow`` adds the run API on top of it.
"""

from __future__ import annotations

import asyncio
import copy
import hashlib
import json
import time
from collections.abc import Mapping
from sys import modules as _modules
from typing import TYPE_CHECKING, Any

from agentic_core import _run_context
from agentic_core._run_context import CURRENT_INVOCATION
from agentic_core._telemetry_invocation import observe_invocation
from agentic_core.graph._context import WorkflowContext
from agentic_core.graph._edges import Edge, EdgeKind, is_plain
from agentic_core.graph._executor import Executor
from agentic_core.graph._invoke import ExecutorPlan, deliver_messages, record_failure
from agentic_core.graph._serialization import TypeRegistry
from agentic_core.protocols._runtime import (
    ExecutorErrorInfo,
    Invocation,
    InvocationResult,
    ResponseDelivery,
)

if TYPE_CHECKING:
    from agentic_core.protocols._checkpoint import CheckpointStore

_OTEL = "opentelemetry"
"""Imported by the program (as any use of OpenTelemetry does) or telemetry is surely off."""


class CompiledGraph:
    """Executors, edges and everything derived from them; shared by every run, never changed.

    It is a ``WorkflowGraph`` (what a ``Runtime`` needs): ``run_invocation`` runs one executor
    invocation in this process.
    """

    def __init__(
        self,
        *,
        name: str,
        executors: dict[str, Executor],
        edges: tuple[Edge, ...],
        start_executor_id: str,
        max_supersteps: int,
        checkpoint_store: CheckpointStore | None,
    ) -> None:
        self.name = name
        self.start_executor_id = start_executor_id
        self.max_supersteps = max_supersteps
        self.checkpoint_store = checkpoint_store
        self._executors = executors
        self._edges = edges
        self._edges_from: dict[str, tuple[Edge, ...]] = {}
        targets: dict[str, set[str]] = {executor_id: set() for executor_id in executors}
        for edge in edges:
            for source in edge.sources:
                self._edges_from[source] = (*self._edges_from.get(source, ()), edge)
                targets[source].update(edge.targets)
        self._targets = {k: frozenset(v) for k, v in targets.items()}
        # What the hot path needs of each executor, by id (read-only).
        self.plans: Mapping[str, ExecutorPlan] = {
            executor_id: _plan_of(
                executor,
                self._targets[executor_id],
                self._edges_from.get(executor_id, ()),
            )
            for executor_id, executor in executors.items()
        }
        self.stateful_ids = tuple(i for i, plan in self.plans.items() if plan.stateful)
        """Executors that keep per-run state (``snapshot_state`` overridden)."""
        self._registry = _registry_of(executors)
        self._fingerprint = self._compute_fingerprint()
        self.id = f"{name}-{self._fingerprint[:12]}"
        self.streams_live = any(getattr(e, "streams_live", False) for e in executors.values())
        """Some executor streams while it runs (agents): a stream relays its updates live."""

    @property
    def executors(self) -> Mapping[str, Executor]:
        """The executors by id."""
        return self._executors

    @property
    def edges(self) -> tuple[Edge, ...]:
        """The edge groups, in the order they were added."""
        return self._edges

    @property
    def type_registry(self) -> TypeRegistry:
        """The types this workflow encodes and decodes (from its handlers' annotations)."""
        return self._registry

    def plan_of(self, executor_id: str) -> ExecutorPlan:
        """What the engine needs of an executor, resolved once at build time."""
        return self.plans[executor_id]

    def get_executor(self, executor_id: str) -> Executor:
        """The executor with ``executor_id``."""
        return self._executors[executor_id]

    def edges_from(self, executor_id: str) -> tuple[Edge, ...]:
        """The outgoing edge groups of ``executor_id``."""
        return self._edges_from.get(executor_id, ())

    def targets_of(self, executor_id: str) -> frozenset[str]:
        """Every executor ``executor_id`` has an edge to."""
        return self._targets[executor_id]

    def fingerprint(self) -> str:
        """A stable hash of the graph: executor ids and kinds, start, edges."""
        return self._fingerprint

    async def run_invocation(self, invocation: Invocation) -> InvocationResult:
        """Run one executor invocation in this process (what every runtime's workers call).

        Executor exceptions become ``result.error`` (never raised); a ``RetryPolicy`` timeout
        is reported as one only when its own deadline expired. While it runs, log lines name
        the invocation (``add_run_context``) and, with telemetry on, its ``executor.process``
        span is the current span.
        """
        executor, stateful, targets, timeout, _, _, _ = self.plans[invocation.executor_id]
        result = InvocationResult(invocation.executor_id)
        # Log lines name the run, superstep and executor (once logging can use it: see there).
        token = CURRENT_INVOCATION.set(invocation) if _run_context.enabled else None
        # One dict look-up while OpenTelemetry is not even imported: the engine's off path.
        observed = observe_invocation(invocation, self.name) if _OTEL in _modules else None
        try:
            if stateful:
                executor = copy.copy(executor)  # per-run state never touches the shared instance
                executor.restore_state(invocation.executor_state)
            ctx: WorkflowContext[Any, Any] = WorkflowContext(
                invocation, result, targets, self._registry
            )
            messages = invocation.messages
            started = time.perf_counter()
            deadline: asyncio.Timeout | None = None
            try:
                if timeout is not None:
                    async with asyncio.timeout(timeout) as deadline:
                        await deliver_messages(executor, messages, ctx)
                elif len(messages) == 1 and type(messages[0]) is not ResponseDelivery:
                    await executor._handle(messages[0], ctx)  # pyright: ignore[reportPrivateUsage]
                else:
                    await deliver_messages(executor, messages, ctx)
                if stateful:
                    result.executor_state = executor.snapshot_state()
            except Exception as exc:  # noqa: BLE001 - any executor error becomes a result
                record_failure(result, invocation, exc, timeout, deadline)
            result.duration_s = time.perf_counter() - started
        except BaseException as exc:  # cancelled (or a state that cannot be restored)
            if observed is not None:
                observed.abort(exc)
            raise
        finally:
            if token is not None:
                CURRENT_INVOCATION.reset(token)
        if observed is not None:
            observed.end(result)
        return result

    def _compute_fingerprint(self) -> str:
        shape = {
            "start": self.start_executor_id,
            "executors": sorted([e.id, e.kind.value] for e in self._executors.values()),
            "edges": [
                [
                    e.kind.value,
                    list(e.sources),
                    list(e.targets),
                    [c is not None for c in e.conditions],
                ]
                for e in self._edges
            ],
        }
        return hashlib.sha256(json.dumps(shape, sort_keys=True).encode()).hexdigest()


def _registry_of(executors: Mapping[str, Executor]) -> TypeRegistry:
    """The types the handlers declare, plus the engine's own data that crosses boundaries."""
    registry = TypeRegistry()
    registry.register(ResponseDelivery)
    registry.register(ExecutorErrorInfo)
    for executor in executors.values():
        for spec in executor.handlers:
            registry.register_annotation(spec.message_type)
            for tp in (*(spec.sends or ()), *(spec.yields or ())):
                registry.register_annotation(tp)
        for spec in executor.response_handlers:
            for tp in (spec.request_type, spec.response_type, *(spec.sends or ())):
                registry.register_annotation(tp)
    return registry


def _plan_of(executor: Executor, targets: frozenset[str], edges: tuple[Edge, ...]) -> ExecutorPlan:
    stateful = executor.is_stateful
    timeout = executor.retry.timeout_s if executor.retry is not None else None
    own_dispatch = type(executor)._handle is Executor._handle  # pyright: ignore[reportPrivateUsage]
    direct = not stateful and timeout is None and own_dispatch
    plain = edges if all(is_plain(edge) for edge in edges) else None
    return ExecutorPlan(executor, stateful, targets, timeout, _direct_targets(edges), plain, direct)


def _direct_targets(edges: tuple[Edge, ...]) -> tuple[str, ...] | None:
    if all(e.kind is EdgeKind.DIRECT and e.conditions[0] is None for e in edges):
        return tuple(e.targets[0] for e in edges)
    return None
