"""MagenticBuilder: task ledger, progress ledgers, stalls, re-planning and the final answer."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from agentic_core import (
    ChatAgent,
    ChatMessage,
    ChatOptions,
    InMemoryCheckpointStore,
    WorkflowExecutionError,
    WorkflowRunState,
)
from agentic_core.testing import FunctionChatClient
from agentic_orchestrator import MagenticBuilder, OrchestrationConfigError, SpeakerSelectionError

from ._helpers import echo_agent, resume_from_middle


def ledger(
    *,
    done: bool = False,
    loop: bool = False,
    progress: bool = True,
    speaker: str = "coder",
    instruction: str = "do the next step",
) -> str:
    return json.dumps(
        {
            "is_request_satisfied": {"reason": "r", "answer": done},
            "is_in_loop": {"reason": "r", "answer": loop},
            "is_progress_being_made": {"reason": "r", "answer": progress},
            "next_speaker": {"reason": "r", "answer": speaker},
            "instruction_or_question": {"reason": "r", "answer": instruction},
        }
    )


class Manager:
    """A scripted Magentic manager: fixed replies for facts, plans and answers, and a queue of
    progress ledgers; records what it was asked."""

    def __init__(self, ledgers: list[str]) -> None:
        self.ledgers: Iterator[str] = iter(ledgers)
        self.asked: list[str] = []
        self.plans = 0
        self.client = FunctionChatClient(self.reply)

    def reply(self, messages: list[ChatMessage], options: ChatOptions | None) -> str:
        prompt = messages[-1].text
        self.asked.append(prompt)
        if "fact sheet" in prompt and "Rewrite" not in prompt:
            return "FACTS v1"
        if "Rewrite the fact sheet" in prompt:
            return f"FACTS v{self.plans + 1}"
        if "bullet-point plan" in prompt:
            self.plans += 1
            return f"PLAN v{self.plans}"
        if "final answer" in prompt:
            return "FINAL: 42"
        return next(self.ledgers)


async def test_the_manager_plans_directs_and_answers() -> None:
    manager = Manager(
        [ledger(speaker="researcher", instruction="find the number"), ledger(done=True)]
    )
    researcher = echo_agent("researcher", description="looks things up")
    coder = echo_agent("coder", description="writes code")
    workflow = MagenticBuilder(participants=[researcher, coder], manager=manager.client).build()
    result = await workflow.run("What is the answer?")
    assert result.status is WorkflowRunState.COMPLETED
    answer = result.outputs[0]
    assert isinstance(answer, ChatMessage)
    assert answer.text == "FINAL: 42"
    assert answer.author_name == "magentic_manager"
    seen = [m.text for m in researcher.chat_client.calls[0][0]]  # type: ignore[attr-defined]
    assert seen[0] == "What is the answer?"
    assert "FACTS v1" in seen[1]
    assert "PLAN v1" in seen[1]
    assert "- coder: writes code" in seen[1]
    assert seen[2] == "find the number"
    assert coder.chat_client.calls == []  # type: ignore[attr-defined]
    assert "[researcher] researcher saw 3" in manager.asked[-1]


async def test_stalls_trigger_a_new_plan_and_a_fresh_team_conversation() -> None:
    manager = Manager(
        [
            ledger(progress=False),  # stall 1
            ledger(loop=True),  # stall 2 > max_stalls=1: re-plan
            ledger(instruction="try the new plan"),
            ledger(done=True),
        ]
    )
    coder = echo_agent("coder")
    workflow = (
        MagenticBuilder(participants=[coder], manager=manager.client)
        .with_limits(max_stalls=1)
        .build()
    )
    result = await workflow.run("task")
    assert result.outputs[0].text == "FINAL: 42"
    assert manager.plans == 2
    last_turn = [m.text for m in coder.chat_client.calls[-1][0]]  # type: ignore[attr-defined]
    # After the re-plan the team starts again from the task and the new ledger.
    assert last_turn[0] == "task"
    assert "PLAN v2" in last_turn[1]
    assert "FACTS v2" in last_turn[1]
    assert last_turn[2:] == ["try the new plan"]


async def test_max_rounds_forces_the_final_answer() -> None:
    manager = Manager([ledger() for _ in range(10)])
    workflow = (
        MagenticBuilder(participants=[echo_agent("coder")], manager=manager.client)
        .with_limits(max_rounds=2)
        .build()
    )
    result = await workflow.run("task")
    assert result.outputs[0].text == "FINAL: 42"
    assert "We stopped after 2 rounds." in manager.asked[-1]


async def test_stalling_past_every_reset_ends_with_an_answer() -> None:
    manager = Manager([ledger(progress=False) for _ in range(10)])
    workflow = (
        MagenticBuilder(participants=[echo_agent("coder")], manager=manager.client)
        .with_limits(max_stalls=0, max_resets=1)
        .build()
    )
    result = await workflow.run("task")
    assert result.outputs[0].text == "FINAL: 42"
    assert manager.plans == 2
    assert "re-planned as often as allowed" in manager.asked[-1]


async def test_an_invalid_ledger_is_corrected_then_a_stranger_fails_clearly() -> None:
    manager = Manager(["not json", ledger(speaker="coder"), ledger(done=True)])
    workflow = MagenticBuilder(participants=[echo_agent("coder")], manager=manager.client).build()
    result = await workflow.run("task")
    assert result.outputs[0].text == "FINAL: 42"

    stranger = Manager([ledger(speaker="ghost")] * 3)
    workflow = MagenticBuilder(participants=[echo_agent("coder")], manager=stranger.client).build()
    with pytest.raises(WorkflowExecutionError) as caught:
        await workflow.run("task")
    assert isinstance(caught.value.__cause__, SpeakerSelectionError)
    assert "next_speaker 'ghost' is not a participant" in str(caught.value.__cause__)


async def test_a_manager_agent_works_like_a_client() -> None:
    manager = Manager([ledger(done=True)])
    agent = ChatAgent(manager.client, name="lead")
    workflow = MagenticBuilder(participants=[echo_agent("coder")]).with_manager(agent).build()
    result = await workflow.run("task")
    assert result.outputs[0].author_name == "lead"


def test_configuration_errors() -> None:
    with pytest.raises(OrchestrationConfigError, match="no manager"):
        MagenticBuilder(participants=[echo_agent("a")]).build()
    with pytest.raises(OrchestrationConfigError, match="max_rounds"):
        MagenticBuilder(max_rounds=0)
    with pytest.raises(OrchestrationConfigError, match="non-empty"):
        MagenticBuilder(participants=[])


async def test_checkpointed_magentic_run_resumes_to_the_same_answer() -> None:
    store = InMemoryCheckpointStore()

    def make() -> Manager:
        return Manager([ledger(), ledger(speaker="coder"), ledger(done=True)])

    first = make()
    workflow = MagenticBuilder(
        participants=[echo_agent("coder")], manager=first.client, checkpoint_store=store
    ).build()
    full = await workflow.run("task")
    # The resumed run asks the manager again from that point: give it the same script tail.
    first.ledgers = iter([ledger(speaker="coder"), ledger(done=True), ledger(done=True)])
    resumed = await resume_from_middle(workflow, full, store)
    assert resumed.outputs[0].text == full.outputs[0].text == "FINAL: 42"
