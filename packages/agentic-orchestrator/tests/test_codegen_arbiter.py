"""Arbiter: best-of-N, by the default ranking or a score function, with a decision event."""

from __future__ import annotations

from typing import Never

import pytest

from agentic_core import Executor, WorkflowBuilder, WorkflowContext, handler
from agentic_orchestrator import (
    Arbiter,
    ArbiterDecisionEvent,
    AssembledCode,
    CodeGenResult,
    ValidationResult,
)


def result(code: str, *, passed: bool, tests_passed: int = 0, errors: int = 0) -> ValidationResult:
    return ValidationResult(
        stage="test",
        passed=passed,
        source=AssembledCode(language="python", code=code),
        errors=[f"e{i}" for i in range(errors)],
        tests_passed=tests_passed,
    )


def outcome(code: str, *, succeeded: bool, tests_passed: int) -> CodeGenResult:
    return CodeGenResult(
        succeeded=succeeded,
        language="python",
        code=code,
        tests="",
        attempts=1,
        stage="test",
        tests_passed=tests_passed,
    )


class Sink(Executor):
    @handler
    async def keep(
        self, r: ValidationResult, ctx: WorkflowContext[Never, ValidationResult]
    ) -> None:
        await ctx.yield_output(r)


def arbiter_workflow(arbiter: Arbiter):
    return WorkflowBuilder().set_start_executor(arbiter).add_edge(arbiter, Sink("sink")).build()


async def test_passed_beats_failed_then_more_tests_then_shorter_code() -> None:
    candidates = [
        result("failing but long and thorough", passed=False, tests_passed=5, errors=1),
        result("passes, verbose version", passed=True, tests_passed=3),
        result("passes short", passed=True, tests_passed=3),
        result("passes fewer", passed=True, tests_passed=2),
    ]
    run = await arbiter_workflow(Arbiter(n=4)).run(candidates)
    assert [r.source.code for r in run.outputs] == ["passes short"]
    [decision] = [e for e in run.events if isinstance(e, ArbiterDecisionEvent)]
    assert decision.winner == 2
    assert decision.candidates == 4
    assert "passed" in decision.reason


async def test_a_score_function_decides_when_given() -> None:
    candidates = [result("aaa", passed=True), result("b", passed=False, errors=3)]
    arbiter = Arbiter(
        n=2, score=lambda c: float(len(c.errors)) if isinstance(c, ValidationResult) else 0.0
    )
    run = await arbiter_workflow(arbiter).run(candidates)
    assert [r.source.code for r in run.outputs] == ["b"]


async def test_a_winning_code_gen_result_is_the_workflow_output() -> None:
    arbiter = Arbiter(n=2)
    workflow = WorkflowBuilder().set_start_executor(arbiter).build()
    run = await workflow.run(
        [
            outcome("x", succeeded=False, tests_passed=9),
            outcome("y", succeeded=True, tests_passed=1),
        ]
    )
    assert [o.code for o in run.outputs] == ["y"]


async def test_it_waits_for_n_candidates() -> None:
    run = await arbiter_workflow(Arbiter(n=3)).run([result("only", passed=True)])
    assert run.outputs == []
    assert not [e for e in run.events if isinstance(e, ArbiterDecisionEvent)]


def test_n_must_be_positive() -> None:
    with pytest.raises(ValueError, match="n >= 1"):
        Arbiter(n=0)
