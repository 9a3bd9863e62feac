"""Tool approval in every pattern: a participant's call waiting for a person becomes the run's
request_info, the paused turn lives in the checkpoint (a new Workflow object resumes it), and the
answered turn goes on as if it had not paused. Nothing is silently dropped."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentic_core import (
    AgentResponse,
    ChatAgent,
    ChatMessage,
    Executor,
    FileCheckpointStore,
    FunctionCallContent,
    RequestInfoEvent,
    Role,
    ToolApprovalRequest,
    ToolApprovalResponse,
    Workflow,
    WorkflowContext,
    WorkflowExecutionError,
    WorkflowOutputEvent,
    WorkflowRunState,
    handler,
    tool,
)
from agentic_core.testing import FunctionChatClient, ScriptedChatClient
from agentic_orchestrator import (
    ConcurrentBuilder,
    GroupChatBuilder,
    HandoffBuilder,
    HandoffUserRequest,
    MagenticBuilder,
    OrchestratorError,
    SequentialBuilder,
)

from ._helpers import echo_agent, spoken_lines

RAN: list[dict[str, Any]] = []


@tool(approval_mode="always_require")
def deploy(service: str, version: str) -> str:
    """Deploy a service (needs approval)."""
    RAN.append({"service": service, "version": version})
    return f"{service} {version} deployed"


def deploy_call(call_id: str = "c1", version: str = "2.0") -> ChatMessage:
    return ChatMessage.assistant(
        contents=[
            FunctionCallContent(
                call_id=call_id, name="deploy", arguments={"service": "api", "version": version}
            )
        ]
    )


def releaser(*replies: str | ChatMessage, name: str = "releaser") -> ChatAgent:
    return ChatAgent(ScriptedChatClient(list(replies)), name=name, tools=[deploy])


def seen_by(agent: ChatAgent) -> list[list[ChatMessage]]:
    client = agent.chat_client
    assert isinstance(client, ScriptedChatClient)
    return [messages for messages, _ in client.calls]


def setup_function() -> None:
    RAN.clear()


# -- sequential --------------------------------------------------------------------------------


async def test_sequential_pauses_on_the_call_and_the_answered_turn_goes_down_the_chain() -> None:
    notifier = ChatAgent(ScriptedChatClient(["Team notified."]), name="notifier")
    workflow = SequentialBuilder(
        participants=[releaser(deploy_call(), "Deployed api 2.0."), notifier]
    ).build()
    paused = await workflow.run("ship api 2.0")
    assert paused.status is WorkflowRunState.IDLE_WITH_PENDING_REQUESTS
    assert paused.outputs == []
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
    done = await workflow.send_responses({pending.request_id: ToolApprovalResponse.approve()})
    assert done.status is WorkflowRunState.COMPLETED
    assert RAN == [{"service": "api", "version": "2.0"}]
    [conversation] = done.outputs
    assert [m.role for m in conversation] == ["user", "assistant", "tool", "assistant", "assistant"]
    assert conversation[1].function_calls[0].call_id == "c1"
    assert conversation[2].function_results[0].result == "api 2.0 deployed"
    assert [m.text for m in conversation[3:]] == ["Deployed api 2.0.", "Team notified."]
    # The next agent saw the whole turn: the call, its result and the reply.
    [shown] = seen_by(notifier)
    assert [m.role for m in shown] == ["user", "assistant", "tool", "assistant"]


async def test_sequential_output_from_yields_the_whole_resumed_turn() -> None:
    agent = releaser(deploy_call(), "Deployed.")
    workflow = SequentialBuilder(participants=[agent], output_from="all").build()
    paused = await workflow.run("ship")
    [pending] = paused.pending_requests
    done = await workflow.send_responses({pending.request_id: ToolApprovalResponse.approve()})
    [response] = done.outputs
    assert isinstance(response, AgentResponse)
    assert response.text == "Deployed."
    assert [m.role for m in response.messages] == ["assistant", "tool", "assistant"]


async def test_a_sequential_pause_resumes_in_a_new_workflow_object_with_edited_arguments(
    tmp_path: Path,
) -> None:
    store = FileCheckpointStore(tmp_path / "checkpoints")
    first = SequentialBuilder(participants=[releaser(deploy_call())], checkpoint_store=store)
    paused = await first.build().run("ship api 2.0")
    [pending] = paused.pending_requests
    checkpoint = await store.load(paused.last_checkpoint_id or "")
    assert checkpoint is not None
    assert checkpoint.pending_requests
    # "Another process": the workflow built again with a fresh scripted model.
    again = releaser("Deployed api 1.9.")
    second = SequentialBuilder(participants=[again], checkpoint_store=store).build()
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
    conversation = done.outputs[0]
    assert conversation[-1].text == "Deployed api 1.9."
    assert conversation[1].function_calls[0].arguments["version"] == "1.9"
    [shown] = seen_by(again)
    assert [m.role for m in shown] == ["user", "assistant", "tool"]


async def test_every_call_of_the_turn_is_answered_before_it_resumes_and_a_rejection_is_read(
    tmp_path: Path,
) -> None:
    store = FileCheckpointStore(tmp_path / "checkpoints")
    two = ChatMessage.assistant(
        contents=[*deploy_call("c1").function_calls, *deploy_call("c2", "2.1").function_calls]
    )

    def build(*replies: str | ChatMessage) -> Workflow:
        return SequentialBuilder(participants=[releaser(*replies)], checkpoint_store=store).build()

    paused = await build(two).run("ship both")
    first, second = paused.pending_requests
    assert [r.data.call_id for r in (first, second)] == ["c1", "c2"]
    half = await build().run(
        checkpoint_id=paused.last_checkpoint_id,
        checkpoint_store=store,
        responses={first.request_id: ToolApprovalResponse.approve()},
    )
    assert half.status is WorkflowRunState.IDLE_WITH_PENDING_REQUESTS
    assert [r.request_id for r in half.pending_requests] == [second.request_id]
    assert RAN == []
    done = await build("One deployed, one refused.").run(
        checkpoint_id=half.last_checkpoint_id,
        checkpoint_store=store,
        responses={second.request_id: ToolApprovalResponse.reject("one at a time")},
    )
    assert done.status is WorkflowRunState.COMPLETED
    assert RAN == [{"service": "api", "version": "2.0"}]
    results = [r for m in done.outputs[0] for r in m.function_results]
    assert [r.call_id for r in results] == ["c1", "c2"]
    assert results[1].is_error
    assert "one at a time" in results[1].result


async def test_a_turn_that_asks_again_after_its_answer_pauses_again() -> None:
    agent = releaser(deploy_call("c1"), deploy_call("c2", "2.1"), "Both deployed.")
    workflow = SequentialBuilder(participants=[agent]).build()
    paused = await workflow.run("ship")
    [first] = paused.pending_requests
    again = await workflow.send_responses({first.request_id: ToolApprovalResponse.approve()})
    [second] = again.pending_requests
    assert second.data.call_id == "c2"
    done = await workflow.send_responses({second.request_id: ToolApprovalResponse.approve()})
    assert [m.role for m in done.outputs[0]] == [
        "user", "assistant", "tool", "assistant", "tool", "assistant"
    ]  # fmt: skip
    assert RAN == [{"service": "api", "version": "2.0"}, {"service": "api", "version": "2.1"}]


async def test_a_streamed_sequential_run_shows_the_request_and_resumes() -> None:
    workflow = SequentialBuilder(participants=[releaser(deploy_call(), "Deployed.")]).build()
    events = [e async for e in workflow.run_stream("ship")]
    [request] = [e for e in events if isinstance(e, RequestInfoEvent)]
    assert isinstance(request.data, ToolApprovalRequest)
    assert not [e for e in events if isinstance(e, WorkflowOutputEvent)]
    resumed = [
        e
        async for e in workflow.run_stream(
            responses={request.request_id: ToolApprovalResponse.approve()}
        )
    ]
    [output] = [e for e in resumed if isinstance(e, WorkflowOutputEvent)]
    assert output.data[-1].text == "Deployed."


class _TwoAsks(Executor):
    """Sends the agent after it two conversations in one superstep."""

    @handler
    async def split(self, conversation: list[ChatMessage], ctx: WorkflowContext[str]) -> None:
        await ctx.send_message("ship api 2.0")
        await ctx.send_message("ship api 2.1")


async def test_two_turns_of_one_agent_wait_at_once_and_each_resumes() -> None:
    agent = releaser(deploy_call("c1", "2.0"), deploy_call("c2", "2.1"), "First.", "Second.")
    workflow = SequentialBuilder(participants=[_TwoAsks("split"), agent]).build()
    paused = await workflow.run("ship both")
    assert [r.data.call_id for r in paused.pending_requests] == ["c1", "c2"]
    first, second = paused.pending_requests
    half = await workflow.send_responses({second.request_id: ToolApprovalResponse.approve()})
    assert [r.request_id for r in half.pending_requests] == [first.request_id]
    assert [c[-1].text for c in half.outputs] == ["First."]
    done = await workflow.send_responses({first.request_id: ToolApprovalResponse.approve()})
    assert [c[-1].text for c in done.outputs] == ["Second."]
    assert RAN == [{"service": "api", "version": "2.1"}, {"service": "api", "version": "2.0"}]


# -- concurrent --------------------------------------------------------------------------------


async def test_concurrent_pauses_only_the_asking_participant_and_resumes_in_a_new_object(
    tmp_path: Path,
) -> None:
    store = FileCheckpointStore(tmp_path / "checkpoints")

    def build(*replies: str | ChatMessage) -> tuple[Workflow, ChatAgent]:
        writer = ChatAgent(ScriptedChatClient(["Release notes."]), name="writer")
        return ConcurrentBuilder(
            participants=[releaser(*replies), writer], checkpoint_store=store
        ).build(), writer

    workflow, writer = build(deploy_call())
    paused = await workflow.run("ship api 2.0")
    [pending] = paused.pending_requests
    assert pending.source_executor_id == "releaser"
    assert paused.outputs == []
    assert len(seen_by(writer)) == 1  # the other participant answered at once
    second, writer_again = build("Deployed.")
    done = await second.run(
        checkpoint_id=paused.last_checkpoint_id,
        checkpoint_store=store,
        responses={pending.request_id: ToolApprovalResponse.approve()},
    )
    assert done.status is WorkflowRunState.COMPLETED
    assert seen_by(writer_again) == []  # its answer came from the checkpoint
    assert spoken_lines(done.outputs[0]) == [
        "user: ship api 2.0",
        "releaser: Deployed.",
        "writer: Release notes.",
    ]


async def test_concurrent_as_agent_answers_with_every_participants_reply() -> None:
    a = ChatAgent(ScriptedChatClient(["Answer A."]), name="a")
    b = ChatAgent(ScriptedChatClient(["Answer B."]), name="b")
    response = await ConcurrentBuilder(participants=[a, b]).build().as_agent().run("question")
    assert [(m.author_name, m.text) for m in response.messages] == [
        ("a", "Answer A."),
        ("b", "Answer B."),
    ]
    c = ChatAgent(ScriptedChatClient(["Answer C."]), name="c")
    d = ChatAgent(ScriptedChatClient(["Answer D."]), name="d")
    agent = ConcurrentBuilder(participants=[c, d]).build().as_agent(reply="last_agent")
    assert [m.text for m in (await agent.run("question")).messages] == ["Answer D."]


async def test_a_concurrent_team_as_agent_hands_the_next_model_every_answer() -> None:
    a = ChatAgent(ScriptedChatClient(["Answer A."]), name="a")
    b = ChatAgent(ScriptedChatClient(["Answer B."]), name="b")
    team = ConcurrentBuilder(participants=[a, b], name="panel").build().as_agent()
    judge = ChatAgent(ScriptedChatClient(["A wins."]), name="judge")
    result = await SequentialBuilder(participants=[team, judge]).build().run("question")
    assert result.outputs[0][-1].text == "A wins."
    [shown] = seen_by(judge)
    assert [m.text for m in shown] == ["question", "Answer A.", "Answer B."]


# -- handoff -----------------------------------------------------------------------------------


def transfer(target: str, call_id: str = "t1") -> ChatMessage:
    return ChatMessage(
        role=Role.ASSISTANT,
        contents=[FunctionCallContent(call_id=call_id, name=f"transfer_to_{target}", arguments={})],
    )


async def test_handoff_pauses_the_mesh_and_the_answered_turn_hands_off(tmp_path: Path) -> None:
    store = FileCheckpointStore(tmp_path / "checkpoints")

    def build(*replies: str | ChatMessage) -> Workflow:
        ops = releaser(*replies, name="ops")
        support = echo_agent("support")
        return (
            HandoffBuilder(participants=[ops, support], checkpoint_store=store)
            .add_handoff(ops, [support])
            .add_handoff(support, [ops])
            .build()
        )

    paused = await build(deploy_call()).run("ship api 2.0 and tell support")
    [pending] = paused.pending_requests
    assert isinstance(pending.data, ToolApprovalRequest)
    assert pending.source_executor_id == "ops"
    done = await build(transfer("support")).run(
        checkpoint_id=paused.last_checkpoint_id,
        checkpoint_store=store,
        responses={pending.request_id: ToolApprovalResponse.approve()},
    )
    assert done.status is WorkflowRunState.COMPLETED
    assert RAN == [{"service": "api", "version": "2.0"}]
    assert spoken_lines(done.outputs[0]) == [
        "user: ship api 2.0 and tell support",
        "support: support saw 1",
    ]


async def test_a_handoff_never_waits_for_approval_under_an_always_require_agent() -> None:
    ops = ChatAgent(
        ScriptedChatClient([transfer("support")]),
        name="ops",
        tool_approval_mode="always_require",
    )
    workflow = HandoffBuilder(participants=[ops, echo_agent("support")]).build()
    done = await workflow.run("tell support")
    assert done.status is WorkflowRunState.COMPLETED
    assert done.pending_requests == []
    assert spoken_lines(done.outputs[0]) == ["user: tell support", "support: support saw 1"]


async def test_handoff_with_request_info_asks_the_user_after_the_answered_turn() -> None:
    ops = releaser(deploy_call(), "Deployed, anything else?", name="ops")
    workflow = HandoffBuilder(participants=[ops, echo_agent("support")]).with_request_info().build()
    paused = await workflow.run("ship")
    [approval] = paused.pending_requests
    asked = await workflow.send_responses({approval.request_id: ToolApprovalResponse.approve()})
    [question] = asked.pending_requests
    assert isinstance(question.data, HandoffUserRequest)
    assert question.data.text == "Deployed, anything else?"
    done = await workflow.send_responses({question.request_id: ""})
    assert spoken_lines(done.outputs[0]) == ["user: ship", "ops: Deployed, anything else?"]


async def test_handoff_full_history_keeps_the_waiting_call_and_its_result() -> None:
    ops = releaser(deploy_call(), "Deployed.", name="ops")
    workflow = HandoffBuilder(participants=[ops, echo_agent("support")]).with_full_history().build()
    paused = await workflow.run("ship")
    [pending] = paused.pending_requests
    done = await workflow.send_responses({pending.request_id: ToolApprovalResponse.approve()})
    assert [m.role for m in done.outputs[0]] == ["user", "assistant", "tool", "assistant"]


async def test_handoff_autonomous_turns_count_on_after_a_paused_turn_resumes_elsewhere(
    tmp_path: Path,
) -> None:
    store = FileCheckpointStore(tmp_path / "checkpoints")

    def build(*replies: str | ChatMessage) -> Workflow:
        ops = releaser(*replies, name="ops")
        return (
            HandoffBuilder(participants=[ops, echo_agent("support")], checkpoint_store=store)
            .with_autonomous_mode(turn_limits={"ops": 2})
            .build()
        )

    # Turn 1 answers, autonomous turn 1 waits for approval; after it, one more turn (limit 2).
    paused = await build("Looking.", deploy_call()).run("ship")
    [pending] = paused.pending_requests
    done = await build("Deployed.", "All done.").run(
        checkpoint_id=paused.last_checkpoint_id,
        checkpoint_store=store,
        responses={pending.request_id: ToolApprovalResponse.approve()},
    )
    assert done.status is WorkflowRunState.COMPLETED
    assert [line for line in spoken_lines(done.outputs[0]) if line.startswith("ops")] == [
        "ops: Looking.",
        "ops: Deployed.",
        "ops: All done.",
    ]


# -- group chat --------------------------------------------------------------------------------


async def test_group_chat_full_history_keeps_the_waiting_call_and_resumes_in_a_new_object(
    tmp_path: Path,
) -> None:
    store = FileCheckpointStore(tmp_path / "checkpoints")

    def build(*replies: str | ChatMessage) -> Workflow:
        qa = ChatAgent(ScriptedChatClient(["Tests pass."]), name="qa")
        return GroupChatBuilder(
            participants=[qa, releaser(*replies)],
            selection_func=lambda state: "qa" if len(state) == 1 else "releaser",
            max_rounds=2,
            full_history=True,
            checkpoint_store=store,
        ).build()

    paused = await build(deploy_call()).run("ship api 2.0")
    [pending] = paused.pending_requests
    assert isinstance(pending.data, ToolApprovalRequest)
    done = await build("Deployed.").run(
        checkpoint_id=paused.last_checkpoint_id,
        checkpoint_store=store,
        responses={pending.request_id: ToolApprovalResponse.approve()},
    )
    assert done.status is WorkflowRunState.COMPLETED
    conversation = done.outputs[0]
    assert [(m.author_name, m.role.value) for m in conversation] == [
        (None, "user"),
        ("qa", "assistant"),
        ("releaser", "assistant"),
        (None, "tool"),
        ("releaser", "assistant"),
    ]
    assert conversation[2].function_calls[0].call_id == "c1"
    assert conversation[-1].text == "Deployed."


async def test_a_manager_agent_whose_tool_waits_fails_the_run_naming_the_alternative() -> None:
    manager = ChatAgent(ScriptedChatClient([deploy_call()]), name="boss", tools=[deploy])
    workflow = (
        GroupChatBuilder(participants=[echo_agent("a")])
        .with_orchestrator_agent(manager)
        .with_max_iterations(2)
        .build()
    )
    with pytest.raises(WorkflowExecutionError) as caught:
        await workflow.run("go")
    cause = caught.value.__cause__
    assert isinstance(cause, OrchestratorError)
    assert "participant" in str(cause)
    assert "never_require" in str(cause)
    assert RAN == []


# -- magentic ----------------------------------------------------------------------------------


def _ledger(*, done: bool, speaker: str = "releaser") -> str:
    return json.dumps(
        {
            "is_request_satisfied": {"reason": "r", "answer": done},
            "is_in_loop": {"reason": "r", "answer": False},
            "is_progress_being_made": {"reason": "r", "answer": True},
            "next_speaker": {"reason": "r", "answer": speaker},
            "instruction_or_question": {"reason": "r", "answer": "deploy api 2.0"},
        }
    )


async def test_magentic_pauses_on_a_participants_call_and_the_manager_goes_on(
    tmp_path: Path,
) -> None:
    store = FileCheckpointStore(tmp_path / "checkpoints")
    transcripts: list[str] = []

    def manager_reply(messages: list[ChatMessage], options: object) -> str:
        del options
        prompt = messages[-1].text
        if "final answer" in prompt:
            return "FINAL: shipped"
        if "fact sheet" in prompt:
            return "FACTS"
        if "bullet-point plan" in prompt:
            return "PLAN"
        transcripts.append(prompt)
        return _ledger(done=len(transcripts) > 1)

    def build(*replies: str | ChatMessage) -> Workflow:
        return MagenticBuilder(
            participants=[releaser(*replies)],
            manager=FunctionChatClient(manager_reply),
            checkpoint_store=store,
        ).build()

    paused = await build(deploy_call()).run("ship api 2.0")
    [pending] = paused.pending_requests
    assert isinstance(pending.data, ToolApprovalRequest)
    done = await build("Deployed api 2.0.").run(
        checkpoint_id=paused.last_checkpoint_id,
        checkpoint_store=store,
        responses={pending.request_id: ToolApprovalResponse.approve()},
    )
    assert done.status is WorkflowRunState.COMPLETED
    assert done.outputs[0].text == "FINAL: shipped"
    assert RAN == [{"service": "api", "version": "2.0"}]
    assert "Deployed api 2.0." in transcripts[-1]  # the manager read the answered turn


# -- cost and refusal --------------------------------------------------------------------------


@tool
def status(service: str) -> str:
    """A service's status (no approval of its own)."""
    return f"{service} is up"


