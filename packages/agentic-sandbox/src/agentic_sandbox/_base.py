"""What both sandboxes share: ``execute``, ``start`` and the context manager over one run."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from contextlib import AbstractAsyncContextManager
from typing import Self

from agentic_core import ExecutionResult, SandboxProcess


class SandboxBase(ABC):
    """Core's ``Sandbox`` and ``InteractiveSandbox`` over ``_program``, which runs one program."""

    _stopped: bool = False

    @abstractmethod
    def _program(
        self,
        code: str,
        *,
        language: str,
        timeout_s: float | None,
        files: Mapping[str, str | bytes] | None,
        env: Mapping[str, str] | None,
        interactive: bool,
    ) -> AbstractAsyncContextManager[SandboxProcess]:
        """Start ``code``; leaving the block ends the program and removes what it ran in."""

    @abstractmethod
    async def stop(self) -> None:
        """End every program still running; further runs raise SandboxNotReadyError."""

    async def execute(
        self,
        code: str,
        *,
        language: str = "python",
        timeout_s: float | None = None,
        files: Mapping[str, str | bytes] | None = None,
        env: Mapping[str, str] | None = None,
    ) -> ExecutionResult:
        """Run ``code`` to its end (or its timeout) and return what it did.

        A failing, timed-out or too talkative program is a result, not an error. SandboxError
        is for what cannot run at all (an unknown or missing language, a file name leaving the
        work dir); SandboxNotReadyError for a sandbox that cannot run anything here (no jail
        that keeps its promises, no engine or image).
        """
        async with self._program(
            code, language=language, timeout_s=timeout_s, files=files, env=env, interactive=False
        ) as program:
            return await program.wait()

    def start(
        self,
        code: str,
        *,
        language: str = "python",
        timeout_s: float | None = None,
        files: Mapping[str, str | bytes] | None = None,
        env: Mapping[str, str] | None = None,
    ) -> AbstractAsyncContextManager[SandboxProcess]:
        """Start ``code`` and talk to it while it runs; leaving the block ends what is left.

        Example::

            async with sandbox.start("print(input().upper())") as process:
                await process.write(b"hello\\n")
                line = await process.readline(limit=1024)  # b"HELLO\\n"
                result = await process.wait()
        """
        return self._program(
            code, language=language, timeout_s=timeout_s, files=files, env=env, interactive=True
        )

    async def __aenter__(self) -> Self:
        self._stopped = False
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()
