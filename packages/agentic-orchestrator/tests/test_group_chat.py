"""GroupChatBuilder, its selectors and termination conditions."""

from __future__ import annotations

from typing import Any

import pytest

from agentic_core import (
    BoundedMemo,
    ChatAgent,
    ChatMessage,
    ChatOptions,
    InMemoryCheckpointStore,
    MaxSuperstepsExceededError,
    Role,
    WorkflowExecutionError,
    WorkflowRunState,
)
from agentic_core.testing import FunctionChatClient, ScriptedChatClient
from agentic_orchestrator import (
    GroupChatBuilder,
    GroupChatState,
    OrchestrationConfigError,
    SpeakerSelectionError,
    any_termination,
    keyword_termination,
    llm_selector,
    max_messages_termination,
    max_rounds_termination,
    no_repeat_selector,
    round_robin_selector,
    smart_selector,
)

from ._helpers import echo_agent, resume_from_middle, spoken_lines


def chat(*agents: ChatAgent) -> GroupChatBuilder:
    return GroupChatBuilder().participants(list(agents))


def state(
    texts: list[tuple[str, str]], *, names: tuple[str, ...] = ("a", "b", "c")
) -> GroupChatState:
    conversation = tuple(
        ChatMessage.user(text) if who == "user" else ChatMessage.assistant(text, author_name=who)
        for who, text in texts
    )
    history = tuple(who for who, _ in texts if who != "user")
    return GroupChatState(
        conversation=conversation,
        participants={n: n for n in names},
        current_round=len(history),
        history=history,
    )


async def test_round_robin_until_the_keyword_and_every_turn_is_in_the_output() -> None:
    writer = ChatAgent(ScriptedChatClient(["draft 1", "draft 2"]), name="writer")
    critic = ChatAgent(ScriptedChatClient(["more", "APPROVED"]), name="critic")
    workflow = (
        chat(writer, critic)
        .with_orchestrator_func(round_robin_selector)
        .with_termination_condition(keyword_termination("APPROVED"))
        .with_max_iterations(10)
        .build()
    )
    result = await workflow.run("write a slogan")
    assert result.status is WorkflowRunState.COMPLETED
    assert spoken_lines(result.outputs[0]) == [
        "user: write a slogan",
        "writer: draft 1",
        "critic: more",
        "writer: draft 2",
        "critic: APPROVED",
    ]


async def test_every_response_reaches_every_participants_context() -> None:
    a, b, c = echo_agent("a"), echo_agent("b"), echo_agent("c")
    workflow = (
        chat(a, b, c).with_orchestrator_func(round_robin_selector).with_max_iterations(4).build()
    )
    await workflow.run("start")
    calls = a.chat_client.calls  # type: ignore[attr-defined]
    # a's second turn sees the task, its own first turn, and b's and c's answers.
    assert [m.text for m in calls[1][0]] == ["start", "a saw 1", "b saw 2", "c saw 3"]


async def test_max_iterations_ends_the_chat() -> None:
    workflow = (
        chat(echo_agent("a"), echo_agent("b"))
        .with_orchestrator_func(round_robin_selector)
        .with_max_iterations(3)
        .build()
    )
    result = await workflow.run("go")
    assert [m.author_name for m in result.outputs[0][1:]] == ["a", "b", "a"]


@pytest.mark.parametrize(
    ("condition", "turns"),
    [
        (max_messages_termination(3), 2),
        (max_rounds_termination(4), 4),
        (keyword_termination("saw 3"), 3),
        (any_termination([max_rounds_termination(5), keyword_termination("saw 2")]), 2),
        (lambda conversation: len(conversation) >= 2, 1),  # written the MAF way
    ],
    ids=["max_messages", "max_rounds", "keyword", "any", "maf_lambda"],
)
async def test_each_termination_condition_ends_the_chat(condition: Any, turns: int) -> None:
    workflow = (
        chat(echo_agent("a"), echo_agent("b"))
        .with_orchestrator_func(round_robin_selector)
        .with_termination_condition(condition)
        .with_max_iterations(50)
        .build()
    )
    result = await workflow.run("go")
    assert len(result.outputs[0]) == 1 + turns


