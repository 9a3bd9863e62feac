"""The patterns' per-turn fast paths keep their results: what each one skips, and that it still
gives what the slow way gave.

- a manager's state is saved as the JSON pydantic writes, each message dumped once, and a
  state restored from the last save is this run's own copy;
- the Magentic manager writes each round's transcript from the new messages only;
- an agent's turn and a Magentic reply are dispatched to a handler of their own class (found
  once per type), not matched against a union with ``list[ChatMessage]`` at every message;
- a handoff's transfer tool runs on the event loop, and the handoff agent offers its tools in
  its options (no copy of the options per turn).
"""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import Callable
from typing import Any

import pytest
from pydantic import TypeAdapter

from agentic_core import (
    AgentExecutorResponse,
    AgentResponse,
    BoundedMemo,
    ChatAgent,
    ChatMessage,
    ChatOptions,
    FunctionCallContent,
    InMemoryCheckpointStore,
    Role,
    TextContent,
    Workflow,
    WorkflowRunResult,
    tool,
)
from agentic_core.testing import FunctionChatClient, ScriptedChatClient
from agentic_orchestrator import (
    GroupChatBuilder,
    HandoffBuilder,
    MagenticBuilder,
    SequentialBuilder,
    round_robin_selector,
)
from agentic_orchestrator._group_chat import _ChatState, _GroupChatManager
from agentic_orchestrator._handoff_tools import transfer_tools, with_transfer_tools
from agentic_orchestrator._magentic import (
    _NOTHING_DERIVED,
    MagenticReply,
    _LedgerState,
    _Manager,
)
from agentic_orchestrator._saved_state import ConversationJson, LastSaved
from agentic_orchestrator._speaker_choice import Transcript, transcript

from ._helpers import echo_agent

_MESSAGES = TypeAdapter(list[ChatMessage])


def pydantic_json(messages: list[ChatMessage]) -> str:
    return _MESSAGES.dump_json(messages).decode()


def varied_messages() -> list[ChatMessage]:
    """Messages whose JSON needs escaping, non-ASCII text, tool calls and results."""
    return [
        ChatMessage.user('Plan "the" trip: Lisboa \u00e9 \u2028 \x7f'),
        ChatMessage.assistant("day one", author_name="writer"),
        ChatMessage(
            role=Role.ASSISTANT,
            contents=[
                TextContent(text="looking it up"),
                FunctionCallContent(call_id="c1", name="lookup", arguments={"q": ["\u00fc", 1]}),
            ],
            author_name="critic",
        ),
        ChatMessage.tool("c1", {"found": True}),
        ChatMessage.assistant("", author_name="critic"),
    ]


# -- a conversation dumped once per message ------------------------------------------------------


def test_a_growing_conversation_dumps_as_pydantic_dumps_it_whole() -> None:
    messages = varied_messages()
    dumped = ConversationJson()
    for end in range(len(messages) + 1):
        dumped = dumped.extended(messages[:end])
        assert dumped.json == pydantic_json(messages[:end])


def test_messages_already_dumped_are_not_dumped_again() -> None:
    first, second = ChatMessage.user("first"), ChatMessage.assistant("second")
    dumped = ConversationJson().extended([first])
    # Messages are never changed in place; this one is, to tell a re-dump from the kept JSON.
    object.__setattr__(first, "author_name", "changed")
    extended = dumped.extended([first, second])
    assert '"author_name":null' in extended.json.split("},{")[0]
    assert extended.json == f"{dumped.json[:-1]},{pydantic_json([second])[1:]}"
    assert extended.extended([first, second]) is extended  # nothing new: nothing dumped


def test_a_conversation_that_is_not_a_continuation_is_dumped_whole() -> None:
    messages = varied_messages()
    dumped = ConversationJson().extended(messages[:3])
    replaced = [ChatMessage.user("a new start"), *messages[3:]]
    assert dumped.extended(replaced).json == pydantic_json(replaced)
    shorter = messages[:2]
    assert dumped.extended(shorter).json == pydantic_json(shorter)
    # Equal messages that are other objects are not the dumped ones: dumped again, still right.
    copies = [m.model_copy() for m in messages[:3]]
    assert dumped.extended([*copies, messages[3]]).json == pydantic_json(messages[:4])


def test_last_saved_finds_the_very_string_only_and_clear_all_forgets_it() -> None:
    last: LastSaved[int] = LastSaved(2)
    saved = json.dumps({"conversation": ["x" * 100]})
    last.remember(saved, 1)
    assert last.get(saved) == 1
    assert last.get("".join(list(saved))) is None  # an equal string, read back elsewhere
    BoundedMemo.clear_all()
    assert last.get(saved) is None


# -- the group chat manager's state --------------------------------------------------------------


def manager() -> _GroupChatManager:
    async def choose(state: Any) -> Any:
        raise AssertionError("not asked in these tests")

    return _GroupChatManager({"writer": "writes", "critic": "reads"}, choose, None, 10, "boss")


