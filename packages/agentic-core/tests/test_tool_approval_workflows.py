"""In a workflow, a tool call waiting for approval is the agent executor's request_info: the run
pauses, the request survives a checkpoint, and answers (here, in another Workflow object, through
send_responses, or through as_agent) resume the agent's turn."""

from __future__ import annotations

import json
from pathlib import Path

from agentic_core import (
    AgentExecutor,
    AgentResponse,
    AgentThread,
    ChatAgent,
    ChatMessage,
    FileCheckpointStore,
    RequestInfoEvent,
    Runtime,
    ToolApprovalRequest,
    ToolApprovalResponse,
    WorkflowAgent,
    WorkflowRunState,
)
from agentic_core.testing import ScriptedChatClient

from ._approval_flows import RAN, deploy_call, release_workflow


def setup_function() -> None:
    RAN.clear()


async def test_the_run_pauses_with_the_approval_request_and_resumes_on_the_answer(
    runtime: Runtime,
) -> None:
    workflow = release_workflow(deploy_call(), "Deployed api 2.0.", after="Team notified.")
    paused = await workflow.run("ship api 2.0", runtime=runtime)
    assert paused.status is WorkflowRunState.IDLE_WITH_PENDING_REQUESTS
    [pending] = paused.pending_requests
    assert pending.source_executor_id == "releaser"
    assert pending.response_type is ToolApprovalResponse
    assert pending.data == ToolApprovalRequest(
        call_id="c1",
        tool_name="deploy",
        arguments={"service": "api", "version": "2.0"},
        agent_name="releaser",
    )
    assert RAN == []
    assert paused.outputs == []  # the next agent has not been reached
    done = await workflow.send_responses({pending.request_id: ToolApprovalResponse.approve()})
    assert done.status is WorkflowRunState.COMPLETED
    assert RAN == [{"service": "api", "version": "2.0"}]
    [output] = done.outputs
    assert isinstance(output, AgentResponse)
    assert output.text == "Team notified."


async def test_a_pending_approval_survives_a_checkpoint_into_a_new_workflow_object(
    tmp_path: Path,
) -> None:
    store = FileCheckpointStore(tmp_path / "checkpoints")
    first = release_workflow(deploy_call(), store=store)
    paused = await first.run("ship api 2.0")
    [pending] = paused.pending_requests
    assert paused.last_checkpoint_id is not None
    checkpoint = await store.load(paused.last_checkpoint_id)
    assert checkpoint is not None
    assert checkpoint.pending_requests  # the request is in the checkpoint
    # "Another process": a workflow built again (a fresh scripted model), the same store.
    second = release_workflow("Deployed api 1.9.", store=store)
    done = await second.run(
        checkpoint_id=paused.last_checkpoint_id,
        checkpoint_store=store,
        responses={
            pending.request_id: {
                "approved": True,
                "arguments": {"service": "api", "version": "1.9"},
            }
        },
    )
    assert done.status is WorkflowRunState.COMPLETED
    assert RAN == [{"service": "api", "version": "1.9"}]
    [output] = done.outputs
    assert output.text == "Deployed api 1.9."
    # The resumed agent saw the conversation of the first process, the edited call included.
    client = second.get_executor("releaser")
    assert isinstance(client, AgentExecutor)
    assert isinstance(client.agent, ChatAgent)
    seen = client.agent.chat_client
    assert isinstance(seen, ScriptedChatClient)
    [(messages, _)] = seen.calls
    assert [m.role for m in messages] == ["user", "assistant", "tool"]
    assert messages[1].function_calls[0].arguments["version"] == "1.9"


async def test_a_rejection_reaches_the_model_and_the_run_goes_on(runtime: Runtime) -> None:
    workflow = release_workflow(deploy_call(), "Not deployed: freeze.")
    paused = await workflow.run("ship api 2.0", runtime=runtime)
    [pending] = paused.pending_requests
    done = await workflow.send_responses(
        {pending.request_id: ToolApprovalResponse.reject("release freeze until Monday")}
    )
    assert RAN == []
    [output] = done.outputs
    assert output.text == "Not deployed: freeze."
    rejection = output.messages[0].function_results[0]
    assert rejection.is_error
    assert "release freeze until Monday" in rejection.result


async def test_every_waiting_call_of_a_turn_is_answered_before_the_agent_resumes(
    tmp_path: Path,
) -> None:
    store = FileCheckpointStore(tmp_path / "checkpoints")
    two_calls = ChatMessage.assistant(
        contents=[
            *deploy_call("c1", "2.0").function_calls,
            *deploy_call("c2", "2.1").function_calls,
        ]
    )
    workflow = release_workflow(two_calls, "Both handled.", store=store)
    paused = await workflow.run("ship both")
    first, second = paused.pending_requests
    assert [r.data.call_id for r in (first, second)] == ["c1", "c2"]
    half = await workflow.run(
        checkpoint_id=paused.last_checkpoint_id,
        checkpoint_store=store,
        responses={first.request_id: ToolApprovalResponse.approve()},
    )
    assert half.status is WorkflowRunState.IDLE_WITH_PENDING_REQUESTS
    assert [r.request_id for r in half.pending_requests] == [second.request_id]
    assert RAN == []  # nothing runs until the whole turn is answered
    done = await release_workflow("Both handled.", store=store).run(
        checkpoint_id=half.last_checkpoint_id,
        checkpoint_store=store,
        responses={second.request_id: ToolApprovalResponse.reject("one at a time")},
    )
    assert done.status is WorkflowRunState.COMPLETED
    assert RAN == [{"service": "api", "version": "2.0"}]
    assert done.outputs[0].text == "Both handled."


async def test_a_streamed_run_shows_the_request_and_resumes() -> None:
    workflow = release_workflow(deploy_call(), "Deployed.")
    events = [e async for e in workflow.run_stream("ship")]
    [request] = [e for e in events if isinstance(e, RequestInfoEvent)]
    assert isinstance(request.data, ToolApprovalRequest)
    done = await workflow.send_responses({request.request_id: ToolApprovalResponse.approve()})
    assert done.outputs[0].text == "Deployed."


async def test_through_as_agent_the_approval_is_a_request_info_call_answered_by_a_result(
    tmp_path: Path,
) -> None:
    store = FileCheckpointStore(tmp_path / "checkpoints")
    agent = WorkflowAgent(release_workflow(deploy_call(), store=store), name="release-team")
    thread = agent.get_new_thread()
    response = await agent.run("ship api 2.0", thread=thread)
    [asked] = [c for m in response.messages for c in m.function_calls if c.name == "request_info"]
    assert asked.arguments == {
        "call_id": "c1",
        "tool_name": "deploy",
        "arguments": {"service": "api", "version": "2.0"},
        "agent_name": "releaser",
    }
    request = ToolApprovalRequest.model_validate(asked.arguments)
    # The answer may come from another process: the saved thread, a rebuilt workflow.
    saved = AgentThread.deserialize(json.loads(json.dumps(thread.serialize())))
    again = WorkflowAgent(release_workflow("Deployed.", store=store), name="release-team")
    answer = request.reject("not today")
    done = await again.run(ChatMessage.tool(asked.call_id, answer.model_dump()), thread=saved)
    assert RAN == []
    assert done.text == "Deployed."
