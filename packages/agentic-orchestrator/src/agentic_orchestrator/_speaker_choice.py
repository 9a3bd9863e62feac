"""Asking a model who speaks next, and holding it to the participant list."""

from __future__ import annotations

import operator
import re
from collections.abc import Awaitable, Callable, Iterable, Sequence

from pydantic import BaseModel

from agentic_core import ChatMessage, Role
from agentic_orchestrator._errors import SpeakerSelectionError
from agentic_orchestrator._group_chat_state import GroupChatState
from agentic_orchestrator._json_reply import answer_of, as_bool, last_json_object

Ask = Callable[[list[ChatMessage]], Awaitable[str]]
"""Sends a prompt to the manager model, returns its reply text."""

_PROMPT = """You coordinate a group chat. The participants are:
{team}

Read the conversation and choose who speaks next. Reply with only a JSON object:
{{"next_speaker": "<one of: {names}>"{terminate}}}"""

_TERMINATE = (
    ', "terminate": <true when the task is complete, else false>, '
    '"final_message": "<when terminating: a closing summary, else null>"'
)

_CORRECTION = (
    "{bad} is not a participant. Choose exactly one of: {names}. Reply with only the JSON object."
)


class ManagerDecision(BaseModel):
    """What a manager model decided: the next speaker, or to end the chat."""

    next_speaker: str | None = None
    terminate: bool = False
    final_message: str | None = None


def transcript(conversation: Sequence[ChatMessage]) -> str:
    """The conversation as ``[speaker] text`` lines (tool traffic left out)."""
    return "\n".join(_lines(conversation)) or "(nothing yet)"


def _lines(messages: Iterable[ChatMessage]) -> list[str]:
    lines: list[str] = []
    for message in messages:
        if message.role is Role.TOOL:
            continue
        text = message.text
        if text:
            lines.append(f"[{message.author_name or message.role.value}] {text}")
    return lines


class Transcript:
    """``transcript(conversation)`` of a conversation that grows, each message read once.

    ``extended(conversation)`` returns the transcript of ``conversation`` (as a ``Transcript``,
    its ``text``): when the messages read so far are its first ones (the same objects: messages
    are never changed in place) only the others are read; otherwise it is read whole.
    """

    __slots__ = ("_lines", "_messages")

    def __init__(self, messages: tuple[ChatMessage, ...] = (), lines: tuple[str, ...] = ()) -> None:
        self._messages = messages
        self._lines = lines

    @property
    def text(self) -> str:
        """The transcript, as ``transcript()`` writes it."""
        return "\n".join(self._lines) or "(nothing yet)"

    def extended(self, conversation: Sequence[ChatMessage]) -> Transcript:
        """The transcript of ``conversation``, reading only what this one has not read."""
        done = self._messages
        count = len(done)
        if count <= len(conversation) and all(map(operator.is_, done, conversation)):
            if count == len(conversation):
                return self
            added = _lines(conversation[count:])
            return Transcript(tuple(conversation), (*self._lines, *added))
        return Transcript(tuple(conversation), tuple(_lines(conversation)))


def manager_prompt(state: GroupChatState, *, allow_terminate: bool) -> list[ChatMessage]:
    """The system instruction and the transcript, for a manager model."""
    team = "\n".join(f"- {name}: {description}" for name, description in state.participants.items())
    system = _PROMPT.format(
        team=team,
        names=", ".join(state.participants),
        terminate=_TERMINATE if allow_terminate else "",
    )
    return [ChatMessage.system(system), ChatMessage.user(transcript(state.conversation))]


def parse_decision(text: str, names: Sequence[str]) -> tuple[ManagerDecision | None, str]:
    """The decision in ``text`` (names matched case-insensitively), and what was named.

    Accepted forms: a JSON object with ``next_speaker`` (or ``"next_speaker": {"answer": ..}``)
    and optional ``terminate``/``final_message``; or a bare name, optionally quoted or with a
    leading ``@``. Returns (None, what was named) when the named speaker is not a participant.
    """
    by_lower = {name.lower(): name for name in names}
    data = last_json_object(text)
    if data is not None:
        if as_bool(data.get("terminate")):
            final = data.get("final_message")
            return ManagerDecision(
                terminate=True, final_message=final if isinstance(final, str) else None
            ), ""
        named = answer_of(data.get("next_speaker"))
        named = named.strip() if isinstance(named, str) else repr(named)
    else:
        named = text.strip().strip("\"'`.").lstrip("@").strip()
    match = by_lower.get(named.lower())
    if match is None:
        return None, named
    return ManagerDecision(next_speaker=match), named


async def choose_speaker(
    ask: Ask,
    state: GroupChatState,
    *,
    max_retries: int,
    allow_terminate: bool,
    who: str,
) -> ManagerDecision:
    """Ask until the model names a participant (or ends the chat); then SpeakerSelectionError."""
    names = list(state.participants)
    prompt = manager_prompt(state, allow_terminate=allow_terminate)
    named = ""
    for _ in range(max_retries + 1):
        reply = await ask(prompt)
        decision, named = parse_decision(reply, names)
        if decision is not None:
            return decision
        prompt = [
            *prompt,
            ChatMessage.assistant(reply),
            ChatMessage.user(_CORRECTION.format(bad=_shown(named), names=", ".join(names))),
        ]
    raise SpeakerSelectionError(
        f"{who} named {_shown(named)} as the next speaker, which is not a participant "
        f"(participants: {', '.join(names)}), after {max_retries + 1} attempt(s)"
    )


def _shown(named: str) -> str:
    cleaned = re.sub(r"\s+", " ", named)[:80]
    return repr(cleaned) if cleaned else "nobody"
