# pyright: strict
"""Type-checked (pyright strict) use of a workflow's pending requests through ``as_agent()``:
the loop that answers a ChatAgent's tool approvals answers a workflow-as-agent's too.

It also runs as a test module, so the example stays executable.
"""

from __future__ import annotations

from typing import assert_type

from agentic_core import (
    Agent,
    AgentExecutor,
    AgentResponse,
    ChatAgent,
    ChatMessage,
    FunctionCallContent,
    ToolApprovalRequest,
    ToolApprovalResponse,
    WorkflowAgent,
    WorkflowBuilder,
    tool,
)
from agentic_core.testing import ScriptedChatClient


@tool(approval_mode="always_require")
def delete_file(path: str) -> str:
    """Delete a file."""
    return f"deleted {path}"


async def answer_approvals(agent: Agent, prompt: str) -> AgentResponse:
    thread = agent.get_new_thread()
    response = await agent.run(prompt, thread=thread)
    while response.user_input_requests:
        requests: list[ToolApprovalRequest] = response.user_input_requests
        answers: dict[str, ToolApprovalResponse] = {r.request_id: r.approve() for r in requests}
        response = await agent.run(responses=answers, thread=thread)
    return response


async def test_workflow_agent_requests_are_typed() -> None:
    call = FunctionCallContent(call_id="c1", name="delete_file", arguments={"path": "/tmp/x"})
    chat_agent = ChatAgent(
        ScriptedChatClient([ChatMessage.assistant(contents=[call]), "Deleted."]),
        name="cleaner",
        tools=[delete_file],
    )
    workflow = (
        WorkflowBuilder("cleanup")
        .set_start_executor(AgentExecutor(chat_agent, output_response=True))
        .build()
    )
    agent = WorkflowAgent(workflow)
    done = await answer_approvals(agent, "delete /tmp/x")
    assert_type(done, AgentResponse)
    assert done.text == "Deleted."
