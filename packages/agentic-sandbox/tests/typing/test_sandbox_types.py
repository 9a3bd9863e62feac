# pyright: strict
"""Type-checked (pyright strict) uses of the agentic_sandbox API: fails CI if the types regress.

It also runs as a test module, so the examples stay executable.
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from typing import assert_type

import pytest

from agentic_core import (
    ExecutionResult,
    ExecutorKind,
    InteractiveSandbox,
    Sandbox,
    SandboxProcess,
)
from agentic_sandbox import CodeExecutionRequest, DockerSandbox, ProcessSandbox, SandboxExecutor


def test_process_sandbox_is_an_interactive_sandbox() -> None:
    sandbox: InteractiveSandbox = ProcessSandbox(timeout_s=5, memory_mb=128, network=False)
    plain: Sandbox = sandbox
    assert plain is sandbox
    assert_type(sandbox.start("print(1)"), AbstractAsyncContextManager[SandboxProcess])


@pytest.mark.usefixtures("process_sandbox_works")  # skips, naming why, where none can run
async def test_execute_returns_an_execution_result() -> None:
    async with ProcessSandbox(languages=["python", "sh"]) as sandbox:
        result = await sandbox.execute("print(1)", files={"a.txt": b"x"}, env={"A": "1"})
        assert_type(result, ExecutionResult)
        assert result.stdout == "1\n"


def test_docker_sandbox_is_an_interactive_sandbox() -> None:
    sandbox: InteractiveSandbox = DockerSandbox(
        "python:3.12-slim", memory_mb=256, cpus=0.5, pids_limit=64, network=False, timeout_s=5
    )
    assert_type(
        sandbox.start("print(1)", language="sh"), AbstractAsyncContextManager[SandboxProcess]
    )


def test_sandbox_executor_takes_any_sandbox() -> None:
    executor = SandboxExecutor(ProcessSandbox(), id="run", kind=ExecutorKind.VALIDATOR)
    request = CodeExecutionRequest(code="print(1)", language="python")
    assert executor.kind is ExecutorKind.VALIDATOR
    assert request.timeout_s is None
