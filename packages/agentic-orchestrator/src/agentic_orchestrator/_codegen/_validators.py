"""CompileValidatorExecutor and TestValidatorExecutor: the code meets a compiler and its tests.

Both run code only through a core ``Sandbox``: a small program (Python, or JavaScript for the
TypeScript compiler) with the solution and its tests as files, which prints one report line.
"""

from __future__ import annotations

import os
from pathlib import Path

import structlog

from agentic_core import (
    ExecutionResult,
    Executor,
    ExecutorKind,
    Sandbox,
    WorkflowContext,
    handler,
)
from agentic_orchestrator._code_blocks import canonical_language
from agentic_orchestrator._codegen._models import (
    AssembledCode,
    CodeGenResult,
    CodeValidatedEvent,
    GeneratedCode,
    ValidationResult,
    generator_state_key,
    source_file_names,
)
from agentic_orchestrator._codegen._node import (
    SHIMS,
    SHIMS_FILE,
    node_test_program,
    parse_tap,
    tsc_program,
)
from agentic_orchestrator._codegen._python import (
    SandboxReport,
    compile_program,
    read_report,
    tests_program,
)

_log = structlog.get_logger("agentic_orchestrator.codegen")

_SUPPORTED = ("python", "typescript")
# Only pytest itself: plugins installed beside it (asyncio, xdist...) have no say in the run.
_PYTEST_ENV = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}


def _supported_language(language: str, owner: str) -> str:
    canonical = canonical_language(language)
    if canonical not in _SUPPORTED:
        raise ValueError(f"{owner} supports {', '.join(_SUPPORTED)}, not language {language!r}")
    return canonical


def _typescript_dir(path: str | os.PathLike[str] | None, owner: str) -> str | None:
    """The checked, absolute path of an npm ``typescript`` package directory."""
    if path is None:
        return None
    directory = Path(path).resolve()
    if not (directory / "lib" / "typescript.js").is_file():
        raise ValueError(
            f"{owner}: typescript={os.fspath(path)!r} is not an installed npm typescript package "
            "(expected .../node_modules/typescript with lib/typescript.js; install it with "
            "`npm install typescript` in a project folder)"
        )
    return str(directory)


def _as_assembled(source: GeneratedCode | AssembledCode) -> AssembledCode:
    return AssembledCode.of(source) if isinstance(source, GeneratedCode) else source


def _source_files(source: AssembledCode, language: str) -> dict[str, str]:
    code_file, test_file = source_file_names(language)
    files = {code_file: source.code}
    if source.tests.strip():
        files[test_file] = source.tests
    return files


class CompileValidatorExecutor(Executor):
    """Compiles the code in a sandbox: sends the ``AssembledCode`` on, or a failed result.

    Python: byte-compiles ``solution.py`` (and ``test_solution.py``), then runs mypy when the
    sandbox's Python can import it (a sandbox runs the base interpreter, not this virtualenv:
    without mypy there the result notes that the type check was skipped). TypeScript: the
    compiler API of the npm package at ``typescript`` (``.../node_modules/typescript``) checks
    ``solution.ts`` and ``solution.test.ts`` with ``strict`` and ``noEmit``; each ``error
    TSxxxx`` diagnostic is one error. Create that sandbox with ``read_only_paths=[typescript]``
    so the program can read the compiler.

    Accepts ``GeneratedCode`` (a single part; its task's tests are the tests) or
    ``AssembledCode``. Route its messages with ``passed`` / ``failed`` edges.
    """

    def __init__(
        self,
        sandbox: Sandbox,
        *,
        id: str = "compile",  # noqa: A002 - the API's name
        language: str = "python",
        typescript: str | os.PathLike[str] | None = None,
        type_check: bool = True,
        timeout_s: float = 60,
    ) -> None:
        super().__init__(id, kind=ExecutorKind.VALIDATOR)
        self.sandbox = sandbox
        self.language = _supported_language(language, "CompileValidatorExecutor")
        self.typescript = _typescript_dir(typescript, "CompileValidatorExecutor")
        if self.language == "typescript" and self.typescript is None:
            raise ValueError(
                "CompileValidatorExecutor(language='typescript') needs typescript=<path of an "
                "installed npm typescript package, .../node_modules/typescript>"
            )
        self.type_check = type_check
        self.timeout_s = timeout_s

    @handler
    async def validate(
        self,
        source: GeneratedCode | AssembledCode,
        ctx: WorkflowContext[AssembledCode | ValidationResult],
    ) -> None:
        """Compile ``source``; send it on when it compiles, else a failed ValidationResult."""
        assembled = _as_assembled(source)
        files = _source_files(assembled, self.language)
        if self.typescript is not None and self.language == "typescript":
            files[SHIMS_FILE] = SHIMS
            program = tsc_program(self.typescript, list(files))
            result = await self.sandbox.execute(
                program, language="javascript", timeout_s=self.timeout_s, files=files
            )
        else:
            program = compile_program(list(files), type_check=self.type_check)
            result = await self.sandbox.execute(
                program, language="python", timeout_s=self.timeout_s, files=files
            )
        report = read_report(result, what="the compile check")
        _log.info(
            "codegen.compiled",
            executor_id=self.id,
            passed=not report.errors,
            errors=len(report.errors),
            notes=report.notes,
        )
        await ctx.add_event(
            CodeValidatedEvent(
                executor_id=self.id, stage="compile", passed=not report.errors, errors=report.errors
            )
        )
        if not report.errors:
            await ctx.send_message(assembled)
            return
        await ctx.send_message(
            ValidationResult(
                stage="compile",
                passed=False,
                source=assembled,
                errors=report.errors,
                output=report.output,
                duration_s=result.duration_s,
            )
        )


