"""The engine's run spans and metrics: ``workflow.run`` and ``workflow.superstep``.

``executor.process`` lives in ``_telemetry_invocation``.

Made only while telemetry is on (``_telemetry.tracer()``/``meter()``): the engine asks once
per run (``observe_run``) and once per invocation (``observe_invocation``) and gets None when
both are off, so the rest of this module never runs and OpenTelemetry is never imported by us.

A span is made *current* only around awaits that run our own code (never across a stream's
``yield``): a consumer of ``run_stream`` must not find our span current in its loop body, and a
context attached in one task must be detached in that same task.
"""

from __future__ import annotations

import sys
from collections.abc import Generator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING

from agentic_core._telemetry import tracer
from agentic_core._telemetry_invocation import CANCELLED, FAILED, activate, mark_error, status_of
from agentic_core._telemetry_metrics import Instruments, instruments

if TYPE_CHECKING:
    from opentelemetry.trace import Span, Tracer

    from agentic_core.graph._run_state import RunState
    from agentic_core.protocols._runtime import Invocation

__all__ = ["RunObservation", "observe_run"]


class RunObservation:
    """The ``workflow.run`` span (and its superstep spans) and run metrics of one call."""

    __slots__ = ("_first_superstep", "_instruments", "_run", "_tracer", "span", "step")

    def __init__(
        self, tracer: Tracer | None, metrics: Instruments | None, run: RunState, resumed: bool
    ) -> None:
        self._tracer = tracer
        self._instruments = metrics
        self._run = run
        self._first_superstep = run.superstep
        self.span: Span | None = None
        self.step: Span | None = None
        """The open ``workflow.superstep`` span, if any."""
        if tracer is not None:
            graph = run.graph
            self.span = tracer.start_span(
                "workflow.run",
                attributes={
                    "agentic.workflow.id": graph.id,
                    "agentic.workflow.name": graph.name,
                    "agentic.run.id": run.run_id,
                    "agentic.run.resumed": resumed,
                },
            )
            self.span.add_event("workflow.started")  # span events as MAF's workflow.run has

    def current(self) -> AbstractContextManager[None]:
        """A context manager: the run span is current inside it."""
        return activate(self.span)

    def start_superstep(self, invocations: Sequence[Invocation]) -> None:
        """Open the ``workflow.superstep`` span of the superstep about to run ``invocations``."""
        if self._tracer is None or self.span is None:
            return
        from opentelemetry import trace

        run = self._run
        self.step = self._tracer.start_span(
            "workflow.superstep",
            context=trace.set_span_in_context(self.span),
            attributes={
                "agentic.run.id": run.run_id,
                "agentic.superstep": run.superstep,
                "agentic.executor_ids": list(dict.fromkeys(i.executor_id for i in invocations)),
            },
        )

    def in_superstep(self) -> AbstractContextManager[None]:
        """A context manager: the open superstep span is current inside it (what a runtime
        propagates to remote executors)."""
        return activate(self.step)

    def end_superstep(self, exc: BaseException | None = None) -> None:
        """Close the superstep span (with ERROR when ``exc`` ended it)."""
        step, self.step = self.step, None
        if step is None:
            return
        if exc is not None:
            mark_error(step, exc, f"{type(exc).__name__}: {exc}")
        step.end()

    @contextmanager
    def superstep(self, invocations: Sequence[Invocation]) -> Generator[None]:
        """Open, make current and close the span of one superstep around the block."""
        self.start_superstep(invocations)
        try:
            with activate(self.step):
                yield
        except BaseException as exc:
            self.end_superstep(exc)
            raise
        self.end_superstep()

    def end(self, status: str) -> None:
        """The call ended with ``status`` (a ``WorkflowRunState`` value): close and count."""
        supersteps = self._run.superstep
        if self.span is not None:
            if status not in (FAILED, CANCELLED):
                self.span.add_event("workflow.completed", {"agentic.run.status": status})
            self.span.set_attribute("agentic.run.status", status)
            self.span.set_attribute("agentic.run.superstep_count", supersteps)
            self.span.end()
        metrics = self._instruments
        if metrics is not None:
            attributes = {"agentic.workflow.name": self._run.graph.name}
            done = supersteps - self._first_superstep
            if done > 0:
                metrics.workflow_supersteps.add(done, attributes)
            metrics.workflow_runs.add(1, {**attributes, "agentic.run.status": status})

    def fail(self, exc: BaseException) -> None:
        """The call raised ``exc`` (or was cancelled): ERROR on the open spans, then ``end``."""
        self.end_superstep(exc)
        if self.span is not None:
            self.span.add_event("workflow.error", {"error.type": type(exc).__qualname__})
            mark_error(self.span, exc, f"{type(exc).__name__}: {exc}")
        self.end(status_of(exc))


def observe_run(run: RunState, *, resumed: bool) -> RunObservation | None:
    """What to record of one ``run``/``run_stream`` call; None when telemetry is off."""
    if "opentelemetry" not in sys.modules:  # not even imported: surely off
        return None
    current_tracer = tracer()
    metrics = instruments()
    if current_tracer is None and metrics is None:
        return None
    return RunObservation(current_tracer, metrics, run, resumed)
