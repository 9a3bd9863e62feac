"""OpenTelemetry spans and metrics of workflow runs, supersteps and executor invocations."""

from __future__ import annotations

import subprocess
import sys
from typing import Any, Never

import pytest

from agentic_core import (
    RetryPolicy,
    Runtime,
    Workflow,
    WorkflowBuilder,
    WorkflowContext,
    WorkflowExecutionError,
    WorkflowFailedEvent,
    WorkflowRunState,
    executor,
)

Telemetry = Any
"""The ``telemetry`` fixture (conftest.py): spans(), span(name), points(metric), exporter."""


def _fan_out_workflow() -> Workflow:
    """split -> (left, right): three executors in two supersteps."""

    @executor(id="split")
    async def split(n: int, ctx: WorkflowContext[int]) -> None:
        await ctx.send_message(n)

    @executor(id="left")
    async def left(n: int, ctx: WorkflowContext[Never, int]) -> None:
        await ctx.yield_output(n + 1)

    @executor(id="right")
    async def right(n: int, ctx: WorkflowContext[Never, int]) -> None:
        await ctx.yield_output(n + 2)

    return (
        WorkflowBuilder("fan").set_start_executor(split)
        .add_fan_out_edge(split, [left, right]).build()
    )  # fmt: skip


def _assert_fan_out_tree(telemetry: Telemetry, run_id: str) -> None:
    run = telemetry.span("workflow.run")
    assert run.parent is None
    steps = sorted(
        (s for s in telemetry.spans() if s.name == "workflow.superstep"),
        key=lambda s: s.attributes["agentic.superstep"],
    )
    assert [s.attributes["agentic.superstep"] for s in steps] == [0, 1]
    assert [list(s.attributes["agentic.executor_ids"]) for s in steps] == [
        ["split"],
        ["left", "right"],
    ]
    for step in steps:
        assert step.parent.span_id == run.context.span_id
        assert step.attributes["agentic.run.id"] == run_id
    by_step = {s.attributes["agentic.superstep"]: s.context.span_id for s in steps}
    executors = [s for s in telemetry.spans() if s.name.startswith("executor.process ")]
    assert sorted(s.name for s in executors) == [
        "executor.process left",
        "executor.process right",
        "executor.process split",
    ]
    for span in executors:
        superstep = span.attributes["agentic.superstep"]
        assert span.parent.span_id == by_step[superstep]
        assert span.context.trace_id == run.context.trace_id
        assert span.attributes["agentic.run.id"] == run_id
        assert span.attributes["agentic.attempt"] == 1
        executor_id = span.attributes["agentic.executor.id"]
        assert span.name == f"executor.process {executor_id}"
        assert span.attributes["agentic.invocation.id"] == f"{run_id}.{superstep}.{executor_id}.1"


async def test_run_makes_a_span_tree_run_superstep_executor(
    telemetry: Telemetry, runtime: Runtime
) -> None:
    workflow = _fan_out_workflow()

    result = await workflow.run(1, runtime=runtime)

    assert sorted(result.outputs) == [2, 3]
    _assert_fan_out_tree(telemetry, result.run_id)
    run = telemetry.span("workflow.run")
    assert run.attributes["agentic.workflow.id"] == workflow.id
    assert run.attributes["agentic.workflow.name"] == "fan"
    assert run.attributes["agentic.run.resumed"] is False
    assert run.attributes["agentic.run.status"] == "completed"
    assert run.attributes["agentic.run.superstep_count"] == 2
    assert run.status.is_ok


async def test_run_stream_makes_the_same_tree_and_no_span_is_current_between_events(
    telemetry: Telemetry, runtime: Runtime
) -> None:
    from opentelemetry import trace

    current_while_consuming: list[bool] = []
    run_id = ""
    async for event in _fan_out_workflow().run_stream(1, runtime=runtime):
        current_while_consuming.append(trace.get_current_span().get_span_context().is_valid)
        run_id = getattr(event, "run_id", None) or run_id

    _assert_fan_out_tree(telemetry, run_id)
    assert telemetry.span("workflow.run").attributes["agentic.run.status"] == "completed"
    assert not any(current_while_consuming)


