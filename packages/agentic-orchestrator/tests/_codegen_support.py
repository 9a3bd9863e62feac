"""A tiny Sandbox for the code-generation unit tests: real subprocesses, no isolation.

Runs Python with this interpreter (which has pytest) or JavaScript with node, in a fresh
temporary directory holding the program and its files. ``without_pytest=True`` drops a
``pytest.py`` that fails to import into that directory, so the validators' built-in test
runner is used. Not a security boundary: only for tests that run code they wrote themselves.
"""

from __future__ import annotations

import asyncio
import shutil
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Self

from agentic_core import ExecutionResult

_FILE_NAMES = {"python": "main.py", "javascript": "main.js"}


class SubprocessSandbox:
    """Implements the core ``Sandbox`` protocol with plain subprocesses (tests only)."""

    def __init__(self, *, without_pytest: bool = False) -> None:
        self.without_pytest = without_pytest
        self.runs: list[tuple[str, dict[str, str | bytes]]] = []

    async def execute(
        self,
        code: str,
        *,
        language: str = "python",
        timeout_s: float | None = None,
        files: Mapping[str, str | bytes] | None = None,
        env: Mapping[str, str] | None = None,
    ) -> ExecutionResult:
        if language not in _FILE_NAMES:
            raise ValueError(f"SubprocessSandbox runs python and javascript, not {language!r}")
        self.runs.append((language, dict(files or {})))
        with tempfile.TemporaryDirectory(prefix="codegen-test-") as tmp:
            work = Path(tmp)
            for name, content in (files or {}).items():
                data = content.encode() if isinstance(content, str) else content
                (work / name).write_bytes(data)
            if self.without_pytest and language == "python":
                (work / "pytest.py").write_text("raise ImportError('no pytest here')\n")
            program = work / _FILE_NAMES[language]
            program.write_text(code)
            interpreter = sys.executable if language == "python" else shutil.which("node")
            if interpreter is None:
                raise RuntimeError("node is not installed")
            started = time.monotonic()
            process = await asyncio.create_subprocess_exec(
                interpreter,
                program.name,
                cwd=work,
                env={"PATH": "/usr/bin:/bin", **(env or {})},
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
            )
            try:
                async with asyncio.timeout(timeout_s or 60):
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

    async def is_ready(self) -> bool:
        return True

    async def stop(self) -> None:
        return None

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()
