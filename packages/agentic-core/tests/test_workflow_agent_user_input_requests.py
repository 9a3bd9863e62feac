"""A workflow used as an agent waits for people the way a ChatAgent does: its response lists the
tool approvals it waits on in ``user_input_requests`` and ``run(responses=..., thread=...)``
resumes it, streamed or not, in this process or from a saved thread in a new Workflow object;
other requests are answered through ``responses=`` by their ``request_info`` call's id."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Never

import pytest
from pydantic import BaseModel

from agentic_core import (
    Agent,
    AgentError,
    AgentExecutor,
    AgentResponse,
    AgentThread,
    ChatAgent,
    ChatMessage,
    CheckpointStore,
    Executor,
    FileCheckpointStore,
    FunctionCallContent,
    Role,
    ToolApprovalRequest,
    ToolApprovalResponse,
    Workflow,
    WorkflowAgent,
    WorkflowBuilder,
    WorkflowContext,
    WorkflowRequestError,
    WorkflowRunState,
    handler,
    response_handler,
)
from agentic_core.testing import ScriptedChatClient

from ._approval_flows import RAN, deploy_calls, release_workflow, releaser


def setup_function() -> None:
    RAN.clear()


def request_info_calls(response: AgentResponse) -> list[FunctionCallContent]:
    name = WorkflowAgent.REQUEST_INFO_FUNCTION_NAME
    return [c for m in response.messages for c in m.function_calls if c.name == name]


async def approve_everything(agent: Agent, prompt: str) -> AgentResponse:
    """The caller's loop: the same code for a ChatAgent and a workflow used as an agent."""
    thread = agent.get_new_thread()
    response = await agent.run(prompt, thread=thread)
    while response.user_input_requests:
        answers = {r.request_id: r.approve() for r in response.user_input_requests}
        response = await agent.run(responses=answers, thread=thread)
    return response


# -- tool approvals ---------------------------------------------------------------------------


async def test_a_waiting_tool_call_is_listed_as_the_chat_agents_own_request() -> None:
    agent = release_workflow(deploy_calls("c1")).as_agent("release-team")
    response = await agent.run("ship api 2.0")
    assert response.user_input_requests == [
        ToolApprovalRequest(
            call_id="c1",
            tool_name="deploy",
            arguments={"service": "api-c1", "version": "2.0"},
            agent_name="releaser",
        )
    ]
    assert RAN == []


async def test_one_loop_answers_a_chat_agent_and_a_workflow_as_agent_alike() -> None:
    alone = await approve_everything(releaser(deploy_calls("c1"), "Deployed."), "ship")
    assert RAN == [{"service": "api-c1", "version": "2.0"}]
    RAN.clear()
    team = release_workflow(deploy_calls("c1"), "Deployed.").as_agent("release-team")
    in_workflow = await approve_everything(team, "ship")
    assert RAN == [{"service": "api-c1", "version": "2.0"}]
    assert in_workflow.text == alone.text == "Deployed."
    assert in_workflow.user_input_requests == []


async def test_a_rejection_answered_as_json_reaches_the_model() -> None:
    workflow = release_workflow(deploy_calls("c1"), "Not deployed, as you wish.")
    agent = workflow.as_agent()
    thread = agent.get_new_thread()
    [request] = (await agent.run("ship", thread=thread)).user_input_requests
    done = await agent.run(
        responses={request.request_id: {"approved": False, "reason": "freeze"}}, thread=thread
    )
    assert RAN == []
    assert done.text == "Not deployed, as you wish."
    executor = workflow.get_executor("releaser")
    assert isinstance(executor, AgentExecutor)
    assert isinstance(executor.agent, ChatAgent)
    client = executor.agent.chat_client
    assert isinstance(client, ScriptedChatClient)
    seen = client.calls[-1][0][-1]
    assert seen.role is Role.TOOL
    assert "rejected" in str(seen.function_results[0].result)
    assert "freeze" in str(seen.function_results[0].result)


async def test_an_approval_may_be_answered_by_the_workflows_request_id_too() -> None:
    agent = release_workflow(deploy_calls("c1"), "Deployed.").as_agent()
    thread = agent.get_new_thread()
    response = await agent.run("ship", thread=thread)
    [call] = request_info_calls(response)
    assert call.call_id != "c1"  # the workflow's request id, not the model's call id
    done = await agent.run(responses={call.call_id: ToolApprovalResponse.approve()}, thread=thread)
    assert done.text == "Deployed."
    assert RAN == [{"service": "api-c1", "version": "2.0"}]