async def test_the_executor_span_is_current_while_the_handler_runs(telemetry: Telemetry) -> None:
    from opentelemetry import trace

    seen: list[Any] = []

    @executor(id="probe")
    async def probe(n: int, ctx: WorkflowContext[Never, int]) -> None:
        seen.append(trace.get_current_span())
        await ctx.yield_output(n)

    await WorkflowBuilder().set_start_executor(probe).build().run(1)

    assert seen[0].get_span_context().span_id == (
        telemetry.span("executor.process probe").context.span_id
    )


async def test_a_failing_executor_is_retried_under_error_spans_and_counted(
    telemetry: Telemetry, runtime: Runtime
) -> None:
    @executor(id="broken", retry=RetryPolicy(max_attempts=2))
    async def broken(n: int, ctx: WorkflowContext) -> None:
        raise ZeroDivisionError("no way")

    workflow = WorkflowBuilder("failing").set_start_executor(broken).build()
    with pytest.raises(WorkflowExecutionError):
        await workflow.run(1, runtime=runtime)

    attempts = sorted(
        (s for s in telemetry.spans() if s.name == "executor.process broken"),
        key=lambda s: s.attributes["agentic.attempt"],
    )
    assert [s.attributes["agentic.attempt"] for s in attempts] == [1, 2]
    for span in attempts:
        assert not span.status.is_ok
        assert "ZeroDivisionError: no way" in (span.status.description or "")
        assert span.attributes["error.type"] == "ZeroDivisionError"
    step = telemetry.span("workflow.superstep")
    assert {s.parent.span_id for s in attempts} == {step.context.span_id}
    assert not step.status.is_ok
    run = telemetry.span("workflow.run")
    assert not run.status.is_ok
    assert run.attributes["agentic.run.status"] == "failed"
    assert [event.name for event in run.events] == [
        "workflow.started",
        "workflow.error",
        "exception",
    ]
    assert run.events[-1].attributes["exception.type"].endswith("WorkflowExecutionError")
    assert sum(p.value for p in telemetry.points("agentic.executor.retries")) == 1
    assert sum(p.value for p in telemetry.points("agentic.executor.failures")) == 2
    runs = telemetry.points("agentic.workflow.runs")
    assert [(p.attributes["agentic.run.status"], p.value) for p in runs] == [("failed", 1)]


async def test_the_local_runtime_records_the_executor_exception(telemetry: Telemetry) -> None:
    @executor(id="broken")
    async def broken(n: int, ctx: WorkflowContext) -> None:
        raise KeyError("missing")

    with pytest.raises(WorkflowExecutionError):
        await WorkflowBuilder().set_start_executor(broken).build().run(1)

    span = telemetry.span("executor.process broken")
    assert [e.attributes["exception.type"] for e in span.events] == ["KeyError"]


async def test_a_failed_stream_ends_its_spans_with_error(telemetry: Telemetry) -> None:
    @executor(id="broken")
    async def broken(n: int, ctx: WorkflowContext) -> None:
        raise RuntimeError("stream breaks")

    events = [e async for e in WorkflowBuilder().set_start_executor(broken).build().run_stream(1)]

    assert isinstance(events[-1], WorkflowFailedEvent)
    assert not telemetry.span("workflow.superstep").status.is_ok
    assert telemetry.span("workflow.run").attributes["agentic.run.status"] == "failed"


async def test_metrics_count_supersteps_runs_and_executor_durations(
    telemetry: Telemetry,
) -> None:
    @executor(id="flaky", retry=RetryPolicy(max_attempts=2))
    async def flaky(n: int, ctx: WorkflowContext[Never, int]) -> None:
        if ctx.attempt == 1:
            raise RuntimeError("first attempt fails")
        await ctx.yield_output(n)

    workflow = _fan_out_workflow()
    await workflow.run(1)
    await workflow.run(2)
    result = await WorkflowBuilder("flaky").set_start_executor(flaky).build().run(3)

    assert result.status is WorkflowRunState.COMPLETED
    supersteps = {
        p.attributes["agentic.workflow.name"]: p.value
        for p in telemetry.points("agentic.workflow.supersteps")
    }
    assert supersteps == {"fan": 4, "flaky": 1}
    runs = telemetry.points("agentic.workflow.runs")
    assert sum(p.value for p in runs if p.attributes["agentic.run.status"] == "completed") == 3
    durations = {
        (p.attributes["agentic.workflow.name"], p.attributes["agentic.executor.id"]): p.count
        for p in telemetry.points("agentic.executor.duration")
    }
    assert durations == {
        ("fan", "split"): 2,
        ("fan", "left"): 2,
        ("fan", "right"): 2,
        ("flaky", "flaky"): 2,
    }
    assert sum(p.value for p in telemetry.points("agentic.executor.retries")) == 1
    failures = telemetry.points("agentic.executor.failures")
    assert [(p.attributes["error.type"], p.value) for p in failures] == [("RuntimeError", 1)]


