"""One running sandboxed program: its pipes, output limit, deadline, and the end of its tree.

``_PipesProtocol`` receives the program's output straight from the event loop (no reader
tasks): bytes past ``max_output_bytes`` are dropped and the whole process tree is killed at
that moment, so a program printing 100 MB costs about as much as one printing the limit.
``RunningProgram`` is the ``SandboxProcess`` handed out by ``ProcessSandbox.start`` and the
engine under ``ProcessSandbox.execute``. When the work directory lives on the run's disk (a
tmpfs in the run's own mount namespace), ``launch`` first waits for the setup to mount it and
opens it (the handshake of ``_mount_namespace``): artifacts are read through that descriptor.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from agentic_core import Artifact, ExecutionResult
from agentic_sandbox._errors import SandboxError
from agentic_sandbox._isolation import SECCOMP_FD
from agentic_sandbox._process_tree import kill_process_tree, still_running
from agentic_sandbox._workdir import (
    OUT_DIR,
    RunDirectory,
    collect_artifacts,
    open_directory,
    remove_run_directory,
)

logger = logging.getLogger("agentic_sandbox")

_STDIN, _STDOUT, _STDERR = 0, 1, 2
_READ_HIGH_WATER = 256 * 1024
"""Interactive stdout not yet read past this: stop reading the pipe (the program then blocks)."""
_PIPE_GRACE_S = 0.5
"""After the program exits, how long a still-open pipe may stay open (a daemon holding it)."""
_KILL_GRACE_S = 2.0
"""How long killed processes may take to be gone (SIGKILL cannot be blocked: microseconds)."""
_KILL_POLL_S = 0.005


@dataclass(frozen=True)
class LaunchPlan:
    """Everything needed to start one program (built by ``ProcessSandbox``)."""

    argv: Sequence[str]
    env: dict[str, str]
    run_dir: RunDirectory
    timeout_s: float
    max_output_bytes: int
    max_artifact_bytes: int
    kill_process_group: bool
    """Also SIGKILL the launcher's process group after exit (only without a PID namespace)."""
    cwd: Path
    """The launcher's working directory (the jail sets the program's own)."""
    seccomp: bytes | None = None
    """A seccomp filter bwrap reads from a pipe: ``argv`` names it ``SECCOMP_FD``."""
    disk_bytes: int = 0
    """Size of the run's disk (``run_dir.disk``, a tmpfs), when it holds the work directory."""
    disk_full_message: str = ""
    """Added to stderr when the run's disk ends up full."""


class _PipesProtocol(asyncio.SubprocessProtocol):
    """Output buffers with a shared byte limit, stdout flow control, exit and close futures."""

    def __init__(
        self, max_output_bytes: int, on_overflow: Callable[[], None], *, flow_control: bool
    ) -> None:
        loop = asyncio.get_running_loop()
        self.stdout = bytearray()
        self.stderr = bytearray()
        self.truncated = False
        self.stdout_eof = False
        self.exited: asyncio.Future[None] = loop.create_future()
        self.pipes_closed: asyncio.Future[None] = loop.create_future()
        self._open_pipes = {_STDOUT, _STDERR}
        self._budget = max_output_bytes
        self._on_overflow = on_overflow
        self._stdout_changed: asyncio.Event = asyncio.Event()
        self._writable: asyncio.Event = asyncio.Event()
        self._writable.set()
        self.transport: asyncio.SubprocessTransport | None = None
        self._flow_control = flow_control
        self._stdout_paused = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast("asyncio.SubprocessTransport", transport)

    def pipe_data_received(self, fd: int, data: bytes | str) -> None:
        assert isinstance(data, bytes)  # noqa: S101 - subprocess pipes carry bytes
        if self.truncated:
            return
        if len(data) > self._budget:
            data = data[: self._budget]
            self.truncated = True
        self._budget -= len(data)
        if fd == _STDOUT:
            self.stdout += data
            self._stdout_changed.set()
            if self._flow_control and len(self.stdout) > _READ_HIGH_WATER:
                self._pause_stdout(True)
        else:
            self.stderr += data
        if self.truncated:
            self._on_overflow()

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        if fd == _STDIN:
            self._writable.set()  # wake a blocked writer: it sees the pipe closed
            return
        if fd == _STDOUT:
            self.stdout_eof = True
            self._stdout_changed.set()
        self._open_pipes.discard(fd)
        if not self._open_pipes and not self.pipes_closed.done():
            self.pipes_closed.set_result(None)

    def process_exited(self) -> None:
        if not self.exited.done():
            self.exited.set_result(None)
        self._writable.set()

    def pause_writing(self) -> None:
        self._writable.clear()

    def resume_writing(self) -> None:
        self._writable.set()

    def _pause_stdout(self, pause: bool) -> None:
        if self.transport is None or pause == self._stdout_paused:
            return
        pipe = self.transport.get_pipe_transport(_STDOUT)
        if pipe is None or pipe.is_closing():
            return
        reader = cast("asyncio.ReadTransport", pipe)
        if pause:
            reader.pause_reading()
        else:
            reader.resume_reading()
        self._stdout_paused = pause

    def consume_stdout(self, count: int) -> bytes:
        """Take ``count`` bytes of buffered stdout (they no longer count against the limit)."""
        taken = bytes(self.stdout[:count])
        del self.stdout[:count]
        self._budget += len(taken)
        if len(self.stdout) <= _READ_HIGH_WATER // 2:
            self._pause_stdout(False)
        return taken

    async def stdout_changed(self) -> None:
        self._stdout_changed.clear()
        self._pause_stdout(False)
        await self._stdout_changed.wait()

    async def wait_writable(self) -> None:
        await self._writable.wait()

    def read_all_stdout(self) -> None:
        """Stop flow control: everything the program prints from now on is collected."""
        self._flow_control = False
        self._pause_stdout(False)


