"""Trace context on the wire: task messages and remote-agent requests carry ``traceparent`` only
while an OpenTelemetry SDK provider is installed, and the far side continues that trace.

A real nats-server; workers and agent servers in this process but started before the caller's
span, in tasks of their own, so their spans join the caller's trace only through the headers.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Never

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agentic_bus import NatsBus, NatsEventSink, NatsRuntime, PoolSettings, Worker
from agentic_bus._agent_proxy import ProxyAgent
from agentic_bus._agent_server import serve_agent
from agentic_bus._subjects import Subjects
from agentic_bus._task_wire import TaskMessage
from agentic_core import (
    BusMessage,
    ChatAgent,
    ChatMessage,
    ChatOptions,
    Workflow,
    WorkflowBuilder,
    WorkflowContext,
    WorkflowStartedEvent,
    executor,
)
from agentic_core.testing import FunctionChatClient
from tests.fixtures.otel import sdk_spans

SETTINGS = PoolSettings(ack_wait_s=1.0, max_deliver=3)
TRACEPARENT = "traceparent"


# -- telemetry on and off -----------------------------------------------------------------------


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    """An SDK tracer provider for this test (telemetry on); the OTel globals reset after it."""
    with sdk_spans() as exporter:
        yield exporter


def ancestors(span: ReadableSpan, finished: list[ReadableSpan]) -> list[str]:
    """The names of ``span``'s ancestors among ``finished``, nearest first."""
    by_id = {s.context.span_id: s for s in finished if s.context is not None}
    names: list[str] = []
    parent = span.parent
    while parent is not None and parent.span_id in by_id:
        found = by_id[parent.span_id]
        names.append(found.name)
        parent = found.parent
    return names


def trace_id_of(span: ReadableSpan) -> int:
    assert span.context is not None
    return span.context.trace_id


def traceparent_ids(headers: dict[str, str]) -> tuple[int, int]:
    """The trace id and parent span id a W3C ``traceparent`` header names."""
    _, trace_id, span_id, _ = headers[TRACEPARENT].split("-")
    return int(trace_id, 16), int(span_id, 16)


def named(exporter: InMemorySpanExporter, name: str) -> ReadableSpan:
    matches = [s for s in exporter.get_finished_spans() if s.name == name]
    assert len(matches) == 1, [s.name for s in exporter.get_finished_spans()]
    return matches[0]


# -- a two-executor workflow whose second executor starts a span of its own ----------------------


@executor
async def draft(text: str, ctx: WorkflowContext[str]) -> None:
    await ctx.send_message(text.upper())


@executor
async def publish(text: str, ctx: WorkflowContext[Never, str]) -> None:
    with trace.get_tracer("test").start_as_current_span("publish.body"):
        await ctx.yield_output(text + "!")


def two_steps() -> Workflow:
    name = f"trace-{uuid.uuid4().hex[:8]}"  # its own pool: no other test's worker takes it
    return WorkflowBuilder(name).set_start_executor(draft).add_edge(draft, publish).build()


@contextlib.asynccontextmanager
async def worker(workflow: Workflow, url: str) -> AsyncIterator[Worker]:
    started = Worker(workflow, url, slots=2, settings=SETTINGS)
    serving = asyncio.create_task(started.run())
    await started.wait_ready()
    try:
        yield started
    finally:
        started.stop()
        await serving


async def run_capturing_tasks(
    workflow: Workflow, url: str, caller_span: str | None
) -> list[dict[str, str]]:
    """Run ``workflow`` on NatsRuntime (inside a span named ``caller_span`` if given); the
    headers of its task messages, as a plain subscriber of the task subjects saw them."""
    seen: list[dict[str, str]] = []
    async with worker(workflow, url), NatsBus(url) as bus, NatsRuntime(url) as runtime:
        tasks = await bus.subscribe(f"{Subjects().prefix}.task.>")
        with contextlib.ExitStack() as stack:
            if caller_span is not None:
                tracer = trace.get_tracer("test")
                stack.enter_context(tracer.start_as_current_span(caller_span))
            result = await workflow.run("hi", runtime=runtime)
        while len(seen) < 2:  # one task per executor, buffered since before the run
            message = await asyncio.wait_for(anext(tasks), timeout=10)
            if TaskMessage.model_validate_json(message.data).workflow_name == workflow.name:
                seen.append(message.headers)
    assert result.get_outputs() == ["HI!"]
    return seen


# -- task messages ------------------------------------------------------------------------------


