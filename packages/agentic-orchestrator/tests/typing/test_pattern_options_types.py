# pyright: strict
"""Type-checked (pyright strict) uses of the pattern options of issue 29: builder options taken
from MAF and LangGraph (chain_only_agent_responses, output_from, aggregator executors,
autonomous mode, full history, create_supervisor). Also runs as a test module.
"""

from __future__ import annotations

from typing import Never, assert_type

from agentic_core import AgentExecutorResponse, ChatAgent, Executor, WorkflowContext, handler
from agentic_core.testing import ScriptedChatClient
from agentic_orchestrator import (
    ConcurrentBuilder,
    GroupChatBuilder,
    HandoffBuilder,
    SequentialBuilder,
    create_supervisor,
    round_robin_selector,
)


def agent(name: str, *replies: str) -> ChatAgent:
    return ScriptedChatClient(list(replies)).as_agent(f"You are the {name}.", name=name)


class JoinTexts(Executor):
    @handler
    async def join(
        self, results: list[AgentExecutorResponse], ctx: WorkflowContext[Never, str]
    ) -> None:
        await ctx.yield_output(" | ".join(r.agent_response.text for r in results))


async def test_builder_options_type_check() -> None:
    sequential = SequentialBuilder(
        participants=[agent("writer", "A"), agent("editor", "B")],
        chain_only_agent_responses=True,
        output_from="all",
    )
    assert_type(sequential, SequentialBuilder)
    concurrent = ConcurrentBuilder(participants=[agent("a", "1")]).with_aggregator(
        JoinTexts("join")
    )
    assert_type(concurrent, ConcurrentBuilder)
    handoff = (
        HandoffBuilder(participants=[agent("triage", "hi")], full_history=True)
        .with_autonomous_mode(turn_limits={"triage": 2})
        .with_full_history()
    )
    assert_type(handoff, HandoffBuilder)
    chat = GroupChatBuilder(
        participants=[agent("a", "x")], selection_func=round_robin_selector, max_rounds=1
    ).with_full_history()
    assert_type(chat, GroupChatBuilder)

    assert (await concurrent.build().run("q")).outputs == ["1"]


async def test_create_supervisor_returns_a_handoff_builder() -> None:
    supervisor = create_supervisor(
        [agent("math_expert", "4")],
        model=ScriptedChatClient(["Nothing to delegate."]),
        prompt="You manage a math expert.",
        output_mode="full_history",
    )
    assert_type(supervisor, HandoffBuilder)
    result = await supervisor.build().run("hello")
    assert result.outputs[0][-1].text == "Nothing to delegate."
