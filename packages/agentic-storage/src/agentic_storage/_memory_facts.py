"""What is worth remembering from a turn: a rule-based extractor of the user's own statements,
and one that asks a chat model."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence

import structlog
from pydantic import BaseModel, Field, ValidationError

from agentic_core import (
    ChatClient,
    ChatMessage,
    ChatOptions,
    Memory,
    MemoryCategory,
    Role,
)

__all__ = ["LLMFactExtractor", "extract_user_facts", "memory_id_for"]

_log = structlog.get_logger("agentic_storage.memory")

_SENTENCE = re.compile(r"[^.!?\n]+[.!?]?")
# (pattern, category): statements a user makes about themselves, what a person would note down.
_RULES: list[tuple[re.Pattern[str], MemoryCategory]] = [
    (re.compile(r"\b(i (?:really )?(?:like|love|prefer|enjoy|hate|dislike)\b.+)", re.I),
     MemoryCategory.USER_PREFERENCE),
    (re.compile(r"\b(call me\b.+)", re.I), MemoryCategory.USER_PREFERENCE),
    (re.compile(r"\b(my (?:name|favou?rite \w+|\w+) (?:is|are)\b.+)", re.I), MemoryCategory.FACT),
    (re.compile(r"\b(i (?:live|work|study|grew up|was born)\b.+)", re.I), MemoryCategory.FACT),
    (re.compile(r"\b(i(?: am|'m) (?!not sure|sorry|wondering|asking|looking|trying|just)\b.+)",
                re.I), MemoryCategory.FACT),
    (re.compile(r"\bremember(?: that)?\s+(.+)", re.I), MemoryCategory.FACT),
]  # fmt: skip
_MAX_FACT_CHARS = 300


def memory_id_for(content: str) -> str:
    """A memory id from its content: stating a fact again finds the same id (no duplicate)."""
    normal = " ".join(content.lower().split()).rstrip(".!?")
    return hashlib.sha256(normal.encode()).hexdigest()[:32]


def extract_user_facts(messages: Sequence[ChatMessage]) -> list[Memory]:
    """The user's statements about themselves in ``messages``, one ``Memory`` each.

    Sentences of user messages such as "my name is …", "I live in …", "I prefer …",
    "call me …" or "remember that …" become memories (preferences as
    ``USER_PREFERENCE``, the rest as ``FACT``), phrased as the user said them. Questions are
    skipped. The rules are simple on purpose: give the provider a ``chat_client`` (or your own
    extractor) for anything subtler.
    """
    found: dict[str, Memory] = {}
    for message in messages:
        if message.role != Role.USER:
            continue
        for raw in _SENTENCE.findall(message.text):
            sentence = raw.strip()
            if not sentence or sentence.endswith("?"):
                continue
            for pattern, category in _RULES:
                match = pattern.search(sentence)
                if match is None:
                    continue
                fact = sentence[:_MAX_FACT_CHARS].rstrip(" ,;")
                memory_id = memory_id_for(fact)
                found.setdefault(
                    memory_id,
                    Memory(id=memory_id, content=fact, category=category, importance=0.7),
                )
                break
    return list(found.values())


class _Facts(BaseModel):
    """What the model is asked to return."""

    facts: list[str] = Field(default_factory=list[str])


_PROMPT = (
    "You pick out what is worth remembering about the user for future conversations: stable "
    "facts about them (name, location, work, relationships) and their preferences. Write each "
    "as one short sentence in the third person ('The user lives in Paris.'). Ignore questions, "
    "small talk and anything about the assistant. Reply with JSON only: "
    '{"facts": ["...", "..."]} (an empty list when there is nothing to remember).'
)


class LLMFactExtractor:
    """Asks a chat model which facts of the user's messages are worth remembering.

    The model gets a fixed instruction and the turn's user messages and answers
    ``{"facts": [...]}`` (asked for through ``ChatOptions.response_format``). A reply that is not
    that shape is logged as a warning and yields no memories: a memory problem never fails the
    agent's turn.
    """

    def __init__(self, chat_client: ChatClient) -> None:
        self._client = chat_client

    def __repr__(self) -> str:
        return f"LLMFactExtractor({type(self._client).__name__})"

    async def __call__(self, messages: Sequence[ChatMessage]) -> list[Memory]:
        """The memories the model finds in the user messages of ``messages``."""
        said = "\n".join(m.text for m in messages if m.role == Role.USER and m.text.strip())
        if not said:
            return []
        response = await self._client.generate(
            [ChatMessage.system(_PROMPT), ChatMessage.user(said)],
            ChatOptions(response_format=_Facts, temperature=0.0),
        )
        facts = _parse_facts(response.value, response.text)
        if facts is None:
            _log.warning(
                "memory_extraction_unparsable", reply_preview=response.text[:200], stored=0
            )
            return []
        return [
            Memory(
                id=memory_id_for(fact), content=fact, category=MemoryCategory.FACT, importance=0.7
            )
            for fact in (f.strip()[:_MAX_FACT_CHARS] for f in facts)
            if fact
        ]


def _parse_facts(value: object, text: str) -> list[str] | None:
    if isinstance(value, _Facts):
        return value.facts
    try:
        return _Facts.model_validate_json(text).facts
    except ValidationError:
        pass
    try:  # a bare list of strings is a fair answer too
        data: object = json.loads(text)
    except ValueError:
        return None
    if isinstance(data, list) and all(isinstance(item, str) for item in data):  # pyright: ignore[reportUnknownVariableType]
        return [str(item) for item in data]  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
    return None