async def test_a_resumed_run_says_so(telemetry: Telemetry) -> None:
    from agentic_core import InMemoryCheckpointStore

    workflow = _fan_out_workflow()
    store = InMemoryCheckpointStore()
    first = await workflow.run(1, checkpoint_store=store)
    history = await workflow.get_run_history(first.run_id, checkpoint_store=store)
    telemetry.exporter.clear()

    await workflow.run(checkpoint_id=history[0].id, checkpoint_store=store)

    run = telemetry.span("workflow.run")
    assert run.attributes["agentic.run.resumed"] is True
    assert run.attributes["agentic.run.id"] == first.run_id


async def test_without_an_sdk_provider_no_span_is_current_in_executors(runtime: Runtime) -> None:
    from opentelemetry import trace

    from agentic_core._telemetry import meter, tracer

    valid: list[bool] = []

    @executor(id="probe")
    async def probe(n: int, ctx: WorkflowContext[Never, int]) -> None:
        valid.append(trace.get_current_span().get_span_context().is_valid)
        await ctx.yield_output(n)

    await WorkflowBuilder().set_start_executor(probe).build().run(1, runtime=runtime)

    assert (tracer(), meter()) == (None, None)
    assert valid == [False]


def test_importing_and_running_agentic_core_never_imports_opentelemetry() -> None:
    code = """
import asyncio, sys
from typing import Never
from agentic_core import ChatAgent, WorkflowBuilder, WorkflowContext, executor
from agentic_core.testing import ScriptedChatClient

@executor(id="one")
async def one(n: int, ctx: WorkflowContext[Never, int]) -> None:
    await ctx.yield_output(n)

async def main() -> None:
    await WorkflowBuilder().set_start_executor(one).build().run(1)
    async for _ in WorkflowBuilder().set_start_executor(one).build().run_stream(1):
        pass
    await ChatAgent(ScriptedChatClient(["hi"])).run("hello")

asyncio.run(main())
print(sorted(m for m in sys.modules if m.startswith("opentelemetry")))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_tracing_enabled_only_with_an_sdk_tracer_provider(telemetry: Telemetry) -> None:
    from agentic_core import tracing_enabled

    assert tracing_enabled()
    del telemetry


def test_tracing_is_not_enabled_by_the_default_proxy_provider() -> None:
    from opentelemetry import trace

    from agentic_core import tracing_enabled

    assert isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)
    assert not tracing_enabled()


def test_the_off_check_does_not_ask_the_api_while_no_provider_is_set(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The API's getters look the provider's environment variable up on every call (1-2 µs,
    # per invocation and agent turn): the check reads the API's globals instead.
    from opentelemetry import metrics, trace

    from agentic_core import tracing_enabled
    from agentic_core._telemetry import meter, tracer

    def asked() -> Never:
        raise AssertionError("the telemetry-off check called the API's provider getter")

    monkeypatch.setattr(trace, "get_tracer_provider", asked)
    monkeypatch.setattr(metrics, "get_meter_provider", asked)

    assert not tracing_enabled()
    assert tracer() is None
    assert meter() is None


def test_a_provider_named_by_the_environment_turns_telemetry_on() -> None:
    # OTEL_PYTHON_TRACER_PROVIDER / OTEL_PYTHON_METER_PROVIDER name a provider the API loads on
    # first use: the check must still find it (a fresh process: providers are set once).
    code = """
import opentelemetry.metrics, opentelemetry.trace
from agentic_core import tracing_enabled
from agentic_core._telemetry import meter, tracer
print(tracing_enabled(), tracer() is not None, meter() is not None)
"""
    env = {
        **__import__("os").environ,
        "OTEL_PYTHON_TRACER_PROVIDER": "sdk_tracer_provider",
        "OTEL_PYTHON_METER_PROVIDER": "sdk_meter_provider",
    }
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    assert out.stdout.strip() == "True True True", out.stderr
