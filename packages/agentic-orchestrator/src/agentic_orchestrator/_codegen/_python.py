"""The programs the validators run in the sandbox for Python, and how their report is read.

Each program prints one line ``RESULT_MARKER {json}`` last; everything before it is the
program's (or the tests') own output. The sandbox runs its base interpreter, not this
process's virtualenv, so mypy and pytest are used only when importable there: the programs
check that themselves (one sandbox run, no probe).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, cast

from agentic_core import ExecutionResult

RESULT_MARKER = "@@agentic-codegen-report@@"

_COMPILE = r"""
import json, os, sys
FILES = json.loads(__FILES__)
TYPE_CHECK = __TYPE_CHECK__
errors, notes = [], []
for name in FILES:
    with open(name, encoding="utf-8") as source:
        text = source.read()
    try:
        compile(text, name, "exec")  # what py_compile does, without writing a .pyc
    except SyntaxError as exc:
        line = (exc.text or "").strip()
        errors.append(
            f"{name}, line {exc.lineno}: {type(exc).__name__}: {exc.msg}"
            + (f"\n    {line}" if line else "")
        )
if TYPE_CHECK and not errors:
    try:
        from mypy import api
    except ImportError:
        notes.append("type check skipped: mypy is not importable by the sandbox's Python")
    else:
        out, err, _status = api.run([
            *FILES, "--ignore-missing-imports", "--no-error-summary", "--no-color-output",
            "--hide-error-context", "--cache-dir=" + os.devnull,
        ])
        errors += [line for line in out.splitlines() if ": error:" in line]
        notes.append("type checked with mypy")
print(__MARKER__ + " " + json.dumps({"errors": errors, "notes": notes}))
"""

_TEST = r"""
import importlib, json, os, sys, traceback
sys.path.insert(0, os.getcwd())
TEST_FILE, CODE_MODULE = json.loads(__NAMES__)
SUMMARY = {"passed": 0, "failed": 0, "errors": [], "runner": ""}


def where(exc):
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if os.path.basename(f.filename) != "main.py"]
    if not frames:
        return ""
    frame = frames[-1]
    name = os.path.basename(frame.filename)
    return f" ({name}, line {frame.lineno}: {(frame.line or '').strip()})"


def describe(exc):
    text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    return text + where(exc)


def fail(name, message):
    SUMMARY["failed"] += 1
    SUMMARY["errors"].append(f"{name}: {message}")


def explained(text):
    # pytest's "E   ..." lines say what went wrong; the rest is the import machinery.
    lines = [line[1:].strip() for line in text.splitlines() if line.startswith("E ")]
    return "\n".join(lines) if lines else text.strip()[-1500:]


def with_pytest(pytest):
    class Collector:
        def pytest_collectreport(self, report):
            if report.failed:
                fail(report.nodeid or TEST_FILE, explained(report.longreprtext))

        def pytest_runtest_logreport(self, report):
            if report.passed and report.when == "call":
                SUMMARY["passed"] += 1
            elif report.failed:
                crash = getattr(report.longrepr, "reprcrash", None)
                if crash is None:
                    message = explained(report.longreprtext)
                else:
                    name = os.path.basename(str(crash.path))
                    message = f"{crash.message} ({name}, line {crash.lineno})"
                fail(report.nodeid.split("::")[-1], message)

    SUMMARY["runner"] = "pytest"
    pytest.main(["-q", "-p", "no:cacheprovider", "--no-header", TEST_FILE], plugins=[Collector()])


def built_in():
    SUMMARY["runner"] = "built-in"
    try:
        module = importlib.import_module(TEST_FILE[:-3])
    except BaseException as exc:
        fail(TEST_FILE, describe(exc))
        return
    tests = [(n, f) for n, f in vars(module).items() if n.startswith("test") and callable(f)]
    for name, function in tests:
        try:
            function()
        except BaseException as exc:
            fail(name, describe(exc))
        else:
            SUMMARY["passed"] += 1
            print(f"PASSED {name}")


if not os.path.exists(TEST_FILE):
    SUMMARY["runner"] = "import"  # no tests: the code must at least import and run
    try:
        importlib.import_module(CODE_MODULE)
    except BaseException as exc:
        fail(CODE_MODULE, describe(exc))
else:
    try:
        import pytest
    except ImportError:
        built_in()
    else:
        with_pytest(pytest)
if SUMMARY["runner"] != "import" and SUMMARY["passed"] + SUMMARY["failed"] == 0:
    fail(TEST_FILE, "no tests found: write functions named test_... that use assert")
print(__MARKER__ + " " + json.dumps(SUMMARY))
"""


@dataclass
class SandboxReport:
    """What a validator program reported (or, when it printed no report, why)."""

    errors: list[str] = field(default_factory=list[str])
    notes: list[str] = field(default_factory=list[str])
    passed: int = 0
    failed: int = 0
    output: str = ""
    complete: bool = True


def compile_program(files: list[str], *, type_check: bool) -> str:
    """The Python program that byte-compiles ``files`` (and runs mypy when it can)."""
    return (
        _COMPILE.replace("__FILES__", repr(json.dumps(files)))
        .replace("__TYPE_CHECK__", repr(type_check))
        .replace("__MARKER__", repr(RESULT_MARKER))
    )


def tests_program(test_file: str, code_module: str) -> str:
    """The Python program that runs ``test_file`` (pytest, else a small built-in runner)."""
    return _TEST.replace("__NAMES__", repr(json.dumps([test_file, code_module]))).replace(
        "__MARKER__", repr(RESULT_MARKER)
    )


def read_report(result: ExecutionResult, *, what: str, max_output: int = 4000) -> SandboxReport:
    """The report line of a validator program's output; a missing one becomes an error."""
    lines = result.stdout.splitlines()
    for index in range(len(lines) - 1, -1, -1):
        if lines[index].startswith(RESULT_MARKER):
            data = cast("dict[str, Any]", json.loads(lines[index][len(RESULT_MARKER) :]))
            own = "\n".join(lines[:index] + lines[index + 1 :])
            return SandboxReport(
                errors=[str(e) for e in data.get("errors", [])],
                notes=[str(n) for n in data.get("notes", [])],
                passed=int(data.get("passed", 0)),
                failed=int(data.get("failed", 0)),
                output=_tail(own + result.stderr, max_output),
            )
    if result.timed_out:
        reason = f"{what} timed out after {result.duration_s:.1f} s"
    else:
        reason = f"{what} ended with exit code {result.exit_code} and no report"
    detail = _tail(result.stderr.strip() or result.stdout.strip(), 1500)
    return SandboxReport(
        errors=[f"{reason}: {detail}" if detail else reason],
        output=_tail(result.stdout + result.stderr, max_output),
        complete=False,
    )


def _tail(text: str, limit: int) -> str:
    return text if len(text) <= limit else "..." + text[-limit:]