class RunningProgram:
    """A program running in the sandbox (the ``SandboxProcess`` of ``ProcessSandbox``)."""

    def __init__(
        self,
        plan: LaunchPlan,
        transport: asyncio.SubprocessTransport,
        pipes: _PipesProtocol,
        started: float,
    ) -> None:
        self._plan = plan
        self._transport = transport
        self._pipes = pipes
        self._started = started
        self._pid = transport.get_pid()
        self._timed_out = False
        self._killed_pids: set[int] = set()
        self._result: ExecutionResult | None = None
        self._finishing: asyncio.Task[ExecutionResult] | None = None
        self._disk_fd: int | None = None
        self.loop = asyncio.get_running_loop()
        """The event loop this program's pipes, futures and watchdog belong to."""
        self._watchdog = self.loop.call_later(plan.timeout_s, self._on_timeout)

    @classmethod
    async def launch(cls, plan: LaunchPlan, *, interactive: bool) -> RunningProgram:
        """Start ``plan`` in its own session; the caller must ``close()`` it."""
        loop = asyncio.get_running_loop()
        holder: list[RunningProgram] = []

        def on_overflow() -> None:
            if holder:
                holder[0].kill_now()

        handshake: _Handshake | None = None
        seccomp_fd: int | None = None
        try:
            if plan.run_dir.layout.work_on_disk:
                handshake = _Handshake.open(plan.run_dir, plan.disk_bytes)
            argv = list(plan.argv)
            if plan.seccomp is not None:
                seccomp_fd = _filter_pipe(plan.seccomp)
                argv = [str(seccomp_fd) if arg == SECCOMP_FD else arg for arg in argv]
            started = time.monotonic()
            transport, pipes = await loop.subprocess_exec(
                lambda: _PipesProtocol(
                    plan.max_output_bytes, on_overflow, flow_control=interactive
                ),
                *argv,
                stdin=asyncio.subprocess.PIPE if interactive else asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=plan.env,
                cwd=plan.cwd,
                start_new_session=True,
                pass_fds=() if seccomp_fd is None else (seccomp_fd,),
            )
            program = cls(plan, transport, pipes, started)
            holder.append(program)
            if pipes.truncated:  # output arrived (and overflowed) before we could hold it
                program.kill_now()
            if handshake is not None:
                try:
                    program._disk_fd = await handshake.open_disk(program._pid, pipes.exited)
                except BaseException:
                    program.kill_now()
                    transport.close()
                    raise
        finally:
            if handshake is not None:
                handshake.close()
            if seccomp_fd is not None:
                os.close(seccomp_fd)
        return program

    # -- SandboxProcess -------------------------------------------------------------------------

    async def write(self, data: bytes) -> None:
        """Send ``data`` to the program's stdin (waits while the pipe is full)."""
        stdin = self._transport.get_pipe_transport(_STDIN)
        if stdin is None or stdin.is_closing() or self._pipes.exited.done():
            raise SandboxError("cannot write: the sandboxed program has exited or closed stdin")
        cast("asyncio.WriteTransport", stdin).write(data)
        await self._pipes.wait_writable()

    async def readline(self, *, limit: int) -> bytes:
        """The next line of stdout with its ``\\n``, at most ``limit`` bytes; ``b""`` at EOF.

        A line longer than ``limit`` comes back in pieces of ``limit`` bytes.
        """
        if limit < 1:
            raise ValueError(f"limit must be at least 1, got {limit}")
        pipes = self._pipes
        while True:
            newline = pipes.stdout.find(b"\n", 0, limit)
            if newline >= 0:
                return pipes.consume_stdout(newline + 1)
            if len(pipes.stdout) >= limit or pipes.stdout_eof or pipes.truncated:
                return pipes.consume_stdout(limit)
            await pipes.stdout_changed()

    async def wait(self) -> ExecutionResult:
        """Close stdin, wait for the end (or the deadline), return what the program did."""
        if self._result is not None:
            return self._result
        if self._finishing is None:
            self._finishing = asyncio.ensure_future(self._finish())
        return await asyncio.shield(self._finishing)

    async def kill(self) -> None:
        """Kill the program and every process it started; ``wait()`` then reports it."""
        self.kill_now()
        await asyncio.shield(self._pipes.exited)

    # -- lifecycle ------------------------------------------------------------------------------

    def kill_now(self) -> None:
        """SIGKILL the whole tree at once (from a callback, the watchdog or ``kill``)."""
        if not self._pipes.exited.done():  # once reaped, the pid may name another process
            self._killed_pids |= kill_process_tree(self._pid, process_group=True)

    def _on_timeout(self) -> None:
        if not self._pipes.exited.done():
            self._timed_out = True
            self.kill_now()

    async def _finish(self) -> ExecutionResult:
        pipes = self._pipes
        stdin = self._transport.get_pipe_transport(_STDIN)
        if stdin is not None:
            stdin.close()
        pipes.read_all_stdout()
        await pipes.exited
        duration = time.monotonic() - self._started
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(_PIPE_GRACE_S):
                await asyncio.shield(pipes.pipes_closed)
        self._watchdog.cancel()
        await _wait_gone(self._killed_pids)
        if self._plan.kill_process_group:
            # Without a PID namespace, a background child may outlive the program: its process
            # group still exists (so the number cannot have been reused) if anything is left.
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self._pid, signal.SIGKILL)
        self._transport.close()
        artifacts, disk_full = await asyncio.to_thread(self._collect_artifacts)
        stderr = bytes(pipes.stderr).decode(errors="replace")
        if disk_full:
            stderr += self._plan.disk_full_message
        self._result = ExecutionResult(
            exit_code=_exit_code(self._transport.get_returncode()),
            stdout=bytes(pipes.stdout).decode(errors="replace"),
            stderr=stderr,
            duration_s=duration,
            timed_out=self._timed_out,
            truncated=pipes.truncated,
            artifacts=artifacts,
        )
        return self._result

    def _collect_artifacts(self) -> tuple[list[Artifact], bool]:
        """The artifacts, and whether the run's disk is full (blocking: run in a thread)."""
        max_bytes = self._plan.max_artifact_bytes
        if self._disk_fd is None:
            if self._plan.run_dir.layout.work_on_disk:
                return [], False  # the setup failed before the disk was there
            return collect_artifacts(self._plan.run_dir.out, max_total_bytes=max_bytes), False
        try:
            usage = os.fstatvfs(self._disk_fd)
            work_fd = open_directory("work", dir_fd=self._disk_fd)
            if work_fd is None:
                return [], False
            try:
                artifacts = collect_artifacts(OUT_DIR, max_total_bytes=max_bytes, dir_fd=work_fd)
            finally:
                os.close(work_fd)
        finally:
            self._close_disk()  # frees the tmpfs: every process of the run is gone
        return artifacts, usage.f_bavail == 0 or usage.f_favail == 0

    def _close_disk(self) -> None:
        if self._disk_fd is not None:
            fd, self._disk_fd = self._disk_fd, None
            os.close(fd)

    async def close(self) -> None:
        """Kill what still runs, collect the result if nobody did, remove the run directory."""
        try:
            self.kill_now()
            await self.wait()
        finally:
            self._watchdog.cancel()
            self._transport.close()
            self._close_disk()
            await asyncio.to_thread(remove_run_directory, self._plan.run_dir.root)


