"""The Sandbox protocol: run untrusted code somewhere isolated (agentic-sandbox implements it)."""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractAsyncContextManager
from typing import Protocol, Self, runtime_checkable

from pydantic import BaseModel, Field


class Artifact(BaseModel):
    """A file the program wrote into its ``out/`` directory."""

    path: str
    """Relative to ``out/``, with ``/`` separators."""
    content: bytes
    size: int


class ExecutionResult(BaseModel):
    """How a sandboxed program ended and what it printed."""

    exit_code: int
    stdout: str
    stderr: str
    duration_s: float
    timed_out: bool = False
    truncated: bool = False
    """Output went past the sandbox's limit and was cut."""
    artifacts: list[Artifact] = Field(default_factory=list[Artifact])

    @property
    def ok(self) -> bool:
        """Exited with 0, in time."""
        return self.exit_code == 0 and not self.timed_out


@runtime_checkable
class Sandbox(Protocol):
    """Runs code in isolation; also an async context manager (``stop`` on exit)."""

    async def execute(
        self,
        code: str,
        *,
        language: str = "python",
        timeout_s: float | None = None,
        files: Mapping[str, str | bytes] | None = None,
        env: Mapping[str, str] | None = None,
    ) -> ExecutionResult: ...

    async def is_ready(self) -> bool: ...

    async def stop(self) -> None: ...

    async def __aenter__(self) -> Self: ...

    async def __aexit__(self, *exc_info: object) -> None: ...


@runtime_checkable
class SandboxProcess(Protocol):
    """A sandboxed program still running, for two-way talk (e.g. MCP Code Mode)."""

    async def write(self, data: bytes) -> None: ...

    async def readline(self, *, limit: int) -> bytes: ...

    async def wait(self) -> ExecutionResult: ...

    async def kill(self) -> None: ...


@runtime_checkable
class InteractiveSandbox(Sandbox, Protocol):
    """A sandbox that can also start a program and talk to it while it runs."""

    def start(
        self,
        code: str,
        *,
        language: str = "python",
        timeout_s: float | None = None,
        files: Mapping[str, str | bytes] | None = None,
        env: Mapping[str, str] | None = None,
    ) -> AbstractAsyncContextManager[SandboxProcess]: ...
