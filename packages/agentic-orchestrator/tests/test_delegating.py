"""DelegatingAgent: parallel delegation, timeouts, a flat hierarchy, TOML sub-agents."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from agentic_core import (
    AgentResponse,
    ChatAgent,
    ChatMessage,
    ChatOptions,
    FunctionCallContent,
    FunctionResultContent,
    Role,
    tool,
)
from agentic_core.testing import FunctionChatClient, ScriptedChatClient
from agentic_orchestrator import DelegatingAgent, DelegationError, OrchestrationConfigError

from ._helpers import echo_agent


def delegate(*tasks: tuple[str, str], call_id: str = "d1") -> ChatMessage:
    arguments = {"tasks": [{"agent": agent, "task": task} for agent, task in tasks]}
    call = FunctionCallContent(call_id=call_id, name="delegate_task", arguments=arguments)
    return ChatMessage(role=Role.ASSISTANT, contents=[call])


def tool_result(lead: ScriptedChatClient) -> FunctionResultContent:
    """The delegate_task call's result, as the lead's model saw it."""
    content = lead.calls[-1][0][-1].contents[0]
    assert isinstance(content, FunctionResultContent)
    return content


def tool_results(lead: ScriptedChatClient) -> Any:
    """What the delegate_task call returned."""
    return tool_result(lead).result


async def test_sub_agents_run_in_parallel_and_answers_come_back_in_order() -> None:
    arrived = {"left": asyncio.Event(), "right": asyncio.Event()}

    def meeting(me: str, other: str) -> ChatAgent:
        async def reply(messages: list[ChatMessage], options: ChatOptions | None) -> str:
            arrived[me].set()
            async with asyncio.timeout(10):
                await arrived[other].wait()
            return f"{me} did: {messages[-1].text}"

        return ChatAgent(FunctionChatClient(reply), name=me, description=f"the {me} hand")

    lead_model = ScriptedChatClient(
        [delegate(("right", "lift"), ("left", "hold")), "Both hands did their part."]
    )
    lead = DelegatingAgent(lead_model, [meeting("left", "right"), meeting("right", "left")])
    response = await lead.run("carry the box")
    assert response.text == "Both hands did their part."
    assert tool_results(lead_model) == [
        {"agent": "right", "task": "lift", "ok": True, "answer": "right did: lift"},
        {"agent": "left", "task": "hold", "ok": True, "answer": "left did: hold"},
    ]
    system = lead_model.calls[0][0][0].text
    assert "- left: the left hand" in system
    assert "- right: the right hand" in system
    offered = lead_model.calls[0][1].tools[0]  # type: ignore[union-attr]
    assert offered.parameters["properties"]["tasks"]["items"]["properties"]["agent"]["enum"] == [
        "left",
        "right",
    ]


async def test_a_slow_or_failing_sub_agent_is_an_error_entry_and_the_rest_is_kept() -> None:
    async def hang(messages: list[ChatMessage], options: ChatOptions | None) -> str:
        await asyncio.Event().wait()
        return ""

    def crash(messages: list[ChatMessage], options: ChatOptions | None) -> str:
        raise RuntimeError("model down")

    lead_model = ScriptedChatClient(
        [delegate(("slow", "a"), ("broken", "b"), ("fine", "c")), "partial answer"]
    )
    lead = DelegatingAgent(
        lead_model,
        [
            ChatAgent(FunctionChatClient(hang), name="slow"),
            ChatAgent(FunctionChatClient(crash), name="broken"),
            echo_agent("fine"),
        ],
        delegation_timeout_s=0.2,
    )
    await lead.run("go")
    results = tool_results(lead_model)
    assert results[0] == {
        "agent": "slow",
        "task": "a",
        "ok": False,
        "error": "timed out after 0.2 s",
    }
    assert results[1]["ok"] is False
    assert "model down" in results[1]["error"]
    assert results[2] == {"agent": "fine", "task": "c", "ok": True, "answer": "fine saw 1"}


async def test_an_unknown_sub_agent_is_an_error_result_naming_the_team() -> None:
    lead_model = ScriptedChatClient([delegate(("ghost", "boo")), "sorry"])
    lead = DelegatingAgent(lead_model, [echo_agent("a"), echo_agent("b")])
    await lead.run("go")
    result = tool_result(lead_model)
    assert result.is_error
    assert "no sub-agent named 'ghost' (sub-agents: a, b)" in result.result


def test_the_hierarchy_is_flat_at_construction() -> None:
    inner = DelegatingAgent(ScriptedChatClient([]), [echo_agent("x")], name="inner")
    with pytest.raises(DelegationError, match="'inner' can delegate"):
        DelegatingAgent(ScriptedChatClient([]), [inner])

    @tool(name="delegate_task")
    def sneaky(tasks: list[str]) -> str:
        """Pretend to delegate."""
        return "no"

    disguised = ChatAgent(ScriptedChatClient([]), name="disguised", tools=[sneaky])
    with pytest.raises(DelegationError, match="'disguised' can delegate"):
        DelegatingAgent(ScriptedChatClient([]), [disguised])


async def test_a_delegation_from_inside_a_sub_agent_fails() -> None:
    lead_model = ScriptedChatClient([delegate(("rogue", "go")), "done"])
    holder: dict[str, DelegatingAgent] = {}

    class Rogue:
        """A sub-agent that reaches for its lead's delegate_task tool at run time."""

        name = "rogue"
        id = "rogue"

        async def run(
            self, messages: Any = None, *, thread: Any = None, **kw: Any
        ) -> AgentResponse:
            await holder["lead"].delegate_tool.invoke({"tasks": [{"agent": "rogue", "task": "x"}]})
            return AgentResponse(agent_id="rogue", text="unreachable")

        def run_stream(self, messages: Any = None, *, thread: Any = None, **kw: Any) -> Any:
            raise NotImplementedError

        def get_new_thread(self, **metadata: Any) -> Any:
            return echo_agent("t").get_new_thread()

    holder["lead"] = DelegatingAgent(lead_model, [Rogue()])
    await holder["lead"].run("go")
    [entry] = tool_results(lead_model)
    assert entry["ok"] is False
    assert "'rogue' is a sub-agent and cannot delegate" in entry["error"]


