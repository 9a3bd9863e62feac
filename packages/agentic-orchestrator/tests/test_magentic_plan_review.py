"""Magentic plan review: MAF's plan-review tests of ``orchestrations/tests/test_magentic.py``,
ported, plus the re-plan after a stall and the request's shape.

MAF's ``FakeManager`` (a ``MagenticManagerBase`` subclass with canned facts, plans and ledgers)
is our manager model scripted with ``ScriptedChatClient``: one reply per manager call, in order
(facts, plan, then the progress ledgers and the final answer). MAF's ``DummyExec`` participant,
never called since its ledger says the request is already satisfied, is an agent with an empty
script: calling it would fail the test.
"""

from __future__ import annotations

import json

import pytest

from agentic_core import (
    ChatAgent,
    ChatMessage,
    FunctionCallContent,
    FunctionResultContent,
    IncompatibleCheckpointError,
    InMemoryCheckpointStore,
    RequestInfoEvent,
    Role,
    Workflow,
    WorkflowCompletedEvent,
    WorkflowOutputEvent,
    WorkflowRunState,
)
from agentic_core.testing import ScriptedChatClient
from agentic_orchestrator import (
    MagenticBuilder,
    MagenticPlanReviewRequest,
    MagenticPlanReviewResponse,
    MagenticProgressLedger,
)

FINAL_ANSWER = "FINAL"
FACTS = "GIVEN OR VERIFIED FACTS\n- A\n"
PLAN = "- Do X\n- Do Y\n"
FACTS_2 = "GIVEN OR VERIFIED FACTS\n- A2\n"
PLAN_2 = "- Do Z\n"


def ledger(
    *,
    done: bool = False,
    progress: bool = True,
    speaker: str = "agentA",
    instruction: str = "Proceed with step 1",
) -> str:
    """A progress ledger as the manager model writes it."""
    item = lambda answer: {"reason": "test", "answer": answer}  # noqa: E731
    return json.dumps(
        {
            "is_request_satisfied": item(done),
            "is_in_loop": item(False),
            "is_progress_being_made": item(progress),
            "next_speaker": item(speaker),
            "instruction_or_question": item(instruction),
        }
    )


def fake_manager(*replies: str) -> ScriptedChatClient:
    """MAF's FakeManager: the first plan, then ``replies`` (ledgers, re-plans, final answer)."""
    return ScriptedChatClient([FACTS, PLAN, *replies])


def dummy(name: str = "agentA") -> ChatAgent:
    """MAF's DummyExec: a participant that must not be called (its script is empty)."""
    return ChatAgent(ScriptedChatClient([]), name=name, description=f"Stub agent {name}")


def replans(manager: ScriptedChatClient) -> int:
    """How many times the manager was asked for a new plan (MAF's CountingManager)."""
    return sum("Write a new short bullet-point plan" in m[-1].text for m, _ in manager.calls)


async def test_magentic_workflow_plan_review_approval_to_completion() -> None:
    manager = fake_manager(ledger(done=True), FINAL_ANSWER)
    wf = MagenticBuilder(participants=[dummy()], enable_plan_review=True, manager=manager).build()

    req_event: RequestInfoEvent | None = None
    async for ev in wf.run_stream("do work"):
        if isinstance(ev, RequestInfoEvent) and isinstance(ev.data, MagenticPlanReviewRequest):
            req_event = ev
    assert req_event is not None
    assert isinstance(req_event.data, MagenticPlanReviewRequest)

    completed = False
    output: ChatMessage | None = None
    async for ev in wf.run_stream(responses={req_event.request_id: req_event.data.approve()}):
        if isinstance(ev, WorkflowCompletedEvent) and ev.status is WorkflowRunState.COMPLETED:
            completed = True
        elif isinstance(ev, WorkflowOutputEvent):
            output = ev.data
        if completed and output is not None:
            break

    assert completed
    assert output is not None
    # MAF's terminal output is the manager's message (an update when streamed); ours a ChatMessage.
    assert isinstance(output, ChatMessage)
    assert output.text == FINAL_ANSWER