def test_the_chat_state_is_the_json_pydantic_writes_at_every_turn() -> None:
    messages = varied_messages()
    saved: str | None = None
    for turn in range(1, len(messages)):
        chat = copy.copy(manager())  # as the engine runs each invocation: a fresh copy
        chat.restore_state(saved)
        if saved is None:
            chat._started = True  # pyright: ignore[reportPrivateUsage]
        chat._conversation.append(messages[turn - 1])  # pyright: ignore[reportPrivateUsage]
        chat._round = turn  # pyright: ignore[reportPrivateUsage]
        chat._history.append("writer" if turn % 2 else "crit\u00efc")  # pyright: ignore[reportPrivateUsage]
        saved = chat.snapshot_state()
        expected = _ChatState(
            conversation=messages[:turn],
            round=turn,
            history=["writer" if t % 2 else "crit\u00efc" for t in range(1, turn + 1)],
        )
        assert saved == expected.model_dump_json()


def test_a_restored_chat_is_this_runs_own_copy() -> None:
    chat = manager()
    chat._started = True  # pyright: ignore[reportPrivateUsage]
    chat._conversation = [ChatMessage.user("task")]  # pyright: ignore[reportPrivateUsage]
    saved = chat.snapshot_state()
    one, two = copy.copy(manager()), copy.copy(manager())
    one.restore_state(saved)
    one._conversation.append(ChatMessage.assistant("mine"))  # pyright: ignore[reportPrivateUsage]
    one._history.append("writer")  # pyright: ignore[reportPrivateUsage]
    one.snapshot_state()
    two.restore_state(saved)  # the same string again (a retry, a second resume)
    assert [m.text for m in two._conversation] == ["task"]  # pyright: ignore[reportPrivateUsage]
    assert two._history == []  # pyright: ignore[reportPrivateUsage]


async def test_every_group_chat_checkpoint_holds_the_state_pydantic_writes() -> None:
    store = InMemoryCheckpointStore()
    workflow = GroupChatBuilder(
        participants=[echo_agent("a"), echo_agent("b")],
        selection_func=round_robin_selector,
        max_rounds=5,
        checkpoint_store=store,
    ).build()
    result = await workflow.run("go")
    states = await saved_states(workflow, result, store, "group_chat_manager")
    assert len(states) >= 5
    for state in states:
        assert state == _ChatState.model_validate_json(state).model_dump_json()


async def saved_states(
    workflow: Workflow, result: WorkflowRunResult, store: InMemoryCheckpointStore, executor: str
) -> list[str]:
    """Every state ``executor`` saved in the run's checkpoints (none before it first ran)."""
    states: list[str] = []
    for entry in await workflow.get_run_history(result.run_id, checkpoint_store=store):
        checkpoint = await store.load(entry.id)
        assert checkpoint is not None
        state = checkpoint.executor_states.get(executor)
        if state is not None:
            assert isinstance(state, str)
            states.append(state)
    return states


# -- the Magentic manager's state and transcript -------------------------------------------------


def test_the_ledger_state_is_the_json_pydantic_writes_as_it_grows_and_restarts() -> None:
    messages = varied_messages()
    state = _LedgerState(task='t\u00e9\n"x"', input=messages[:1], facts="F", plan="P")
    derived = _NOTHING_DERIVED
    for step in range(1, len(messages)):
        state.conversation.append(messages[step])
        state.round, state.stalls = step, step % 2
        saved, derived = state.saved(derived)
        assert saved == state.model_dump_json()
    # A re-plan starts the conversation again; a reviewer's feedback joins the input.
    state.feedback.append(ChatMessage.user("fewer steps"))
    state.conversation = [*state.input, *state.feedback, ChatMessage.assistant("PLAN v2")]
    state.facts, state.resets = "F2", 1
    saved, derived = state.saved(derived)
    assert saved == state.model_dump_json()


def magentic_manager() -> _Manager:
    return _Manager(
        ScriptedChatClient([]),
        {"coder": "codes"},
        max_rounds=5,
        max_stalls=1,
        max_resets=1,
        max_retries=0,
    )


def test_a_restored_ledger_state_is_this_runs_own_copy() -> None:
    lead = magentic_manager()
    lead._state = _LedgerState(task="t", input=[ChatMessage.user("t")])  # pyright: ignore[reportPrivateUsage]
    lead._state.conversation.append(ChatMessage.user("t"))  # pyright: ignore[reportPrivateUsage]
    saved = lead.snapshot_state()
    one, two = copy.copy(magentic_manager()), copy.copy(magentic_manager())
    one.restore_state(saved)
    state = one._require_state()  # pyright: ignore[reportPrivateUsage]
    state.conversation.append(ChatMessage.assistant("step"))
    state.feedback.append(ChatMessage.user("more"))
    state.input.append(ChatMessage.user("extra"))
    state.round = 3
    one.snapshot_state()
    two.restore_state(saved)
    again = two._require_state()  # pyright: ignore[reportPrivateUsage]
    assert [m.text for m in again.conversation] == ["t"]
    assert again.feedback == []
    assert [m.text for m in again.input] == ["t"]
    assert again.round == 0


