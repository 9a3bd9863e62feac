"""The messages of the code-generation loop: tasks, generated parts, validation results.

A loop runs ``CodeTask -> GeneratedCode -> AssembledCode -> ValidationResult`` and ends with one
``CodeGenResult`` output. The edge predicates ``code_passed``, ``code_failed`` and
``repair_is_simple`` route these messages in a graph.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from agentic_core import WorkflowEvent
from agentic_orchestrator._code_blocks import canonical_language

CODEGEN_PARTS_KEY = "codegen.parts"
"""Shared-state key where ``CodeAssemblerExecutor`` publishes ``{part name: code}``."""

_GENERATOR_KEY_PREFIX = "codegen.generator."


_FILE_NAMES = {
    "python": ("solution.py", "test_solution.py"),
    "typescript": ("solution.ts", "solution.test.ts"),
    "javascript": ("solution.js", "solution.test.js"),
}


def source_file_names(language: str) -> tuple[str, str]:
    """``(code file, test file)`` the validators write: ``solution.py``/``test_solution.py``..."""
    names = _FILE_NAMES.get(canonical_language(language))
    if names is None:
        known = ", ".join(sorted(_FILE_NAMES))
        raise ValueError(f"code generation supports {known}, not language {language!r}")
    return names


def generator_state_key(part: str) -> str:
    """Shared-state key of the latest generation of ``part`` (task, attempt and code).

    Generators that produce the same part (a fast and a strong model) share the task through
    it; validators read the attempt count from it.
    """
    return _GENERATOR_KEY_PREFIX + part


class CodeTask(BaseModel):
    """What a generator must write: the prompt, and what earlier attempts taught.

    ``name`` names the part (``"types"``, ``"impl"``, ``"tests"``); ``role="test"`` marks a part
    holding tests. ``tests`` are tests the code must pass (shown to a ``role="code"``
    generator); ``previous_code`` and ``previous_errors`` come from the last failed attempt.
    """

    prompt: str
    language: str = "python"
    name: str = "code"
    section: str | None = None
    role: Literal["code", "test"] = "code"
    context: str = ""
    tests: str = ""
    attempt: int = 1
    previous_errors: list[str] = Field(default_factory=list[str])
    previous_code: str = ""
    fingerprints: list[str] = Field(default_factory=list[str])


class GeneratedCode(BaseModel):
    """One part a generator wrote for ``task`` (the code only, extracted from the reply)."""

    task: CodeTask
    code: str
    model: str = ""


class AssembledCode(BaseModel):
    """Parts merged into one program: ``code`` (role code) and ``tests`` (role test).

    ``parts`` names the merged parts, in the order their code was joined.
    """

    language: str
    code: str
    tests: str = ""
    parts: list[str] = Field(default_factory=list[str])

    @classmethod
    def of(cls, generated: GeneratedCode) -> AssembledCode:
        """One generated part as a whole program (a test part becomes the tests)."""
        task = generated.task
        if task.role == "test":
            return cls(language=task.language, code="", tests=generated.code, parts=[task.name])
        return cls(language=task.language, code=generated.code, tests=task.tests, parts=[task.name])


class ValidationResult(BaseModel):
    """What a validator found: ``passed``, the errors, the test counts, and on what source.

    ``severity`` and ``fingerprint`` are set by ``ErrorFingerprinter``.
    """

    stage: Literal["compile", "test"]
    passed: bool
    source: AssembledCode
    errors: list[str] = Field(default_factory=list[str])
    tests_passed: int = 0
    tests_failed: int = 0
    output: str = ""
    duration_s: float = 0.0
    severity: Literal["simple", "complex"] | None = None
    fingerprint: str | None = None


class CodeGenResult(BaseModel):
    """How a code-generation loop ended: the code, the tests, and whether they pass."""

    succeeded: bool
    language: str
    code: str
    tests: str
    attempts: int
    stage: str
    last_errors: list[str] = Field(default_factory=list[str])
    tests_passed: int = 0
    tests_failed: int = 0

    def summary(self) -> str:
        """One line: outcome, attempts, test counts, and the first error when it failed."""
        counts = f"{self.tests_passed} passed, {self.tests_failed} failed"
        if self.succeeded:
            return (
                f"succeeded: {self.language} code passed {self.stage} after "
                f"{self.attempts} attempt(s) (tests: {counts})"
            )
        first = self.last_errors[0].splitlines()[0] if self.last_errors else "no error reported"
        more = f" (+{len(self.last_errors) - 1} more)" if len(self.last_errors) > 1 else ""
        return (
            f"failed: {self.language} code did not pass {self.stage} after {self.attempts} "
            f"attempt(s) (tests: {counts}); last error: {first}{more}"
        )

    def __str__(self) -> str:
        return self.summary()


class CodeValidatedEvent(WorkflowEvent):
    """A validator's verdict, emitted as it happens (a live view shows why the loop goes on)."""

    executor_id: str
    stage: Literal["compile", "test"]
    passed: bool
    errors: list[str] = Field(default_factory=list[str])
    tests_passed: int = 0
    tests_failed: int = 0

    def __str__(self) -> str:
        if self.stage == "compile":
            verdict = "compiles" if self.passed else "does not compile"
        else:
            verdict = f"tests: {self.tests_passed} passed, {self.tests_failed} failed"
        if self.errors:
            first = self.errors[0].splitlines()[0]
            more = f" (+{len(self.errors) - 1} more)" if len(self.errors) > 1 else ""
            verdict += f": {first}{more}"
        return verdict


def code_passed(message: Any) -> bool:
    """Edge predicate: a validation that passed (an ``AssembledCode`` sent on counts too).

    A compile validator sends the ``AssembledCode`` on when it passed, so
    ``add_edge(compile, test, condition=code_passed)`` routes exactly that.
    """
    if isinstance(message, AssembledCode):
        return True
    if isinstance(message, ValidationResult):
        return message.passed
    if isinstance(message, CodeGenResult):
        return message.succeeded
    return False


def code_failed(message: Any) -> bool:
    """Edge predicate: a failed ``ValidationResult`` (or a ``CodeGenResult`` that failed)."""
    if isinstance(message, ValidationResult):
        return not message.passed
    if isinstance(message, CodeGenResult):
        return not message.succeeded
    return False


def repair_is_simple(message: Any) -> bool:
    """Edge predicate: a failed ``ValidationResult`` the fingerprinter judged simple.

    Route these to a fast model; ``lambda m: code_failed(m) and not repair_is_simple(m)`` to a
    strong one.
    """
    return isinstance(message, ValidationResult) and message.severity == "simple"


# The earlier names: bare ``passed`` / ``failed`` / ``is_simple`` did not say what passed.
passed = code_passed
failed = code_failed
is_simple = repair_is_simple
