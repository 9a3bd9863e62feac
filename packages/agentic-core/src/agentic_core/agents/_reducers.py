"""Chat reducers: shorten a history to a budget without breaking what a model API requires.

Every reducer here works on *units* (see ``split_into_units``), never on single messages:

- a system message: always kept;
- a tool exchange: a message holding tool calls plus every message holding their results, kept
  or dropped as one (model APIs reject a result without its call and a call without its results);
- a plain message: any other user, assistant or tool message;
- a broken unit: a result whose call is not in the history, or calls missing a result; it can
  never be sent as it is, so every reducer except ``NoOpReducer`` drops it.

A reducer picks units and returns their messages in their original order. Choosing what to keep
is pure (``plan_*`` functions and ``plan`` methods); only ``SummarizingReducer`` does I/O.
"""

from __future__ import annotations

import json
import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from agentic_core._errors import AgentError
from agentic_core.protocols._agent import Agent
from agentic_core.protocols._chat import ChatClient
from agentic_core.protocols._messages import (
    ChatMessage,
    FunctionCallContent,
    FunctionResultContent,
    Role,
    TextContent,
)

__all__ = [
    "MessageCountingReducer",
    "MessageUnit",
    "NoOpReducer",
    "SlidingWindowReducer",
    "SummarizingReducer",
    "TokenCountingReducer",
    "UnitKind",
    "estimate_tokens",
    "split_into_units",
]


# --------------------------------------------------------------------------------------------
# Units: the atoms every reducer keeps or drops


class UnitKind(StrEnum):
    """What a ``MessageUnit`` is."""

    SYSTEM = "system"
    TOOL_EXCHANGE = "tool_exchange"
    MESSAGE = "message"
    BROKEN = "broken"


@dataclass(frozen=True, slots=True)
class MessageUnit:
    """Messages that are kept or dropped together, by their positions in the history."""

    kind: UnitKind
    indices: tuple[int, ...]
    """Positions in the history, ascending (a tool exchange may enclose a system message)."""

    @property
    def size(self) -> int:
        """How many messages the unit holds."""
        return len(self.indices)


