"""Ready-made speaker selectors for GroupChatBuilder.with_orchestrator_func."""

from __future__ import annotations

import inspect
import re

from agentic_core import ChatClient, ChatMessage, ChatOptions
from agentic_orchestrator._group_chat_state import GroupChatState, Selector
from agentic_orchestrator._speaker_choice import choose_speaker


def round_robin_selector(state: GroupChatState) -> str:
    """Each participant in turn, in the builder's order, starting with the first."""
    names = state.names
    return names[state.current_round % len(names)]


def smart_selector(state: GroupChatState) -> str:
    """The participant the last message addresses, else the next one in turn.

    A participant is addressed when the last message names it as a word (``@writer``,
    ``"writer, please..."``); the speaker of that message is never chosen this way. When
    several are named, the first mention wins.
    """
    last = state.last_message
    if last is not None and last.text:
        text = last.text.lower()
        mentions: list[tuple[int, str]] = []
        for name in state.names:
            if name == state.last_speaker:
                continue
            found = re.search(rf"(?<![\w-]){re.escape(name.lower())}(?![\w-])", text)
            if found is not None:
                mentions.append((found.start(), name))
        if mentions:
            return min(mentions)[1]
    return _after(state, state.last_speaker)


def no_repeat_selector(base: Selector) -> Selector:
    """``base``, except that nobody speaks twice in a row: a repeat passes to the next in turn."""

    async def select(state: GroupChatState) -> str:
        chosen = base(state)
        if inspect.isawaitable(chosen):
            chosen = await chosen
        if chosen == state.last_speaker and len(state.participants) > 1:
            return _after(state, chosen)
        return chosen

    return select


def llm_selector(
    chat_client: ChatClient, *, max_retries: int = 2, options: ChatOptions | None = None
) -> Selector:
    """A chat model picks the next speaker from the participants' descriptions and transcript.

    A reply naming someone who is not a participant is corrected and asked again up to
    ``max_retries`` times, then the run fails with ``SpeakerSelectionError`` naming it.
    """

    async def ask(prompt: list[ChatMessage]) -> str:
        return (await chat_client.generate(prompt, options)).message.text

    async def select(state: GroupChatState) -> str:
        decision = await choose_speaker(
            ask, state, max_retries=max_retries, allow_terminate=False, who="llm_selector"
        )
        return decision.next_speaker or ""

    return select


def _after(state: GroupChatState, speaker: str | None) -> str:
    names = state.names
    if speaker is None or speaker not in names:
        return names[state.current_round % len(names)]
    return names[(names.index(speaker) + 1) % len(names)]