async def test_only_participants_whose_turns_may_wait_keep_per_run_state() -> None:
    quiet = ChatAgent(ScriptedChatClient(["ok"]), name="quiet", tools=[status])
    waits = releaser("ok")
    strict = ChatAgent(
        ScriptedChatClient(["ok"]),
        name="strict",
        tools=[status],
        tool_approval_mode="always_require",
    )
    workflow = SequentialBuilder(participants=[quiet, waits, strict]).build()
    stateful = {n: workflow.get_executor(n).is_stateful for n in ("quiet", "releaser", "strict")}
    assert stateful == {"quiet": False, "releaser": True, "strict": True}
    concurrent = ConcurrentBuilder(participants=[quiet, waits]).build()
    assert not concurrent.get_executor("quiet").is_stateful
    assert concurrent.get_executor("releaser").is_stateful


async def test_a_waiting_turn_of_a_stateless_participant_fails_the_run_not_vanishes() -> None:
    call = ChatMessage.assistant(
        contents=[FunctionCallContent(call_id="s1", name="status", arguments={"service": "api"})]
    )
    agent = ChatAgent(ScriptedChatClient([call]), name="late", tools=[status])
    workflow = SequentialBuilder(participants=[agent]).build()
    agent.tool_approval_mode = "always_require"  # changed after the workflow was built
    with pytest.raises(WorkflowExecutionError) as caught:
        await workflow.run("status?")
    assert "before building the workflow" in str(caught.value)
