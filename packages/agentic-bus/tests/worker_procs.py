"""Worker processes for the fault tests: started with ``python -m agentic_bus worker``, watched
line by line, signalled and stopped by PID only."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

TESTS_DIR = Path(__file__).resolve().parent


class WorkerProcess:
    """One worker process and the lines it printed."""

    def __init__(self, url: str, flags: Path, graph: str, *extra: str) -> None:
        env = {
            **os.environ,
            "AGENTIC_TEST_FLAGS": str(flags),
            "AGENTIC_TEST_GRAPH": graph,
            "PYTHONUNBUFFERED": "1",
            "PYTHONPATH": os.pathsep.join([str(TESTS_DIR), os.environ.get("PYTHONPATH", "")]),
        }
        argv = [sys.executable, "-m", "agentic_bus", "worker", "bus_graphs:build", "--nats", url,
                "--ack-wait", "1", "--max-deliver", "3", "--slots", "2", *extra]  # fmt: skip
        self.process = subprocess.Popen(
            argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    @property
    def pid(self) -> int:
        return self.process.pid

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.append(line.rstrip("\n"))

    def saw(self, prefix: str) -> bool:
        return any(line.startswith(prefix) for line in self.lines)

    def wait_for(self, prefix: str, timeout_s: float = 20.0) -> None:
        deadline = time.monotonic() + timeout_s
        while not self.saw(prefix):
            if self.process.poll() is not None and not self.saw(prefix):
                time.sleep(0.1)
                if self.saw(prefix):
                    return
                raise AssertionError(
                    f"worker {self.pid} exited ({self.process.returncode}) before {prefix!r}:\n"
                    + "\n".join(self.lines[-30:])
                )
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"worker {self.pid} printed no {prefix!r}:\n" + "\n".join(self.lines[-30:])
                )
            time.sleep(0.02)

    def signal(self, sig: signal.Signals) -> None:
        if self.process.poll() is None:
            os.kill(self.pid, sig)

    def stop(self) -> None:
        if self.process.poll() is None:
            os.kill(self.pid, signal.SIGCONT)
            os.kill(self.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        self._reader.join(timeout=5)
        if self.process.stdout is not None:
            self.process.stdout.close()


def start_workers(url: str, flags: Path, graph: str, n: int, *extra: str) -> list[WorkerProcess]:
    """``n`` workers, each READY (pulling) when this returns."""
    procs = [WorkerProcess(url, flags, graph, *extra) for _ in range(n)]
    try:
        for proc in procs:
            proc.wait_for("READY")
    except BaseException:
        for proc in procs:
            proc.stop()
        raise
    return procs