def _filter_pipe(code: bytes) -> int:
    """The read end of a pipe holding ``code`` (a few hundred bytes: the pipe buffer holds it)."""
    read_fd, write_fd = os.pipe()
    try:
        os.write(write_fd, code)
    finally:
        os.close(write_fd)
    return read_fd


class _Handshake:
    """Our side of the setup's handshake: ``ready`` read, ``go`` held until the disk is open."""

    def __init__(self, run_dir: RunDirectory, ready_fd: int, go_fd: int, disk_bytes: int) -> None:
        self._run_dir = run_dir
        self._disk_bytes = disk_bytes
        self._ready_fd = ready_fd
        self._go_fd: int | None = go_fd

    @classmethod
    def open(cls, run_dir: RunDirectory, disk_bytes: int) -> _Handshake:
        # Non-blocking read end: open() returns at once; O_RDWR on go: the setup's read of it
        # blocks (a writer exists) until we close it.
        ready_fd = os.open(run_dir.ready, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        try:
            go_fd = os.open(run_dir.go, os.O_RDWR | os.O_CLOEXEC)
        except BaseException:
            os.close(ready_fd)
            raise
        return cls(run_dir, ready_fd, go_fd, disk_bytes)

    async def open_disk(self, pid: int, exited: asyncio.Future[None]) -> int | None:
        """The run's disk, opened once the setup says it is mounted; ``None`` when the setup
        ended without saying so (its error is on the program's stderr)."""
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[bool] = loop.create_future()

        def on_readable() -> None:
            try:
                data = os.read(self._ready_fd, 1)
            except BlockingIOError:
                return
            if not ready.done():
                ready.set_result(data == b"r")

        loop.add_reader(self._ready_fd, on_readable)
        try:
            await asyncio.wait([ready, exited], return_when=asyncio.FIRST_COMPLETED)
        finally:
            loop.remove_reader(self._ready_fd)
        if not (ready.done() and ready.result()) or exited.done():
            return None
        disk_fd = self._open_disk(pid)
        self._release()
        return disk_fd

    def _open_disk(self, pid: int) -> int:
        # The setup (our child, or bwrap it became) is in the run's mount namespace, where
        # <run>/disk is the tmpfs: reach it through that process's root. It waits for us, so
        # the pid is still its own; the checks make sure of what was opened all the same.
        fd = os.open(f"/proc/{pid}/root{self._run_dir.disk}", os.O_RDONLY | os.O_DIRECTORY)
        usage = os.fstatvfs(fd)
        pages = -(-self._disk_bytes // usage.f_frsize)
        if os.fstat(fd).st_dev == self._run_dir.root.stat().st_dev or usage.f_blocks != pages:
            os.close(fd)
            raise SandboxError(f"the run's disk is not mounted on {self._run_dir.disk}")
        return fd

    def _release(self) -> None:
        if self._go_fd is not None:
            fd, self._go_fd = self._go_fd, None
            os.close(fd)

    def close(self) -> None:
        self._release()
        os.close(self._ready_fd)


async def _wait_gone(pids: set[int]) -> None:
    """Return once every process of ``pids`` has died, so none outlives ``wait()``."""
    if not pids:
        return
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(_KILL_GRACE_S):
            while still_running(pids):  # noqa: ASYNC110 - no event exists for another process dying
                await asyncio.sleep(_KILL_POLL_S)
    if left := still_running(pids):
        logger.warning("sandboxed processes %s still running after SIGKILL", sorted(left))


def _exit_code(returncode: int | None) -> int:
    """The shell's convention: 128 + N for a program killed by signal N (bwrap reports so too)."""
    if returncode is None:
        return -1
    return 128 - returncode if returncode < 0 else returncode
