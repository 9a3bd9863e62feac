"""A sandbox for tests: scripted results, or a function in place of running code.

``ScriptedSandbox`` implements core's ``Sandbox`` and ``InteractiveSandbox`` protocols without
running anything unless its function does: code under test gets an ``ExecutionResult`` from a
script (or from a function of the request), and the test reads back every request from
``.calls``. A program ``start``-ed prints the result's stdout line by line and records what is
written to it.
"""

from __future__ import annotations

import inspect
import io
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from typing import Self, TypeAlias

from agentic_core._errors import AgentCoreError
from agentic_core.protocols._sandbox import ExecutionResult


@dataclass(frozen=True)
class SandboxCall:
    """One ``execute`` request as a ``ScriptedSandbox`` saw it.

    ``files`` and ``env`` are copies (``{}`` when none were given), so a caller that changes
    its mappings afterwards does not change the record.
    """

    code: str
    language: str = "python"
    timeout_s: float | None = None
    files: dict[str, str | bytes] = field(default_factory=dict[str, str | bytes])
    env: dict[str, str] = field(default_factory=dict[str, str])


SandboxReply: TypeAlias = ExecutionResult | str
"""What a scripted run may answer: a whole result, or the stdout of a run that exited with 0."""

SandboxFunction: TypeAlias = Callable[[SandboxCall], SandboxReply | Awaitable[SandboxReply]]
"""``ScriptedSandbox``'s stand-in for running code: ``(call) -> reply``, maybe async."""


class ScriptedProcess:
    """A program as ``ScriptedSandbox.start`` runs it: its scripted stdout, line by line.

    ``readline`` hands out the result's stdout one line at a time (at most ``limit`` bytes,
    ``b""`` at the end or once killed); ``write`` records each write in ``.written`` (and raises
    ``BrokenPipeError`` once killed, as a pipe to a dead program does); ``wait`` returns the
    result (a copy); ``kill`` sets ``.killed``. The program does not react to what is written:
    script the frames it would print.
    """

    def __init__(self, result: ExecutionResult) -> None:
        self.result = result
        self.written: list[bytes] = []
        self.killed = False
        self._stdout = io.BytesIO(result.stdout.encode())

    async def write(self, data: bytes) -> None:
        """Record ``data`` (the program never reads it)."""
        if self.killed:
            raise BrokenPipeError("the scripted program was killed")
        self.written.append(bytes(data))

    async def readline(self, *, limit: int) -> bytes:
        """The next line of the scripted stdout (with its newline), or ``b""`` at the end."""
        if self.killed:
            return b""
        return self._stdout.readline(limit)

    async def wait(self) -> ExecutionResult:
        """How the program ended: the scripted result."""
        return self.result.model_copy(deep=True)

    async def kill(self) -> None:
        """Stop handing out output (``.killed`` becomes true)."""
        self.killed = True


