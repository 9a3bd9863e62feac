"""Compile and test validators, run through a core Sandbox (here: plain subprocesses)."""

from __future__ import annotations

from typing import Never

import pytest

from agentic_core import Executor, WorkflowBuilder, WorkflowContext, handler
from agentic_orchestrator import (
    AssembledCode,
    CodeGenResult,
    CodeTask,
    CompileValidatorExecutor,
    GeneratedCode,
    TestValidatorExecutor,
    ValidationResult,
)

from ._codegen_support import SubprocessSandbox

pytestmark = pytest.mark.slow  # each check starts an interpreter

GOOD = "def add(a, b):\n    return a + b\n"
SYNTAX = "def add(a, b)\n    return a + b\n"
WRONG = "def add(a, b):\n    return a - b\n"
TESTS = (
    "from solution import add\n\n\n"
    "def test_add():\n    assert add(2, 2) == 4\n\n\n"
    "def test_zero():\n    assert add(0, 0) == 0\n"
)


class Sink(Executor):
    @handler
    async def keep(
        self,
        message: AssembledCode | ValidationResult,
        ctx: WorkflowContext[Never, AssembledCode | ValidationResult],
    ) -> None:
        await ctx.yield_output(message)


async def check(validator: Executor, source: AssembledCode | GeneratedCode) -> object:
    workflow = (
        WorkflowBuilder().set_start_executor(validator).add_edge(validator, Sink("sink")).build()
    )
    [out] = (await workflow.run(source)).outputs
    return out


def program(code: str, tests: str = TESTS) -> AssembledCode:
    return AssembledCode(language="python", code=code, tests=tests, parts=["code"])


async def test_compiling_code_is_sent_on_as_assembled_code() -> None:
    sandbox = SubprocessSandbox()
    out = await check(CompileValidatorExecutor(sandbox), program(GOOD))
    assert out == program(GOOD)
    language, files = sandbox.calls[0].language, sandbox.calls[0].files
    assert language == "python"
    assert set(files) == {"solution.py", "test_solution.py"}


async def test_a_syntax_error_is_a_failed_result_naming_file_line_and_error() -> None:
    out = await check(CompileValidatorExecutor(SubprocessSandbox()), program(SYNTAX))
    assert isinstance(out, ValidationResult)
    assert not out.passed
    assert out.stage == "compile"
    [error] = out.errors
    assert error.startswith("solution.py, line 1: SyntaxError: expected ':'")


async def test_generated_code_is_checked_with_its_task_tests() -> None:
    sandbox = SubprocessSandbox()
    generated = GeneratedCode(task=CodeTask(prompt="p", tests=TESTS), code=GOOD)
    out = await check(CompileValidatorExecutor(sandbox), generated)
    assert out == AssembledCode(language="python", code=GOOD, tests=TESTS, parts=["code"])


@pytest.mark.parametrize("without_pytest", [False, True], ids=["pytest", "built-in runner"])
async def test_failing_tests_are_counted_and_name_the_assertion(without_pytest: bool) -> None:
    validator = TestValidatorExecutor(SubprocessSandbox(without_pytest=without_pytest))
    out = await check(validator, program(WRONG))
    assert isinstance(out, ValidationResult)
    assert (out.passed, out.tests_passed, out.tests_failed) == (False, 1, 1)
    [error] = out.errors
    assert error.startswith("test_add: ")
    assert "line 5" in error
    assert ("assert 0 == 4" if not without_pytest else "assert add(2, 2) == 4") in error


@pytest.mark.parametrize("without_pytest", [False, True], ids=["pytest", "built-in runner"])
async def test_passing_tests_end_the_loop_with_a_success(without_pytest: bool) -> None:
    validator = TestValidatorExecutor(SubprocessSandbox(without_pytest=without_pytest))
    workflow = WorkflowBuilder().set_start_executor(validator).build()
    [outcome] = (await workflow.run(program(GOOD))).outputs
    assert isinstance(outcome, CodeGenResult)
    assert (outcome.succeeded, outcome.tests_passed, outcome.tests_failed) == (True, 2, 0)
    assert outcome.attempts == 1
    assert outcome.code == GOOD


async def test_a_non_final_validator_sends_the_passed_result_on() -> None:
    out = await check(TestValidatorExecutor(SubprocessSandbox(), final=False), program(GOOD))
    assert isinstance(out, ValidationResult)
    assert out.passed
    assert out.tests_passed == 2


async def test_without_tests_the_code_must_import() -> None:
    broken = program("raise RuntimeError('boom at import')\n", tests="")
    out = await check(TestValidatorExecutor(SubprocessSandbox(), final=False), broken)
    assert isinstance(out, ValidationResult)
    assert not out.passed
    assert "RuntimeError: boom at import" in out.errors[0]


def test_unsupported_languages_and_missing_typescript_are_named() -> None:
    with pytest.raises(ValueError, match="not language 'rust'"):
        CompileValidatorExecutor(SubprocessSandbox(), language="rust")
    with pytest.raises(ValueError, match="needs typescript="):
        CompileValidatorExecutor(SubprocessSandbox(), language="typescript")
    with pytest.raises(ValueError, match="not an installed npm typescript package"):
        TestValidatorExecutor(SubprocessSandbox(), language="ts", typescript="/nonexistent")
