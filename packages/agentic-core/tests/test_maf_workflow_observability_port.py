"""Microsoft Agent Framework's workflow observability tests, ported to agentic.

From ``python/packages/core/tests/workflow/test_workflow_observability.py`` of
microsoft/agent-framework: ``test_end_to_end_workflow_tracing`` (a fan-out/fan-in workflow:
one ``workflow.run`` span with ``workflow.started``/``workflow.completed`` events and one
``executor.process <id>`` span per executor) and ``test_workflow_error_handling_in_tracing`` (a
failing executor: ``workflow.error`` event and ERROR status). MAF's attribute ``executor.id`` is
``agentic.executor.id`` here; MAF's ``workflow.build`` and ``message.send`` spans have no
counterpart (a graph is compiled without I/O, and messages are routed at the barrier inside the
``workflow.superstep`` span, so the aggregator's span is a child of its superstep, not linked).
"""

from __future__ import annotations

from typing import Any, Never

import pytest

from agentic_core import Executor, WorkflowBuilder, WorkflowContext, WorkflowExecutionError, handler

from .conftest import Telemetry


class MockExecutor(Executor):
    def __init__(self, id: str = "mock_executor") -> None:  # noqa: A002 - as in MAF
        super().__init__(id=id)
        self.processed_messages: list[str] = []

    @handler
    async def handle_message(self, message: str, ctx: WorkflowContext[str]) -> None:
        self.processed_messages.append(message)
        await ctx.send_message(f"processed: {message}")


class ProcessingExecutor(Executor):
    def __init__(self, id: str, prefix: str = "processed") -> None:  # noqa: A002 - as in MAF
        super().__init__(id=id)
        self.processed_messages: list[str] = []
        self._prefix = prefix

    @handler
    async def handle_message(self, message: str, ctx: WorkflowContext[str]) -> None:
        self.processed_messages.append(message)
        await ctx.send_message(f"{self._prefix}: {message}")


class FanInAggregator(Executor):
    def __init__(self, id: str = "aggregator") -> None:  # noqa: A002 - as in MAF
        super().__init__(id=id)
        self.processed_messages: list[Any] = []

    @handler
    async def handle_aggregated_data(self, messages: list[str], ctx: WorkflowContext) -> None:
        self.processed_messages.append(f"aggregated: {', '.join(messages)}")


async def test_end_to_end_workflow_tracing(telemetry: Telemetry) -> None:
    executor1 = MockExecutor("executor1")
    executor2 = ProcessingExecutor("executor2", "second")
    executor3 = ProcessingExecutor("executor3", "third")
    aggregator = FanInAggregator("aggregator")
    workflow = (
        WorkflowBuilder()
        .set_start_executor(executor1)
        .add_fan_out_edge(executor1, [executor2, executor3])
        .add_fan_in_edge([executor2, executor3], aggregator)
        .build()
    )

    events = [event async for event in workflow.run_stream("test input")]

    assert events
    assert executor1.processed_messages == ["test input"]
    assert executor2.processed_messages == ["processed: test input"]
    assert executor3.processed_messages == ["processed: test input"]
    assert len(aggregator.processed_messages) == 1
    assert "second: processed: test input" in aggregator.processed_messages[0]
    assert "third: processed: test input" in aggregator.processed_messages[0]

    spans = telemetry.spans()
    workflow_spans = [s for s in spans if s.name == "workflow.run"]
    processing = [s for s in spans if (s.attributes or {}).get("agentic.executor.id") is not None]
    processing = [s for s in processing if s.name.startswith("executor.process ")]
    assert len(workflow_spans) == 1
    assert sorted(s.attributes["agentic.executor.id"] for s in processing) == [
        "aggregator",
        "executor1",
        "executor2",
        "executor3",
    ]
    assert {s.name for s in processing} == {
        "executor.process executor1",
        "executor.process executor2",
        "executor.process executor3",
        "executor.process aggregator",
    }
    workflow_span = workflow_spans[0]
    event_names = [event.name for event in workflow_span.events]
    assert "workflow.started" in event_names
    assert "workflow.completed" in event_names
    assert workflow_span.attributes["agentic.workflow.id"] == workflow.id
    # Every executor span belongs to the run's trace, under one of its superstep spans.
    steps = {s.context.span_id: s for s in spans if s.name == "workflow.superstep"}
    assert all(s.context.trace_id == workflow_span.context.trace_id for s in processing)
    assert all(s.parent is not None and s.parent.span_id in steps for s in processing)
    (aggregator_span,) = (s for s in processing if s.name == "executor.process aggregator")
    (fan_out_span,) = (s for s in processing if s.name == "executor.process executor2")
    assert steps[aggregator_span.parent.span_id].attributes["agentic.superstep"] == 2
    assert steps[fan_out_span.parent.span_id].attributes["agentic.superstep"] == 1


async def test_workflow_error_handling_in_tracing(telemetry: Telemetry) -> None:
    class FailingExecutor(Executor):
        def __init__(self) -> None:
            super().__init__(id="failing_executor")

        @handler
        async def handle_message(self, message: str, ctx: WorkflowContext[Never]) -> None:
            raise ValueError("Test error")

    workflow = WorkflowBuilder().set_start_executor(FailingExecutor()).build()

    # run() raises; run_stream() ends with a WorkflowFailedEvent: both leave an errored span.
    with pytest.raises(WorkflowExecutionError, match="Test error"):
        await workflow.run("test input")
    async for _ in workflow.run_stream("test input"):
        pass

    workflow_spans = [s for s in telemetry.spans() if s.name == "workflow.run"]
    assert len(workflow_spans) == 2
    for workflow_span in workflow_spans:
        event_names = [event.name for event in workflow_span.events]
        assert "workflow.started" in event_names
        assert "workflow.error" in event_names
        assert "workflow.completed" not in event_names
        assert workflow_span.status.status_code.name == "ERROR"