class ScriptedSandbox:
    """A ``Sandbox`` that answers each ``execute`` with the next result of a script.

    ``results`` is either a sequence, answered in order, or a function (sync or async) that
    receives each request as a ``SandboxCall`` and returns the reply; an exception it raises
    reaches the caller as a sandbox error would. A reply is an ``ExecutionResult`` (handed out
    as a copy) or a ``str``: the stdout of a run that exited with 0. ``.calls`` records every
    request, in order; one request more than the script holds raises ``AgentCoreError``.

    It is an ``InteractiveSandbox`` too: ``start`` takes the next result the same way (and
    records the call in ``.calls``) and yields a ``ScriptedProcess`` printing that result's
    stdout; ``.processes`` keeps every process started, to read what was written to it.

    ``is_ready()`` answers ``ready`` (an attribute, so a test may flip it) until ``stop()``;
    after ``stop()`` (or leaving ``async with``) ``.stopped`` is true, ``is_ready()`` false and
    ``execute`` and ``start`` refuse to run (``AgentCoreError``), as real sandboxes do.

    ```python
    sandbox = ScriptedSandbox(
        ["42\\n", ExecutionResult(exit_code=1, stdout="", stderr="boom", duration_s=0.1)]
    )
    assert (await sandbox.execute("print(6 * 7)")).stdout == "42\\n"
    assert not (await sandbox.execute("raise SystemExit(1)")).ok
    assert [call.code for call in sandbox.calls] == ["print(6 * 7)", "raise SystemExit(1)"]
    ```
    """

    def __init__(
        self, results: Sequence[SandboxReply] | SandboxFunction, *, ready: bool = True
    ) -> None:
        self.calls: list[SandboxCall] = []
        self.processes: list[ScriptedProcess] = []
        self.ready = ready
        self.stopped = False
        if callable(results):
            self.fn: SandboxFunction | None = results
            self.results: tuple[SandboxReply, ...] = ()
        else:
            for position, reply in enumerate(results, start=1):
                _check_reply_form(reply, f"ScriptedSandbox result {position}")
            self.fn = None
            self.results = tuple(results)

    async def execute(
        self,
        code: str,
        *,
        language: str = "python",
        timeout_s: float | None = None,
        files: Mapping[str, str | bytes] | None = None,
        env: Mapping[str, str] | None = None,
    ) -> ExecutionResult:
        """The next scripted result (or the function's) for this run; the run is recorded."""
        call_number, call = self._record(code, language, timeout_s, files, env)
        return await self._result(call_number, call)

    def start(
        self,
        code: str,
        *,
        language: str = "python",
        timeout_s: float | None = None,
        files: Mapping[str, str | bytes] | None = None,
        env: Mapping[str, str] | None = None,
    ) -> AbstractAsyncContextManager[ScriptedProcess]:
        """A program printing the next scripted result's stdout; the run is recorded at once."""
        call_number, call = self._record(code, language, timeout_s, files, env)
        return self._started(call_number, call)

    async def is_ready(self) -> bool:
        """``ready``, and false once stopped."""
        return self.ready and not self.stopped

    async def stop(self) -> None:
        """Refuse further runs (``.stopped`` becomes true)."""
        self.stopped = True

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()

    def _record(
        self,
        code: str,
        language: str,
        timeout_s: float | None,
        files: Mapping[str, str | bytes] | None,
        env: Mapping[str, str] | None,
    ) -> tuple[int, SandboxCall]:
        if self.stopped:
            raise AgentCoreError(
                f"ScriptedSandbox was stopped; it refuses to run {_describe_code(code)} "
                "(real sandboxes raise SandboxNotReadyError here)"
            )
        call = SandboxCall(
            code=code,
            language=language,
            timeout_s=timeout_s,
            files=dict(files or {}),
            env=dict(env or {}),
        )
        # No await between appending and numbering: concurrent runs get distinct numbers.
        self.calls.append(call)
        return len(self.calls) - 1, call

    @asynccontextmanager
    async def _started(
        self, call_number: int, call: SandboxCall
    ) -> AsyncGenerator[ScriptedProcess]:
        process = ScriptedProcess(await self._result(call_number, call))
        self.processes.append(process)
        yield process

    async def _result(self, call_number: int, call: SandboxCall) -> ExecutionResult:
        reply = await self._reply(call_number, call)
        return _to_execution_result(reply, f"ScriptedSandbox reply to call {call_number + 1}")

    async def _reply(self, call_number: int, call: SandboxCall) -> object:
        if self.fn is not None:
            reply: object = self.fn(call)
            if inspect.isawaitable(reply):
                reply = await reply
            return reply
        if call_number >= len(self.results):
            raise AgentCoreError(
                f"ScriptedSandbox ran out of results: {len(self.results)} scripted, "
                f"{call_number + 1} runs asked for (the last one: {call.language} code "
                f"{_describe_code(call.code)}). Script another result, or find out why the "
                "code ran more often than expected."
            )
        return self.results[call_number]

    def __repr__(self) -> str:
        script = "function" if self.fn is not None else f"{len(self.results)} results"
        return f"ScriptedSandbox({script}, calls={len(self.calls)}, stopped={self.stopped})"


def _to_execution_result(reply: object, source: str) -> ExecutionResult:
    if isinstance(reply, str):
        return ExecutionResult(exit_code=0, stdout=reply, stderr="", duration_s=0.0)
    if isinstance(reply, ExecutionResult):
        return reply.model_copy(deep=True)
    raise _not_a_reply(reply, source)


def _check_reply_form(reply: object, source: str) -> None:
    if not isinstance(reply, str | ExecutionResult):
        raise _not_a_reply(reply, source)


def _not_a_reply(reply: object, source: str) -> AgentCoreError:
    return AgentCoreError(
        f"{source} is a {type(reply).__name__}; a sandbox reply must be an ExecutionResult "
        "or a str (the stdout of a run that exited with 0)"
    )


def _describe_code(code: str) -> str:
    first = code.strip().splitlines()[0] if code.strip() else ""
    if len(first) > 60 or first != code.strip():
        first = first[:57] + "..."
    return repr(first)