async def test_a_task_carries_no_trace_context_without_telemetry(nats_server: str) -> None:
    headers = await run_capturing_tasks(two_steps(), nats_server, caller_span=None)

    assert len(headers) == 2
    for task_headers in headers:
        assert "Nats-Msg-Id" in task_headers
        assert TRACEPARENT not in task_headers
        assert "tracestate" not in task_headers


async def test_a_task_carries_the_callers_trace_and_the_worker_continues_it(
    nats_server: str, spans: InMemorySpanExporter
) -> None:
    headers = await run_capturing_tasks(two_steps(), nats_server, caller_span="caller")

    caller = named(spans, "caller")
    body = named(spans, "publish.body")
    assert len(headers) == 2
    assert all(traceparent_ids(h)[0] == trace_id_of(caller) for h in headers)
    # Without the headers the worker's span would start a trace of its own (its task began
    # before the caller's span existed); with them it descends from the caller.
    assert trace_id_of(body) == trace_id_of(caller)
    assert "caller" in ancestors(body, list(spans.get_finished_spans()))


# -- remote agents ------------------------------------------------------------------------------


def traced_echo(messages: list[ChatMessage], options: ChatOptions | None) -> str:
    with trace.get_tracer("test").start_as_current_span("served.reply"):
        return f"heard {messages[-1].text}"


async def call_remote_agent(url: str, *, stream: bool, caller_span: str | None) -> BusMessage:
    """One ProxyAgent call to an agent served in this process (on its own connection); the
    request as a plain subscriber of the agent's subject saw it."""
    agent_id = f"traced-{uuid.uuid4().hex[:8]}"
    agent = ChatAgent(FunctionChatClient(traced_echo), id=agent_id)
    kind = "stream" if stream else "run"
    async with NatsBus(url) as server_bus, NatsBus(url) as caller_bus:
        spy = await caller_bus.subscribe(Subjects().agent(agent_id, kind))
        async with await serve_agent(agent, server_bus):
            proxy = ProxyAgent(agent_id, caller_bus, timeout_s=10)
            with contextlib.ExitStack() as stack:
                if caller_span is not None:
                    tracer = trace.get_tracer("test")
                    stack.enter_context(tracer.start_as_current_span(caller_span))
                if stream:
                    text = "".join([u.text async for u in proxy.run_stream("hello")])
                else:
                    text = (await proxy.run("hello")).text
        request = await asyncio.wait_for(anext(spy), timeout=5)
    assert text == "heard hello"
    return request


async def test_an_agent_request_carries_no_trace_context_without_telemetry(
    nats_server: str,
) -> None:
    request = await call_remote_agent(nats_server, stream=False, caller_span=None)

    assert TRACEPARENT not in request.headers


@pytest.mark.parametrize("stream", [False, True], ids=["run", "run_stream"])
async def test_a_served_agent_call_continues_the_callers_trace(
    nats_server: str, spans: InMemorySpanExporter, stream: bool
) -> None:
    request = await call_remote_agent(nats_server, stream=stream, caller_span="caller")

    caller = named(spans, "caller")
    served = named(spans, "served.reply")
    assert traceparent_ids(request.headers)[0] == trace_id_of(caller)
    assert trace_id_of(served) == trace_id_of(caller)
    assert "caller" in ancestors(served, list(spans.get_finished_spans()))


# -- events ---------------------------------------------------------------------------------------


async def emit_one_event(url: str, caller_span: str | None) -> BusMessage:
    """One event through NatsEventSink; the message as a plain subscriber saw it."""
    run_id = f"traced-{uuid.uuid4().hex[:8]}"
    async with NatsBus(url) as bus, NatsEventSink(url) as sink:
        spy = await bus.subscribe(Subjects().workflow_all(run_id))
        with contextlib.ExitStack() as stack:
            if caller_span is not None:
                stack.enter_context(trace.get_tracer("test").start_as_current_span(caller_span))
            event = WorkflowStartedEvent(run_id=run_id, workflow_id="wf")
            await sink.emit(event, run_id=run_id, workflow_id="wf")
        return await asyncio.wait_for(anext(spy), timeout=5)


async def test_an_event_carries_no_trace_context_without_telemetry(nats_server: str) -> None:
    message = await emit_one_event(nats_server, caller_span=None)

    assert TRACEPARENT not in message.headers


async def test_an_event_carries_the_trace_it_was_emitted_in(
    nats_server: str, spans: InMemorySpanExporter
) -> None:
    message = await emit_one_event(nats_server, caller_span="caller")

    caller = named(spans, "caller")
    assert caller.context is not None
    assert traceparent_ids(message.headers) == (caller.context.trace_id, caller.context.span_id)
