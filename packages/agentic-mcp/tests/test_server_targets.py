# pyright: strict
"""How a workflow's start executor becomes a tool's input: text in any chat form is a
``message`` tool, also when it takes the previous agent's response as a pattern's first agent
does (no caller from outside sends one)."""

from __future__ import annotations

from typing import Never

from agentic_core import (
    AgentExecutorResponse,
    ChatMessage,
    Workflow,
    WorkflowBuilder,
    WorkflowContext,
    executor,
)
from agentic_mcp._server._targets import served_targets


def first_agent_workflow() -> Workflow:
    @executor(id="first")
    async def first(
        message: str | ChatMessage | list[ChatMessage] | AgentExecutorResponse,
        ctx: WorkflowContext[Never, str],
    ) -> None:
        await ctx.yield_output(str(message))

    return WorkflowBuilder("pattern").set_start_executor(first).build()


def test_a_patterns_first_agent_is_a_message_tool() -> None:
    [served] = served_targets([first_agent_workflow()])
    assert served.input_form == "message"
    assert served.chat_form == "str"
    assert served.input_schema["required"] == ["message"]
    assert served.workflow_input({"message": "tea"}) == "tea"


def test_a_start_taking_only_a_response_stays_structured() -> None:
    @executor(id="next")
    async def next_step(message: AgentExecutorResponse, ctx: WorkflowContext[Never, str]) -> None:
        await ctx.yield_output(str(message))

    [served] = served_targets([WorkflowBuilder("chained").set_start_executor(next_step).build()])
    assert served.input_form != "message"
