"""A2AAgent in workflows and as a tool, against the a2a-sdk reference server: an agent executor
streams it, its input-required task is a workflow request that survives a checkpoint and is
answered on the same task, and a ChatAgent calls it as a function tool."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from a2a_reference_server import (
    GREETING_QUESTION,
    ScriptedExecutor,
    free_port,
    reference_app,
    reference_card,
    served,
)

from agentic_bus import A2AAgent
from agentic_core import (
    AgentExecutor,
    AgentResponse,
    AgentRunUpdateEvent,
    ChatAgent,
    ChatMessage,
    FileCheckpointStore,
    FunctionCallContent,
    ToolApprovalRequest,
    ToolApprovalResponse,
    Workflow,
    WorkflowBuilder,
    WorkflowOutputEvent,
    WorkflowRunState,
)
from agentic_core.testing import ScriptedChatClient


@pytest.fixture
async def url() -> AsyncIterator[str]:
    port = free_port()
    app = reference_app(ScriptedExecutor(), reference_card(f"http://127.0.0.1:{port}"))
    async with served(app, port) as base:
        yield base


def greeter_workflow(agent: A2AAgent, store: FileCheckpointStore | None = None) -> Workflow:
    builder = WorkflowBuilder("greet").set_start_executor(
        AgentExecutor(agent, id="greeter", output_response=True)
    )
    if store is not None:
        builder = builder.with_checkpointing(store)
    return builder.build()


async def test_an_agent_executor_streams_the_remote_answer(url: str) -> None:
    async with A2AAgent(url, name="echo") as agent:
        workflow = greeter_workflow(agent)
        events = [event async for event in workflow.run_stream("hello workflow")]
    updates = [e.update.text for e in events if isinstance(e, AgentRunUpdateEvent)]
    assert "".join(updates) == "echo: hello workflow"
    [output] = [e.data for e in events if isinstance(e, WorkflowOutputEvent)]
    assert isinstance(output, AgentResponse)
    assert output.text == "echo: hello workflow"


async def test_input_required_is_a_workflow_request_answered_on_the_same_task(
    url: str, tmp_path: Path
) -> None:
    store = FileCheckpointStore(tmp_path / "checkpoints")
    async with A2AAgent(url, name="greeter") as agent:
        paused = await greeter_workflow(agent, store).run("ask me")
    assert paused.status is WorkflowRunState.IDLE_WITH_PENDING_REQUESTS
    [pending] = paused.pending_requests
    assert pending.response_type is ToolApprovalResponse
    request = pending.data
    assert isinstance(request, ToolApprovalRequest)
    assert request.tool_name == "input_required"
    assert request.arguments == {"question": GREETING_QUESTION}
    assert paused.last_checkpoint_id is not None
    # Another A2AAgent and workflow object (a restart): the checkpoint holds the task and context.
    async with A2AAgent(url, name="greeter") as again:
        done = await greeter_workflow(again, store).run(
            checkpoint_id=paused.last_checkpoint_id,
            checkpoint_store=store,
            responses={pending.request_id: request.edit({"answer": "Ada"})},
        )
    assert done.status is WorkflowRunState.COMPLETED
    [output] = done.outputs
    assert isinstance(output, AgentResponse)
    assert output.text == "Hello, Ada!"


async def test_a_chat_agent_calls_the_remote_agent_as_a_tool(url: str) -> None:
    # MAF's a2a_agent_as_function_tools sample: the remote agent's skill as a host agent's tool.
    async with A2AAgent(url, name="reference") as remote:
        card = await remote.get_card()
        [skill] = card.skills
        skill_tool = remote.as_tool(name=skill.id, description=skill.description)
        assert skill_tool.name == "echo"
        assert skill_tool.parameters["required"] == ["task"]
        call = FunctionCallContent(call_id="t1", name="echo", arguments={"task": "Contoso"})
        model = ScriptedChatClient(
            [ChatMessage.assistant(contents=[call]), "The remote agent said it back."]
        )
        host = ChatAgent(model, "Use your tools.", name="assistant", tools=[skill_tool])
        response = await host.run("Show me all invoices for Contoso")
    assert response.text == "The remote agent said it back."
    [(final_prompt, _)] = model.calls[1:]
    [result] = [r for m in final_prompt for r in m.function_results]
    assert result.result == "echo: Contoso"
    assert not result.is_error
