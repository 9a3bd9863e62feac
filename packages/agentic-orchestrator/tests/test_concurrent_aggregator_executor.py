"""ConcurrentBuilder.with_aggregator(executor), as MAF's (an Executor taking the results list).

Ports of microsoft/agent-framework's ``samples/03-workflows/orchestrations/
concurrent_custom_aggregator.py`` (with the summary in an Executor) and of
``packages/orchestrations/tests/test_concurrent.py``'s custom aggregator tests.
"""

from __future__ import annotations

from typing import Any, Never

import pytest

from agentic_core import (
    AgentExecutorResponse,
    AgentResponse,
    ChatAgent,
    ChatMessage,
    ChatOptions,
    Executor,
    WorkflowContext,
    WorkflowRunState,
    handler,
)
from agentic_core.testing import FunctionChatClient, ScriptedChatClient
from agentic_orchestrator import ConcurrentBuilder, OrchestrationConfigError, ParticipantResult

from ._helpers import echo_agent


class _FakeAgentExec(Executor):
    """MAF's test executor: answers the prompt with one assistant message, as an agent would."""

    def __init__(self, id: str, reply_text: str) -> None:  # noqa: A002
        super().__init__(id)
        self._reply_text = reply_text

    @handler
    async def run(
        self, request: list[ChatMessage], ctx: WorkflowContext[AgentExecutorResponse]
    ) -> None:
        response = AgentResponse(messages=[ChatMessage.assistant(self._reply_text)])
        full_conversation = list(request) + list(response.messages)
        await ctx.send_message(
            AgentExecutorResponse(
                executor_id=self.id, agent_response=response, full_conversation=full_conversation
            )
        )


async def test_concurrent_with_aggregator_executor_instance() -> None:
    """Test with_aggregator using an Executor instance (not factory)."""

    class CustomAggregator(Executor):
        @handler
        async def aggregate(
            self, results: list[AgentExecutorResponse], ctx: WorkflowContext[Any, str]
        ) -> None:
            texts: list[str] = []
            for r in results:
                msgs: list[ChatMessage] = r.agent_response.messages
                texts.append(msgs[-1].text if msgs else "")
            await ctx.yield_output(" & ".join(sorted(texts)))

    e1 = _FakeAgentExec("agentA", "One")
    e2 = _FakeAgentExec("agentB", "Two")

    aggregator_instance = CustomAggregator(id="instance_aggregator")
    wf = ConcurrentBuilder(participants=[e1, e2]).with_aggregator(aggregator_instance).build()

    result = await wf.run("prompt: instance test")
    assert result.status is WorkflowRunState.COMPLETED
    output = result.outputs[0]
    assert isinstance(output, str)
    assert output == "One & Two"
    assert "instance_aggregator" in wf.executors


async def test_concurrent_custom_aggregator_sync_callback_is_used() -> None:
    """MAF's two-argument callback form ``(results, ctx)``."""
    e1 = _FakeAgentExec("agentA", "One")
    e2 = _FakeAgentExec("agentB", "Two")

    def summarize_sync(results: list[ParticipantResult], _ctx: WorkflowContext[Any]) -> str:
        texts: list[str] = []
        for r in results:
            msgs = r.agent_response.messages if r.agent_response is not None else []
            texts.append(msgs[-1].text if msgs else "")
        return " | ".join(sorted(texts))

    wf = ConcurrentBuilder(participants=[e1, e2]).with_aggregator(summarize_sync).build()
    result = await wf.run("prompt: custom sync")
    assert result.outputs == ["One | Two"]


class SummarizeResults(Executor):
    """MAF's ``summarize_results`` callback of concurrent_custom_aggregator.py, as an Executor."""

    def __init__(self, client: ScriptedChatClient) -> None:
        super().__init__("summarize_results")
        self.client = client

    @handler
    async def summarize(
        self, results: list[AgentExecutorResponse], ctx: WorkflowContext[Never, str]
    ) -> None:
        # Extract one final assistant message per agent
        expert_sections: list[str] = []
        for r in results:
            messages = getattr(r.agent_response, "messages", [])
            final_text = messages[-1].text if messages else "(no content)"
            expert_sections.append(f"{getattr(r, 'executor_id', 'expert')}:\n{final_text}")

        # Ask the model to synthesize a concise summary of the experts' outputs
        system_msg = ChatMessage.system(
            "You are a helpful assistant that consolidates multiple domain expert outputs "
            "into one cohesive, concise summary with clear takeaways. Keep it under 200 words."
        )
        user_msg = ChatMessage.user("\n\n".join(expert_sections))
        response = await self.client.generate([system_msg, user_msg])
        await ctx.yield_output(response.message.text)


