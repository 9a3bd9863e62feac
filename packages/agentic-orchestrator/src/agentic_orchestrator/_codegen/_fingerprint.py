"""ErrorFingerprinter: a stable hash of an error set, and whether a repair looks simple.

The fingerprint ignores what changes between attempts without changing the problem (line
and column numbers, paths, quoted values, addresses), so the same mistake made again has the
same fingerprint. A simple error set goes to a fast model, a complex one to a strong model.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import Any, Literal

from agentic_core import Executor, ExecutorKind, WorkflowContext, handler
from agentic_orchestrator._codegen._models import ValidationResult

ErrorKind = Literal["syntax", "name", "type", "assertion", "other"]
_SIMPLE_KINDS = frozenset({"syntax", "name", "type"})

_NORMALISERS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"(?:[A-Za-z]:)?(?:[\w.~-]*[/\\])+([\w.-]+)"), r"\1"),  # paths -> file name
    (re.compile(r"\bline \d+"), "line N"),
    (re.compile(r"\(\d+,\s*\d+\)"), "(N,N)"),  # tsc positions: file.ts(3,7)
    (re.compile(r":\d+(?::\d+)?\b"), ":N"),  # file.py:12: / file.js:3:9
    (re.compile(r"0x[0-9a-fA-F]+"), "0xN"),
    (re.compile(r"'[^'\n]*'|\"[^\"\n]*\"|`[^`\n]*`"), "'V'"),  # quoted values
    (re.compile(r"\s+"), " "),
)
_KINDS: tuple[tuple[ErrorKind, re.Pattern[str]], ...] = (
    ("syntax", re.compile(r"SyntaxError|IndentationError|TabError|error TS1\d{3}\b")),
    (
        "name",
        re.compile(
            r"NameError|is not defined|ImportError|ModuleNotFoundError|Name .* is not defined"
            r"|error TS(?:2304|2552|2305|2307|2724)\b|Cannot find name"
        ),
    ),
    (
        "type",
        re.compile(
            r"TypeError|AttributeError|has no attribute|Incompatible|: error: .*\[[\w-]+\]"
            r"|error TS2\d{3}\b"
        ),
    ),
    ("assertion", re.compile(r"AssertionError|\bassert\b|AssertionError|expected .* actual")),
)
_SYMBOL = re.compile(r"'([A-Za-z_$][\w.$]*)'|\"([A-Za-z_$][\w.$]*)\"")


def normalise_error(error: str) -> str:
    """``error`` without what varies between attempts (positions, paths, quoted values)."""
    text = error
    for pattern, replacement in _NORMALISERS:
        text = pattern.sub(replacement, text)
    return text.strip()


def error_fingerprint(errors: Sequence[str]) -> str:
    """A stable 16-hex-digit hash of an error set (order and repeats do not matter)."""
    normalised = sorted({normalise_error(error) for error in errors})
    return hashlib.sha256("\n".join(normalised).encode()).hexdigest()[:16]


def error_kind(error: str) -> ErrorKind:
    """syntax, name, type, assertion or other: the first kind whose marks ``error`` has."""
    for kind, pattern in _KINDS:
        if pattern.search(error):
            return kind
    return "other"


def classify_errors(
    errors: Sequence[str], *, simple_max_errors: int, repeated: bool
) -> Literal["simple", "complex"]:
    """Simple: at most ``simple_max_errors`` errors of one kind among syntax, name, or a type
    error about one symbol, not seen before. Anything else (failing assertions, a mix, many
    errors, a repeat the last repair did not fix) is complex."""
    if repeated or not errors or len(errors) > simple_max_errors:
        return "complex"
    kinds = {error_kind(error) for error in errors}
    if len(kinds) != 1 or not kinds <= _SIMPLE_KINDS:
        return "complex"
    if kinds == {"type"}:
        symbols = {a or b for error in errors for a, b in _SYMBOL.findall(error)}
        if len(symbols) > 1:
            return "complex"
    return "simple"


class ErrorFingerprinter(Executor):
    """Annotates a failed ``ValidationResult`` with a fingerprint and a severity, and sends it on.

    A fingerprint seen before in this run makes the result complex (the last repair did not
    fix it). Route with ``repair_is_simple`` to a fast-model generator and with
    ``lambda m: code_failed(m) and not repair_is_simple(m)`` to a strong one; give both
    generators the same ``part`` so they share the task (see ``LLMGeneratorExecutor``). A passed
    result is sent on unchanged.
    """

    def __init__(self, *, id: str = "fingerprinter", simple_max_errors: int = 2) -> None:  # noqa: A002
        if simple_max_errors < 0:
            raise ValueError(f"simple_max_errors must be >= 0, got {simple_max_errors}")
        super().__init__(id, kind=ExecutorKind.VALIDATOR)
        self.simple_max_errors = simple_max_errors
        self._seen: dict[str, int] = {}

    def snapshot_state(self) -> Any:
        """How often each fingerprint was seen in this run."""
        return dict(self._seen)

    def restore_state(self, state: Any) -> None:
        """Take this run's fingerprint counts (None: none yet)."""
        self._seen = dict(state) if isinstance(state, dict) else {}  # pyright: ignore[reportUnknownArgumentType]

    @handler
    async def annotate(
        self, result: ValidationResult, ctx: WorkflowContext[ValidationResult]
    ) -> None:
        """Fingerprint and classify a failed result; pass a passed one through."""
        if result.passed:
            await ctx.send_message(result)
            return
        fingerprint = error_fingerprint(result.errors)
        repeated = self._seen.get(fingerprint, 0) > 0
        self._seen[fingerprint] = self._seen.get(fingerprint, 0) + 1
        severity = classify_errors(
            result.errors, simple_max_errors=self.simple_max_errors, repeated=repeated
        )
        await ctx.send_message(
            result.model_copy(update={"fingerprint": fingerprint, "severity": severity})
        )
