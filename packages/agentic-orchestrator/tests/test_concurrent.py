"""ConcurrentBuilder: fan-out, fan-in, partial results and custom aggregators."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agentic_core import (
    ChatAgent,
    ChatMessage,
    ChatOptions,
    InMemoryCheckpointStore,
    WorkflowExecutionError,
    WorkflowRunState,
)
from agentic_core.testing import FunctionChatClient, ScriptedChatClient
from agentic_orchestrator import (
    ConcurrentBuilder,
    OrchestrationConfigError,
    OrchestratorError,
    ParticipantResult,
)

from ._helpers import echo_agent, resume_from_middle, spoken_lines


def failing_agent(name: str) -> ChatAgent:
    def fail(messages: list[ChatMessage], options: ChatOptions | None) -> str:
        raise ConnectionError(f"{name} lost its model")

    return ChatAgent(FunctionChatClient(fail), name=name)


async def test_default_aggregate_is_the_prompt_then_every_answer_in_participant_order() -> None:
    agents = [echo_agent(name) for name in ("zeta", "alpha", "mid")]
    result = await ConcurrentBuilder().participants(agents).build().run("question")
    assert result.status is WorkflowRunState.COMPLETED
    assert spoken_lines(result.outputs[0]) == [
        "user: question",
        "zeta: zeta saw 1",
        "alpha: alpha saw 1",
        "mid: mid saw 1",
    ]


async def test_participants_answer_at_once() -> None:
    """A rendezvous: each agent waits for the other to have started; only a parallel run ends."""
    arrived = {"left": asyncio.Event(), "right": asyncio.Event()}

    def rendezvous(me: str, other: str) -> ChatAgent:
        async def reply(messages: list[ChatMessage], options: ChatOptions | None) -> str:
            arrived[me].set()
            async with asyncio.timeout(10):
                await arrived[other].wait()
            return f"{me} met {other}"

        return ChatAgent(FunctionChatClient(reply), name=me)

    workflow = (
        ConcurrentBuilder()
        .participants([rendezvous("left", "right"), rendezvous("right", "left")])
        .build()
    )
    result = await workflow.run("meet")
    assert [m.text for m in result.outputs[0][1:]] == ["left met right", "right met left"]


async def test_a_failing_participant_reaches_the_aggregator_as_an_error_result() -> None:
    seen: list[ParticipantResult] = []

    async def aggregate(results: list[ParticipantResult]) -> str:
        seen.extend(results)
        return " | ".join(r.text if r.ok else f"{r.executor_id} failed" for r in results)

    workflow = (
        ConcurrentBuilder()
        .participants([echo_agent("good"), failing_agent("bad"), echo_agent("fine")])
        .with_aggregator(aggregate)
        .build()
    )
    result = await workflow.run("q")
    assert result.outputs == ["good saw 1 | bad failed | fine saw 1"]
    bad = seen[1]
    assert not bad.ok
    assert bad.agent_response is None
    assert bad.error_type == "ConnectionError"
    assert "bad lost its model" in (bad.error or "")


async def test_default_aggregate_leaves_failures_out() -> None:
    workflow = ConcurrentBuilder().participants([failing_agent("bad"), echo_agent("ok")]).build()
    result = await workflow.run("q")
    assert spoken_lines(result.outputs[0]) == ["user: q", "ok: ok saw 1"]


async def test_default_aggregate_fails_the_run_when_every_participant_failed() -> None:
    workflow = ConcurrentBuilder().participants([failing_agent("x"), failing_agent("y")]).build()
    with pytest.raises(WorkflowExecutionError) as caught:
        await workflow.run("q")
    assert isinstance(caught.value.__cause__, OrchestratorError)
    assert "x: ConnectionError" in str(caught.value.__cause__)


async def test_an_aggregator_may_decide_a_failure_fails_the_run() -> None:
    def strict(results: list[ParticipantResult]) -> list[str]:
        failed = [r.executor_id for r in results if not r.ok]
        if failed:
            raise RuntimeError(f"refusing partial results: {failed}")
        return [r.text for r in results]

    workflow = (
        ConcurrentBuilder()
        .participants([echo_agent("a"), failing_agent("b")])
        .with_aggregator(strict)
        .build()
    )
    with pytest.raises(WorkflowExecutionError, match="refusing partial results"):
        await workflow.run("q")


async def test_maf_custom_aggregator_sample_ported() -> None:
    """MAF's concurrent_custom_aggregator.py: an LLM consolidates the experts' answers."""
    client = ScriptedChatClient(["Consolidated: ship it, with range disclaimers."])
    researcher = ChatAgent(ScriptedChatClient(["Demand is rising."]), name="researcher")
    marketer = ChatAgent(ScriptedChatClient(["Charge Ahead."]), name="marketer")
    legal = ChatAgent(ScriptedChatClient(["Add disclaimers."]), name="legal")

    async def summarize_results(results: list[Any]) -> str:
        expert_sections: list[str] = []
        for r in results:
            messages = getattr(r.agent_response, "messages", [])
            final_text = messages[-1].text if messages else "(no content)"
            expert_sections.append(f"{getattr(r, 'executor_id', 'expert')}:\n{final_text}")
        system_msg = ChatMessage.system("Consolidate the experts' outputs into one summary.")
        user_msg = ChatMessage.user("\n\n".join(expert_sections))
        response = await client.generate([system_msg, user_msg])
        return response.message.text

    workflow = (
        ConcurrentBuilder(participants=[researcher, marketer, legal])
        .with_aggregator(summarize_results)
        .build()
    )
    result = await workflow.run("We are launching a budget e-bike.")
    assert result.get_outputs() == ["Consolidated: ship it, with range disclaimers."]
    prompt = client.calls[0][0][1].text
    assert prompt == (
        "researcher:\nDemand is rising.\n\nmarketer:\nCharge Ahead.\n\nlegal:\nAdd disclaimers."
    )


async def test_a_sync_aggregator_returning_none_yields_nothing() -> None:
    workflow = ConcurrentBuilder().participants([echo_agent("a")]).with_aggregator(lambda r: None)
    result = await workflow.build().run("q")
    assert result.outputs == []


def test_bad_configuration_is_named() -> None:
    with pytest.raises(OrchestrationConfigError, match="'a'"):
        ConcurrentBuilder().participants([echo_agent("a"), echo_agent("a")])
    with pytest.raises(OrchestrationConfigError, match="callable"):
        ConcurrentBuilder().with_aggregator("not a function")  # type: ignore[arg-type]
    with pytest.raises(OrchestrationConfigError, match="no participants"):
        ConcurrentBuilder().build()


async def test_checkpointed_run_resumes_to_the_same_aggregate() -> None:
    store = InMemoryCheckpointStore()
    workflow = (
        ConcurrentBuilder()
        .participants([echo_agent("a"), echo_agent("b")])
        .with_checkpointing(store)
        .build()
    )
    full = await workflow.run("q")
    resumed = await resume_from_middle(workflow, full, store)
    assert spoken_lines(resumed.outputs[0]) == spoken_lines(full.outputs[0])