async def test_maf_custom_aggregator_sample_with_an_executor_aggregator() -> None:
    client = ScriptedChatClient(["Urban e-bike demand is rising; add range disclaimers."])
    researcher = ChatAgent(
        ScriptedChatClient(["Demand is rising ~10% a year."]),
        "You're an expert market and product researcher.",
        name="researcher",
    )
    marketer = ChatAgent(
        ScriptedChatClient(["Charge Ahead: city commutes made affordable."]),
        "You're a creative marketing strategist.",
        name="marketer",
    )
    legal = ChatAgent(
        ScriptedChatClient(["Substantiate range claims."]),
        "You're a cautious legal/compliance reviewer.",
        name="legal",
    )

    workflow = (
        ConcurrentBuilder(participants=[researcher, marketer, legal])
        .with_aggregator(SummarizeResults(client))
        .build()
    )

    events = await workflow.run(
        "We are launching a new budget-friendly electric bike for urban commuters."
    )
    outputs = events.get_outputs()
    assert outputs == ["Urban e-bike demand is rising; add range disclaimers."]
    assert client.calls[0][0][1].text == (
        "researcher:\nDemand is rising ~10% a year.\n\n"
        "marketer:\nCharge Ahead: city commutes made affordable.\n\n"
        "legal:\nSubstantiate range claims."
    )


async def test_an_executor_taking_participant_results_sees_the_failures() -> None:
    def fail(messages: list[ChatMessage], options: ChatOptions | None) -> str:
        raise ConnectionError("no model")

    class Tally(Executor):
        @handler
        async def tally(
            self, results: list[ParticipantResult], ctx: WorkflowContext[Never, str]
        ) -> None:
            await ctx.yield_output(", ".join(f"{r.executor_id}={r.ok}" for r in results))

    broken = ChatAgent(FunctionChatClient(fail), name="broken")
    workflow = (
        ConcurrentBuilder(participants=[echo_agent("fine"), broken])
        .with_aggregator(Tally("tally"))
        .build()
    )
    assert (await workflow.run("q")).outputs == ["fine=True, broken=False"]


async def test_an_executor_taking_responses_gets_only_the_answers() -> None:
    def fail(messages: list[ChatMessage], options: ChatOptions | None) -> str:
        raise ConnectionError("no model")

    class Names(Executor):
        @handler
        async def names(
            self, results: list[AgentExecutorResponse], ctx: WorkflowContext[Never, str]
        ) -> None:
            await ctx.yield_output(", ".join(r.executor_id for r in results))

    broken = ChatAgent(FunctionChatClient(fail), name="broken")
    workflow = (
        ConcurrentBuilder(participants=[echo_agent("fine"), broken])
        .with_aggregator(Names("names"))
        .build()
    )
    assert (await workflow.run("q")).outputs == ["fine"]


def test_an_aggregator_executor_must_take_the_results_list() -> None:
    class Wrong(Executor):
        @handler
        async def take(self, text: str, ctx: WorkflowContext[Never, str]) -> None:
            await ctx.yield_output(text)

    with pytest.raises(OrchestrationConfigError, match="'wrong' has no handler"):
        ConcurrentBuilder().with_aggregator(Wrong("wrong"))
    with pytest.raises(OrchestrationConfigError, match="'a' is taken"):
        ConcurrentBuilder(participants=[echo_agent("a")]).with_aggregator(
            SummarizeResults(ScriptedChatClient([]))
        ).with_aggregator(_ResultsSink("a")).build()


class _ResultsSink(Executor):
    @handler
    async def take(
        self, results: list[ParticipantResult], ctx: WorkflowContext[Never, int]
    ) -> None:
        await ctx.yield_output(len(results))
