# pyright: strict
"""Type-checked (pyright strict) uses of Magentic plan review and the DAG's
``on_dependency_failure``; also run as tests, on ``ScriptedChatClient``."""

from __future__ import annotations

import json
from typing import assert_type

from agentic_core import ChatAgent, ChatMessage, RequestInfoEvent, Workflow
from agentic_core.testing import ScriptedChatClient
from agentic_orchestrator import (
    DagResult,
    DagWorkflow,
    MagenticBuilder,
    MagenticPlanReviewRequest,
    MagenticPlanReviewResponse,
    MagenticProgressLedger,
    Orchestrator,
    WorkflowStep,
)


def done_ledger() -> str:
    answer = {"reason": "", "answer": True}
    keys = ("is_request_satisfied", "is_progress_being_made", "is_in_loop", "next_speaker")
    return json.dumps(dict.fromkeys(keys, answer) | {"instruction_or_question": answer})


async def test_a_plan_review_is_requested_and_approved() -> None:
    manager = ScriptedChatClient(["facts", "plan", done_ledger(), "the answer"])
    coder = ChatAgent(ScriptedChatClient([]), name="coder")
    builder = MagenticBuilder(participants=[coder], manager=manager).with_plan_review()
    workflow = builder.build()
    assert_type(workflow, Workflow)

    paused = await workflow.run("task")
    request = paused.pending_requests[0]
    assert_type(request, RequestInfoEvent)
    review = request.data
    assert isinstance(review, MagenticPlanReviewRequest)
    assert_type(review.plan, ChatMessage)
    assert_type(review.current_progress, MagenticProgressLedger | None)
    approval = review.approve()
    assert_type(approval, MagenticPlanReviewResponse)
    assert_type(MagenticPlanReviewResponse.revise(["a", ChatMessage.user("b")]).approved, bool)
    done = await workflow.send_responses({request.request_id: approval})
    assert done.outputs[0].text == "the answer"


async def test_the_dag_runs_steps_after_a_failed_dependency_on_request() -> None:
    orchestrator = Orchestrator(on_dependency_failure="run")
    orchestrator.register_agent(ChatAgent(ScriptedChatClient(["ok"]), name="coder"))
    result = await orchestrator.execute(
        DagWorkflow(steps=[WorkflowStep(agent="coder", action="generate")]),
        on_dependency_failure="skip",
    )
    assert_type(result, DagResult)
    assert result.succeeded == ["coder:generate"]
