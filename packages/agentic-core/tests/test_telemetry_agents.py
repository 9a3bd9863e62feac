"""OpenTelemetry spans of agents (GenAI semantic conventions): agent run, model call, tool."""

from __future__ import annotations

from typing import Any

import pytest

from agentic_core import (
    AgentExecutor,
    ChatAgent,
    ChatMessage,
    ChatOptions,
    ChatResponse,
    FunctionCallContent,
    UsageDetails,
    WorkflowBuilder,
)
from agentic_core.testing import ScriptedChatClient

Telemetry = Any
"""The ``telemetry`` fixture (conftest.py): spans(), span(name), points(metric), exporter."""

PRIVATE_PROMPT = "my card number is 4111 1111 1111 1111"


def call(name: str, call_id: str = "c1", **arguments: Any) -> ChatMessage:
    return ChatMessage.assistant(
        contents=[FunctionCallContent(call_id=call_id, name=name, arguments=arguments)]
    )


def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def broken() -> int:
    """Always fails."""
    raise ValueError("tool is broken")


def _tool_agent(**client: Any) -> ChatAgent:
    replies: list[Any] = [
        ChatResponse(
            message=call("add", a=2, b=3),
            usage=UsageDetails(input_tokens=11, output_tokens=3, total_tokens=14),
            model="scripted-2025",
        ),
        ChatResponse(
            message=ChatMessage.assistant("The sum is 5."),
            usage=UsageDetails(input_tokens=20, output_tokens=5, total_tokens=25),
        ),
    ]
    return ChatAgent(
        ScriptedChatClient(replies, model="tiny-model", **client),
        name="adder",
        id="adder-1",
        tools=[add],
        options=ChatOptions(temperature=0.2, max_tokens=64),
    )


def _assert_agent_tree(telemetry: Telemetry) -> None:
    agent = telemetry.span("invoke_agent adder")
    assert agent.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert agent.attributes["gen_ai.agent.name"] == "adder"
    assert agent.attributes["gen_ai.agent.id"] == "adder-1"
    assert agent.attributes["gen_ai.usage.input_tokens"] == 31
    assert agent.attributes["gen_ai.usage.output_tokens"] == 8
    chats = [s for s in telemetry.spans() if s.name == "chat tiny-model"]
    tool = telemetry.span("execute_tool add")
    assert len(chats) == 2
    for span in [*chats, tool]:
        assert span.parent.span_id == agent.context.span_id
    first, second = sorted(chats, key=lambda s: s.start_time)
    assert first.end_time <= tool.start_time
    assert tool.end_time <= second.start_time
    from opentelemetry.trace import SpanKind

    assert first.kind is SpanKind.CLIENT
    assert first.attributes["gen_ai.operation.name"] == "chat"
    assert first.attributes["gen_ai.system"] == "scripted"
    assert first.attributes["gen_ai.provider.name"] == "scripted"
    assert first.attributes["gen_ai.request.model"] == "tiny-model"
    assert first.attributes["gen_ai.response.model"] == "scripted-2025"
    assert first.attributes["gen_ai.request.temperature"] == 0.2
    assert first.attributes["gen_ai.request.max_tokens"] == 64
    assert first.attributes["gen_ai.usage.input_tokens"] == 11
    assert first.attributes["gen_ai.usage.output_tokens"] == 3
    assert list(first.attributes["gen_ai.response.finish_reasons"]) == ["tool_calls"]
    assert second.attributes["gen_ai.usage.input_tokens"] == 20
    assert list(second.attributes["gen_ai.response.finish_reasons"]) == ["stop"]
    assert tool.attributes["gen_ai.operation.name"] == "execute_tool"
    assert tool.attributes["gen_ai.tool.name"] == "add"
    assert tool.attributes["gen_ai.tool.call.id"] == "c1"
    assert tool.status.is_ok


async def test_an_agent_run_has_chat_and_tool_spans_under_invoke_agent(
    telemetry: Telemetry,
) -> None:
    response = await _tool_agent().run(PRIVATE_PROMPT)

    assert response.text == "The sum is 5."
    _assert_agent_tree(telemetry)


