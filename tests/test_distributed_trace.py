"""One distributed run is one trace: a coordinator, a worker and an agent server, three OS
processes on a real nats-server, each exporting its spans to a file of its own.

The coordinator runs ``draft -> ask -> finish`` on ``NatsRuntime`` inside a span
``distributed run``; the worker (``python -m agentic_bus worker``) runs every invocation, and
``ask`` calls an agent served by the third process through a ``ProxyAgent``. The trace context
travels in the task messages' and the agent request's headers, so the three files together form
one tree: one root, every parent known, each process's top spans hanging under a span of the
process that sent it the work.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import pytest

from tests.fixtures.servers import stop_process

pytestmark = pytest.mark.slow

TESTS_DIR = Path(__file__).resolve().parent
EXECUTORS = ("draft", "ask", "finish")


@dataclass(frozen=True)
class Span:
    """One line of a span file (see ``distributed_trace_graph.JsonLinesSpanExporter``)."""

    name: str
    trace_id: str
    span_id: str
    parent_span_id: str | None
    service: str
    pid: int


def read_spans(path: Path) -> list[Span]:
    spans: list[Span] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        spans.append(
            Span(
                name=record["name"],
                trace_id=record["trace_id"],
                span_id=record["span_id"],
                parent_span_id=record["parent_span_id"],
                service=record["service"],
                pid=int(record["pid"]),
            )
        )
    return spans


def tops(spans: list[Span]) -> list[Span]:
    """The spans of one process whose parent another process made (or that have none)."""
    own = {s.span_id for s in spans}
    return [s for s in spans if s.parent_span_id not in own]


class Child:
    """A child process we started: its stdout read line by line, its stderr in a file."""

    def __init__(self, argv: list[str], env: dict[str, str], log: Path) -> None:
        self.log = log
        self._stderr: IO[bytes] = log.open("wb")
        self.process = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=self._stderr)

    def wait_for_line(self, prefix: bytes) -> None:
        """Block until the child prints a line starting with ``prefix`` (or fail if it exits)."""
        assert self.process.stdout is not None
        for line in self.process.stdout:
            if line.startswith(prefix):
                return
        raise AssertionError(
            f"{self.process.args!r} exited ({self.process.wait()}) before printing {prefix!r}:\n"
            + self.log.read_text(errors="replace")[-3000:]
        )

    def stop(self) -> None:
        stop_process(self.process, timeout_s=10)
        self._stderr.close()
        if self.process.stdout is not None:
            self.process.stdout.close()


def env_for(role: str, tmp_path: Path, url: str, agent_id: str) -> dict[str, str]:
    return {
        **os.environ,
        "AGENTIC_TRACE_FILE": str(tmp_path / f"{role}.jsonl"),
        "AGENTIC_TRACE_SERVICE": role,
        "AGENTIC_NATS_URL": url,
        "AGENTIC_TRACE_AGENT": agent_id,
        "PYTHONUNBUFFERED": "1",
        "PYTHONPATH": os.pathsep.join([str(TESTS_DIR), os.environ.get("PYTHONPATH", "")]),
    }


def run_distributed(nats_server: str, tmp_path: Path) -> dict[str, list[Span]]:
    """Start the agent server and the worker, run the coordinator; each role's spans."""
    agent_id = f"trace-echo-{uuid.uuid4().hex[:8]}"
    agent = Child(
        [sys.executable, str(TESTS_DIR / "distributed_trace_agent.py"), nats_server, agent_id],
        env_for("agent", tmp_path, nats_server, agent_id),
        tmp_path / "agent.log",
    )
    worker: Child | None = None
    try:
        agent.wait_for_line(b"READY")
        worker_argv = [sys.executable, "-m", "agentic_bus", "worker",
                       "distributed_trace_graph:build", "--nats", nats_server]  # fmt: skip
        worker = Child(
            worker_argv,
            env_for("worker", tmp_path, nats_server, agent_id),
            tmp_path / "worker.log",
        )
        worker.wait_for_line(b"READY")
        coordinator = subprocess.run(
            [sys.executable, str(TESTS_DIR / "distributed_trace_coordinator.py"), nats_server],
            env=env_for("coordinator", tmp_path, nats_server, agent_id),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    finally:
        if worker is not None:
            worker.stop()
        agent.stop()
    assert coordinator.returncode == 0, coordinator.stderr[-3000:]
    assert coordinator.stdout.strip().splitlines()[-1] == 'DONE ["heard HELLO!"]'
    return {
        role: read_spans(tmp_path / f"{role}.jsonl") for role in ("coordinator", "worker", "agent")
    }


def test_a_distributed_run_is_one_trace_across_processes(nats_server: str, tmp_path: Path) -> None:
    spans = run_distributed(nats_server, tmp_path)
    coordinator, worker, agent = spans["coordinator"], spans["worker"], spans["agent"]
    everything = coordinator + worker + agent

    # Three processes, none of them this one, each exporting its own spans.
    pids = {role: {s.pid for s in role_spans} for role, role_spans in spans.items()}
    assert all(len(p) == 1 for p in pids.values()), pids
    assert len(set.union(*pids.values())) == 3
    assert os.getpid() not in set.union(*pids.values())

    # One trace, one tree: a single root (the coordinator's outer span), no dangling parent.
    assert {s.trace_id for s in everything} == {coordinator[0].trace_id}
    by_id = {s.span_id: s for s in everything}
    assert [s.name for s in everything if s.parent_span_id is None] == ["distributed run"]
    assert all(s.parent_span_id in by_id for s in everything if s.parent_span_id is not None)

    # The worker's work hangs under the coordinator's superstep spans: the engine's span of
    # each invocation, made in the worker process, has the superstep that dispatched it as parent.
    worker_tops = tops(worker)
    assert sorted(s.name for s in worker_tops) == sorted(f"executor.process {e}" for e in EXECUTORS)
    parents = [by_id[s.parent_span_id] for s in worker_tops if s.parent_span_id is not None]
    assert len(parents) == len(worker_tops)
    assert all(p.name == "workflow.superstep" and p.service == "coordinator" for p in parents)
    assert len({p.span_id for p in parents}) == len(EXECUTORS)  # one superstep each

    # The served agent's work hangs under the worker's ``ask`` body (through the ProxyAgent).
    agent_tops = tops(agent)
    assert agent_tops
    assert {by_id[s.parent_span_id].name for s in agent_tops if s.parent_span_id} == {"body ask"}
    assert "served.reply" in {s.name for s in agent}
