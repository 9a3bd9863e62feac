"""Agents and workflows compose: AgentExecutor chains, streaming updates, workflows as agents."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Never

import pytest

from agentic_core import (
    AgentError,
    AgentExecutor,
    AgentExecutorResponse,
    AgentResponse,
    AgentResponseUpdate,
    AgentRunUpdateEvent,
    ChatAgent,
    ChatMessage,
    ChatOptions,
    Role,
    Runtime,
    WorkflowAgent,
    WorkflowBuilder,
    WorkflowContext,
    WorkflowOutputEvent,
    executor,
)
from agentic_core.testing import FunctionChatClient, ScriptedChatClient


def chain_of_agents(*replies: str) -> tuple[list[ChatAgent], list[ScriptedChatClient]]:
    clients = [ScriptedChatClient([reply], chunk_size=3) for reply in replies]
    agents = [ChatAgent(c, name=f"agent{i}") for i, c in enumerate(clients)]
    return agents, clients


async def test_a_chain_of_agent_executors_passes_the_conversation_along(runtime: Runtime) -> None:
    (writer, editor), (_, editor_client) = chain_of_agents("draft", "edited draft")
    first = AgentExecutor(writer, id="writer")
    second = AgentExecutor(editor, id="editor", output_response=True)
    workflow = WorkflowBuilder().set_start_executor(first).add_edge(first, second).build()
    result = await workflow.run("write something", runtime=runtime)
    [response] = result.outputs
    assert isinstance(response, AgentResponse)
    assert response.text == "edited draft"
    seen_by_editor = [m.text for m in editor_client.calls[0][0]]
    assert seen_by_editor == ["write something", "draft"]


async def test_agent_updates_stream_as_agent_run_update_events() -> None:
    (writer, editor), _ = chain_of_agents("one two", "three four")
    first = AgentExecutor(writer, id="writer")
    second = AgentExecutor(editor, id="editor", output_response=True)
    workflow = WorkflowBuilder().set_start_executor(first).add_edge(first, second).build()
    events = [e async for e in workflow.run_stream("go")]
    updates = [e for e in events if isinstance(e, AgentRunUpdateEvent)]
    assert {e.executor_id for e in updates} == {"writer", "editor"}
    text = "".join(
        e.update.text
        for e in updates
        if e.executor_id == "writer" and isinstance(e.update, AgentResponseUpdate)
    )
    assert text == "one two"
    outputs = [e.data for e in events if isinstance(e, WorkflowOutputEvent)]
    assert [o.text for o in outputs] == ["three four"]


async def test_updates_arrive_while_the_agent_is_still_running() -> None:
    release = asyncio.Event()

    class SlowStream(ScriptedChatClient):
        async def generate_stream(
            self, messages: Sequence[ChatMessage], options: ChatOptions | None = None
        ):  # type: ignore[override]
            async for chunk in super().generate_stream(messages, options):
                yield chunk
                await release.wait()

    agent = ChatAgent(SlowStream(["a b c"]), name="slow")
    node = AgentExecutor(agent, id="slow")
    workflow = WorkflowBuilder().set_start_executor(node).build()
    stream = workflow.run_stream("go")
    seen: list[str] = []
    async for event in stream:
        if isinstance(event, AgentRunUpdateEvent):
            seen.append(event.update.text)
            release.set()  # the first update came before the agent could finish
    assert seen[0] == "a "


async def test_a_workflow_runs_as_an_agent_and_the_thread_gets_the_conversation() -> None:
    @executor
    async def answer(messages: list[ChatMessage], ctx: WorkflowContext[Never, str]) -> None:
        await ctx.yield_output(f"{len(messages)} message(s), last: {messages[-1].text}")

    agent = WorkflowBuilder("counter").set_start_executor(answer).build().as_agent()
    assert isinstance(agent, WorkflowAgent)
    thread = agent.get_new_thread()
    first = await agent.run("hello", thread=thread)
    assert first.text == "1 message(s), last: hello"
    second = await agent.run("again", thread=thread)
    assert second.text == "3 message(s), last: again"
    history = await thread.list_messages()
    assert [m.role for m in history] == [Role.USER, Role.ASSISTANT, Role.USER, Role.ASSISTANT]


async def test_a_workflow_of_agents_nests_as_an_agent_inside_another_workflow() -> None:
    clients = [ScriptedChatClient([reply, reply]) for reply in ("inner draft", "inner final")]
    inner_a, inner_b = (ChatAgent(c, name=f"inner{i}") for i, c in enumerate(clients))
    a, b = AgentExecutor(inner_a, id="a"), AgentExecutor(inner_b, id="b", output_response=True)
    inner = WorkflowBuilder("inner").set_start_executor(a).add_edge(a, b).build()
    nested = AgentExecutor(inner.as_agent("team"), id="team")

    outer_agent = ChatAgent(
        FunctionChatClient(lambda messages, options: f"saw {messages[-1].text}"), name="critic"
    )
    critic = AgentExecutor(outer_agent, id="critic", output_response=True)
    outer = WorkflowBuilder("outer").set_start_executor(nested).add_edge(nested, critic).build()
    result = await outer.run("start")
    [final] = result.outputs
    assert final.text == "saw inner final"

    streamed = [u async for u in outer.as_agent().run_stream("start")]
    assert streamed[-1].done
    assert "saw inner final" in "".join(u.text for u in streamed)


async def test_a_workflow_whose_start_cannot_take_messages_is_not_an_agent() -> None:
    @executor
    async def numbers(n: int, ctx: WorkflowContext[Never, int]) -> None:
        await ctx.yield_output(n)

    with pytest.raises(AgentError, match="no handler for list\\[ChatMessage\\]"):
        WorkflowBuilder("n").set_start_executor(numbers).build().as_agent()


async def test_agent_executor_response_round_trips_through_json() -> None:
    response = AgentExecutorResponse(
        executor_id="x",
        agent_response=AgentResponse(messages=[ChatMessage.assistant("hi")], text="hi"),
        full_conversation=[ChatMessage.user("yo"), ChatMessage.assistant("hi")],
    )
    assert AgentExecutorResponse.model_validate_json(response.model_dump_json()) == response
