"""Per-run state of a pattern's manager, saved as one JSON string at a cost per new message.

The engine asks a stateful executor for its state after every invocation and hands it back,
restored on a fresh copy, at the next one. A manager's state holds the whole conversation, so
dumping it whole every superstep costs a walk of every message each turn (and a run of n turns
n² message dumps). Here each message is dumped once: ``ConversationJson`` keeps the JSON array
of the messages dumped so far and extends it with the new ones, and ``LastSaved`` gives the
next superstep back what the last one saved, parsed and with its dumps, found by the identity
of the string (hashing a long string would cost a walk of it again). The JSON is the one
pydantic writes for the same data, so a checkpoint reads the same whichever way it was made.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from pydantic import TypeAdapter

from agentic_core import BoundedMemo, ChatMessage

if TYPE_CHECKING:
    from pydantic_core import SchemaSerializer

__all__ = ["ConversationJson", "LastSaved", "json_text"]

_V = TypeVar("_V")


@functools.cache
def _messages_serializer() -> SchemaSerializer:
    """Dumps a list of messages (built on first use, as core's: imports stay cheap). The
    adapter's serializer itself: ``TypeAdapter.dump_json`` adds a Python call per dump."""
    return TypeAdapter(list[ChatMessage]).serializer


@functools.cache
def _any_serializer() -> SchemaSerializer:
    return TypeAdapter(Any).serializer


def json_text(value: object) -> str:
    """``value`` as compact JSON, written as pydantic writes it inside a model's JSON."""
    return _any_serializer().to_json(value).decode()


class ConversationJson:
    """The JSON array of a conversation, each message dumped once.

    ``extended(conversation)`` returns the JSON of ``conversation`` (and a ``ConversationJson``
    for it): when the messages dumped so far are its first messages (the same objects: messages
    are never changed in place), only the others are dumped; otherwise it is dumped whole.
    """

    __slots__ = ("json", "messages")

    def __init__(self, messages: tuple[ChatMessage, ...] = (), json: str = "[]") -> None:
        self.messages = messages
        """The messages ``json`` holds, in order (the very objects that were dumped)."""
        self.json = json

    def extended(self, conversation: Sequence[ChatMessage]) -> ConversationJson:
        """The JSON of ``conversation``, dumping only what this one does not hold yet."""
        done = self.messages
        count = len(done)
        if count == len(conversation) and all(map(operator.is_, done, conversation)):
            return self
        if count and count <= len(conversation) and all(map(operator.is_, done, conversation)):
            # '[a,b]' + new 'c,d' -> '[a,b,c,d]': the new messages' array without its brackets.
            added = _messages_serializer().to_json(list(conversation[count:])).decode()
            return ConversationJson(tuple(conversation), f"{self.json[:-1]},{added[1:]}")
        whole = _messages_serializer().to_json(list(conversation)).decode()
        return ConversationJson(tuple(conversation), whole)


class LastSaved(Generic[_V]):
    """The values of the last few saved states, by the identity of their JSON string.

    A run's next superstep restores the very string object its last one saved (the engine
    passes it on as it is), so an identity look-up finds it without hashing it. A string that
    was copied (read back from a checkpoint store, sent to another process) is simply not
    found, and the caller parses it. The entry holds the string, so its id is not reused while
    it is remembered. A core ``BoundedMemo`` underneath: ``BoundedMemo.clear_all()`` forgets
    these too. Values are shared between look-ups: never change one in place.
    """

    __slots__ = ("_memo",)

    def __init__(self, size: int) -> None:
        self._memo: BoundedMemo[int, tuple[str, _V]] = BoundedMemo(size)

    def get(self, saved: str) -> _V | None:
        """The value remembered for this very string, or None."""
        entry = self._memo.get(id(saved))
        if entry is None or entry[0] is not saved:
            return None
        return entry[1]

    def remember(self, saved: str, value: _V) -> None:
        """Keep ``value`` for ``saved`` (the oldest entries beyond the size are forgotten)."""
        self._memo.remember(id(saved), (saved, value))
