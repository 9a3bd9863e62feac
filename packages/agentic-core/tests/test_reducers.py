"""Chat reducers: budgets, system messages, tool exchanges kept whole, summaries."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentic_core._errors import AgentError
from agentic_core.agents._reducers import (
    MessageCountingReducer,
    NoOpReducer,
    SlidingWindowReducer,
    SummarizingReducer,
    TokenCountingReducer,
    UnitKind,
    estimate_tokens,
    split_into_units,
)
from agentic_core.protocols._agent import AgentInput, AgentResponse, AgentResponseUpdate
from agentic_core.protocols._chat import ChatOptions, ChatResponse, ChatResponseUpdate
from agentic_core.protocols._messages import ChatMessage, FunctionCallContent, Role
from agentic_core.protocols._reducer import ChatReducer
from agentic_core.protocols._thread import AgentThread

# --- building conversations ----------------------------------------------------------------


def calls(*call_ids: str, text: str = "") -> ChatMessage:
    """An assistant message asking for one tool call per id."""
    contents = [FunctionCallContent(call_id=c, name="lookup", arguments={"q": c}) for c in call_ids]
    return ChatMessage.assistant(text, contents=contents)


def texts(messages: Sequence[ChatMessage]) -> list[str]:
    """A compact picture of a history: the text, or ``call:ids`` / ``result:id``."""
    shown: list[str] = []
    for message in messages:
        if message.function_calls:
            shown.append("call:" + ",".join(c.call_id for c in message.function_calls))
        elif message.function_results:
            shown.append("result:" + ",".join(r.call_id for r in message.function_results))
        else:
            shown.append(message.text)
    return shown


# --- fakes for the summarizer (agentic_core.testing is not used on purpose) ----------------


class FakeChatClient:
    """Answers every request with ``reply`` and records the requests."""

    provider = "fake"
    model = "fake-model"

    def __init__(self, reply: str = "they talked") -> None:
        self.reply = reply
        self.requests: list[list[ChatMessage]] = []

    async def generate(
        self, messages: Sequence[ChatMessage], options: ChatOptions | None = None
    ) -> ChatResponse:
        self.requests.append(list(messages))
        return ChatResponse(message=ChatMessage.assistant(self.reply))

    async def generate_stream(
        self, messages: Sequence[ChatMessage], options: ChatOptions | None = None
    ) -> AsyncIterator[ChatResponseUpdate]:
        yield ChatResponseUpdate(text=(await self.generate(messages, options)).text)

    async def health_check(self) -> bool:
        return True


class FakeAgent:
    """An Agent whose ``run`` answers with ``reply`` and records its input."""

    id = "summarizer"
    name = "summarizer"

    def __init__(self, reply: str = "agent summary") -> None:
        self.reply = reply
        self.inputs: list[AgentInput] = []

    async def run(
        self, messages: AgentInput = None, *, thread: AgentThread | None = None, **kwargs: Any
    ) -> AgentResponse:
        self.inputs.append(messages)
        return AgentResponse(messages=[ChatMessage.assistant(self.reply)], text=self.reply)

    async def run_stream(
        self, messages: AgentInput = None, *, thread: AgentThread | None = None, **kwargs: Any
    ) -> AsyncIterator[AgentResponseUpdate]:
        yield AgentResponseUpdate(text=(await self.run(messages)).text, done=True)

    def get_new_thread(self, **metadata: Any) -> AgentThread:
        return AgentThread(metadata=metadata)


# --- units ---------------------------------------------------------------------------------


def test_a_call_and_its_results_form_one_unit_even_around_a_system_message() -> None:
    history = [
        ChatMessage.user("q"),
        calls("a", "b"),
        ChatMessage.tool("a", 1),
        ChatMessage.system("note"),
        ChatMessage.tool("b", 2),
    ]

    units = split_into_units(history)

    assert [(u.kind, u.indices) for u in units] == [
        (UnitKind.MESSAGE, (0,)),
        (UnitKind.TOOL_EXCHANGE, (1, 2, 4)),
        (UnitKind.SYSTEM, (3,)),
    ]


def test_a_result_without_its_call_and_a_call_without_results_are_broken() -> None:
    history = [ChatMessage.tool("ghost", 1), ChatMessage.user("q"), calls("pending")]

    kinds = [u.kind for u in split_into_units(history)]

    assert kinds == [UnitKind.BROKEN, UnitKind.MESSAGE, UnitKind.BROKEN]


def test_a_call_missing_one_of_its_results_is_broken_with_its_other_results() -> None:
    history = [calls("a", "b"), ChatMessage.tool("a", 1)]

    assert [(u.kind, u.indices) for u in split_into_units(history)] == [
        (UnitKind.BROKEN, (0, 1)),
    ]


def test_a_result_before_its_call_does_not_count() -> None:
    history = [ChatMessage.tool("a", 1), calls("a")]

    assert [u.kind for u in split_into_units(history)] == [UnitKind.BROKEN, UnitKind.BROKEN]


# --- MessageCountingReducer ----------------------------------------------------------------


async def test_message_counting_keeps_system_messages_and_the_newest_messages() -> None:
    history = [
        ChatMessage.system("sys"),
        ChatMessage.user("u1"),
        ChatMessage.assistant("a1"),
        ChatMessage.user("u2"),
        ChatMessage.assistant("a2"),
        ChatMessage.user("u3"),
    ]
    reducer = MessageCountingReducer(4)

    assert reducer.needs_reduction(history)
    assert texts(await reducer.reduce(history)) == ["sys", "u2", "a2", "u3"]


async def test_preserve_pairs_never_opens_with_a_reply_whose_question_was_cut() -> None:
    history = [
        ChatMessage.system("sys"),
        ChatMessage.user("u1"),
        ChatMessage.assistant("a1"),
        ChatMessage.user("u2"),
    ]

    paired = await MessageCountingReducer(3).reduce(history)
    unpaired = await MessageCountingReducer(3, preserve_pairs=False).reduce(history)

    assert texts(paired) == ["sys", "u2"]
    assert texts(unpaired) == ["sys", "a1", "u2"]


async def test_a_tool_exchange_that_does_not_fit_is_dropped_whole() -> None:
    history = [
        ChatMessage.user("u1"),
        calls("a", "b"),
        ChatMessage.tool("a", 1),
        ChatMessage.tool("b", 2),
        ChatMessage.assistant("done"),
    ]

    reduced = await MessageCountingReducer(3, preserve_pairs=False).reduce(history)

    assert texts(reduced) == ["done"]


async def test_a_tool_exchange_that_fits_is_kept_whole() -> None:
    history = [
        ChatMessage.user("u1"),
        ChatMessage.user("u2"),
        calls("a", "b"),
        ChatMessage.tool("b", 2),
        ChatMessage.tool("a", 1),
        ChatMessage.assistant("done"),
    ]

    reduced = await MessageCountingReducer(5).reduce(history)

    assert texts(reduced) == ["u2", "call:a,b", "result:b", "result:a", "done"]


async def test_system_messages_over_the_budget_are_all_that_is_kept() -> None:
    history = [ChatMessage.system("s1"), ChatMessage.user("u"), ChatMessage.system("s2")]

    assert texts(await MessageCountingReducer(1).reduce(history)) == ["s1", "s2"]


async def test_a_history_within_budget_is_left_alone() -> None:
    history = [ChatMessage.system("s"), ChatMessage.user("u"), ChatMessage.assistant("a")]
    reducer = MessageCountingReducer(3)

    assert not reducer.needs_reduction(history)
    assert await reducer.reduce(history) == history


async def test_broken_tool_messages_are_dropped_even_within_budget() -> None:
    history = [ChatMessage.tool("ghost", 1), ChatMessage.user("u")]
    reducer = MessageCountingReducer(10)

    assert reducer.needs_reduction(history)
    assert texts(await reducer.reduce(history)) == ["u"]


# --- TokenCountingReducer ------------------------------------------------------------------


def test_a_message_costs_its_characters_over_chars_per_token_plus_one() -> None:
    assert estimate_tokens(ChatMessage.user("x" * 9), chars_per_token=4) == 3 + 1
    assert estimate_tokens(ChatMessage.assistant(""), chars_per_token=4) == 1


def test_tool_calls_and_results_count_toward_tokens() -> None:
    bare = estimate_tokens(ChatMessage.assistant(""))

    assert estimate_tokens(calls("a")) > bare
    assert estimate_tokens(ChatMessage.tool("a", {"rows": list(range(50))})) > bare


async def test_token_counting_keeps_the_newest_messages_within_the_budget() -> None:
    history = [
        ChatMessage.system("s" * 8),  # 3 tokens
        ChatMessage.user("u" * 40),  # 11 tokens
        ChatMessage.assistant("a" * 16),  # 5 tokens
        ChatMessage.user("v" * 16),  # 5 tokens
    ]
    reducer = TokenCountingReducer(14)

    reduced = await reducer.reduce(history)

    assert texts(reduced) == ["s" * 8, "a" * 16, "v" * 16]
    assert reducer.count_tokens(reduced) == 13


async def test_token_counting_uses_a_given_token_counter() -> None:
    history = [ChatMessage.user("one"), ChatMessage.user("two"), ChatMessage.user("three")]
    reducer = TokenCountingReducer(10, token_counter=lambda m: 5)

    assert texts(await reducer.reduce(history)) == ["two", "three"]


# --- SlidingWindowReducer ------------------------------------------------------------------


def conversation_of(turns: int) -> list[ChatMessage]:
    history = [ChatMessage.system("sys")]
    for turn in range(1, turns + 1):
        history += [ChatMessage.user(f"u{turn}"), ChatMessage.assistant(f"a{turn}")]
    return history


async def test_sliding_window_keeps_the_first_user_message_and_the_window() -> None:
    reduced = await SlidingWindowReducer(3).reduce(conversation_of(4))

    assert texts(reduced) == ["sys", "u1", "a3", "u4", "a4"]


async def test_sliding_window_without_important_slots_keeps_only_the_window() -> None:
    reduced = await SlidingWindowReducer(3, max_important=0).reduce(conversation_of(4))

    assert texts(reduced) == ["sys", "a3", "u4", "a4"]


async def test_sliding_window_keeps_marked_messages_earliest_first() -> None:
    history = conversation_of(2)
    history += [
        ChatMessage.assistant("pin1", author_name="pinned"),
        ChatMessage.assistant("pin2", author_name="pinned"),
    ]
    history += conversation_of(2)[1:]
    reducer = SlidingWindowReducer(
        2, max_important=2, is_important=lambda m: m.author_name == "pinned"
    )

    reduced = await reducer.reduce(history)

    assert texts(reduced) == ["sys", "u1", "pin1", "u2", "a2"]


async def test_sliding_window_within_the_window_changes_nothing() -> None:
    history = conversation_of(2)
    reducer = SlidingWindowReducer(4)

    assert not reducer.needs_reduction(history)
    assert await reducer.reduce(history) == history


# --- SummarizingReducer --------------------------------------------------------------------


async def test_summarizing_below_the_threshold_does_not_call_the_summarizer() -> None:
    client = FakeChatClient()
    reducer = SummarizingReducer(client, threshold=5)
    history = conversation_of(2)

    assert not reducer.needs_reduction(history)
    assert await reducer.reduce(history) == history
    assert client.requests == []


async def test_summarizing_replaces_the_older_part_with_one_summary() -> None:
    client = FakeChatClient("they said hello")
    reducer = SummarizingReducer(client, threshold=6, keep_last=2)
    history = conversation_of(4)

    reduced = await reducer.reduce(history)

    assert texts(reduced) == [
        "sys",
        "Summary of the earlier conversation:\nthey said hello",
        "u4",
        "a4",
    ]
    assert reduced[1].role is Role.ASSISTANT
    assert reduced[1].author_name == "summary"


async def test_the_summarizer_sees_a_transcript_of_the_older_part_only() -> None:
    client = FakeChatClient()
    reducer = SummarizingReducer(client, threshold=4, keep_last=1)
    history = [
        ChatMessage.user("weather?"),
        calls("w1"),
        ChatMessage.tool("w1", {"sky": "clear"}),
        ChatMessage.assistant("clear skies"),
        ChatMessage.user("thanks"),
    ]

    await reducer.reduce(history)

    ((instructions, transcript),) = client.requests
    assert instructions.role is Role.SYSTEM
    assert transcript.text == (
        "user: weather?\n"
        'assistant called lookup({"q": "w1"})\n'
        'tool: result of call w1: {"sky": "clear"}\n'
        "assistant: clear skies"
    )


async def test_summarizing_keeps_the_summary_where_the_older_part_began() -> None:
    history = [
        ChatMessage.system("s1"),
        ChatMessage.user("u1"),
        ChatMessage.system("s2"),
        ChatMessage.assistant("a1"),
        ChatMessage.user("u2"),
        ChatMessage.assistant("a2"),
    ]

    reduced = await SummarizingReducer(FakeChatClient("S"), threshold=5, keep_last=1).reduce(
        history
    )

    assert texts(reduced) == ["s1", "Summary of the earlier conversation:\nS", "s2", "a2"]


async def test_summarizing_keeps_the_result_within_the_threshold() -> None:
    history = [ChatMessage.system("s1"), ChatMessage.system("s2"), *conversation_of(5)[1:]]

    reduced = await SummarizingReducer(FakeChatClient(), threshold=5, keep_last=10).reduce(history)

    assert len(reduced) == 5
    assert texts(reduced)[-2:] == ["u5", "a5"]


async def test_summarizing_works_with_an_agent() -> None:
    agent = FakeAgent("agent summary")
    reducer = SummarizingReducer(agent, threshold=3, keep_last=1)

    reduced = await reducer.reduce(conversation_of(3))

    assert texts(reduced) == ["sys", "Summary of the earlier conversation:\nagent summary", "a3"]
    (sent,) = agent.inputs
    assert isinstance(sent, list)
    assert "user: u1" in texts(sent)[1]


async def test_a_second_summary_folds_in_the_first() -> None:
    client = FakeChatClient("second")
    reducer = SummarizingReducer(client, threshold=4, keep_last=1)
    history = [
        ChatMessage.assistant("Summary of the earlier conversation:\nfirst", author_name="summary"),
        *conversation_of(2)[1:],
    ]

    reduced = await reducer.reduce(history)

    assert texts(reduced) == ["Summary of the earlier conversation:\nsecond", "a2"]
    assert "first" in client.requests[0][1].text


async def test_an_empty_summary_is_an_error() -> None:
    reducer = SummarizingReducer(FakeChatClient("  "), threshold=2, keep_last=1)

    with pytest.raises(AgentError, match="empty summary"):
        await reducer.reduce(conversation_of(2))


def test_a_summarizer_that_is_neither_client_nor_agent_is_refused() -> None:
    with pytest.raises(TypeError, match="ChatClient"):
        SummarizingReducer(object(), threshold=5)  # pyright: ignore[reportArgumentType]


# --- NoOpReducer and the protocol ----------------------------------------------------------


async def test_noop_reducer_returns_the_history_unchanged() -> None:
    history = [ChatMessage.tool("ghost", 1), *conversation_of(20)]

    assert not NoOpReducer().needs_reduction(history)
    assert await NoOpReducer().reduce(history) == history


@pytest.mark.parametrize(
    "reducer",
    [
        MessageCountingReducer(5),
        TokenCountingReducer(100),
        SlidingWindowReducer(5),
        SummarizingReducer(FakeChatClient(), threshold=5),
        NoOpReducer(),
    ],
    ids=repr,
)
def test_every_reducer_satisfies_the_protocol(reducer: object) -> None:
    assert isinstance(reducer, ChatReducer)


@pytest.mark.parametrize(
    ("build", "named"),
    [
        (lambda: MessageCountingReducer(0), "max_messages"),
        (lambda: TokenCountingReducer(10, chars_per_token=0), "chars_per_token"),
        (lambda: SlidingWindowReducer(3, max_important=-1), "max_important"),
        (lambda: SummarizingReducer(FakeChatClient(), threshold=3, keep_last=-1), "keep_last"),
    ],
)
def test_bad_settings_are_refused(build: Any, named: str) -> None:
    with pytest.raises(ValueError, match=named):
        build()


# --- properties over random conversations with tool calls ----------------------------------


@st.composite
def conversations(draw: st.DrawFn) -> list[ChatMessage]:
    """User/assistant text, system messages anywhere (even between a call and its results),
    and assistant messages with 1-3 tool calls followed by their results in any order."""
    history: list[ChatMessage] = []
    words = st.text(alphabet="abc ", max_size=30)
    for step in range(draw(st.integers(0, 18))):
        kind = draw(st.sampled_from(["system", "user", "assistant", "tools", "tools"]))
        if kind == "system":
            history.append(ChatMessage.system(draw(words)))
        elif kind == "user":
            history.append(ChatMessage.user(draw(words)))
        elif kind == "assistant":
            history.append(ChatMessage.assistant(draw(words)))
        else:
            call_ids = [f"c{step}-{n}" for n in range(draw(st.integers(1, 3)))]
            history.append(calls(*call_ids, text=draw(words)))
            for call_id in draw(st.permutations(call_ids)):
                if draw(st.integers(0, 5)) == 0:
                    history.append(ChatMessage.system(draw(words)))
                history.append(ChatMessage.tool(call_id, draw(words)))
    return history


def assert_valid_reduction(original: Sequence[ChatMessage], reduced: Sequence[ChatMessage]) -> None:
    """Every system message kept, tool calls and results kept together, order preserved.

    Messages that are not in ``original`` (a summary) are checked only for tool contents.
    """
    position = {message.message_id: index for index, message in enumerate(original)}
    kept = [position[m.message_id] for m in reduced if m.message_id in position]
    assert kept == sorted(set(kept)), "order preserved, nothing repeated"
    kept_set = set(kept)
    for index, message in enumerate(original):
        if message.role is Role.SYSTEM:
            assert index in kept_set, f"system message {index} dropped"
    call_holder = {c.call_id: i for i, m in enumerate(original) for c in m.function_calls}
    result_holders: dict[str, list[int]] = {}
    for index, message in enumerate(original):
        for result in message.function_results:
            result_holders.setdefault(result.call_id, []).append(index)
    for index in kept_set:
        for result in original[index].function_results:
            assert call_holder[result.call_id] in kept_set, f"result {index} without its call"
        for call in original[index].function_calls:
            assert set(result_holders[call.call_id]) <= kept_set, f"call {index} missing results"
    for message in reduced:
        if message.message_id not in position:
            assert not message.function_calls
            assert not message.function_results


def system_messages(messages: Sequence[ChatMessage]) -> list[ChatMessage]:
    return [m for m in messages if m.role is Role.SYSTEM]


PROPERTY_SETTINGS = settings(max_examples=300, deadline=None)


@PROPERTY_SETTINGS
@given(history=conversations(), budget=st.integers(1, 20), preserve_pairs=st.booleans())
async def test_message_counting_property(
    history: list[ChatMessage], budget: int, preserve_pairs: bool
) -> None:
    reducer = MessageCountingReducer(budget, preserve_pairs=preserve_pairs)

    reduced = await reducer.reduce(history)

    assert_valid_reduction(history, reduced)
    if len(system_messages(history)) <= budget:
        assert len(reduced) <= budget
    assert await reducer.reduce(reduced) == reduced


@PROPERTY_SETTINGS
@given(history=conversations(), budget=st.integers(1, 150))
async def test_token_counting_property(history: list[ChatMessage], budget: int) -> None:
    reducer = TokenCountingReducer(budget, chars_per_token=3)

    reduced = await reducer.reduce(history)

    assert_valid_reduction(history, reduced)
    if reducer.count_tokens(system_messages(history)) <= budget:
        assert reducer.count_tokens(reduced) <= budget
    assert await reducer.reduce(reduced) == reduced


@PROPERTY_SETTINGS
@given(history=conversations(), window=st.integers(1, 12))
async def test_sliding_window_property(history: list[ChatMessage], window: int) -> None:
    reducer = SlidingWindowReducer(window, max_important=1)

    reduced = await reducer.reduce(history)

    assert_valid_reduction(history, reduced)
    # The window plus the one important message (the first user message, a unit of its own).
    assert len(reduced) - len(system_messages(reduced)) <= window + 1
    assert await reducer.reduce(reduced) == reduced


@settings(PROPERTY_SETTINGS, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(history=conversations(), threshold=st.integers(1, 15), keep_last=st.integers(0, 8))
async def test_summarizing_property(
    history: list[ChatMessage], threshold: int, keep_last: int
) -> None:
    reducer = SummarizingReducer(FakeChatClient(), threshold=threshold, keep_last=keep_last)

    reduced = await reducer.reduce(history)

    assert_valid_reduction(history, reduced)
    if len(system_messages(history)) + 1 <= threshold:
        assert len(reduced) <= threshold
    assert sum(m.author_name == "summary" for m in reduced) <= 1


@PROPERTY_SETTINGS
@given(history=conversations())
async def test_noop_property(history: list[ChatMessage]) -> None:
    assert await NoOpReducer().reduce(history) == history