class TestValidatorExecutor(Executor):
    """Runs the tests in a sandbox and counts what passed and failed.

    Python: ``test_solution.py`` under pytest when the sandbox's Python has it, else a small
    built-in runner calling each ``test_*`` function (no tests at all: ``solution.py`` must
    import cleanly). TypeScript: ``node --test`` on ``solution.test.ts`` with the TAP reporter:
    Node >= 22.6 runs the ``.ts`` files itself; with ``typescript`` (an npm package directory,
    mounted in the sandbox) they are transpiled first, so any Node with ``node:test`` works.

    Passed and ``final``: yields ``CodeGenResult(succeeded=True)`` (the attempt count is read
    from the generators' shared-state records). Passed and not final: sends the passed
    ``ValidationResult``. Failed: sends a failed one whose errors are the failing tests'
    messages.
    """

    __test__ = False  # a name starting with "Test", not a pytest test class

    def __init__(
        self,
        sandbox: Sandbox,
        *,
        id: str = "test",  # noqa: A002 - the API's name
        language: str = "python",
        timeout_s: float = 60,
        final: bool = True,
        typescript: str | os.PathLike[str] | None = None,
    ) -> None:
        super().__init__(id, kind=ExecutorKind.VALIDATOR)
        self.sandbox = sandbox
        self.language = _supported_language(language, "TestValidatorExecutor")
        self.timeout_s = timeout_s
        self.final = final
        self.typescript = _typescript_dir(typescript, "TestValidatorExecutor")

    @handler
    async def run_tests(
        self,
        source: AssembledCode | GeneratedCode,
        ctx: WorkflowContext[ValidationResult, CodeGenResult],
    ) -> None:
        """Run the tests of ``source`` and report (see the class docstring)."""
        assembled = _as_assembled(source)
        result, report = await self._run(assembled)
        passed = report.complete and not report.errors and report.failed == 0
        _log.info(
            "codegen.tested",
            executor_id=self.id,
            passed=passed,
            tests_passed=report.passed,
            tests_failed=report.failed,
        )
        validation = ValidationResult(
            stage="test",
            passed=passed,
            source=assembled,
            errors=report.errors,
            tests_passed=report.passed,
            tests_failed=report.failed,
            output=report.output,
            duration_s=result.duration_s if result is not None else 0.0,
        )
        await ctx.add_event(
            CodeValidatedEvent(
                executor_id=self.id,
                stage="test",
                passed=passed,
                errors=report.errors,
                tests_passed=report.passed,
                tests_failed=report.failed,
            )
        )
        if passed and self.final:
            await ctx.yield_output(
                CodeGenResult(
                    succeeded=True,
                    language=assembled.language,
                    code=assembled.code,
                    tests=assembled.tests,
                    attempts=await _attempts(ctx, assembled.parts),
                    stage="test",
                    tests_passed=report.passed,
                    tests_failed=report.failed,
                )
            )
            return
        await ctx.send_message(validation)

    async def _run(self, source: AssembledCode) -> tuple[ExecutionResult | None, SandboxReport]:
        files = _source_files(source, self.language)
        code_file, test_file = source_file_names(self.language)
        if self.language == "python":
            program = tests_program(test_file, code_file.removesuffix(".py"))
            result = await self.sandbox.execute(
                program, language="python", timeout_s=self.timeout_s, files=files, env=_PYTEST_ENV
            )
            return result, read_report(result, what="the test run")
        if test_file not in files:
            return None, SandboxReport(notes=["no tests to run"])
        program = node_test_program(code_file, test_file, self.typescript)
        result = await self.sandbox.execute(
            program,
            language="javascript" if self.typescript is not None else "typescript",
            timeout_s=self.timeout_s,
            files=files,
        )
        tap = parse_tap(result.stdout)
        output = (result.stdout + result.stderr)[-4000:]
        if not tap.found:
            detail = (result.stderr.strip() or result.stdout.strip())[-1500:]
            reason = "timed out" if result.timed_out else f"exit code {result.exit_code}"
            return result, SandboxReport(
                errors=[f"node --test gave no summary ({reason}): {detail}"],
                output=output,
                complete=False,
            )
        errors = tap.errors or (
            [f"{tap.failed} test(s) failed: {output[-1500:]}"] if tap.failed else []
        )
        return result, SandboxReport(
            errors=errors, passed=tap.passed, failed=tap.failed, output=output
        )


async def _attempts(ctx: WorkflowContext[ValidationResult, CodeGenResult], parts: list[str]) -> int:
    """The highest attempt number among the generators of ``parts`` (1 when none recorded)."""
    attempts = 1
    for part in parts:
        record = await ctx.get_shared_state(generator_state_key(part))
        if isinstance(record, dict):
            task = record.get("task")  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
            if isinstance(task, dict):
                attempt = task.get("attempt", 1)  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
                if isinstance(attempt, int):
                    attempts = max(attempts, attempt)
    return attempts
