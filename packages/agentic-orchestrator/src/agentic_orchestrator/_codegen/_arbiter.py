"""Arbiter: best-of-N over candidate solutions of one task."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import structlog
from pydantic import TypeAdapter

from agentic_core import Executor, ExecutorKind, WorkflowContext, WorkflowEvent, handler
from agentic_orchestrator._codegen._models import CodeGenResult, ValidationResult

_log = structlog.get_logger("agentic_orchestrator.codegen")

Candidate = ValidationResult | CodeGenResult
_CANDIDATES: TypeAdapter[list[Candidate]] = TypeAdapter(list[Candidate])


class ArbiterDecisionEvent(WorkflowEvent):
    """The arbiter chose ``winner`` (an index into the candidates, in arrival order)."""

    executor_id: str
    winner: int
    candidates: int
    scores: list[float]
    reason: str


def rank_key(candidate: Candidate) -> tuple[int, int, int, int]:
    """Sort key, best first: passed, most tests passed, fewest errors, shortest code."""
    if isinstance(candidate, ValidationResult):
        ok, errors, code = candidate.passed, len(candidate.errors), candidate.source.code
    else:
        ok, errors, code = candidate.succeeded, len(candidate.last_errors), candidate.code
    return (0 if ok else 1, -candidate.tests_passed, errors, len(code))


class Arbiter(Executor):
    """Collects ``n`` candidates (``ValidationResult``s or ``CodeGenResult``s) and picks one.

    Best: passed first, then most tests passed, fewest errors, shortest code; or the highest
    ``score(candidate)`` when a score function is given (ties: the earliest). It emits an
    ``ArbiterDecisionEvent``, then yields a winning ``CodeGenResult`` as the workflow output or
    sends a winning ``ValidationResult`` on, and starts collecting anew. Candidates may arrive
    one by one or as one list (a fan-in edge).
    """

    def __init__(
        self,
        *,
        id: str = "arbiter",  # noqa: A002 - the API's name
        n: int,
        score: Callable[[Candidate], float] | None = None,
    ) -> None:
        if n < 1:
            raise ValueError(f"an Arbiter needs n >= 1 candidates, got {n}")
        super().__init__(id, kind=ExecutorKind.ORCHESTRATOR)
        self.n = n
        self.score = score
        self._candidates: list[Candidate] = []

    def snapshot_state(self) -> Any:
        """The candidates collected so far in this run."""
        return _CANDIDATES.dump_python(self._candidates, mode="json")

    def restore_state(self, state: Any) -> None:
        """Take this run's candidates (None: none yet)."""
        self._candidates = _CANDIDATES.validate_python(state) if state else []

    @handler
    async def collect(
        self,
        candidate: ValidationResult | CodeGenResult | list[ValidationResult | CodeGenResult],
        ctx: WorkflowContext[ValidationResult, CodeGenResult],
    ) -> None:
        """Keep the candidate(s); decide once ``n`` are in."""
        self._candidates += candidate if isinstance(candidate, list) else [candidate]
        while len(self._candidates) >= self.n:
            batch, self._candidates = self._candidates[: self.n], self._candidates[self.n :]
            await self._decide(batch, ctx)

    async def _decide(
        self, batch: list[Candidate], ctx: WorkflowContext[ValidationResult, CodeGenResult]
    ) -> None:
        if self.score is not None:
            scores = [float(self.score(candidate)) for candidate in batch]
            winner = max(range(len(batch)), key=lambda i: (scores[i], -i))
            reason = f"highest score {scores[winner]:g}"
        else:
            keys = [rank_key(candidate) for candidate in batch]
            winner = min(range(len(batch)), key=lambda i: (keys[i], i))
            # The negated key as a score: higher is better, comparable within one decision.
            scores = [float(-(k[0] * 1e12 + k[1] * 1e8 + k[2] * 1e5 + k[3])) for k in keys]
            ok, tests, errors, length = keys[winner]
            reason = (
                f"{'passed' if ok == 0 else 'best failing'}, {-tests} test(s) passed, "
                f"{errors} error(s), {length} characters of code"
            )
        _log.info("codegen.arbiter_decided", executor_id=self.id, winner=winner, reason=reason)
        await ctx.add_event(
            ArbiterDecisionEvent(
                executor_id=self.id,
                winner=winner,
                candidates=len(batch),
                scores=scores,
                reason=reason,
            )
        )
        chosen = batch[winner]
        if isinstance(chosen, CodeGenResult):
            await ctx.yield_output(chosen)
        else:
            await ctx.send_message(chosen)
