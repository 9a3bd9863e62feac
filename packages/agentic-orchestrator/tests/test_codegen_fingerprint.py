"""ErrorFingerprinter: stable fingerprints and simple/complex severity."""

from __future__ import annotations

from typing import Never

from agentic_core import Executor, WorkflowBuilder, WorkflowContext, handler
from agentic_orchestrator import (
    AssembledCode,
    ErrorFingerprinter,
    ValidationResult,
    code_failed,
    code_passed,
    repair_is_simple,
)
from agentic_orchestrator._codegen._fingerprint import (
    classify_errors,
    error_fingerprint,
    error_kind,
)

SOURCE = AssembledCode(language="python", code="x = (")


def failure(*errors: str, stage: str = "compile") -> ValidationResult:
    return ValidationResult(stage=stage, passed=False, source=SOURCE, errors=list(errors))  # type: ignore[arg-type]


def test_same_error_on_other_lines_and_paths_has_the_same_fingerprint() -> None:
    a = error_fingerprint(["/tmp/run-1/solution.py, line 3: SyntaxError: expected ':'"])
    b = error_fingerprint(["/tmp/run-2/solution.py, line 17: SyntaxError: expected ':'"])
    assert a == b
    assert len(a) == 16


def test_typescript_positions_and_quoted_values_are_ignored() -> None:
    a = error_fingerprint(["solution.ts(2,3): error TS2322: Type 'string' is not assignable"])
    b = error_fingerprint(["solution.ts(9,11): error TS2322: Type 'boolean' is not assignable"])
    assert a == b


def test_different_errors_have_different_fingerprints_and_order_does_not_matter() -> None:
    syntax = "solution.py, line 1: SyntaxError: invalid syntax"
    name = "test_x: NameError: name 'foo' is not defined"
    assert error_fingerprint([syntax]) != error_fingerprint([name])
    assert error_fingerprint([syntax, name]) == error_fingerprint([name, syntax])


def test_error_kinds() -> None:
    assert error_kind("solution.py, line 1: SyntaxError: invalid syntax") == "syntax"
    assert error_kind("test_a: NameError: name 'x' is not defined") == "name"
    assert error_kind("solution.ts(1,1): error TS2304: Cannot find name 'Foo'.") == "name"
    assert error_kind("solution.ts(1,1): error TS2322: Type 'a' is not assignable") == "type"
    assert error_kind("test_add: assert 0 == 4") == "assertion"
    assert error_kind("segfault") == "other"


def test_severity_rules() -> None:
    assert classify_errors(["SyntaxError: x"], simple_max_errors=2, repeated=False) == "simple"
    assert classify_errors(["SyntaxError: x"], simple_max_errors=2, repeated=True) == "complex"
    three = ["SyntaxError: a", "SyntaxError: b", "SyntaxError: c"]
    assert classify_errors(three, simple_max_errors=2, repeated=False) == "complex"
    mixed = ["SyntaxError: a", "NameError: name 'b' is not defined"]
    assert classify_errors(mixed, simple_max_errors=2, repeated=False) == "complex"
    assert (
        classify_errors(["test_a: assert 1 == 2"], simple_max_errors=2, repeated=False) == "complex"
    )
    one_symbol = ["TypeError: 'foo' takes 2 arguments", "TypeError: 'foo' got an int"]
    assert classify_errors(one_symbol, simple_max_errors=2, repeated=False) == "simple"
    two_symbols = ["TypeError: 'foo' takes 2 arguments", "TypeError: 'bar' got an int"]
    assert classify_errors(two_symbols, simple_max_errors=2, repeated=False) == "complex"


class Sink(Executor):
    @handler
    async def keep(
        self, r: ValidationResult, ctx: WorkflowContext[Never, ValidationResult]
    ) -> None:
        await ctx.yield_output(r)


class Replay(Executor):
    """Sends the list's results one per superstep, so the fingerprinter sees them in turn."""

    def __init__(self) -> None:
        super().__init__("replay")
        self._left: list[ValidationResult] = []

    def snapshot_state(self) -> object:
        return [r.model_dump(mode="json") for r in self._left]

    def restore_state(self, state: object) -> None:
        self._left = [ValidationResult.model_validate(r) for r in state or []]  # type: ignore[union-attr]

    @handler
    async def start(
        self, results: list[ValidationResult], ctx: WorkflowContext[ValidationResult | None]
    ) -> None:
        self._left = list(results)
        await self.step(None, ctx)

    @handler
    async def step(self, tick: None, ctx: WorkflowContext[ValidationResult | None]) -> None:
        if self._left:
            await ctx.send_message(self._left.pop(0))
            await ctx.send_message(None, target_id=self.id)


async def test_the_executor_annotates_and_a_repeat_becomes_complex() -> None:
    replay, fingerprinter = Replay(), ErrorFingerprinter()
    workflow = (
        WorkflowBuilder()
        .set_start_executor(replay)
        .add_edge(replay, replay, condition=lambda m: m is None)
        .add_edge(replay, fingerprinter, condition=lambda m: m is not None)
        .add_edge(fingerprinter, Sink("sink"))
        .build()
    )
    first = failure("solution.py, line 2: SyntaxError: expected ':'")
    again = failure("solution.py, line 5: SyntaxError: expected ':'")
    ok = ValidationResult(stage="test", passed=True, source=SOURCE)
    result = await workflow.run([first, again, ok])
    a, b, c = result.outputs
    assert a.fingerprint == b.fingerprint is not None
    assert (a.severity, b.severity) == ("simple", "complex")
    assert repair_is_simple(a)
    assert not repair_is_simple(b)
    assert code_failed(b)
    assert c.fingerprint is None
    assert code_passed(c)
