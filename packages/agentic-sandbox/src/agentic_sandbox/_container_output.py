"""The output of a container, read from its attach stream by a thread and consumed on the loop.

The Docker API multiplexes stdout and stderr over one attach connection in frames (an 8-byte
header: stream number, three zero bytes, big-endian payload size). ``pump_attach_stream`` reads
them in a thread (the SDK's sockets are blocking) into an ``AttachedOutput``, which keeps
``max_output_bytes`` of both streams together and reports the first byte past it, so the
container can be killed at once, as ``ProcessSandbox`` does with its pipes.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable
from typing import Protocol

_STDERR = 2
_FRAME_HEADER_BYTES = 8
_RECV_BYTES = 64 * 1024
READ_HIGH_WATER = 256 * 1024
"""Interactive stdout not yet read past this: stop reading the stream (the program then blocks)."""


class RawSocket(Protocol):
    """What we use of the socket behind an attach connection (plain, TLS or SSH channel)."""

    def recv(self, size: int, /) -> bytes: ...
    def sendall(self, data: bytes, /) -> None: ...
    def shutdown(self, how: int, /) -> None: ...
    def close(self) -> None: ...


class AttachedOutput:
    """stdout and stderr under one byte budget; filled by the reader thread, read on the loop."""

    def __init__(
        self, max_output_bytes: int, on_overflow: Callable[[], None], *, flow_control: bool
    ):
        self._loop = asyncio.get_running_loop()
        self._lock = threading.Lock()
        self._stdout = bytearray()
        self._stderr = bytearray()
        self._budget = max_output_bytes
        self._on_overflow = on_overflow
        self._flow_control = flow_control
        self._room = threading.Event()
        self._room.set()
        self._changed = asyncio.Event()
        self._overflow_reported = False
        self.truncated = False
        self.eof = False
        self.closed: asyncio.Future[None] = self._loop.create_future()

    # -- the reader thread ----------------------------------------------------------------------

    def add(self, stream: int, data: bytes) -> None:
        """Keep ``data`` within the budget; blocks while interactive stdout is full."""
        with self._lock:
            if self.truncated or self.eof:
                return
            if len(data) > self._budget:
                data = data[: self._budget]
                self.truncated = True
            self._budget -= len(data)
            if stream == _STDERR:
                self._stderr += data
            else:
                self._stdout += data
            if self._flow_control and len(self._stdout) > READ_HIGH_WATER:
                self._room.clear()
            overflow = self.truncated
        self._call_on_loop(self._notify, overflow)
        self._room.wait()

    def finish(self) -> None:
        """The stream ended (the container exited, or we closed the connection)."""
        with self._lock:
            self.eof = True
        self._call_on_loop(self._notify_closed)

    def cut(self) -> None:
        """The program was killed: readers get the end of its output now, what still comes
        (before its container is gone) is dropped."""
        with self._lock:
            self.eof = True
            self._flow_control = False
        self._room.set()
        self._notify_closed()

    def _call_on_loop(self, callback: Callable[..., None], *args: object) -> None:
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody is listening
            self._loop.call_soon_threadsafe(callback, *args)

    # -- the event loop -------------------------------------------------------------------------

    def _notify(self, overflow: bool) -> None:
        self._changed.set()
        if overflow and not self._overflow_reported:
            self._overflow_reported = True
            self._on_overflow()

    def _notify_closed(self) -> None:
        self._changed.set()
        if not self.closed.done():
            self.closed.set_result(None)

    def find_stdout(self, needle: bytes, end: int) -> tuple[int, int]:
        """Where ``needle`` is in buffered stdout before ``end`` (-1 if not), and stdout's size."""
        with self._lock:
            return self._stdout.find(needle, 0, end), len(self._stdout)

    def consume_stdout(self, count: int) -> bytes:
        """Take ``count`` bytes of buffered stdout (they no longer count against the limit)."""
        with self._lock:
            taken = bytes(self._stdout[:count])
            del self._stdout[:count]
            self._budget += len(taken)
            if len(self._stdout) <= READ_HIGH_WATER // 2:
                self._room.set()
        return taken

    async def changed(self) -> None:
        """Wait for more output or the end of the stream."""
        self._changed.clear()
        self._room.set()  # a reader waiting for more than the high-water mark must get it
        await self._changed.wait()

    def read_all(self) -> None:
        """Stop flow control: everything the program prints from now on is collected."""
        with self._lock:
            self._flow_control = False
        self._room.set()

    def snapshot(self) -> tuple[bytes, bytes]:
        """What stdout and stderr hold now."""
        with self._lock:
            return bytes(self._stdout), bytes(self._stderr)


def pump_attach_stream(sock: RawSocket, output: AttachedOutput) -> None:
    """Read frames from ``sock`` into ``output`` until the stream ends (run in a thread)."""
    try:
        while True:
            header = _receive_exactly(sock, _FRAME_HEADER_BYTES)
            if len(header) < _FRAME_HEADER_BYTES:
                break
            size = int.from_bytes(header[4:8], "big")
            payload = _receive_exactly(sock, size)
            if payload:
                output.add(header[0], payload)
            if len(payload) < size:
                break
    except OSError:
        pass  # the connection was shut down by close(): the end of the stream
    finally:
        output.finish()


def _receive_exactly(sock: RawSocket, size: int) -> bytes:
    """``size`` bytes from ``sock``, or fewer at the end of the stream."""
    chunks: list[bytes] = []
    missing = size
    while missing > 0:
        chunk = sock.recv(min(missing, _RECV_BYTES))
        if not chunk:
            break
        chunks.append(chunk)
        missing -= len(chunk)
    return b"".join(chunks)
