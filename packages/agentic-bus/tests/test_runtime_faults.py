"""Faults under NatsRuntime with worker processes: SIGKILL, SIGSTOP, poison tasks, workers of
another graph. Every run either gives the local run's outputs with one stored result per task,
or fails with an error naming what went wrong."""

from __future__ import annotations

import asyncio
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import nats
import pytest
from bus_graphs import JOKES, jokes, pipeline
from worker_procs import WorkerProcess, start_workers

from agentic_bus import NatsRuntime, PoolSettings
from agentic_core import WorkflowExecutionError
from tests.fixtures.servers import ServerProcess

SETTINGS = PoolSettings(ack_wait_s=1.0, max_deliver=3)
pytestmark = pytest.mark.slow


@pytest.fixture
def flags(tmp_path: Path) -> Path:
    return tmp_path


@pytest.fixture
def procs() -> Iterator[list[WorkerProcess]]:
    started: list[WorkerProcess] = []
    yield started
    for proc in started:
        proc.stop()


async def _holder(procs: list[WorkerProcess], timeout_s: float = 20.0) -> WorkerProcess:
    for _ in range(int(timeout_s / 0.02)):
        for proc in procs:
            if proc.saw("GOT"):
                return proc
        await asyncio.sleep(0.02)
    raise AssertionError("no worker took the hanging task")


async def _stored_per_subject(url: str, subject: str) -> dict[str, int]:
    """How many results ``AGENTIC_RESULTS`` holds on each subject matching ``subject``."""
    client = await nats.connect(url)
    try:
        info = await client.jetstream().stream_info("AGENTIC_RESULTS", subjects_filter=subject)
        return dict(info.state.subjects or {})
    finally:
        await client.close()


async def _stored_results(url: str, subject: str) -> int:
    return sum((await _stored_per_subject(url, subject)).values())


async def test_a_worker_killed_mid_task_loses_nothing(
    nats_server: str, flags: Path, procs: list[WorkerProcess]
) -> None:
    procs += start_workers(nats_server, flags, "pipeline", 3)
    (flags / "hang-b").touch()
    workflow = pipeline()
    async with NatsRuntime(nats_server, settings=SETTINGS, worker_wait_s=10) as runtime:
        running = asyncio.create_task(workflow.run(1, runtime=runtime))
        holder = await _holder(procs)
        holder.signal(signal.SIGKILL)
        (flags / "release-b").touch()
        result = await asyncio.wait_for(running, 30)
        ran = (flags / "ran-b").read_text().split()
        assert len(ran) == 2
        assert ran[0] == ran[1]
        run_id = ran[0].split(".")[0]
        assert await _stored_results(nats_server, f"agentic.result.{run_id}.1.b.1") == 1
    local = await pipeline().run(1)
    assert result.outputs == local.outputs


async def test_a_paused_worker_is_overtaken_and_its_late_result_is_refused(
    nats_server: str, flags: Path, procs: list[WorkerProcess]
) -> None:
    procs += start_workers(nats_server, flags, "pipeline", 2)
    (flags / "hang-c").touch()
    workflow = pipeline()
    async with NatsRuntime(nats_server, settings=SETTINGS, worker_wait_s=10) as runtime:
        running = asyncio.create_task(workflow.run(1, runtime=runtime))
        holder = await _holder(procs)
        holder.signal(signal.SIGSTOP)
        (flags / "release-c").touch()
        result = await asyncio.wait_for(running, 30)
        holder.signal(signal.SIGCONT)
        holder.wait_for("", 5)
        for _ in range(200):  # the paused worker finishes its copy and is refused
            if any("already_stored" in line for line in holder.lines):
                break
            await asyncio.sleep(0.05)
        assert any("already_stored" in line for line in holder.lines), holder.lines[-10:]
        run_id = (flags / "ran-c").read_text().split()[0].split(".")[0]
        assert await _stored_results(nats_server, f"agentic.result.{run_id}.1.c.1") == 1
    assert result.outputs == (await pipeline().run(1)).outputs


async def test_a_poison_task_fails_the_run_naming_the_executor(
    nats_server: str, flags: Path, procs: list[WorkerProcess]
) -> None:
    procs += start_workers(nats_server, flags, "pipeline", 3)
    (flags / "poison-join").touch()
    workflow = pipeline()
    async with NatsRuntime(nats_server, settings=SETTINGS, worker_wait_s=10) as runtime:
        with pytest.raises(WorkflowExecutionError, match="max_deliver=3") as caught:
            await asyncio.wait_for(workflow.run(1, runtime=runtime), 30)
    assert caught.value.executor_id == "join"
    assert "'join'" in str(caught.value)
    assert sum(proc.saw("POISON") for proc in procs) == 3


async def test_a_worker_of_another_graph_on_the_pool_fails_the_run_fast(
    nats_server: str, flags: Path, procs: list[WorkerProcess]
) -> None:
    workflow = pipeline()
    async with NatsRuntime(nats_server, settings=SETTINGS, worker_wait_s=10) as runtime:
        pool = runtime.pool_for(workflow, "start")
        procs += start_workers(nats_server, flags, "random-3", 1, "--pool", pool)
        with pytest.raises(WorkflowExecutionError, match="fingerprint"):
            await asyncio.wait_for(workflow.run(1, runtime=runtime), 20)