async def test_magentic_plan_review_with_revise() -> None:
    manager = fake_manager(FACTS_2, PLAN_2, ledger(done=True), FINAL_ANSWER)
    wf = MagenticBuilder(
        participants=[dummy("agentA")], enable_plan_review=True, manager=manager
    ).build()

    # Wait for the initial plan review request
    req_event: RequestInfoEvent | None = None
    async for ev in wf.run_stream("do work"):
        if isinstance(ev, RequestInfoEvent) and isinstance(ev.data, MagenticPlanReviewRequest):
            req_event = ev
    assert req_event is not None
    assert isinstance(req_event.data, MagenticPlanReviewRequest)

    # Send a revise response
    saw_second_review = False
    completed = False
    revise = req_event.data.revise("Looks good; consider Z")
    async for ev in wf.run_stream(responses={req_event.request_id: revise}):
        if isinstance(ev, RequestInfoEvent) and isinstance(ev.data, MagenticPlanReviewRequest):
            saw_second_review = True
            req_event = ev

    # Approve the second review
    assert isinstance(req_event.data, MagenticPlanReviewRequest)
    async for ev in wf.run_stream(responses={req_event.request_id: req_event.data.approve()}):
        if isinstance(ev, WorkflowCompletedEvent) and ev.status is WorkflowRunState.COMPLETED:
            completed = True
            break

    assert completed
    assert replans(manager) >= 1
    assert saw_second_review is True
    # The re-plan updates facts/plan to include A2 / Do Z
    combined_text = req_event.data.plan.text
    assert ("A2" in combined_text) or ("Do Z" in combined_text)
    # The feedback reached the manager's re-plan prompts.
    assert "Looks good; consider Z" in manager.calls[2][0][-1].text
    assert "Looks good; consider Z" in manager.calls[3][0][-1].text


async def test_magentic_checkpoint_resume_round_trip() -> None:
    storage = InMemoryCheckpointStore()

    manager1 = fake_manager()
    wf = MagenticBuilder(
        participants=[dummy()],
        enable_plan_review=True,
        checkpoint_store=storage,
        manager=manager1,
    ).build()

    task_text = "checkpoint task"
    req_event: RequestInfoEvent | None = None
    async for ev in wf.run_stream(task_text):
        if isinstance(ev, RequestInfoEvent) and isinstance(ev.data, MagenticPlanReviewRequest):
            req_event = ev
    assert req_event is not None
    assert isinstance(req_event.data, MagenticPlanReviewRequest)

    checkpoints = await storage.list(workflow_id=wf.id)
    assert checkpoints
    resume_checkpoint = checkpoints[-1]
    loaded_checkpoint = await storage.load(resume_checkpoint.id)
    assert loaded_checkpoint is not None
    # Regression check: checkpoints with pending request_info must include executor state.
    assert "magentic_manager" in loaded_checkpoint.executor_states
    assert loaded_checkpoint.pending_request_ids == [req_event.request_id]

    # A new workflow object, whose manager has only what is left to say.
    manager2 = ScriptedChatClient([ledger(done=True), FINAL_ANSWER])
    wf_resume = MagenticBuilder(
        participants=[dummy()],
        enable_plan_review=True,
        checkpoint_store=storage,
        manager=manager2,
    ).build()

    completed: WorkflowOutputEvent | None = None
    req_event = None
    async for event in wf_resume.run_stream(checkpoint_id=resume_checkpoint.id):
        if isinstance(event, RequestInfoEvent) and isinstance(
            event.data, MagenticPlanReviewRequest
        ):
            req_event = event
    assert req_event is not None
    assert isinstance(req_event.data, MagenticPlanReviewRequest)

    responses = {req_event.request_id: req_event.data.approve()}
    async for event in wf_resume.run_stream(responses=responses):
        if isinstance(event, WorkflowOutputEvent):
            completed = event
    assert completed is not None
    assert completed.data.text == FINAL_ANSWER

    # The resumed manager's conversation ends with the approved task ledger (then its answer).
    final = await storage.latest(resume_checkpoint.run_id)
    assert final is not None
    state = json.loads(final.executor_states["magentic_manager"])
    assert state["conversation"][-2]["contents"][0]["text"] == req_event.data.plan.text
    assert "- Do X" in req_event.data.plan.text
    # The progress ledger it was asked for saw that ledger.
    assert "- Do X" in manager2.calls[0][0][-1].text


async def test_magentic_checkpoint_resume_rejects_participant_renames() -> None:
    storage = InMemoryCheckpointStore()

    workflow = MagenticBuilder(
        participants=[dummy("agentA")],
        enable_plan_review=True,
        checkpoint_store=storage,
        manager=fake_manager(),
    ).build()

    req_event: RequestInfoEvent | None = None
    async for event in workflow.run_stream("task"):
        if isinstance(event, RequestInfoEvent) and isinstance(
            event.data, MagenticPlanReviewRequest
        ):
            req_event = event

    assert req_event is not None
    assert isinstance(req_event.data, MagenticPlanReviewRequest)

    checkpoints = await storage.list(workflow_id=workflow.id)
    target_checkpoint = checkpoints[-1]

    renamed_workflow = MagenticBuilder(
        participants=[dummy("renamedAgent")],
        enable_plan_review=True,
        checkpoint_store=storage,
        manager=fake_manager(),
    ).build()

    with pytest.raises(IncompatibleCheckpointError, match="different graph"):
        async for _ in renamed_workflow.run_stream(checkpoint_id=target_checkpoint.id):
            pass


# --- beyond MAF's tests ----------------------------------------------------------------------


