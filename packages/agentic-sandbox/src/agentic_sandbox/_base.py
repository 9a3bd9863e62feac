"""What both sandboxes share: ``execute``, ``start`` and the context manager over one run, and
finishing work that belongs to another event loop."""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Iterable, Mapping
from contextlib import AbstractAsyncContextManager
from typing import Self

from agentic_core import ExecutionResult, SandboxProcess
from agentic_sandbox._errors import SandboxError
from agentic_sandbox._languages import canonical_language
from agentic_sandbox._workdir import safe_relative_path


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


async def on_its_loop(
    loop: asyncio.AbstractEventLoop,
    work: Callable[[], Awaitable[None]],
    fallback: Callable[[], None] | None = None,
) -> None:
    """Run ``work`` on ``loop``, the event loop its program belongs to, and wait for it here.

    A sandbox may serve several loops (``asyncio.run`` after ``asyncio.run``, or a loop per
    thread) while a program, its futures and its watchdog belong to the loop that started it.
    On this loop ``work`` is awaited; on a loop running in another thread it is sent there;
    when that loop no longer runs, ``fallback`` (blocking, loop-free clean-up) runs in a thread.
    """
    if loop is asyncio.get_running_loop():
        await work()
    elif loop.is_running() and not loop.is_closed():

        async def run_there() -> None:
            await work()

        await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(run_there(), loop))
    elif fallback is not None:
        await asyncio.to_thread(fallback)


# -- the checks of every run, the same in every sandbox -------------------------------------------


def allowed_language(language: str, allowed: Iterable[str], sandbox: str) -> str:
    """``language``'s canonical name, or SandboxError when ``sandbox`` does not offer it."""
    name = canonical_language(language)
    if name not in allowed:
        offered = ", ".join(sorted(allowed))
        raise SandboxError(f"language {name!r} is not enabled in {sandbox} ({offered})")
    return name


def run_timeout(timeout_s: float | None, default_s: float) -> float:
    """The timeout of one run: ``timeout_s``, else the sandbox's; SandboxError unless positive."""
    timeout = default_s if timeout_s is None else float(timeout_s)
    if not timeout > 0:
        raise SandboxError(f"timeout_s must be positive, got {timeout_s!r}")
    return timeout


def check_file_names(files: Iterable[str], program_file: str, language: str) -> None:
    """SandboxError when a file of the run would overwrite the program's own file."""
    for name in files:
        if safe_relative_path(name).parts == (program_file,):
            raise SandboxError(f"file name {name!r} is reserved for the {language} program itself")
