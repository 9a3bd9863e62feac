"""What a Magentic team says to a plan reviewer and hears back: the plan-review request and
its answer, and the progress ledger a request after a stall carries (data only; the manager in
``_magentic.py`` asks and acts)."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, Field

from agentic_core import ChatMessage


class MagenticProgressLedger(BaseModel):
    """The manager's reading of one round (MAF's ``MagenticProgressLedger``, answers only)."""

    is_request_satisfied: bool
    is_in_loop: bool
    is_progress_being_made: bool
    next_speaker: str
    instruction: str


class MagenticPlanReviewResponse(BaseModel):
    """The answer to a :class:`MagenticPlanReviewRequest`: approve the plan, or revise it.

    ``review`` empty (or without text) approves; otherwise its messages are the reviewer's
    feedback, the manager re-plans with them and asks again. Build one with :meth:`approve` or
    :meth:`revise` (or answer with the dict ``{"review": [...]}``)::

        MagenticPlanReviewResponse.revise("Leave the analyst out; sources from 2024 only.")
    """

    review: list[ChatMessage] = Field(default_factory=list[ChatMessage])

    @property
    def approved(self) -> bool:
        """The reviewer accepted the plan (no feedback with text)."""
        return not any(message.text.strip() for message in self.review)

    @staticmethod
    def approve() -> MagenticPlanReviewResponse:
        """Accept the plan: the team starts (or goes on) with it."""
        return MagenticPlanReviewResponse(review=[])

    @staticmethod
    def revise(
        feedback: str | ChatMessage | Sequence[str | ChatMessage],
    ) -> MagenticPlanReviewResponse:
        """Ask for a new plan; ``feedback`` (text becomes user messages) says what to change."""
        items: Sequence[str | ChatMessage] = (
            [feedback] if isinstance(feedback, (str, ChatMessage)) else feedback
        )
        return MagenticPlanReviewResponse(
            review=[ChatMessage.user(item) if isinstance(item, str) else item for item in items]
        )


class MagenticPlanReviewRequest(BaseModel):
    """What a Magentic team with plan review asks (``request_info``) before it works on a plan.

    Asked after the first plan and after every re-plan (a stall's, or a revision's); answer
    with a :class:`MagenticPlanReviewResponse`, most simply ``request.approve()`` or
    ``request.revise("feedback")``.
    """

    plan: ChatMessage
    """The task ledger the team would get: the task, the team, the fact sheet and the plan."""
    current_progress: MagenticProgressLedger | None = None
    """The progress ledger that made the manager re-plan (``None`` for the first plan)."""
    is_stalled: bool = False
    """This plan replaces one the team stalled on."""

    def approve(self) -> MagenticPlanReviewResponse:
        """Accept the plan."""
        return MagenticPlanReviewResponse.approve()

    def revise(
        self, feedback: str | ChatMessage | Sequence[str | ChatMessage]
    ) -> MagenticPlanReviewResponse:
        """Ask for a new plan following ``feedback``."""
        return MagenticPlanReviewResponse.revise(feedback)