async def test_a_streamed_agent_run_has_the_same_spans_with_usage_from_the_stream(
    telemetry: Telemetry,
) -> None:
    from opentelemetry import trace

    current_while_consuming = [
        trace.get_current_span().get_span_context().is_valid
        async for _update in _tool_agent(chunk_size=3).run_stream(PRIVATE_PROMPT)
    ]

    _assert_agent_tree(telemetry)
    assert current_while_consuming
    assert not any(current_while_consuming)


async def test_token_usage_is_recorded_per_type_and_model(telemetry: Telemetry) -> None:
    await _tool_agent().run("2+3?")

    totals: dict[str, list[int]] = {"input": [0, 0], "output": [0, 0]}
    for point in telemetry.points("gen_ai.client.token.usage"):
        totals[point.attributes["gen_ai.token.type"]][0] += point.sum
        totals[point.attributes["gen_ai.token.type"]][1] += point.count
    assert totals == {"input": [31, 2], "output": [8, 2]}
    for point in telemetry.points("gen_ai.client.token.usage"):
        assert point.attributes["gen_ai.request.model"] == "tiny-model"
        assert point.attributes["gen_ai.system"] == "scripted"


async def test_a_failing_tool_gets_an_error_span_and_the_agent_goes_on(
    telemetry: Telemetry,
) -> None:
    agent = ChatAgent(ScriptedChatClient([call("broken"), "sorry"]), name="a", tools=[broken])

    response = await agent.run("go")

    assert response.text == "sorry"
    tool = telemetry.span("execute_tool broken")
    assert not tool.status.is_ok
    assert tool.attributes["error.type"] == "ValueError"
    assert [e.name for e in tool.events] == ["exception"]
    assert telemetry.span("invoke_agent a").status.is_ok


async def test_an_unknown_tool_gets_an_error_span(telemetry: Telemetry) -> None:
    agent = ChatAgent(ScriptedChatClient([call("missing"), "ok"]), name="a", tools=[add])

    await agent.run("go")

    tool = telemetry.span("execute_tool missing")
    assert not tool.status.is_ok
    assert tool.attributes["error.type"] == "unknown_tool"


async def test_no_span_attribute_carries_message_text(telemetry: Telemetry) -> None:
    await _tool_agent().run(PRIVATE_PROMPT)

    values = [str(v) for span in telemetry.spans() for v in span.attributes.values()]
    assert not [v for v in values if "4111" in v or "sum is" in v]


async def test_an_agent_in_a_workflow_is_a_child_of_its_executor_span(
    telemetry: Telemetry,
) -> None:
    agent = ChatAgent(ScriptedChatClient(["done"], model="m"), name="writer")
    step = AgentExecutor(agent, id="writer", output_response=True)

    await WorkflowBuilder().set_start_executor(step).build().run("write")

    executor_span = telemetry.span("executor.process writer")
    agent_span = telemetry.span("invoke_agent writer")
    assert agent_span.parent.span_id == executor_span.context.span_id
    assert telemetry.span("chat m").parent.span_id == agent_span.context.span_id


@pytest.mark.parametrize("streaming", [False, True], ids=["run", "run_stream"])
async def test_with_telemetry_off_a_run_asks_once_whatever_its_model_and_tool_calls(
    monkeypatch: pytest.MonkeyPatch, streaming: bool
) -> None:
    import agentic_core._telemetry_genai as genai

    asked: list[str] = []

    def tracer() -> None:
        asked.append("tracer")

    def instruments() -> None:
        asked.append("instruments")

    monkeypatch.setattr(genai, "tracer", tracer)
    monkeypatch.setattr(genai, "instruments", instruments)
    agent = _tool_agent()

    if streaming:
        [_ async for _ in agent.run_stream("2+3?")]
    else:
        await agent.run("2+3?")

    # Two model calls and a tool call, decided once: no span, no metric, no other check.
    assert asked == ["tracer", "instruments"]
