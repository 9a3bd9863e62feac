"""Ready-made termination conditions for GroupChatBuilder.with_termination_condition."""

from __future__ import annotations

import inspect
from collections.abc import Sequence

from agentic_core import Role
from agentic_orchestrator._errors import OrchestrationConfigError
from agentic_orchestrator._group_chat_state import GroupChatState, TerminationCondition


def max_messages_termination(n: int) -> TerminationCondition:
    """End once the conversation holds ``n`` messages (the task counts)."""
    _positive(n, "max_messages_termination")

    def condition(state: GroupChatState) -> bool:
        return len(state.conversation) >= n

    return condition


def max_rounds_termination(n: int) -> TerminationCondition:
    """End once ``n`` turns have been taken."""
    _positive(n, "max_rounds_termination")

    def condition(state: GroupChatState) -> bool:
        return state.current_round >= n

    return condition


def keyword_termination(word: str) -> TerminationCondition:
    """End when a participant's newest message contains ``word`` (case-sensitive).

    Only a participant's (assistant) message counts: a task that mentions the word does not
    end the chat before it starts.
    """
    if not word:
        raise OrchestrationConfigError("keyword_termination: the word must not be empty")

    def condition(state: GroupChatState) -> bool:
        last = state.last_message
        return last is not None and last.role is Role.ASSISTANT and word in last.text

    return condition


def any_termination(conditions: Sequence[TerminationCondition]) -> TerminationCondition:
    """End when any of ``conditions`` holds (checked in order; sync or async)."""
    checks = tuple(conditions)
    if not checks:
        raise OrchestrationConfigError("any_termination: give at least one condition")

    async def condition(state: GroupChatState) -> bool:
        for check in checks:
            verdict = check(state)
            if inspect.isawaitable(verdict):
                verdict = await verdict
            if verdict:
                return True
        return False

    return condition


def _positive(n: int, name: str) -> None:
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:  # pyright: ignore[reportUnnecessaryIsInstance]
        raise OrchestrationConfigError(f"{name}: n must be a positive int, got {n!r}")
