"""One program in one container: create, start, copy files in, exec, wait, collect, remove.

The container's first process only waits (the ``holder``): the program runs as an ``exec`` of
the engine, with its own stream, stdin and exit code. So the container, and the tmpfs holding
the work directory, are still there when the program has ended, been timed out or cut off for
printing too much — and the archive API reads the artifacts from that tmpfs, which it reaches
only in a running (not even a paused) container. A program past its deadline or its output
limit is reported killed (exit code 137) at once; it and whatever it started die with the
container, removed right after its artifacts are read. Nothing the program writes lands on
the engine's disk.

Every call of the Docker SDK blocks, so each runs in a thread. The container is removed in
every case — normal end, timeout, output overflow, an error, or the cancellation of the task
that ran it: removal runs as its own task (``DockerSandbox`` keeps it and awaits it on
``stop``) shielded from the cancellation. A launch cancelled while the engine is creating the
container waits for the creation to finish, then removes the container by its name.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import socket
import threading
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any, Protocol, cast

from docker.errors import APIError, DockerException, ImageNotFound, NotFound

from agentic_core import Artifact, ExecutionResult
from agentic_sandbox._container_files import artifacts_from_archive
from agentic_sandbox._container_output import AttachedOutput, RawSocket, pump_attach_stream
from agentic_sandbox._engine import EngineAPI
from agentic_sandbox._errors import SandboxError, SandboxNotReadyError

logger = logging.getLogger("agentic_sandbox")

_STREAM_GRACE_S = 0.5
"""After the program's exit, how long its stream may take to deliver the last output (a
process it left behind may hold the stream open until the container is removed)."""
_POLL_FIRST_S = 0.005
_POLL_MAX_S = 0.2
"""How often the program's exit is checked (``exec_inspect``); at once when its stream ends."""
_READER_JOIN_S = 5.0
_ARCHIVE_CHUNK_BYTES = 64 * 1024
_REMOVE_ATTEMPTS = 5
_REMOVE_RETRY_S = 0.1
_KILLED_BY_SIGKILL = 137
OOM_MESSAGE = "[agentic-sandbox] out of memory: the container hit its {memory_mb} MiB limit\n"
PROBABLE_OOM_MESSAGE = (
    "[agentic-sandbox] killed by SIGKILL, most likely out of memory (limit {memory_mb} MiB)\n"
)
DISK_FULL_MESSAGE = (
    "[agentic-sandbox] no space left: the run's disk (the work directory) is full at "
    "max_disk_mb={max_disk_mb}\n"
)
_DISK_FULL_SIGNS = ("No space left on device", "ENOSPC")
"""How a full disk shows in the program's stderr (we cannot look at the engine's tmpfs)."""

Track = Callable[[asyncio.Task[None]], None]
"""Registers a removal task with the sandbox, which awaits it on ``stop``."""


@dataclass(frozen=True)
class ContainerPlan:
    """Everything needed to run one program (built by ``DockerSandbox``)."""

    name: str
    config: dict[str, Any]
    """Keyword arguments of ``APIClient.create_container`` except ``host_config`` and ``name``."""
    host_config: dict[str, Any]
    """Keyword arguments of ``APIClient.create_host_config``."""
    exec_config: dict[str, Any]
    """Keyword arguments of ``APIClient.exec_create``: the program itself."""
    volume_dir: str
    """Where ``files_archive`` is extracted (it holds the work directory)."""
    work_dir: str
    files_archive: bytes
    timeout_s: float
    max_output_bytes: int
    max_artifact_bytes: int
    memory_mb: int
    max_disk_mb: int
    interactive: bool
    language: str


class _Closable(Protocol):
    def close(self) -> None: ...


