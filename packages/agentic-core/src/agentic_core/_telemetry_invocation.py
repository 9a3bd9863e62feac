"""The ``executor.process`` span and executor metrics, and the span helpers the engine shares.

Kept apart from the run and superstep spans (``_telemetry_spans``) because ``CompiledGraph``
imports it: it must not depend on the run state module, which depends on the graph.
"""

from __future__ import annotations

import asyncio
from collections.abc import Generator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from agentic_core._telemetry import tracer
from agentic_core._telemetry_metrics import Instruments, instruments

if TYPE_CHECKING:
    from contextvars import Token

    from opentelemetry.context import Context
    from opentelemetry.trace import Span, Tracer

    from agentic_core.protocols._runtime import Invocation, InvocationResult

__all__ = [
    "CANCELLED",
    "FAILED",
    "InvocationObservation",
    "activate",
    "mark_error",
    "observe_invocation",
    "status_of",
]

FAILED = "failed"
CANCELLED = "cancelled"


@contextmanager
def activate(span: Span | None) -> Generator[None]:
    """``span`` is the current span inside the block (nothing happens for None)."""
    if span is None:
        yield
        return
    from opentelemetry import context, trace

    token = context.attach(trace.set_span_in_context(span))
    try:
        yield
    finally:
        context.detach(token)


def mark_error(span: Span, exc: BaseException | None, description: str) -> None:
    """Give ``span`` the ERROR status, the exception recorded and its ``error.type``."""
    from opentelemetry.trace import Status, StatusCode

    span.set_status(Status(StatusCode.ERROR, description))
    if exc is not None:
        span.record_exception(exc)
        span.set_attribute("error.type", type(exc).__qualname__)


def status_of(exc: BaseException) -> str:
    cancelled = isinstance(exc, asyncio.CancelledError | GeneratorExit | KeyboardInterrupt)
    return CANCELLED if cancelled else FAILED


class InvocationObservation:
    """The ``executor.process`` span (current while the executor runs) and executor metrics."""

    __slots__ = ("_attributes", "_instruments", "_span", "_token")

    def __init__(
        self,
        tracer: Tracer | None,
        metrics: Instruments | None,
        invocation: Invocation,
        workflow_name: str,
    ) -> None:
        self._instruments = metrics
        self._attributes = {
            "agentic.executor.id": invocation.executor_id,
            "agentic.workflow.name": workflow_name,
        }
        self._span: Span | None = None
        self._token: Token[Context] | None = None
        if tracer is not None:
            from opentelemetry import context, trace

            self._span = tracer.start_span(
                f"executor.process {invocation.executor_id}",
                attributes={
                    "agentic.executor.id": invocation.executor_id,
                    "agentic.run.id": invocation.run_id,
                    "agentic.superstep": invocation.superstep,
                    "agentic.attempt": invocation.attempt,
                    "agentic.invocation.id": invocation.invocation_id,
                },
            )
            self._token = context.attach(trace.set_span_in_context(self._span))
        if metrics is not None and invocation.attempt > 1:
            metrics.executor_retries.add(1, self._attributes)

    def end(self, result: InvocationResult) -> None:
        """The invocation finished (its failure, if any, is in ``result.error``)."""
        error = result.error
        metrics = self._instruments
        if metrics is not None:
            metrics.executor_duration.record(result.duration_s, self._attributes)
            if error is not None:
                metrics.executor_failures.add(
                    1, {**self._attributes, "error.type": error.error_type}
                )
        span = self._close()
        if span is not None:
            if error is not None:
                mark_error(span, result.exception, f"{error.error_type}: {error.message}")
                span.set_attribute("error.type", error.error_type)
            span.end()

    def abort(self, exc: BaseException) -> None:
        """The invocation raised ``exc`` instead of returning (cancelled, or a broken state)."""
        span = self._close()
        if span is not None:
            mark_error(span, exc, f"{type(exc).__name__}: {exc}")
            span.end()

    def _close(self) -> Span | None:
        if self._token is not None:
            from opentelemetry import context

            context.detach(self._token)
            self._token = None
        return self._span


def observe_invocation(invocation: Invocation, workflow_name: str) -> InvocationObservation | None:
    """What to record of one executor invocation; None when telemetry is off."""
    current_tracer = tracer()
    metrics = instruments()
    if current_tracer is None and metrics is None:
        return None
    return InvocationObservation(current_tracer, metrics, invocation, workflow_name)