async def test_the_thread_records_each_answer_as_its_request_info_calls_result() -> None:
    agent = release_workflow(deploy_calls("c1"), "Deployed.").as_agent()
    thread = agent.get_new_thread()
    response = await agent.run("ship", thread=thread)
    [call] = request_info_calls(response)
    done = await agent.run(responses={"c1": ToolApprovalResponse.approve()}, thread=thread)
    history = await thread.list_messages()
    [result] = [r for m in history for r in m.function_results if r.call_id == call.call_id]
    assert result.result == {"approved": True, "reason": None, "arguments": None}
    assert history[-1].text == "Deployed."
    # As a ChatAgent's resumed turn does, the response starts with the answered call's result.
    assert done.messages[0].function_results == [result]


async def test_answers_left_out_keep_their_requests_waiting() -> None:
    agent = release_workflow(deploy_calls("c1", "c2"), "Both deployed.").as_agent()
    thread = agent.get_new_thread()
    first = await agent.run("ship both", thread=thread)
    assert [r.call_id for r in first.user_input_requests] == ["c1", "c2"]
    partly = await agent.run(responses={"c1": ToolApprovalResponse.approve()}, thread=thread)
    assert [r.call_id for r in partly.user_input_requests] == ["c2"]
    assert RAN == []  # the agent's turn resumes once every call of it is answered
    done = await agent.run(responses={"c2": ToolApprovalResponse.reject()}, thread=thread)
    assert done.text == "Both deployed."
    assert RAN == [{"service": "api-c1", "version": "2.0"}]


async def test_an_answer_to_nothing_waiting_is_a_clear_error_and_the_request_stays() -> None:
    agent = release_workflow(deploy_calls("c1"), "Deployed.").as_agent("release-team")
    thread = agent.get_new_thread()
    await agent.run("ship", thread=thread)
    with pytest.raises(AgentError, match=r"no pending request 'c9'.*tool call ids 'c1'"):
        await agent.run(responses={"c9": ToolApprovalResponse.approve()}, thread=thread)
    with pytest.raises(AgentError, match="holds no answer"):
        await agent.run(responses={}, thread=thread)
    done = await agent.run(responses={"c1": ToolApprovalResponse.approve()}, thread=thread)
    assert done.text == "Deployed."


async def test_a_streamed_run_lists_the_requests_and_resumes_on_responses() -> None:
    agent = release_workflow(deploy_calls("c1"), "Deployed api.").as_agent()
    thread = agent.get_new_thread()
    updates = [u async for u in agent.run_stream("ship", thread=thread)]
    paused = updates[-1].response
    assert updates[-1].done
    assert paused is not None
    [request] = paused.user_input_requests
    assert request.tool_name == "deploy"
    answers = {request.request_id: request.approve()}
    updates = [u async for u in agent.run_stream(responses=answers, thread=thread)]
    assert "".join(u.text for u in updates[:-1]) == "Deployed api."
    done = updates[-1].response
    assert done is not None
    assert done.text == "Deployed api."
    assert done.user_input_requests == []
    assert RAN == [{"service": "api-c1", "version": "2.0"}]


async def test_a_saved_thread_is_answered_in_a_new_workflow_object(tmp_path: Path) -> None:
    store = FileCheckpointStore(tmp_path / "checkpoints")
    first = WorkflowAgent(release_workflow(deploy_calls("c1", "c2"), store=store), name="team")
    thread = first.get_new_thread()
    asked = await first.run("ship both", thread=thread)
    assert [r.call_id for r in asked.user_input_requests] == ["c1", "c2"]
    saved = json.dumps(thread.serialize())
    # "Another process": the workflow built again, the same store, the thread read back.
    second = WorkflowAgent(release_workflow("Shipped one.", store=store), name="team")
    restored = AgentThread.deserialize(json.loads(saved))
    partly = await second.run(responses={"c1": {"approved": True}}, thread=restored)
    # The request still waiting comes back from the checkpoint as the same type.
    assert partly.user_input_requests == [asked.user_input_requests[1]]
    third = WorkflowAgent(release_workflow("Shipped one.", store=store), name="team")
    again = AgentThread.deserialize(json.loads(json.dumps(restored.serialize())))
    done = await third.run(responses={"c2": ToolApprovalResponse.reject("later")}, thread=again)
    assert done.text == "Shipped one."
    assert RAN == [{"service": "api-c1", "version": "2.0"}]