async def _results_per_task(url: str, run_id: str) -> dict[str, int]:
    return await _stored_per_subject(url, f"agentic.result.{run_id}.>")


async def test_a_nats_server_killed_mid_superstep_loses_nothing(
    own_nats_server: ServerProcess, flags: Path, procs: list[WorkerProcess]
) -> None:
    url = own_nats_server.url
    procs += start_workers(url, flags, "pipeline", 2)
    (flags / "hang-b").touch()
    workflow = pipeline()
    async with NatsRuntime(url, settings=SETTINGS, worker_wait_s=30) as runtime:
        running = asyncio.create_task(runtime.run(workflow, 1))
        await _holder(procs)  # superstep 1 is running: a and c may be done, b is not
        await asyncio.to_thread(own_nats_server.kill)
        await asyncio.sleep(1.0)
        await asyncio.to_thread(own_nats_server.start_again)
        (flags / "release-b").touch()
        result = await asyncio.wait_for(running, 60)
        committed = await runtime.committed_outputs(workflow, result.run_id)
    local = await pipeline().run(1)
    assert result.outputs == local.outputs
    assert committed == local.outputs
    stored = await _results_per_task(url, result.run_id)
    assert len(stored) == 7  # one result subject per task of the 5 supersteps
    assert set(stored.values()) == {1}  # and each stored once


async def test_sigterm_hands_a_running_task_back_at_once(
    nats_server: str, flags: Path, procs: list[WorkerProcess]
) -> None:
    # ack_wait 30 s: the task must come back by the worker's nak, not by redelivery.
    settings = PoolSettings(ack_wait_s=30.0, max_deliver=3)
    slow = ("--ack-wait", "30", "--stop-grace", "0.3")
    workflow = pipeline()
    async with NatsRuntime(
        nats_server, settings=settings, build="sigterm", worker_wait_s=20
    ) as runtime:
        pool = runtime.pool_for(workflow, "start")
        procs += start_workers(nats_server, flags, "pipeline", 1, "--build", "sigterm", *slow)
        assert procs[0].saw(f"READY {procs[0].lines[-1].split()[1]} pool={pool}")
        (flags / "hang-b").touch()
        running = asyncio.create_task(workflow.run(1, runtime=runtime))
        first = await _holder(procs)
        second = start_workers(nats_server, flags, "pipeline", 1, "--pool", pool, *slow)[0]
        procs.append(second)
        signalled = time.monotonic()
        first.signal(signal.SIGTERM)
        assert await asyncio.to_thread(first.process.wait, 10) == 0
        assert any("worker_tasks_returned" in line for line in first.lines)
        await _holder([second], timeout_s=15)  # well inside ack_wait
        assert time.monotonic() - signalled < 15
        (flags / "release-b").touch()
        result = await asyncio.wait_for(running, 30)
    assert result.outputs == (await pipeline().run(1)).outputs


async def test_a_blocking_executor_runs_twice_but_its_result_is_stored_once(
    nats_server: str, flags: Path, procs: list[WorkerProcess]
) -> None:
    # time.sleep() blocks the worker's heartbeats: after ack_wait the task is redelivered to
    # another worker. Execution is at least once (hence ctx.invocation_id), the result once.
    procs += start_workers(nats_server, flags, "pipeline", 2)
    (flags / "block-tail").touch()
    workflow = pipeline()
    async with NatsRuntime(nats_server, settings=SETTINGS, worker_wait_s=10) as runtime:
        result = await asyncio.wait_for(workflow.run(1, runtime=runtime), 30)
        await asyncio.sleep(1.5)  # the second copy finishes and is refused
    ran = (flags / "ran-tail").read_text().split()
    assert len(ran) >= 2
    assert len(set(ran)) == 1  # the same invocation id on every delivery
    run_id = ran[0].split(".")[0]
    assert await _stored_results(nats_server, f"agentic.result.{run_id}.3.tail.1") == 1
    assert result.outputs == (await pipeline().run(1)).outputs


async def test_langgraphs_map_reduce_sample_survives_a_worker_killed_mid_map(
    nats_server: str, flags: Path, procs: list[WorkerProcess]
) -> None:
    # LangGraph's "Map-Reduce and the Send API" how-to, ported (bus_graphs.jokes): each Send is
    # a task; a worker SIGKILLed while it holds one branch loses nothing.
    procs += start_workers(nats_server, flags, "jokes", 2)
    (flags / "hang-generate_joke").touch()
    workflow = jokes()
    async with NatsRuntime(nats_server, settings=SETTINGS, worker_wait_s=10) as runtime:
        running = asyncio.create_task(runtime.run(workflow, {"topic": "animals"}))
        holder = await _holder(procs)
        holder.signal(signal.SIGKILL)
        (flags / "release-generate_joke").touch()
        result = await asyncio.wait_for(running, 30)
        committed = await runtime.committed_outputs(workflow, result.run_id)
    expected = {"jokes": list(JOKES.values()), "best_selected_joke": "penguins"}
    assert result.outputs == committed == [expected]  # LangGraph's final state, same order
    ran = (flags / "ran-generate_joke").read_text().split()
    assert len(set(ran)) == 3  # one invocation id per Send, the killed one run again
    assert len(ran) >= 3