def test_bad_sub_agent_lists() -> None:
    with pytest.raises(OrchestrationConfigError, match="non-empty"):
        DelegatingAgent(ScriptedChatClient([]), [])
    with pytest.raises(OrchestrationConfigError, match="'a'"):
        DelegatingAgent(ScriptedChatClient([]), [echo_agent("a"), echo_agent("a")])
    with pytest.raises(OrchestrationConfigError, match="delegation_timeout_s"):
        DelegatingAgent(ScriptedChatClient([]), [echo_agent("a")], delegation_timeout_s=0)


async def test_from_toml_builds_the_sub_agents(tmp_path: Path) -> None:
    path = tmp_path / "team.toml"
    path.write_text(
        """
[[agents]]
name = "researcher"
instructions = "Find facts."
description = "finds facts"
model = "openai:gpt-4o-mini"
tools = ["search"]

[[agents]]
name = "writer"
instructions = "Write."
model = { provider = "ollama", model = "llama3.2" }
"""
    )

    @tool
    def search(query: str) -> str:
        """Search the web."""
        return f"results for {query}"

    sub_model = FunctionChatClient(lambda messages, options: json.dumps(messages[0].text))
    lead_model = ScriptedChatClient([delegate(("researcher", "q"), ("writer", "w")), "ok"])
    lead = DelegatingAgent.from_toml(
        path, lead_model, sub_agent_client=sub_model, tools={"search": search}
    )
    assert list(lead.sub_agents) == ["researcher", "writer"]
    assert [t.name for t in lead.sub_agents["researcher"].tools] == ["search"]  # type: ignore[attr-defined]
    await lead.run("go")
    assert [r["answer"] for r in tool_results(lead_model)] == ['"Find facts."', '"Write."']
    assert "- researcher: finds facts" in lead_model.calls[0][0][0].text
