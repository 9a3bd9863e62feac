"""The sandbox conformance suites: what every ``Sandbox`` (and ``InteractiveSandbox``) must do.

Subclass ``SandboxConformance`` (or ``InteractiveSandboxConformance`` for a sandbox that can
``start`` a program) as ``Test...`` and provide the sandbox as a fixture named ``sandbox``; class
attributes describe the implementation under test:

```python
class TestProcessSandbox(InteractiveSandboxConformance):
    max_output_bytes = 200_000

    @pytest_asyncio.fixture
    async def sandbox(self) -> AsyncIterator[Sandbox]:
        async with ProcessSandbox(max_output_bytes=self.max_output_bytes) as box:
            yield box
```
"""

# ruff: noqa: S101  (a test suite: plain asserts are how pytest reports failures)

from __future__ import annotations

import time
from typing import ClassVar

import pytest

from agentic_core.protocols._sandbox import InteractiveSandbox, Sandbox


class SandboxConformance:
    """What every sandbox must do. Provide the sandbox as a fixture named ``sandbox``.

    Class attributes describe the implementation: ``max_output_bytes`` (its output cap, to
    check truncation), ``timeout_slack_s`` (how long after the timeout it may take to report),
    ``shell`` (whether ``language="shell"`` is available).
    """

    # Marked here, not left to the project's asyncio_mode: the suite runs in strict mode too.
    pytestmark: ClassVar[list[pytest.MarkDecorator]] = [pytest.mark.asyncio]
    max_output_bytes: ClassVar[int] = 1_000_000
    timeout_slack_s: ClassVar[float] = 5.0
    shell: ClassVar[bool] = True

    async def test_is_a_sandbox_and_ready(self, sandbox: Sandbox) -> None:
        assert isinstance(sandbox, Sandbox)
        assert await sandbox.is_ready()

    async def test_python_output_and_exit_code(self, sandbox: Sandbox) -> None:
        result = await sandbox.execute(
            "import sys\nprint('out')\nprint('err', file=sys.stderr)\nsys.exit(3)"
        )
        assert result.exit_code == 3
        assert result.stdout == "out\n"
        assert result.stderr.endswith("err\n")
        assert not result.timed_out
        assert not result.ok
        assert result.duration_s >= 0

    async def test_a_successful_run_is_ok(self, sandbox: Sandbox) -> None:
        result = await sandbox.execute("print(6 * 7)")
        assert (result.exit_code, result.stdout, result.ok) == (0, "42\n", True)

    async def test_shell_code_runs(self, sandbox: Sandbox) -> None:
        if not self.shell:
            pytest.skip("this sandbox has no shell")
        result = await sandbox.execute("echo hello; exit 4", language="shell")
        assert (result.exit_code, result.stdout) == (4, "hello\n")

    async def test_files_are_placed_in_the_work_directory(self, sandbox: Sandbox) -> None:
        result = await sandbox.execute(
            "print(open('data/in.txt').read() + open('raw.bin', 'rb').read().hex())",
            files={"data/in.txt": "text-", "raw.bin": b"\x00\xff"},
        )
        assert result.stdout == "text-00ff\n"

    async def test_env_is_exactly_what_the_caller_passes(
        self, sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("AGENTIC_CONFORMANCE_SECRET", "do-not-leak")
        result = await sandbox.execute(
            "import os\n"
            "print(os.environ.get('GIVEN'), os.environ.get('AGENTIC_CONFORMANCE_SECRET'))",
            env={"GIVEN": "yes"},
        )
        assert result.stdout == "yes None\n"

    async def test_a_runaway_program_times_out(self, sandbox: Sandbox) -> None:
        started = time.monotonic()
        result = await sandbox.execute("while True:\n    pass", timeout_s=1.0)
        assert result.timed_out
        assert not result.ok
        assert time.monotonic() - started < 1.0 + self.timeout_slack_s

    async def test_output_beyond_the_cap_is_truncated(self, sandbox: Sandbox) -> None:
        size = self.max_output_bytes * 2
        result = await sandbox.execute(
            f"import sys\nsys.stdout.write('x' * {size})\nsys.stdout.flush()", timeout_s=30
        )
        assert result.truncated
        assert len(result.stdout.encode()) <= self.max_output_bytes

    async def test_files_written_to_out_are_artifacts(self, sandbox: Sandbox) -> None:
        result = await sandbox.execute(
            "import os\nos.makedirs('out/sub', exist_ok=True)\n"
            "open('out/report.txt', 'w').write('done')\n"
            "open('out/sub/data.bin', 'wb').write(bytes([1, 2, 3]))\n"
            "open('not-an-artifact.txt', 'w').write('no')"
        )
        assert result.ok, result.stderr
        found = {a.path: a.content for a in result.artifacts}
        assert found == {"report.txt": b"done", "sub/data.bin": b"\x01\x02\x03"}
        assert all(a.size == len(a.content) for a in result.artifacts)

    async def test_runs_are_independent(self, sandbox: Sandbox) -> None:
        await sandbox.execute("open('left-behind.txt', 'w').write('x')")
        result = await sandbox.execute("import os\nprint(os.path.exists('left-behind.txt'))")
        assert result.stdout == "False\n"


class InteractiveSandboxConformance(SandboxConformance):
    """What an ``InteractiveSandbox`` adds: talk to a running program."""

    async def test_is_interactive(self, sandbox: Sandbox) -> None:
        assert isinstance(sandbox, InteractiveSandbox)

    async def test_write_and_readline_talk_to_the_program(self, sandbox: Sandbox) -> None:
        assert isinstance(sandbox, InteractiveSandbox)
        code = "import sys\nfor line in sys.stdin:\n    print(line.strip().upper(), flush=True)"
        async with sandbox.start(code) as process:
            await process.write(b"hello\n")
            assert await process.readline(limit=1024) == b"HELLO\n"
            await process.write(b"again\n")
            assert await process.readline(limit=1024) == b"AGAIN\n"
            await process.kill()
            result = await process.wait()
        assert not result.ok

    async def test_readline_returns_empty_bytes_at_eof(self, sandbox: Sandbox) -> None:
        assert isinstance(sandbox, InteractiveSandbox)
        async with sandbox.start("print('only line')") as process:
            assert await process.readline(limit=1024) == b"only line\n"
            assert await process.readline(limit=1024) == b""
            result = await process.wait()
        assert result.exit_code == 0
