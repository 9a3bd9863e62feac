"""The workflow, the remote agent and the span files of the distributed-trace test.

Imported by every process of ``test_distributed_trace.py`` (coordinator, worker, agent server):
on import it installs an OpenTelemetry SDK tracer provider when ``AGENTIC_TRACE_FILE`` is set,
exporting each finished span as one JSON line to that file, with the process's
``AGENTIC_TRACE_SERVICE`` and pid. Doing it here, in the module that defines the worker's
factory, is how a worker started with ``agentic-worker distributed_trace_graph:build`` gets
telemetry (the way the agentic-bus README suggests).

The workflow: ``draft`` -> ``ask`` (calls the agent served as ``AGENTIC_TRACE_AGENT`` through a
``ProxyAgent``, on ``AGENTIC_NATS_URL``) -> ``finish``. Each executor body starts a span
``body <executor id>``, and the served agent's model a span ``served.reply``, so the trace has
spans of every process even where the engine itself makes none.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Never

from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

from agentic_bus import NatsBus
from agentic_bus._agent_proxy import ProxyAgent
from agentic_core import (
    ChatAgent,
    ChatMessage,
    ChatOptions,
    Workflow,
    WorkflowBuilder,
    WorkflowContext,
    executor,
)
from agentic_core.testing import FunctionChatClient

WORKFLOW_NAME = "distributed-trace"


class JsonLinesSpanExporter(SpanExporter):
    """Appends each finished span to ``path`` as one JSON object per line."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._lock = threading.Lock()

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        lines = [json.dumps(_span_record(span)) + "\n" for span in spans]
        with self._lock, self._path.open("a", encoding="utf-8") as file:
            file.writelines(lines)
        return SpanExportResult.SUCCESS


def _span_record(span: ReadableSpan) -> dict[str, object]:
    context = span.context
    assert context is not None
    parent = span.parent
    resource = span.resource.attributes
    return {
        "name": span.name,
        "trace_id": format(context.trace_id, "032x"),
        "span_id": format(context.span_id, "016x"),
        "parent_span_id": None if parent is None else format(parent.span_id, "016x"),
        "service": resource.get("service.name"),
        "pid": resource.get("process.pid"),
        "attributes": {key: str(value) for key, value in (span.attributes or {}).items()},
    }


def configure_tracing_from_env() -> TracerProvider | None:
    """Install a provider writing to ``AGENTIC_TRACE_FILE`` (if set); None otherwise."""
    path = os.environ.get("AGENTIC_TRACE_FILE")
    if not path:
        return None
    resource = Resource.create(
        {
            "service.name": os.environ.get("AGENTIC_TRACE_SERVICE", "agentic"),
            "process.pid": os.getpid(),
        }
    )
    provider = TracerProvider(resource=resource)
    # Synchronous export: a span is in the file when it ends, so a process stopped by SIGTERM
    # loses nothing already finished.
    provider.add_span_processor(SimpleSpanProcessor(JsonLinesSpanExporter(Path(path))))
    trace.set_tracer_provider(provider)
    return provider


PROVIDER = configure_tracing_from_env()
_tracer = trace.get_tracer("distributed-trace-test")


@executor
async def draft(text: str, ctx: WorkflowContext[str]) -> None:
    with _tracer.start_as_current_span("body draft"):
        await ctx.send_message(text.upper())


@executor
async def ask(text: str, ctx: WorkflowContext[str]) -> None:
    with _tracer.start_as_current_span("body ask"):
        async with NatsBus(os.environ["AGENTIC_NATS_URL"]) as bus:
            agent = ProxyAgent(os.environ["AGENTIC_TRACE_AGENT"], bus, timeout_s=30)
            answer = await agent.run(text)
        await ctx.send_message(answer.text)


@executor
async def finish(text: str, ctx: WorkflowContext[Never, str]) -> None:
    with _tracer.start_as_current_span("body finish"):
        await ctx.yield_output(text + "!")


def build() -> Workflow:
    """The workflow: draft -> ask -> finish, one superstep each."""
    return (
        WorkflowBuilder(WORKFLOW_NAME)
        .set_start_executor(draft)
        .add_edge(draft, ask)
        .add_edge(ask, finish)
        .build()
    )


def echo(messages: list[ChatMessage], options: ChatOptions | None) -> str:
    """The served agent's model: names what it heard, inside a span of its own."""
    with _tracer.start_as_current_span("served.reply"):
        return f"heard {messages[-1].text}"


def echo_agent(agent_id: str) -> ChatAgent:
    """The agent the agent-server process serves."""
    return ChatAgent(FunctionChatClient(echo), id=agent_id, name="echo")