async def pending_review(workflow: Workflow, task: str) -> tuple[str, MagenticPlanReviewRequest]:
    result = await workflow.run(task)
    assert result.status is WorkflowRunState.IDLE_WITH_PENDING_REQUESTS
    [request] = result.pending_requests
    assert isinstance(request.data, MagenticPlanReviewRequest)
    return request.request_id, request.data


async def test_without_plan_review_the_team_starts_at_once() -> None:
    manager = fake_manager(ledger(done=True), FINAL_ANSWER)
    result = await MagenticBuilder(participants=[dummy()], manager=manager).build().run("task")
    assert result.status is WorkflowRunState.COMPLETED
    assert result.pending_requests == []


async def test_the_first_review_holds_the_task_ledger_and_no_progress() -> None:
    workflow = (
        MagenticBuilder(participants=[dummy()], manager=fake_manager()).with_plan_review().build()
    )
    _, request = await pending_review(workflow, "do work")
    assert request.is_stalled is False
    assert request.current_progress is None
    assert request.plan.author_name == "magentic_manager"
    for part in ("do work", "- agentA: Stub agent agentA", "- A", "- Do X"):
        assert part in request.plan.text


async def test_a_stall_replan_is_reviewed_with_the_ledger_that_caused_it() -> None:
    coder = ChatAgent(ScriptedChatClient(["tried"]), name="agentA")
    manager = fake_manager(
        ledger(),  # round 1: agentA works
        ledger(progress=False),  # stall 1 > max_stalls=0: re-plan, then ask the reviewer
        FACTS_2,
        PLAN_2,
        ledger(done=True),
        FINAL_ANSWER,
    )
    workflow = (
        MagenticBuilder(participants=[coder], manager=manager, max_stalls=0)
        .with_plan_review()
        .build()
    )
    request_id, first = await pending_review(workflow, "task")
    result = await workflow.send_responses({request_id: first.approve()})
    [stalled] = result.pending_requests
    assert isinstance(stalled.data, MagenticPlanReviewRequest)
    assert stalled.data.is_stalled is True
    assert stalled.data.current_progress == MagenticProgressLedger(
        is_request_satisfied=False,
        is_in_loop=False,
        is_progress_being_made=False,
        next_speaker="agentA",
        instruction="Proceed with step 1",
    )
    assert "- Do Z" in stalled.data.plan.text
    done = await workflow.send_responses({stalled.request_id: stalled.data.approve()})
    assert done.status is WorkflowRunState.COMPLETED
    assert done.outputs[0].text == FINAL_ANSWER


async def test_a_revision_keeps_the_stall_context_and_the_team_sees_the_feedback() -> None:
    coder = ChatAgent(ScriptedChatClient(["done it"]), name="agentA")
    manager = fake_manager(FACTS_2, PLAN_2, ledger(), ledger(done=True), FINAL_ANSWER)
    workflow = MagenticBuilder(participants=[coder], manager=manager).with_plan_review().build()
    request_id, first = await pending_review(workflow, "task")
    # The viewer's form answers with plain JSON: it is validated into the response type.
    revised = await workflow.send_responses(
        {request_id: {"review": [ChatMessage.user("Only Z, please").model_dump()]}}
    )
    [second] = revised.pending_requests
    assert isinstance(second.data, MagenticPlanReviewRequest)
    assert second.data.is_stalled is first.is_stalled is False
    done = await workflow.send_responses({second.request_id: second.data.approve()})
    assert done.outputs[0].text == FINAL_ANSWER
    seen = [m.text for m in coder.chat_client.calls[0][0]]  # type: ignore[attr-defined]
    assert seen[:2] == ["task", "Only Z, please"]
    assert "- Do Z" in seen[2]
    assert seen[3] == "Proceed with step 1"


async def test_a_team_as_an_agent_asks_for_the_review_as_a_function_call() -> None:
    workflow = (
        MagenticBuilder(participants=[dummy()], manager=fake_manager(ledger(done=True), "FINAL"))
        .with_plan_review()
        .build()
    )
    agent = workflow.as_agent("team")
    thread = agent.get_new_thread()
    asked = await agent.run("do work", thread=thread)
    [call] = [c for m in asked.messages for c in m.contents if isinstance(c, FunctionCallContent)]
    assert call.name == "request_info"
    assert "- Do X" in call.arguments["plan"]["contents"][0]["text"]
    approval = FunctionResultContent(call_id=call.call_id, result={"review": []})
    answered = await agent.run(ChatMessage(role=Role.TOOL, contents=[approval]), thread=thread)
    assert answered.text == "FINAL"


def test_review_responses() -> None:
    assert MagenticPlanReviewResponse.approve().approved
    assert MagenticPlanReviewResponse.revise("  ").approved  # no text: nothing to revise
    revised = MagenticPlanReviewResponse.revise(["more tests", ChatMessage.user("and docs")])
    assert not revised.approved
    assert [m.text for m in revised.review] == ["more tests", "and docs"]
    assert all(m.role.value == "user" for m in revised.review)