async def test_an_async_termination_and_an_async_selector() -> None:
    async def last_two(state: GroupChatState) -> str:
        return state.names[-1] if state.current_round % 2 else state.names[0]

    async def after_two_turns(state: GroupChatState) -> bool:
        return state.current_round >= 2

    workflow = (
        chat(echo_agent("a"), echo_agent("b"), echo_agent("c"))
        .with_orchestrator_func(last_two)
        .with_termination_condition(after_two_turns)
        .build()
    )
    result = await workflow.run("go")
    assert [m.author_name for m in result.outputs[0][1:]] == ["a", "c"]


async def test_a_keyword_in_the_task_does_not_end_the_chat_before_it_starts() -> None:
    workflow = (
        chat(echo_agent("a"))
        .with_orchestrator_func(round_robin_selector)
        .with_termination_condition(keyword_termination("DONE"))
        .with_max_iterations(2)
        .build()
    )
    result = await workflow.run("say DONE when done")
    assert len(result.outputs[0]) == 3


async def test_a_selector_naming_a_stranger_fails_the_run_with_its_name() -> None:
    workflow = (
        chat(echo_agent("a"), echo_agent("b"))
        .with_orchestrator_func(lambda state: "mallory")
        .with_max_iterations(3)
        .build()
    )
    with pytest.raises(WorkflowExecutionError) as caught:
        await workflow.run("go")
    cause = caught.value.__cause__
    assert isinstance(cause, SpeakerSelectionError)
    assert "'mallory'" in str(cause)
    assert "a, b" in str(cause)


async def test_the_manager_agent_names_each_speaker_then_ends_the_chat() -> None:
    manager = ChatAgent(
        ScriptedChatClient(
            [
                '{"next_speaker": "b"}',
                'Next: ```json\n{"next_speaker": "A"}\n```',
                '{"terminate": true, "final_message": "All done."}',
            ]
        ),
        name="boss",
    )
    workflow = (
        chat(echo_agent("a", description="writes"), echo_agent("b", description="checks"))
        .with_orchestrator_agent(manager)
        .with_max_iterations(10)
        .build()
    )
    result = await workflow.run("task")
    assert spoken_lines(result.outputs[0]) == [
        "user: task",
        "b: b saw 1",
        "a: a saw 2",
        "boss: All done.",
    ]
    prompt = manager.chat_client.calls[1][0]  # type: ignore[attr-defined]
    assert "- a: writes" in prompt[0].text
    assert "- b: checks" in prompt[0].text
    assert prompt[-1].text == "[user] task\n[b] b saw 1"


async def test_the_manager_naming_a_stranger_is_corrected_then_obeyed() -> None:
    manager = ChatAgent(ScriptedChatClient(["carol", '{"next_speaker": "a"}']), name="boss")
    workflow = chat(echo_agent("a")).with_orchestrator_agent(manager).with_max_iterations(1).build()
    result = await workflow.run("task")
    assert spoken_lines(result.outputs[0])[-1] == "a: a saw 1"
    retry = manager.chat_client.calls[1][0]  # type: ignore[attr-defined]
    assert "'carol' is not a participant" in retry[-1].text


async def test_a_manager_that_keeps_naming_strangers_fails_clearly() -> None:
    manager = ChatAgent(ScriptedChatClient(["carol", "dave", "erin"]), name="boss")
    workflow = (
        chat(echo_agent("a"), echo_agent("b"))
        .with_orchestrator_agent(manager, max_retries=2)
        .with_max_iterations(3)
        .build()
    )
    with pytest.raises(WorkflowExecutionError) as caught:
        await workflow.run("task")
    assert isinstance(caught.value.__cause__, SpeakerSelectionError)
    assert "'erin'" in str(caught.value.__cause__)
    assert "after 3 attempt(s)" in str(caught.value.__cause__)


async def test_llm_selector_asks_a_model_for_the_name() -> None:
    def pick(messages: list[ChatMessage], options: ChatOptions | None) -> str:
        return "b" if "[a]" in messages[-1].text else "a"

    workflow = (
        chat(echo_agent("a"), echo_agent("b"))
        .with_orchestrator_func(llm_selector(FunctionChatClient(pick)))
        .with_max_iterations(3)
        .build()
    )
    result = await workflow.run("go")
    assert [m.author_name for m in result.outputs[0][1:]] == ["a", "b", "b"]


async def test_llm_selector_gives_up_with_a_speaker_selection_error() -> None:
    selector = llm_selector(ScriptedChatClient(["nobody", "nobody"]), max_retries=1)
    with pytest.raises(SpeakerSelectionError, match="'nobody'"):
        await selector(state([("user", "hi")]))  # type: ignore[misc]


