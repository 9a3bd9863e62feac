"""ProcessSandbox.start: talking to a program while it runs (the SandboxProcess protocol)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from agentic_core import SandboxProcess
from agentic_sandbox import ProcessSandbox, SandboxError

ECHO_UPPER = "import sys\nfor line in sys.stdin:\n    print(line.strip().upper())\nprint('bye')"


async def test_write_readline_and_wait(sandbox: ProcessSandbox) -> None:
    async with sandbox.start(ECHO_UPPER) as process:
        assert isinstance(process, SandboxProcess)
        await process.write(b"hello\n")
        assert await process.readline(limit=100) == b"HELLO\n"
        await process.write(b"world\n")
        assert await process.readline(limit=100) == b"WORLD\n"
        result = await process.wait()  # closes stdin: the loop ends
    assert result.exit_code == 0
    assert result.stdout == "bye\n"  # what readline did not take


async def test_readline_returns_empty_bytes_at_eof(sandbox: ProcessSandbox) -> None:
    async with sandbox.start("print('only line')") as process:
        assert await process.readline(limit=100) == b"only line\n"
        assert await process.readline(limit=100) == b""
        assert (await process.wait()).exit_code == 0


async def test_a_line_longer_than_the_limit_comes_in_pieces(sandbox: ProcessSandbox) -> None:
    async with sandbox.start("print('abcdefghij')") as process:
        assert await process.readline(limit=4) == b"abcd"
        assert await process.readline(limit=4) == b"efgh"
        assert await process.readline(limit=4) == b"ij\n"


async def test_readline_needs_a_positive_limit(sandbox: ProcessSandbox) -> None:
    async with sandbox.start("print(1)") as process:
        with pytest.raises(ValueError, match="limit"):
            await process.readline(limit=0)


async def test_kill_ends_the_program_and_its_children(
    sandbox: ProcessSandbox,
    marker_env: dict[str, str],
    leftover_processes: Callable[[], list[int]],
) -> None:
    code = "import subprocess\nsubprocess.Popen(['sleep', '600'])\nprint('ready')\ninput()"
    async with sandbox.start(code, env=marker_env) as process:
        assert await process.readline(limit=100) == b"ready\n"
        assert len(leftover_processes()) >= 2
        await process.kill()
        result = await process.wait()
    assert result.exit_code == 137
    assert not result.timed_out
    assert leftover_processes() == []


async def test_leaving_the_block_kills_a_running_program(
    sandbox: ProcessSandbox,
    marker_env: dict[str, str],
    leftover_processes: Callable[[], list[int]],
) -> None:
    async with sandbox.start("print('up')\nimport time\ntime.sleep(600)", env=marker_env) as p:
        assert await p.readline(limit=100) == b"up\n"
    assert leftover_processes() == []


async def test_an_interactive_program_times_out(sandbox: ProcessSandbox) -> None:
    async with sandbox.start("input()", timeout_s=0.5) as process:
        # stdin stays open, so only the deadline ends the program: readline then sees EOF.
        assert await process.readline(limit=10) == b""
        result = await process.wait()
    assert result.timed_out
    assert result.exit_code == 137


async def test_writing_to_an_ended_program_is_an_error(sandbox: ProcessSandbox) -> None:
    async with sandbox.start("pass") as process:
        await process.wait()
        with pytest.raises(SandboxError, match="exited"):
            await process.write(b"late\n")


async def test_lots_of_unread_output_does_not_block_wait(sandbox: ProcessSandbox) -> None:
    async with sandbox.start("print('x' * 500_000)\nprint('end')") as process:
        result = await process.wait()
    assert result.stdout.endswith("end\n")
    assert len(result.stdout) == 500_001 + 4