def split_into_units(messages: Sequence[ChatMessage]) -> list[MessageUnit]:
    """Split a history into units, ordered by their first message.

    A message holding a tool result joins the unit of the latest earlier message holding the call
    with that ``call_id``; units linked that way merge. A unit is ``BROKEN`` when a result has no
    earlier call or a call has no result. System messages are always units of their own.
    """
    parent = list(range(len(messages)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    call_owner: dict[str, int] = {}
    orphan: set[int] = set()
    answered: set[tuple[int, str]] = set()
    for index, message in enumerate(messages):
        if message.role is Role.SYSTEM:
            continue
        for result in message.function_results:
            owner = call_owner.get(result.call_id)
            if owner is None:
                orphan.add(index)
            else:
                parent[find(index)] = find(owner)
                answered.add((owner, result.call_id))
        for call in message.function_calls:
            call_owner[call.call_id] = index

    members: dict[int, list[int]] = {}
    for index in range(len(messages)):
        members.setdefault(find(index), []).append(index)
    units = [
        MessageUnit(_unit_kind(messages, group, orphan, answered), tuple(group))
        for group in members.values()
    ]
    units.sort(key=lambda unit: unit.indices[0])
    return units


def _unit_kind(
    messages: Sequence[ChatMessage],
    group: list[int],
    orphan: set[int],
    answered: set[tuple[int, str]],
) -> UnitKind:
    if len(group) == 1 and messages[group[0]].role is Role.SYSTEM:
        return UnitKind.SYSTEM
    if any(index in orphan for index in group):
        return UnitKind.BROKEN
    has_calls = False
    for index in group:
        for call in messages[index].function_calls:
            has_calls = True
            if (index, call.call_id) not in answered:
                return UnitKind.BROKEN
    return UnitKind.TOOL_EXCHANGE if has_calls else UnitKind.MESSAGE


def _conversation(units: Iterable[MessageUnit]) -> list[MessageUnit]:
    """The units a reducer may keep or drop: everything but system and broken units."""
    return [u for u in units if u.kind in (UnitKind.TOOL_EXCHANGE, UnitKind.MESSAGE)]


def _system_units(units: Iterable[MessageUnit]) -> list[MessageUnit]:
    return [u for u in units if u.kind is UnitKind.SYSTEM]


def _flatten(units: Iterable[MessageUnit]) -> list[int]:
    """The positions of the units' messages, ascending: kept messages stay in order."""
    return sorted(index for unit in units for index in unit.indices)


def plan_newest_within_budget(
    candidates: Sequence[MessageUnit], cost: Callable[[MessageUnit], int], budget: int
) -> list[MessageUnit]:
    """The newest run of ``candidates`` whose total ``cost`` fits ``budget``, oldest first.

    The walk from the newest unit stops at the first unit that does not fit, so the kept part is
    always a contiguous tail of the conversation (no gaps a model would misread).
    """
    kept: list[MessageUnit] = []
    left = budget
    for unit in reversed(candidates):
        unit_cost = cost(unit)
        if unit_cost > left:
            break
        kept.append(unit)
        left -= unit_cost
    kept.reverse()
    return kept


# --------------------------------------------------------------------------------------------
# Costs


_TOKENS_PER_MESSAGE = 1
"""The role and framing of a message cost about a token whatever its content."""


def message_characters(message: ChatMessage) -> int:
    """How many characters a message puts in front of the model (text, calls and results)."""
    total = 0
    for content in message.contents:
        if isinstance(content, TextContent):
            total += len(content.text)
        elif isinstance(content, FunctionCallContent):
            total += len(content.name) + len(_as_text(content.arguments))
        else:
            total += len(_as_text(content.result))
    return total


def estimate_tokens(message: ChatMessage, chars_per_token: float = 4) -> int:
    """``ceil(characters / chars_per_token) + 1``: a tokenizer-free estimate of a message's cost."""
    return math.ceil(message_characters(message) / chars_per_token) + _TOKENS_PER_MESSAGE


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, default=str)


def _positive(name: str, value: float) -> None:
    if not value > 0:
        raise ValueError(f"{name} must be positive, got {value!r}")


def _not_negative(name: str, value: int) -> None:
    if value < 0:
        raise ValueError(f"{name} must be zero or more, got {value!r}")


# --------------------------------------------------------------------------------------------
# Reducers that only select messages


class _SelectingReducer(ABC):
    """A reducer that keeps a subset of the history: ``plan`` picks it, ``reduce`` applies it."""

    @abstractmethod
    def plan(self, messages: Sequence[ChatMessage]) -> list[int]:
        """The positions of the messages to keep, ascending."""

    def needs_reduction(self, messages: Sequence[ChatMessage]) -> bool:
        """Whether ``reduce`` would change ``messages``."""
        return len(self.plan(messages)) != len(messages)

    async def reduce(self, messages: Sequence[ChatMessage]) -> list[ChatMessage]:
        """The kept messages, in their original order (the same objects, not copies)."""
        return [messages[index] for index in self.plan(messages)]


class MessageCountingReducer(_SelectingReducer):
    """Keeps at most ``max_messages`` messages, system messages included: all system messages,
    then the newest conversation that fits.

    Tool exchanges are always kept or dropped whole. With ``preserve_pairs`` the kept conversation
    never opens with replies whose user message was cut: leading assistant and tool units are
    dropped until the first kept user message (when one was kept). If the system messages alone
    exceed ``max_messages`` only they are kept.

    Example:
        ```python
        reducer = MessageCountingReducer(20)
        history = await reducer.reduce(history)
        ```
    """

    def __init__(self, max_messages: int, preserve_pairs: bool = True) -> None:
        _positive("max_messages", max_messages)
        self.max_messages = max_messages
        self.preserve_pairs = preserve_pairs

    def __repr__(self) -> str:
        return f"MessageCountingReducer({self.max_messages}, preserve_pairs={self.preserve_pairs})"

    def plan(self, messages: Sequence[ChatMessage]) -> list[int]:
        """The positions of the messages to keep, ascending."""
        units = split_into_units(messages)
        system = _system_units(units)
        budget = self.max_messages - len(system)
        kept = plan_newest_within_budget(_conversation(units), lambda u: u.size, budget)
        if self.preserve_pairs:
            kept = _open_at_user_message(messages, kept)
        return _flatten([*system, *kept])


def _open_at_user_message(
    messages: Sequence[ChatMessage], kept: list[MessageUnit]
) -> list[MessageUnit]:
    """``kept`` from its first user message on, or unchanged when it has none."""
    for position, unit in enumerate(kept):
        if any(messages[index].role is Role.USER for index in unit.indices):
            return kept[position:]
    return kept


class TokenCountingReducer(_SelectingReducer):
    """Keeps the history within ``max_tokens``: all system messages, then the newest conversation
    that fits.

    A message costs ``ceil(characters / chars_per_token) + 1`` tokens (``estimate_tokens``), or
    what ``token_counter`` says when one is given (plug a real tokenizer in there). Tool
    exchanges are kept or dropped whole. If the system messages alone exceed ``max_tokens`` only
    they are kept.

    Example:
        ```python
        reducer = TokenCountingReducer(8_000)
        history = await reducer.reduce(history)
        ```
    """

    def __init__(
        self,
        max_tokens: int,
        chars_per_token: float = 4,
        *,
        token_counter: Callable[[ChatMessage], int] | None = None,
    ) -> None:
        _positive("max_tokens", max_tokens)
        _positive("chars_per_token", chars_per_token)
        self.max_tokens = max_tokens
        self.chars_per_token = chars_per_token
        self._token_counter = token_counter

    def __repr__(self) -> str:
        return f"TokenCountingReducer({self.max_tokens}, chars_per_token={self.chars_per_token})"

    def count_tokens(self, messages: Iterable[ChatMessage]) -> int:
        """The cost of ``messages`` in tokens, as this reducer counts it."""
        return sum(self._message_tokens(message) for message in messages)

    def plan(self, messages: Sequence[ChatMessage]) -> list[int]:
        """The positions of the messages to keep, ascending."""
        costs = [self._message_tokens(message) for message in messages]
        units = split_into_units(messages)
        system = _system_units(units)
        budget = self.max_tokens - sum(costs[index] for unit in system for index in unit.indices)
        kept = plan_newest_within_budget(
            _conversation(units), lambda u: sum(costs[index] for index in u.indices), budget
        )
        return _flatten([*system, *kept])

    def _message_tokens(self, message: ChatMessage) -> int:
        if self._token_counter is not None:
            return self._token_counter(message)
        return estimate_tokens(message, self.chars_per_token)


class SlidingWindowReducer(_SelectingReducer):
    """Keeps every system message, the newest ``window_size`` other messages, and up to
    ``max_important`` important units from before the window.

    Important: the first user message of the history (usually the task the conversation is
    about), plus every message ``is_important`` accepts (for example
    ``lambda m: m.author_name == "pinned"``). When more important units precede the window than
    ``max_important`` allows, the earliest are kept; a tool exchange holding an important message
    counts as one. Tool exchanges are kept or dropped whole, so the window may hold fewer than
    ``window_size`` messages when the exchange at its edge does not fit.

    Example:
        ```python
        reducer = SlidingWindowReducer(12, max_important=1)
        ```
    """

    def __init__(
        self,
        window_size: int,
        max_important: int = 1,
        *,
        is_important: Callable[[ChatMessage], bool] | None = None,
    ) -> None:
        _positive("window_size", window_size)
        _not_negative("max_important", max_important)
        self.window_size = window_size
        self.max_important = max_important
        self._is_important = is_important

    def __repr__(self) -> str:
        return f"SlidingWindowReducer({self.window_size}, max_important={self.max_important})"

    def plan(self, messages: Sequence[ChatMessage]) -> list[int]:
        """The positions of the messages to keep, ascending."""
        units = split_into_units(messages)
        conversation = _conversation(units)
        window = plan_newest_within_budget(conversation, lambda u: u.size, self.window_size)
        earlier = conversation[: len(conversation) - len(window)]
        important = self._important_units(messages, earlier)
        return _flatten([*_system_units(units), *important, *window])

    def _important_units(
        self, messages: Sequence[ChatMessage], earlier: Sequence[MessageUnit]
    ) -> list[MessageUnit]:
        first_user = next(
            (i for i, message in enumerate(messages) if message.role is Role.USER), None
        )

        def important(index: int) -> bool:
            if index == first_user:
                return True
            return self._is_important is not None and self._is_important(messages[index])

        marked = [unit for unit in earlier if any(important(i) for i in unit.indices)]
        return marked[: self.max_important]


class NoOpReducer:
    """Never changes a history (not even a broken one): the explicit "no reduction" choice."""

    def __repr__(self) -> str:
        return "NoOpReducer()"

    def needs_reduction(self, messages: Sequence[ChatMessage]) -> bool:
        """Always False."""
        return False

    async def reduce(self, messages: Sequence[ChatMessage]) -> list[ChatMessage]:
        """``messages`` as a new list."""
        return list(messages)


# --------------------------------------------------------------------------------------------
# Summarizing


DEFAULT_SUMMARY_INSTRUCTIONS = (
    "Summarize the conversation below for the assistant that will continue it. Keep the facts, "
    "decisions, open questions, user preferences and tool results that still matter; drop "
    "greetings and repetition. Answer with the summary only."
)

SUMMARY_AUTHOR = "summary"
"""The ``author_name`` of the summary messages ``SummarizingReducer`` writes."""


class SummarizingReducer:
    """Past ``threshold`` messages, replaces the older conversation with one summary message.

    The newest messages (up to ``keep_last``, fewer if needed to stay within ``threshold``) are
    kept as they are, with every system message; the rest is sent as a transcript to
    ``summarizer`` (a ``ChatClient``, called with ``generate``, or an ``Agent``, called with
    ``run``) and replaced by one assistant message (``author_name="summary"``) where the oldest
    summarized message was. A later reduction summarizes that summary again with newer messages.
    Tool exchanges are summarized or kept whole.

    Example:
        ```python
        reducer = SummarizingReducer(chat_client, threshold=40, keep_last=10)
        ```
    """

    def __init__(
        self,
        summarizer: ChatClient | Agent,
        threshold: int,
        keep_last: int = 4,
        *,
        instructions: str = DEFAULT_SUMMARY_INSTRUCTIONS,
    ) -> None:
        _check_summarizer(summarizer)
        _positive("threshold", threshold)
        _not_negative("keep_last", keep_last)
        self.summarizer = summarizer
        self.threshold = threshold
        self.keep_last = keep_last
        self.instructions = instructions

    def __repr__(self) -> str:
        return f"SummarizingReducer(threshold={self.threshold}, keep_last={self.keep_last})"

    def needs_reduction(self, messages: Sequence[ChatMessage]) -> bool:
        """Whether the history holds more than ``threshold`` messages or broken tool pairs."""
        if len(messages) > self.threshold:
            return True
        return any(unit.kind is UnitKind.BROKEN for unit in split_into_units(messages))

    async def reduce(self, messages: Sequence[ChatMessage]) -> list[ChatMessage]:
        """The history with its older part summarized (the summarizer is called only then)."""
        units = split_into_units(messages)
        system = _system_units(units)
        conversation = _conversation(units)
        if len(system) + sum(unit.size for unit in conversation) <= self.threshold:
            return [messages[index] for index in _flatten([*system, *conversation])]
        tail_budget = max(0, min(self.keep_last, self.threshold - len(system) - 1))
        tail = plan_newest_within_budget(conversation, lambda u: u.size, tail_budget)
        older = _flatten(conversation[: len(conversation) - len(tail)])
        kept = [messages[index] for index in _flatten([*system, *tail])]
        if not older:  # only system messages over the threshold: nothing to summarize
            return kept
        summary = await self._summarize([messages[index] for index in older])
        position = sum(1 for index in _flatten(system) if index < older[0])
        kept.insert(position, summary)
        return kept

    async def _summarize(self, messages: Sequence[ChatMessage]) -> ChatMessage:
        transcript = render_transcript(messages)
        request = [ChatMessage.system(self.instructions), ChatMessage.user(transcript)]
        if isinstance(self.summarizer, ChatClient):
            text = (await self.summarizer.generate(request)).text
        else:
            text = (await self.summarizer.run(request)).text
        if not text.strip():
            raise AgentError(
                f"the summarizer {self.summarizer!r} returned an empty summary of "
                f"{len(messages)} messages; check its instructions or use another reducer"
            )
        return ChatMessage.assistant(
            f"Summary of the earlier conversation:\n{text.strip()}", author_name=SUMMARY_AUTHOR
        )


def _check_summarizer(summarizer: object) -> None:
    # Callers outside pyright may pass anything; fail at construction, not at the first reduction.
    if not isinstance(summarizer, ChatClient | Agent):
        raise TypeError(
            f"summarizer must be a ChatClient (with generate) or an Agent (with run), "
            f"got {type(summarizer).__name__}"
        )


def render_transcript(messages: Iterable[ChatMessage]) -> str:
    """Messages as plain text lines, tool calls and results included, for a summarizer."""
    lines: list[str] = []
    for message in messages:
        speaker = str(message.role)
        if message.author_name:
            speaker = f"{speaker} ({message.author_name})"
        for content in message.contents:
            if isinstance(content, TextContent):
                if content.text:
                    lines.append(f"{speaker}: {content.text}")
            elif isinstance(content, FunctionCallContent):
                lines.append(f"{speaker} called {content.name}({_as_text(content.arguments)})")
            else:
                lines.append(f"{speaker}: {_describe_result(content)}")
    return "\n".join(lines)


def _describe_result(content: FunctionResultContent) -> str:
    outcome = "error" if content.is_error else "result"
    return f"{outcome} of call {content.call_id}: {_as_text(content.result)}"
