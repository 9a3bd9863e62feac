"""The agent layer's spans and token metrics, by the OpenTelemetry GenAI semantic conventions.

``invoke_agent <name>`` around an agent run, ``chat <model>`` (kind CLIENT) around each model
call, ``execute_tool <name>`` around each tool call. Made only while telemetry is on: each entry
point asks ``_telemetry.tracer()``/``meter()`` once and returns None (or its input unchanged)
when both are off. Attributes carry names, ids, models, settings and token counts, never
message text, tool arguments or results (they may hold personal data or secrets).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, TypeVar

from agentic_core._telemetry import tracer
from agentic_core._telemetry_invocation import activate, mark_error
from agentic_core._telemetry_metrics import Instruments, instruments

if TYPE_CHECKING:
    from opentelemetry.trace import Span, Tracer

    from agentic_core.protocols._chat import ChatClient, ChatOptions, ChatResponse
    from agentic_core.protocols._messages import FunctionCallContent, UsageDetails

__all__ = [
    "ChatObservation",
    "observe_agent_run",
    "observe_chat",
    "start_tool_span",
    "telemetry_on",
]

T = TypeVar("T")


def _end_on_exception(span: Span, exc: BaseException) -> None:
    # A consumer that stops reading a stream early is no error; anything else is.
    if not isinstance(exc, GeneratorExit):
        mark_error(span, exc, f"{type(exc).__name__}: {exc}")


def _set_usage(span: Span, usage: UsageDetails) -> None:
    span.set_attribute("gen_ai.usage.input_tokens", usage.input_tokens)
    span.set_attribute("gen_ai.usage.output_tokens", usage.output_tokens)


async def _iterate_in(span: Span, items: AsyncIterator[T], *, owns_span: bool) -> AsyncIterator[T]:
    """``items``, with ``span`` current while each item is produced (not while it is used)."""
    try:
        while True:
            with activate(span):
                try:
                    item = await anext(items)
                except StopAsyncIteration:
                    break
            yield item
    except BaseException as exc:
        if owns_span:
            _end_on_exception(span, exc)
        raise
    finally:
        if isinstance(items, AsyncGenerator):
            await items.aclose()
        if owns_span:
            span.end()


def telemetry_on() -> bool:
    """Whether an agent run records anything (spans or token metrics): asked once per run, so
    that a run with telemetry off makes no other check (two flag checks in all)."""
    return tracer() is not None or instruments() is not None


# -- invoke_agent -------------------------------------------------------------------------------


def observe_agent_run(
    steps: AsyncIterator[T], *, name: str, agent_id: str, client: ChatClient
) -> AsyncIterator[T]:
    """``steps`` (an agent's run loop) inside an ``invoke_agent <name>`` span; unchanged when
    telemetry is off. The span is current while the loop runs, so its model and tool calls are
    its children; it ends when the loop does (a stream read to its end, or closed)."""
    current = tracer()
    if current is None:
        return steps
    span = current.start_span(
        f"invoke_agent {name}",
        attributes={
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": name,
            "gen_ai.agent.id": agent_id,
            "gen_ai.system": client.provider,
            "gen_ai.provider.name": client.provider,
            "gen_ai.request.model": client.model,
        },
    )
    return _iterate_in(span, _with_usage(span, steps), owns_span=True)


async def _with_usage(span: Span, steps: AsyncIterator[T]) -> AsyncIterator[T]:
    from agentic_core.protocols._agent import AgentResponse

    async for step in steps:
        if isinstance(step, AgentResponse):
            _set_usage(span, step.usage)
        yield step


# -- chat ---------------------------------------------------------------------------------------


class ChatObservation:
    """The ``chat <model>`` span and token metrics of one model call."""

    __slots__ = ("_instruments", "_metric_attributes", "span")

    def __init__(
        self,
        tracer: Tracer | None,
        metrics: Instruments | None,
        client: ChatClient,
        options: ChatOptions | None,
    ) -> None:
        self._instruments = metrics
        model = (options.model if options is not None else None) or client.model
        provider = client.provider
        self._metric_attributes = {
            "gen_ai.operation.name": "chat",
            "gen_ai.system": provider,
            "gen_ai.provider.name": provider,
            "gen_ai.request.model": model,
        }
        self.span: Span | None = None
        if tracer is not None:
            from opentelemetry.trace import SpanKind

            attributes: dict[str, Any] = dict(self._metric_attributes)
            if options is not None:
                if options.temperature is not None:
                    attributes["gen_ai.request.temperature"] = options.temperature
                if options.max_tokens is not None:
                    attributes["gen_ai.request.max_tokens"] = options.max_tokens
                if options.seed is not None:
                    attributes["gen_ai.request.seed"] = options.seed
            self.span = tracer.start_span(
                f"chat {model}" if model else "chat", kind=SpanKind.CLIENT, attributes=attributes
            )

    def current(self) -> AbstractContextManager[None]:
        """A context manager: the chat span is current inside it (an HTTP client's spans nest)."""
        return activate(self.span)

    def stream(self, updates: AsyncIterator[T]) -> AsyncIterator[T]:
        """``updates`` with the chat span current while each one is produced."""
        if self.span is None:
            return updates
        return _iterate_in(self.span, updates, owns_span=False)

    def end(self, response: ChatResponse) -> None:
        """The call returned ``response`` (a stream's folded reply): record usage, close."""
        usage = response.usage
        metrics = self._instruments
        if metrics is not None:
            attributes = self._metric_attributes
            if response.model:
                attributes = {**attributes, "gen_ai.response.model": response.model}
            metrics.token_usage.record(
                usage.input_tokens, {**attributes, "gen_ai.token.type": "input"}
            )
            metrics.token_usage.record(
                usage.output_tokens, {**attributes, "gen_ai.token.type": "output"}
            )
        span = self.span
        if span is not None:
            if response.model:
                span.set_attribute("gen_ai.response.model", response.model)
            _set_usage(span, usage)
            span.set_attribute("gen_ai.response.finish_reasons", [response.finish_reason.value])
            span.end()

    def fail(self, exc: BaseException) -> None:
        """The call raised ``exc`` (or its stream was closed early): close the span."""
        span = self.span
        if span is not None:
            _end_on_exception(span, exc)
            span.end()


def observe_chat(client: ChatClient, options: ChatOptions | None) -> ChatObservation | None:
    """What to record of one model call; None when telemetry is off."""
    current = tracer()
    metrics = instruments()
    if current is None and metrics is None:
        return None
    return ChatObservation(current, metrics, client, options)


# -- execute_tool -------------------------------------------------------------------------------


def start_tool_span(call: FunctionCallContent) -> Span | None:
    """The ``execute_tool <name>`` span of ``call`` (not yet current); None when tracing is off.

    A tool that fails gets ``mark_error`` from the caller, which knows the exception.
    """
    current = tracer()
    if current is None:
        return None
    return current.start_span(
        f"execute_tool {call.name}",
        attributes={
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": call.name,
            "gen_ai.tool.call.id": call.call_id,
            "gen_ai.tool.type": "function",
        },
    )
