"""What a group chat's selectors and termination conditions see."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import overload

from agentic_core import ChatMessage


@dataclass(frozen=True)
class GroupChatState(Sequence[ChatMessage]):
    """The group chat so far, as a selector or termination condition sees it.

    It is also the sequence of its ``conversation``'s messages, so a condition written the MAF
    way, ``lambda conversation: len(conversation) >= 4``, works unchanged.
    """

    conversation: tuple[ChatMessage, ...]
    """Every message so far: the task, then each turn's messages (author_name = speaker)."""
    participants: Mapping[str, str]
    """Participant name -> description, in the builder's order."""
    current_round: int = 0
    """How many turns have been given so far (0 before the first speaker is chosen)."""
    history: tuple[str, ...] = field(default=())
    """The speakers so far, in order."""

    @property
    def names(self) -> list[str]:
        """The participants' names, in order."""
        return list(self.participants)

    @property
    def last_speaker(self) -> str | None:
        """Who spoke last (None before anyone has)."""
        return self.history[-1] if self.history else None

    @property
    def last_message(self) -> ChatMessage | None:
        """The newest message (None in an empty chat)."""
        return self.conversation[-1] if self.conversation else None

    def __len__(self) -> int:
        return len(self.conversation)

    @overload
    def __getitem__(self, index: int) -> ChatMessage: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[ChatMessage]: ...
    def __getitem__(self, index: int | slice) -> ChatMessage | Sequence[ChatMessage]:
        return self.conversation[index]

    def __iter__(self) -> Iterator[ChatMessage]:
        return iter(self.conversation)


Selector = Callable[[GroupChatState], str | Awaitable[str]]
"""``selector(state) -> name`` of the next speaker (sync or async)."""

TerminationCondition = Callable[[GroupChatState], bool | Awaitable[bool]]
"""``condition(state) -> True`` to end the chat (sync or async)."""