async def test_a_workflow_as_agent_inside_another_workflow_passes_its_approvals_up() -> None:
    inner = release_workflow(deploy_calls("c1"), "Deployed.").as_agent("release-team")
    outer = (
        WorkflowBuilder("company")
        .set_start_executor(AgentExecutor(inner, id="release-team", output_response=True))
        .build()
    )
    paused = await outer.run("ship")
    assert paused.status is WorkflowRunState.IDLE_WITH_PENDING_REQUESTS
    [pending] = paused.pending_requests
    assert isinstance(pending.data, ToolApprovalRequest)
    assert pending.data.call_id == "c1"
    done = await outer.send_responses({pending.request_id: ToolApprovalResponse.approve()})
    assert done.status is WorkflowRunState.COMPLETED
    assert RAN == [{"service": "api-c1", "version": "2.0"}]
    [output] = done.outputs
    assert isinstance(output, AgentResponse)
    assert output.text == "Deployed."


# -- other requests ---------------------------------------------------------------------------


class Ticket(BaseModel):
    title: str
    priority: int


class Triage(Executor):
    """Asks a person for the ticket's priority, then files it."""

    @handler
    async def ask(self, conversation: list[ChatMessage], ctx: WorkflowContext) -> None:
        await ctx.request_info(Ticket(title=conversation[-1].text, priority=0), int)

    @response_handler
    async def file(self, ticket: Ticket, priority: int, ctx: WorkflowContext[Never, str]) -> None:
        await ctx.yield_output(f"filed {ticket.title!r} at priority {priority}")


def triage_workflow(store: CheckpointStore | None = None) -> Workflow:
    builder = WorkflowBuilder("triage").set_start_executor(Triage("triage"))
    if store is not None:
        builder = builder.with_checkpointing(store)
    return builder.build()


async def test_a_plain_request_is_a_request_info_call_answered_with_responses() -> None:
    agent = triage_workflow().as_agent()
    thread = agent.get_new_thread()
    response = await agent.run("printer on fire", thread=thread)
    assert response.user_input_requests == []  # not a tool approval (as in MAF)
    [call] = request_info_calls(response)
    assert call.arguments == {"title": "printer on fire", "priority": 0}
    done = await agent.run(responses={call.call_id: 1}, thread=thread)
    assert done.text == "filed 'printer on fire' at priority 1"
    assert request_info_calls(done) == []


async def test_a_plain_request_answered_with_responses_from_a_saved_thread(tmp_path: Path) -> None:
    store = FileCheckpointStore(tmp_path / "checkpoints")
    first = WorkflowAgent(triage_workflow(store))
    thread = first.get_new_thread()
    [call] = request_info_calls(await first.run("disk full", thread=thread))
    restored = AgentThread.deserialize(json.loads(json.dumps(thread.serialize())))
    done = await WorkflowAgent(triage_workflow(store)).run(
        responses={call.call_id: 2}, thread=restored
    )
    assert done.text == "filed 'disk full' at priority 2"


async def test_without_a_thread_responses_answer_a_run_paused_in_this_process() -> None:
    agent = triage_workflow().as_agent()
    [call] = request_info_calls(await agent.run("no coffee"))
    done = await agent.run(responses={call.call_id: 3})
    assert done.text == "filed 'no coffee' at priority 3"


async def test_a_refused_answer_leaves_no_result_in_the_thread_and_the_request_stays() -> None:
    agent = triage_workflow().as_agent()
    thread = agent.get_new_thread()
    [call] = request_info_calls(await agent.run("slow wifi", thread=thread))
    with pytest.raises(WorkflowRequestError, match="must be int, got str"):
        await agent.run(responses={call.call_id: "very high"}, thread=thread)
    assert [r for m in await thread.list_messages() for r in m.function_results] == []
    done = await agent.run(responses={call.call_id: 2}, thread=thread)
    assert done.text == "filed 'slow wifi' at priority 2"
    results = [r.result for m in await thread.list_messages() for r in m.function_results]
    assert results == [2]
