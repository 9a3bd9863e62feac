# pyright: strict
"""Type-checked (pyright strict) uses of tool approval: this file fails CI if the types regress.

It also runs as a test module, so the examples stay executable.
"""

from __future__ import annotations

from typing import assert_type

from agentic_core import (
    AgentResponse,
    ChatAgent,
    ChatMessage,
    FunctionCallContent,
    FunctionTool,
    ToolApprovalMode,
    ToolApprovalRequest,
    ToolApprovalResponse,
    tool,
)
from agentic_core.testing import ScriptedChatClient


@tool(approval_mode="always_require")
def delete_file(path: str) -> str:
    """Delete a file."""
    return f"deleted {path}"


async def test_tool_approval_is_typed() -> None:
    assert isinstance(delete_file, FunctionTool)
    mode: ToolApprovalMode | None = delete_file.approval_mode
    assert mode == "always_require"
    call = FunctionCallContent(call_id="c1", name="delete_file", arguments={"path": "/tmp/x"})
    agent = ChatAgent(
        ScriptedChatClient([ChatMessage.assistant(contents=[call]), "Deleted."]),
        tools=[delete_file],
        tool_approval_mode="never_require",
    )
    thread = agent.get_new_thread()
    paused = await agent.run("delete /tmp/x", thread=thread)
    requests: list[ToolApprovalRequest] = paused.user_input_requests
    answers: dict[str, ToolApprovalResponse] = {r.call_id: r.approve() for r in requests}
    done = await agent.run(responses=answers, thread=thread)
    assert_type(done, AgentResponse)
    assert done.text == "Deleted."
    assert_type(ToolApprovalResponse.reject("no"), ToolApprovalResponse)
    assert_type(ToolApprovalResponse.edit({"path": "/tmp/y"}), ToolApprovalResponse)