def _raw_socket(attached: object) -> RawSocket:
    """The socket of ``exec_start(socket=True)``, closed with the HTTP response behind it.

    The SDK hands out a SocketIO for plain sockets (the socket it wraps is what we read) and
    hangs the ``requests`` response on it. That response's file reads from the same socket:
    it must be closed first — closed underneath it, it fails when garbage-collected
    ("I/O operation on closed file", reported since Python 3.13).
    """
    raw = cast("RawSocket", getattr(attached, "_sock", attached))
    settimeout = getattr(raw, "settimeout", None)
    if callable(settimeout):
        settimeout(None)  # a quiet program must not time the stream out
    response = cast("_Closable | None", getattr(attached, "_response", None))
    # Closing the socket alone leaves its file descriptor open while the SocketIO holds it.
    wrapper = cast("_Closable", attached) if raw is not attached else None
    if response is None and wrapper is None:
        return raw
    return _WrappedSocket(raw, [c for c in (response, wrapper) if c is not None])


class _WrappedSocket:
    """A socket and what wraps it: reads and writes on the first; closes the HTTP response
    (which closes its file and connection), then the SocketIO, then the socket."""

    def __init__(self, raw: RawSocket, wrappers: list[_Closable]) -> None:
        self._raw = raw
        self._wrappers = wrappers

    def recv(self, size: int, /) -> bytes:
        return self._raw.recv(size)

    def sendall(self, data: bytes, /) -> None:
        self._raw.sendall(data)

    def shutdown(self, how: int, /) -> None:
        self._raw.shutdown(how)

    def close(self) -> None:
        wrappers, self._wrappers = self._wrappers, []
        with contextlib.ExitStack() as closing:  # each one closes even if one before failed
            closing.callback(self._raw.close)
            for wrapper in reversed(wrappers):
                closing.callback(wrapper.close)


def _create_and_start(api: EngineAPI, plan: ContainerPlan) -> tuple[str, str, RawSocket, float]:
    """Create and start the container, fill its disk, start the program (in a thread); removes
    the container on failure. Returns its id, the program's exec id, stream and start time."""
    host_config = api.create_host_config(**plan.host_config)
    try:
        created = api.create_container(name=plan.name, host_config=host_config, **plan.config)
    except ImageNotFound as exc:
        raise SandboxNotReadyError(
            f"image {plan.config['image']!r} is not on the engine: pull or build it first "
            f"({_explain(exc)})"
        ) from exc
    container_id = str(created["Id"])
    sock: RawSocket | None = None
    try:
        try:
            api.start(container_id)  # the holder is the language's interpreter
            api.put_archive(container_id, plan.volume_dir, plan.files_archive)
            exec_id = str(api.exec_create(container_id, **plan.exec_config)["Id"])
            sock = _raw_socket(api.exec_start(exec_id, socket=True))
        except APIError as exc:
            raise SandboxError(
                f"image {plan.config['image']!r} cannot run {plan.language} code: {_explain(exc)}"
            ) from exc
        return container_id, exec_id, sock, time.monotonic()
    except BaseException:
        if sock is not None:
            _shut(sock)
        _remove_container(api, container_id)
        raise


def _wait_for_exit(
    api: EngineAPI,
    container: str,
    exec_id: str,
    stream_ended: threading.Event,
    stop: threading.Event,
) -> int | None:
    """The program's exit code, once the engine says it ended; ``None`` when told to stop."""
    delay = _POLL_FIRST_S
    while not stop.is_set():
        stream_ended.wait(delay)  # the end of the stream usually says it first
        if stop.is_set():
            break
        try:
            info = api.exec_inspect(exec_id)
        except APIError:
            if _running(api, container, settle_s=2.0):
                raise
            # Gone with its container: the container's first process died (the OOM killer
            # may pick it), and the kernel killed the program with the PID namespace.
            return _KILLED_BY_SIGKILL
        if not info.get("Running"):
            code = info.get("ExitCode")
            return int(code) if code is not None else -1
        delay = min(delay * 2, _POLL_MAX_S)
    return None


def _running(api: EngineAPI, container: str, *, settle_s: float = 0.0) -> bool:
    """Whether ``container`` runs; ``settle_s``: how long to wait for a "no", since an engine
    may say "running" a moment after the container's first process died."""
    deadline = time.monotonic() + settle_s
    while True:
        try:
            state: dict[str, Any] = api.inspect_container(container).get("State") or {}
        except NotFound:
            return False
        if not state.get("Running"):
            return False
        if time.monotonic() >= deadline:
            return True
        time.sleep(_REMOVE_RETRY_S)


