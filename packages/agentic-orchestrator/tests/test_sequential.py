"""SequentialBuilder: one conversation through a chain of agents and executors."""

from __future__ import annotations

from typing import Any, Never

import pytest

from agentic_core import (
    AgentExecutorResponse,
    AgentResponse,
    ChatAgent,
    ChatMessage,
    Executor,
    InMemoryCheckpointStore,
    WorkflowContext,
    WorkflowRunState,
    handler,
)
from agentic_core.testing import ScriptedChatClient
from agentic_orchestrator import OrchestrationConfigError, SequentialBuilder

from ._helpers import echo_agent, resume_from_middle, spoken_lines


class Shout(Executor):
    """A custom executor between agents: adds the last message in capitals, as a user turn."""

    @handler
    async def shout(
        self, conversation: list[ChatMessage], ctx: WorkflowContext[list[ChatMessage]]
    ) -> None:
        await ctx.send_message([*conversation, ChatMessage.user(conversation[-1].text.upper())])


class Gate(Executor):
    """An early-exit gate: a conversation mentioning "stop" ends the run here."""

    @handler
    async def check(
        self,
        response: AgentExecutorResponse,
        ctx: WorkflowContext[list[ChatMessage], list[ChatMessage]],
    ) -> None:
        if "stop" in response.agent_response.text:
            await ctx.yield_output(list(response.full_conversation))
            return
        await ctx.send_message(list(response.full_conversation))


class SummarizerTerminator(Executor):
    """Ported from MAF's test_sequential.py: a custom terminator yields its own answer."""

    @handler
    async def summarize(
        self, agent_response: AgentExecutorResponse, ctx: WorkflowContext[Any, AgentResponse]
    ) -> None:
        conversation = agent_response.full_conversation or []
        user_texts = [m.text for m in conversation if m.role == "user"]
        agents = [m.author_name or m.role for m in conversation if m.role == "assistant"]
        summary = ChatMessage.assistant(f"Summary of users:{len(user_texts)} agents:{len(agents)}")
        await ctx.yield_output(AgentResponse(messages=[summary], text=summary.text, agent_id="s"))


class OnlyStrings(Executor):
    @handler
    async def take(self, text: str, ctx: WorkflowContext[Never]) -> None:
        del text, ctx


async def test_each_agent_sees_the_whole_conversation_and_the_output_is_all_of_it() -> None:
    writer = ChatAgent(ScriptedChatClient(["draft"]), name="writer")
    editor = ChatAgent(ScriptedChatClient(["edited"]), name="editor")
    result = await SequentialBuilder().participants([writer, editor]).build().run("write")
    assert result.status is WorkflowRunState.COMPLETED
    assert result.outputs == [result.outputs[0]]
    assert spoken_lines(result.outputs[0]) == ["user: write", "writer: draft", "editor: edited"]
    seen_by_editor = editor.chat_client.calls[0][0]  # type: ignore[attr-defined]
    assert [m.text for m in seen_by_editor] == ["write", "draft"]


async def test_participants_keyword_and_list_input() -> None:
    a, b = echo_agent("a"), echo_agent("b")
    workflow = SequentialBuilder(participants=[a, b]).build()
    result = await workflow.run([ChatMessage.system("be brief"), ChatMessage.user("go")])
    assert spoken_lines(result.outputs[0]) == [
        "system: be brief",
        "user: go",
        "a: a saw 2",
        "b: b saw 3",
    ]


async def test_a_custom_executor_between_agents_gets_and_passes_the_conversation() -> None:
    a, b = echo_agent("a"), echo_agent("b")
    result = await SequentialBuilder().participants([a, Shout("shout"), b]).build().run("hi")
    assert spoken_lines(result.outputs[0]) == [
        "user: hi",
        "a: a saw 1",
        "user: A SAW 1",
        "b: b saw 3",
    ]


async def test_an_early_exit_gate_yields_and_stops_the_chain() -> None:
    first = ChatAgent(ScriptedChatClient(["please stop"]), name="first")
    never = ChatAgent(ScriptedChatClient([]), name="never")
    result = await SequentialBuilder().participants([first, Gate("gate"), never]).build().run("x")
    assert result.status is WorkflowRunState.COMPLETED
    assert spoken_lines(result.outputs[0]) == ["user: x", "first: please stop"]
    assert never.chat_client.calls == []  # type: ignore[attr-defined]


async def test_the_gate_lets_the_chain_go_on() -> None:
    first = ChatAgent(ScriptedChatClient(["fine"]), name="first")
    second = echo_agent("second")
    result = await SequentialBuilder().participants([first, Gate("gate"), second]).build().run("x")
    assert spoken_lines(result.outputs[0])[-1] == "second: second saw 2"


async def test_maf_custom_terminator_yields_its_own_summary() -> None:
    a1 = echo_agent("A1")
    workflow = SequentialBuilder(participants=[a1, SummarizerTerminator("summarizer")]).build()
    result = await workflow.run("topic: coffee")
    assert len(result.outputs) == 1
    summary = result.outputs[0]
    assert isinstance(summary, AgentResponse)
    assert summary.messages[0].text == "Summary of users:1 agents:1"


@pytest.mark.parametrize("participants", [[], ()])
def test_no_participants_is_a_config_error(participants: Any) -> None:
    with pytest.raises(OrchestrationConfigError, match="non-empty"):
        SequentialBuilder().participants(participants)


def test_build_without_participants_says_so() -> None:
    with pytest.raises(OrchestrationConfigError, match="no participants"):
        SequentialBuilder().build()


def test_duplicate_names_are_named() -> None:
    with pytest.raises(OrchestrationConfigError, match="'twin'"):
        SequentialBuilder().participants([echo_agent("twin"), echo_agent("twin")])


def test_a_reserved_name_is_refused() -> None:
    with pytest.raises(OrchestrationConfigError, match="reserved"):
        SequentialBuilder().participants([echo_agent("sequential_output")])


def test_an_executor_that_cannot_take_the_conversation_fails_the_build() -> None:
    from agentic_core import GraphValidationError

    with pytest.raises(GraphValidationError, match="only_strings"):
        SequentialBuilder().participants([echo_agent("a"), OnlyStrings("only_strings")]).build()


async def test_checkpointed_mid_run_and_resumed_gives_the_same_conversation() -> None:
    store = InMemoryCheckpointStore()
    agents = [echo_agent(name) for name in ("a", "b", "c", "d")]
    workflow = SequentialBuilder().participants(agents).with_checkpointing(store).build()
    full = await workflow.run("go")
    resumed = await resume_from_middle(workflow, full, store)
    assert resumed.status is WorkflowRunState.COMPLETED
    assert spoken_lines(resumed.outputs[0]) == spoken_lines(full.outputs[0])


async def test_as_agent_answers_with_the_chain() -> None:
    agent = SequentialBuilder().participants([echo_agent("a"), echo_agent("b")]).build().as_agent()
    response = await agent.run("hello")
    assert "b saw 2" in response.text


async def test_streaming_surfaces_each_agents_updates() -> None:
    from agentic_core import AgentRunUpdateEvent

    workflow = SequentialBuilder().participants([echo_agent("a"), echo_agent("b")]).build()
    sources = [
        e.executor_id async for e in workflow.run_stream("hi") if isinstance(e, AgentRunUpdateEvent)
    ]
    assert "a" in sources
    assert "b" in sources
    assert sources.index("a") < sources.index("b")