def test_round_robin_and_smart_selectors() -> None:
    assert round_robin_selector(state([("user", "hi")])) == "a"
    assert round_robin_selector(state([("user", "hi"), ("a", "x")])) == "b"
    # Addressed by name (not its own): that one; otherwise the next after the last speaker.
    assert smart_selector(state([("user", "hi"), ("a", "over to @c now")])) == "c"
    assert smart_selector(state([("user", "hi"), ("a", "I, a, think so")])) == "b"
    assert smart_selector(state([("user", "hi"), ("c", "ok")])) == "a"
    assert smart_selector(state([("user", "b and c, please")])) == "b"


async def test_no_repeat_selector_passes_a_repeat_on() -> None:
    always_b = no_repeat_selector(lambda s: "b")
    assert await always_b(state([("user", "hi")])) == "b"  # type: ignore[misc]
    assert await always_b(state([("user", "hi"), ("b", "x")])) == "c"  # type: ignore[misc]


def test_group_chat_state_is_its_conversation() -> None:
    s = state([("user", "hi"), ("a", "x")])
    assert len(s) == 2
    assert s[-1].text == "x"
    assert [m.role for m in s] == [Role.USER, Role.ASSISTANT]
    assert s.last_speaker == "a"
    assert s.names == ["a", "b", "c"]


def test_configuration_errors_are_raised_at_build_time() -> None:
    with pytest.raises(OrchestrationConfigError, match="could never end"):
        chat(echo_agent("a")).with_orchestrator_func(round_robin_selector).build()
    with pytest.raises(OrchestrationConfigError, match="no manager"):
        chat(echo_agent("a")).with_max_iterations(2).build()
    with pytest.raises(OrchestrationConfigError, match="not both"):
        (
            chat(echo_agent("a"))
            .with_orchestrator_func(round_robin_selector)
            .with_orchestrator_agent(echo_agent("m"))
            .with_max_iterations(2)
            .build()
        )
    with pytest.raises(OrchestrationConfigError, match="non-empty"):
        GroupChatBuilder().participants([])
    with pytest.raises(OrchestrationConfigError, match="'x'"):
        GroupChatBuilder().participants([echo_agent("x"), echo_agent("x")])
    with pytest.raises(OrchestrationConfigError, match="positive"):
        GroupChatBuilder().with_max_iterations(0)
    with pytest.raises(OrchestrationConfigError, match="positive"):
        max_rounds_termination(0)
    with pytest.raises(OrchestrationConfigError, match="empty"):
        keyword_termination("")


async def test_a_termination_that_never_fires_without_a_max_ends_in_a_typed_error() -> None:
    workflow = (
        chat(echo_agent("a"))
        .with_orchestrator_func(round_robin_selector)
        .with_termination_condition(lambda state: False)
        .build()
    )
    with pytest.raises(MaxSuperstepsExceededError):
        await workflow.run("forever?")


@pytest.mark.parametrize("fresh_process", [False, True], ids=["same_process", "fresh_process"])
async def test_checkpointed_group_chat_resumes_to_the_same_conversation(
    fresh_process: bool,
) -> None:
    store = InMemoryCheckpointStore()
    workflow = (
        GroupChatBuilder(
            participants=[echo_agent("a"), echo_agent("b"), echo_agent("c")],
            selection_func=round_robin_selector,
            max_rounds=6,
            checkpoint_store=store,
        )
    ).build()
    full = await workflow.run("go")
    if fresh_process:  # a process that never wrote these states: it parses them
        BoundedMemo.clear_all()
    resumed = await resume_from_middle(workflow, full, store)
    assert resumed.status is WorkflowRunState.COMPLETED
    assert spoken_lines(resumed.outputs[0]) == spoken_lines(full.outputs[0])
    assert len(full.outputs[0]) == 7


async def test_one_workflow_serves_concurrent_chats() -> None:
    import asyncio

    workflow = (
        chat(echo_agent("a"), echo_agent("b"))
        .with_orchestrator_func(round_robin_selector)
        .with_max_iterations(4)
        .build()
    )
    first, second = await asyncio.gather(workflow.run("one"), workflow.run("two"))
    assert spoken_lines(first.outputs[0])[0] == "user: one"
    assert spoken_lines(second.outputs[0])[0] == "user: two"
    assert spoken_lines(first.outputs[0])[1:] == spoken_lines(second.outputs[0])[1:]
