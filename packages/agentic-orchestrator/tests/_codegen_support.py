"""A tiny Sandbox for the code-generation unit tests: real subprocesses, no isolation.

Core's ``ScriptedSandbox`` with a function that runs each call: Python with this interpreter
(which has pytest) or JavaScript with node, in a fresh temporary directory holding the program
and its files; the calls are recorded in ``.calls``. ``without_pytest=True`` drops a
``pytest.py`` that fails to import into that directory, so the validators' built-in test
runner is used. Not a security boundary: only for tests that run code they wrote themselves.
"""

from __future__ import annotations

import asyncio
import shutil
import sys
import tempfile
import time
from pathlib import Path

from agentic_core import ExecutionResult
from agentic_core.testing import SandboxCall, ScriptedSandbox

_FILE_NAMES = {"python": "main.py", "javascript": "main.js"}


class SubprocessSandbox(ScriptedSandbox):
    """A core ``Sandbox`` whose every run is a plain subprocess (tests only)."""

    def __init__(self, *, without_pytest: bool = False) -> None:
        super().__init__(lambda call: run_in_subprocess(call, without_pytest=without_pytest))
        self.without_pytest = without_pytest


async def run_in_subprocess(call: SandboxCall, *, without_pytest: bool = False) -> ExecutionResult:
    """Run ``call`` in a fresh temporary directory holding the program and its files."""
    if call.language not in _FILE_NAMES:
        raise ValueError(f"SubprocessSandbox runs python and javascript, not {call.language!r}")
    with tempfile.TemporaryDirectory(prefix="codegen-test-") as tmp:
        work = Path(tmp)
        for name, content in call.files.items():
            data = content.encode() if isinstance(content, str) else content
            (work / name).write_bytes(data)
        if without_pytest and call.language == "python":
            (work / "pytest.py").write_text("raise ImportError('no pytest here')\n")
        program = work / _FILE_NAMES[call.language]
        program.write_text(call.code)
        interpreter = sys.executable if call.language == "python" else shutil.which("node")
        if interpreter is None:
            raise RuntimeError("node is not installed")
        started = time.monotonic()
        process = await asyncio.create_subprocess_exec(
            interpreter,
            program.name,
            cwd=work,
            env={"PATH": "/usr/bin:/bin", **call.env},
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        try:
            async with asyncio.timeout(call.timeout_s or 60):
                stdout, stderr = await process.communicate()
        except TimeoutError:
            process.kill()
            await process.wait()
            return ExecutionResult(
                exit_code=-9,
                stdout="",
                stderr="",
                duration_s=time.monotonic() - started,
                timed_out=True,
            )
        return ExecutionResult(
            exit_code=process.returncode or 0,
            stdout=stdout.decode(errors="replace"),
            stderr=stderr.decode(errors="replace"),
            duration_s=time.monotonic() - started,
        )