def _remove_container(api: EngineAPI, container: str) -> None:
    """Force-remove ``container`` and its anonymous volume (the work dir); gone already is fine.

    Retried: Podman may refuse while the container is between running and stopped ("container
    state improper").
    """
    for attempt in range(_REMOVE_ATTEMPTS):
        try:
            api.remove_container(container, v=True, force=True)
        except NotFound:
            return
        except (DockerException, OSError) as exc:
            if attempt + 1 < _REMOVE_ATTEMPTS:
                logger.debug("removing sandbox container %s failed, retrying: %s", container, exc)
                time.sleep(_REMOVE_RETRY_S * (attempt + 1))
                continue
            logger.error("could not remove sandbox container %s: %s", container, exc)
            raise SandboxError(f"could not remove sandbox container {container}: {exc}") from exc
        else:
            return


def _shut(sock: RawSocket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    with contextlib.suppress(OSError):
        sock.close()


def _explain(exc: DockerException) -> str:
    explanation = getattr(exc, "explanation", None)
    return str(explanation or exc)


class ContainerProgram:
    """A program running in a container (the ``SandboxProcess`` of ``DockerSandbox``)."""

    def __init__(
        self,
        api: EngineAPI,
        plan: ContainerPlan,
        launched: tuple[str, str, RawSocket, float],
        track: Track,
    ) -> None:
        container_id, exec_id, sock, started = launched
        self._api = api
        self._plan = plan
        self.container_id = container_id
        self._exec_id = exec_id
        self._sock = sock
        self._started = started
        self._track = track
        self._timed_out = False
        self._killed = False
        self._finishing: asyncio.Task[ExecutionResult] | None = None
        self._removal: asyncio.Task[None] | None = None
        self._stdin_open = plan.interactive
        self._output = AttachedOutput(
            plan.max_output_bytes, self._kill_soon, flow_control=plan.interactive
        )
        self._stream_ended = threading.Event()
        self._stop_polling = threading.Event()
        self._reader = threading.Thread(
            target=self._pump,
            name=f"agentic-sandbox-attach-{container_id[:12]}",
            daemon=True,
        )
        self._reader.start()
        self.loop = asyncio.get_running_loop()
        """The event loop this program's futures and watchdog belong to."""
        self._exited: asyncio.Future[int] = self.loop.create_future()
        self._exited_at: float | None = None
        self._exited.add_done_callback(self._on_exit)
        self._polling = asyncio.ensure_future(self._poll_exit())
        self._watchdog = self.loop.call_later(plan.timeout_s, self._on_timeout)

    def _pump(self) -> None:
        try:
            pump_attach_stream(self._sock, self._output)
        finally:
            self._stream_ended.set()

    async def _poll_exit(self) -> None:
        try:
            code = await asyncio.to_thread(
                _wait_for_exit,
                self._api,
                self.container_id,
                self._exec_id,
                self._stream_ended,
                self._stop_polling,
            )
        except (DockerException, OSError) as exc:
            if not self._exited.done():
                self._exited.set_exception(exc)
            return
        if code is not None and not self._exited.done():
            self._exited.set_result(code)

    @classmethod
    async def launch(cls, api: EngineAPI, plan: ContainerPlan, track: Track) -> ContainerProgram:
        """Start ``plan``'s container; the caller must ``close()`` the program."""
        # A plain executor future, not a Task: when the loop shuts down, asyncio.run cancels its
        # tasks, and a cancelled launch task would hide a container created in the thread.
        launching = asyncio.get_running_loop().run_in_executor(
            None, functools.partial(_create_and_start, api, plan)
        )
        try:
            launched = await asyncio.shield(launching)
        except asyncio.CancelledError:
            # The engine may be creating the container right now: remove it once it exists,
            # before the cancellation goes on (if cancelled again, the removal still runs).
            removal = _background(_remove_when_launched(api, plan.name, launching))
            track(removal)
            with contextlib.suppress(Exception):  # a failed removal is logged; cancel wins
                await asyncio.shield(removal)
            raise
        except (DockerException, OSError) as exc:
            raise _engine_error(exc) from exc
        return cls(api, plan, launched, track)

    # -- SandboxProcess -------------------------------------------------------------------------

    async def write(self, data: bytes) -> None:
        """Send ``data`` to the program's stdin."""
        if not self._stdin_open or self._exited.done():
            raise SandboxError("cannot write: the sandboxed program has exited or closed stdin")
        try:
            await asyncio.to_thread(self._sock.sendall, data)
        except OSError as exc:
            raise SandboxError(f"cannot write to the sandboxed program: {exc}") from exc

    async def readline(self, *, limit: int) -> bytes:
        """The next line of stdout with its ``\\n``, at most ``limit`` bytes; ``b""`` at EOF."""
        if limit < 1:
            raise ValueError(f"limit must be at least 1, got {limit}")
        output = self._output
        while True:
            newline, buffered = output.find_stdout(b"\n", limit)
            if newline >= 0:
                return output.consume_stdout(newline + 1)
            if buffered >= limit or output.eof or output.truncated:
                return output.consume_stdout(limit)
            await output.changed()

    async def wait(self) -> ExecutionResult:
        """Close stdin, wait for the end (or the deadline), return what the program did."""
        if self._finishing is None:
            self._finishing = asyncio.ensure_future(self._finish())
        return await asyncio.shield(self._finishing)

    async def kill(self) -> None:
        """Kill the program (its container goes on ``close()``); ``wait()`` then reports it."""
        self._kill_soon()
        with contextlib.suppress(DockerException, OSError):
            await asyncio.shield(self._exited)

    async def settled(self) -> None:
        """Return once a ``wait()`` in progress has its result (at once when none is)."""
        if self._finishing is not None:
            await asyncio.wait([self._finishing])

    # -- lifecycle ------------------------------------------------------------------------------

    def _on_exit(self, _future: asyncio.Future[Any]) -> None:
        self._exited_at = time.monotonic()
        self._watchdog.cancel()

    def _on_timeout(self) -> None:
        if not self._exited.done():
            self._timed_out = True
            self._kill_soon()

    def _kill_soon(self) -> None:
        """The program is killed (exit code 137): its end is now; the container, with every
        process in it, goes once the artifacts are read (stopping it first would take the
        tmpfs, and with it the artifacts, along)."""
        if not self._killed and not self._exited.done():
            self._killed = True
            self._stop_polling.set()
            self._output.cut()
            self._exited.set_result(_KILLED_BY_SIGKILL)

    def _close_stdin(self) -> None:
        if self._stdin_open:
            self._stdin_open = False
            with contextlib.suppress(OSError):
                self._sock.shutdown(socket.SHUT_WR)

    async def _finish(self) -> ExecutionResult:
        self._close_stdin()
        self._output.read_all()
        try:
            exit_code = await self._exited
        except (DockerException, OSError) as exc:
            raise SandboxError(
                f"lost track of sandbox container {self.container_id[:12]}: {exc}"
            ) from exc
        duration = (self._exited_at or time.monotonic()) - self._started
        if not self._killed:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(_STREAM_GRACE_S):
                    await asyncio.shield(self._output.closed)
        killed_here = self._killed
        out_of_memory = (
            exit_code == _KILLED_BY_SIGKILL
            and not killed_here
            and await asyncio.to_thread(self._was_out_of_memory)
        )
        artifacts = await asyncio.to_thread(self._collect_artifacts)
        stdout, stderr = self._output.snapshot()
        stderr_text = stderr.decode(errors="replace")
        if out_of_memory:
            stderr_text += OOM_MESSAGE.format(memory_mb=self._plan.memory_mb)
        elif exit_code == _KILLED_BY_SIGKILL and not killed_here:
            # Nobody here killed it: in a container of its own, the kernel's OOM killer did
            # (engines flag OOMKilled only when the whole container ends).
            stderr_text += PROBABLE_OOM_MESSAGE.format(memory_mb=self._plan.memory_mb)
        if any(sign in stderr_text for sign in _DISK_FULL_SIGNS):
            stderr_text += DISK_FULL_MESSAGE.format(max_disk_mb=self._plan.max_disk_mb)
        return ExecutionResult(
            exit_code=exit_code,
            stdout=stdout.decode(errors="replace"),
            stderr=stderr_text,
            duration_s=duration,
            timed_out=self._timed_out,
            truncated=self._output.truncated,
            artifacts=artifacts,
        )

    def _still_running(self) -> bool:
        try:
            state: dict[str, Any] = (
                self._api.inspect_container(self.container_id).get("State") or {}
            )
        except NotFound:
            return False
        return bool(state.get("Running"))

    def _was_out_of_memory(self) -> bool:
        state: dict[str, Any] = self._api.inspect_container(self.container_id).get("State") or {}
        return bool(state.get("OOMKilled"))

    def _collect_artifacts(self) -> list[Artifact]:
        api = self._api
        url = f"{api.base_url}/v{api.api_version}/containers/{self.container_id}/archive"
        response = api.get(url, params={"path": f"{self._plan.work_dir}/out"}, stream=True)
        try:
            if response.status_code == 404:  # the program removed out/
                return []
            if not response.ok and not _running(api, self.container_id, settle_s=2.0):
                # Its first process died (the OOM killer may pick it), and the disk with it.
                logger.warning(
                    "sandbox container %s ended before its artifacts were read: none returned",
                    self.container_id[:12],
                )
                return []
            if not response.ok:
                raise SandboxError(
                    f"cannot read the artifacts of container {self.container_id[:12]}: "
                    f"HTTP {response.status_code} {response.text[:300]}"
                )
            return artifacts_from_archive(
                response.iter_content(_ARCHIVE_CHUNK_BYTES),
                max_total_bytes=self._plan.max_artifact_bytes,
            )
        finally:
            response.close()

    async def close(self) -> None:
        """Kill what still runs and remove the container (also when the caller is cancelled)."""
        if self._removal is None:
            self._removal = _background(self._remove())
            self._track(self._removal)
        await asyncio.shield(self._removal)

    async def _remove(self) -> None:
        self._watchdog.cancel()
        self._stop_polling.set()
        if self._finishing is not None and not self._finishing.done():
            self._finishing.cancel()  # nobody waits for it any more: the caller was cancelled
        try:
            await asyncio.to_thread(self.remove_now)
        finally:
            for pending in (self._exited, self._finishing, self._polling):
                if pending is not None:
                    _forget(pending)

    def remove_now(self) -> None:
        """Remove the container and let go of its stream, blocking (no event loop needed: also
        the clean-up of a program whose loop is gone)."""
        self._stop_polling.set()
        try:
            _remove_container(self._api, self.container_id)
        finally:
            self._output.read_all()  # never leave the reader thread blocked on flow control
            _shut(self._sock)
            self._reader.join(_READER_JOIN_S)


def _background(coroutine: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
    return asyncio.ensure_future(coroutine)


async def _remove_when_launched(
    api: EngineAPI, name: str, launching: asyncio.Future[tuple[str, str, RawSocket, float]]
) -> None:
    try:
        _container_id, _exec_id, sock, _started = await launching
    except BaseException:  # noqa: BLE001 - the launch removed its container itself on failure
        return
    _shut(sock)
    await asyncio.to_thread(_remove_container, api, name)


def _forget(future: asyncio.Future[Any]) -> None:
    """Retrieve ``future``'s outcome once it is done, so a late failure is not reported."""

    def retrieve(done: asyncio.Future[Any]) -> None:
        if not done.cancelled():
            done.exception()

    future.add_done_callback(retrieve)


def _engine_error(exc: DockerException | OSError) -> SandboxError:
    # APIError is an HTTPError, hence an OSError too: the engine answered, and refused.
    if isinstance(exc, DockerException):
        return SandboxError(f"the container engine refused the run: {_explain(exc)}")
    return SandboxNotReadyError(f"the container engine cannot be reached: {exc}")