def test_the_transcript_written_from_new_messages_reads_as_the_whole_one() -> None:
    messages = varied_messages()
    written = Transcript()
    assert written.text == transcript([]) == "(nothing yet)"
    for end in range(1, len(messages) + 1):
        written = written.extended(messages[:end])
        assert written.text == transcript(messages[:end])
    restarted = [ChatMessage.user("again"), messages[1]]
    assert written.extended(restarted).text == transcript(restarted)


async def test_every_magentic_checkpoint_holds_the_state_pydantic_writes() -> None:
    ledgers = iter(
        [
            ledger(progress=False),
            ledger(progress=False),  # two stalls > max_stalls=1: a re-plan
            ledger(),
            ledger(done=True),
        ]
    )

    def reply(messages: list[ChatMessage], options: ChatOptions | None) -> str:
        prompt = messages[-1].text
        if "fact sheet" in prompt:
            return "FACTS"
        if "bullet-point plan" in prompt:
            return "PLAN"
        if "final answer" in prompt:
            return "DONE"
        return next(ledgers)

    store = InMemoryCheckpointStore()
    workflow = (
        MagenticBuilder(
            participants=[echo_agent("coder")],
            manager=FunctionChatClient(reply),
            checkpoint_store=store,
        )
        .with_limits(max_stalls=1)
        .build()
    )
    result = await workflow.run("task")
    assert result.outputs[0].text == "DONE"
    states = await saved_states(workflow, result, store, "magentic_manager")
    assert len(states) >= 4
    assert any(_LedgerState.model_validate_json(s).resets == 1 for s in states)
    for state in states:
        assert state == _LedgerState.model_validate_json(state).model_dump_json()


def ledger(*, done: bool = False, progress: bool = True) -> str:
    return json.dumps(
        {
            "is_request_satisfied": {"reason": "r", "answer": done},
            "is_in_loop": {"reason": "r", "answer": False},
            "is_progress_being_made": {"reason": "r", "answer": progress},
            "next_speaker": {"reason": "r", "answer": "coder"},
            "instruction_or_question": {"reason": "r", "answer": "next"},
        }
    )


# -- dispatch by the message's class -------------------------------------------------------------


def test_turns_and_replies_have_a_handler_of_their_own_class() -> None:
    response = AgentExecutorResponse(executor_id="a", agent_response=AgentResponse(agent_id="a"))
    chain = SequentialBuilder(participants=[echo_agent("a"), echo_agent("b")]).build()
    assert chain.executors["b"].find_handler(response).message_type is AgentExecutorResponse
    chat = GroupChatBuilder(
        participants=[echo_agent("a")], selection_func=round_robin_selector, max_rounds=1
    ).build()
    hub = chat.executors["group_chat_manager"]
    assert hub.find_handler(response).message_type is AgentExecutorResponse
    team = MagenticBuilder(participants=[echo_agent("a")], manager=ScriptedChatClient([])).build()
    reply = MagenticReply(participant="a")
    assert team.executors["magentic_manager"].find_handler(reply).message_type is MagenticReply


# -- handoff -------------------------------------------------------------------------------------


async def test_a_handoff_runs_its_transfer_tool_on_the_event_loop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sent_to_threads: list[object] = []
    to_thread = asyncio.to_thread

    async def recorded(fn: Callable[..., object], /, *args: object, **kwargs: object) -> object:
        sent_to_threads.append(fn)
        return await to_thread(fn, *args, **kwargs)

    monkeypatch.setattr(asyncio, "to_thread", recorded)
    call = FunctionCallContent(call_id="c1", name="transfer_to_orders", arguments={})
    triage = ChatAgent(
        ScriptedChatClient([ChatMessage(role=Role.ASSISTANT, contents=[call])]), name="triage"
    )
    orders = ChatAgent(ScriptedChatClient(["Your order ships today."]), name="orders")
    result = await HandoffBuilder(participants=[triage, orders]).build().run("Where is it?")
    assert result.outputs[0][-1].text == "Your order ships today."
    assert sent_to_threads == []


@tool
def lookup(key: str) -> str:
    """Look a key up."""
    return key


@tool
def forget(key: str) -> str:
    """Forget a key."""
    return key


def test_a_handoff_agent_offers_its_tools_and_the_transfers_in_its_options() -> None:
    tools = transfer_tools({"orders": "ships orders"})
    plain = ChatAgent(ScriptedChatClient([]), name="triage", tools=[lookup, forget])
    runner = with_transfer_tools(plain, tools)
    assert [t.name for t in runner.options.tools] == ["lookup", "forget", "transfer_to_orders"]
    assert [t.name for t in runner.tools] == ["lookup", "forget", "transfer_to_orders"]
    # Options that name a subset of the agent's tools keep offering only those (and transfers).
    narrowed = ChatAgent(
        ScriptedChatClient([]),
        name="triage",
        tools=[lookup, forget],
        options=ChatOptions(tools=[lookup]),
    )
    runner = with_transfer_tools(narrowed, tools)
    assert [t.name for t in runner.options.tools] == ["lookup", "transfer_to_orders"]
    assert [t.name for t in runner.tools] == ["lookup", "forget", "transfer_to_orders"]
