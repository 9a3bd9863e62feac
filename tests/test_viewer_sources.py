"""The run viewer over real servers: runs in Redis and in NATS KV listed, viewed and resumed by
a viewer that did not start them; a NATS run followed live from ``AGENTIC_EVENTS`` while it
goes; an unreachable store named in the errors while the other runs stay listed."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, Never

import httpx
import pytest
from pydantic import BaseModel

from agentic_bus import NatsCheckpointStore, NatsEventSink
from agentic_core import (
    Executor,
    SuperstepCompletedEvent,
    Workflow,
    WorkflowBuilder,
    WorkflowContext,
    WorkflowEvent,
    WorkflowStartedEvent,
    handler,
    registry,
    response_handler,
)
from agentic_orchestrator import RunViewer
from agentic_orchestrator._viewer._views import RunView
from tests.fixtures.servers import free_port

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]


class Draft(BaseModel):
    text: str


class Writer(Executor):
    @handler
    async def write(self, topic: str, ctx: WorkflowContext[Draft]) -> None:
        await ctx.send_message(Draft(text=f"a post about {topic}"))


class Approver(Executor):
    @handler
    async def ask(self, draft: Draft, ctx: WorkflowContext[Never, str]) -> None:
        await ctx.request_info(draft, bool)

    @response_handler
    async def decided(self, draft: Draft, approved: bool, ctx: WorkflowContext[Never, str]) -> None:
        await ctx.yield_output(("published: " if approved else "rejected: ") + draft.text)


def approval() -> Workflow:
    writer, approver = Writer("writer"), Approver("approver")
    return WorkflowBuilder("approval").set_start_executor(writer).add_edge(writer, approver).build()


class Opener(Executor):
    @handler
    async def open(self, text: str, ctx: WorkflowContext[str]) -> None:
        await ctx.send_message(text)


class Gate(Executor):
    """Holds its superstep until the test opens it (a run caught in the middle, no sleeps)."""

    def __init__(self) -> None:
        super().__init__("gate")
        self.opened = asyncio.Event()

    @handler
    async def wait(self, text: str, ctx: WorkflowContext[Never, str]) -> None:
        await self.opened.wait()
        await ctx.yield_output(text + " done")


def gated() -> tuple[Workflow, Gate]:
    opener, gate = Opener("opener"), Gate()
    return WorkflowBuilder("gated").set_start_executor(opener).add_edge(opener, gate).build(), gate


def client_of(viewer: RunViewer) -> httpx.AsyncClient:
    return httpx.AsyncClient(
        transport=httpx.ASGITransport(app=viewer.app), base_url="http://127.0.0.1:8765"
    )


async def until(viewer: RunViewer, run_id: str, done: Any, *, timeout_s: float = 30) -> RunView:
    """The run's view once ``done(view)`` holds (bounded; the viewer must be following it)."""
    async with asyncio.timeout(timeout_s):
        while True:
            record = viewer.hub.get(run_id)
            assert record is not None, "the viewer does not follow the run"
            version, view = record.version, record.view()
            if done(view):
                return view
            await record.wait_for_change(version)


async def idle(viewer: RunViewer, run_id: str) -> None:
    """Wait until no stream of the run is being read (a replay closes its connection then)."""
    record = viewer.hub.get(run_id)
    assert record is not None
    async with asyncio.timeout(30):
        while record.driving:
            await record.wait_for_change(record.version)


def settled(view: RunView) -> bool:
    return view.status in ("waiting", "completed", "failed")


@pytest.fixture
async def viewers() -> AsyncIterator[list[RunViewer]]:
    made: list[RunViewer] = []
    yield made
    for viewer in made:
        await viewer.aclose()


# -- Redis ------------------------------------------------------------------------------------


async def test_a_redis_run_is_listed_and_resumed_by_another_viewer(
    redis_server: str, viewers: list[RunViewer]
) -> None:
    first = RunViewer([approval()], checkpoint_store=redis_server)
    viewers.append(first)
    run_id = await first.start("redis")
    assert (await until(first, run_id, settled)).status == "waiting"
    await idle(first, run_id)
    await first.aclose()

    second = RunViewer([approval()], checkpoint_store=redis_server)
    viewers.append(second)
    async with client_of(second) as client:
        listing = (await client.get("/api/runs")).json()
        view = (await client.get(f"/api/runs/{run_id}")).json()
        request_id = view["pending_requests"][0]["request_id"]
        answered = await client.post(
            f"/api/runs/{run_id}/responses", json={"responses": {request_id: True}}
        )
        final = await until(second, run_id, lambda v: v.status == "completed")
        await idle(second, run_id)

    row = next(r for r in listing["runs"] if r["run_id"] == run_id)
    assert (row["source"], row["status"], row["pending_request_count"]) == (
        "checkpoints",
        "waiting",
        1,
    )
    assert view["can_answer"] is True
    assert view["pending_requests"][0]["response_schema"] == {"type": "boolean"}
    assert answered.status_code == 202, answered.text
    assert [o.text for o in final.outputs] == ["published: a post about redis"]


async def test_an_unreachable_redis_is_named_and_live_runs_stay_listed(
    viewers: list[RunViewer],
) -> None:
    down = f"redis://127.0.0.1:{free_port()}/0"
    viewer = RunViewer([approval()], checkpoint_store=down)
    viewers.append(viewer)
    workflow = viewer.workflows[0]
    run_id = await viewer.watch(workflow, workflow.run_stream("live"))  # not saved anywhere
    await until(viewer, run_id, settled)
    await idle(viewer, run_id)
    async with client_of(viewer) as client, asyncio.timeout(60):
        listing = (await client.get("/api/runs")).json()
        missing = await client.get("/api/runs/not-a-run")

    assert [r["run_id"] for r in listing["runs"]] == [run_id]
    [error] = listing["errors"]
    assert down in error
    assert missing.status_code == 502
    assert down in missing.json()["error"]


# -- NATS -------------------------------------------------------------------------------------


async def record_run(
    url: str,
    workflow: Workflow,
    stream: AsyncIterator[WorkflowEvent],
    started: asyncio.Future[str],
    checkpointed: asyncio.Event | None = None,
) -> None:
    """Drive a run as a program would: its events to ``AGENTIC_EVENTS`` as they come;
    ``checkpointed`` is set once superstep 0's checkpoint is saved (before its completion
    event comes out of the stream)."""
    async with NatsEventSink(url, workflow=workflow) as sink:
        async for event in sink.record(stream):
            if isinstance(event, WorkflowStartedEvent) and not started.done():
                started.set_result(event.run_id)
            if isinstance(event, SuperstepCompletedEvent) and checkpointed is not None:
                checkpointed.set()


@dataclass
class GatedNatsRun:
    workflow: Workflow
    gate: Gate
    store: NatsCheckpointStore
    run_id: str
    program: asyncio.Task[None]


@contextlib.asynccontextmanager
async def gated_nats_run(nats_server: str) -> AsyncIterator[GatedNatsRun]:
    """A ``gated`` run a program drives on a NATS KV store, its events to ``AGENTIC_EVENTS``;
    yielded once superstep 0 is checkpointed (listed in the store). Its gate opens on exit."""
    bucket = f"viewer_{uuid.uuid4().hex[:8]}"
    store = NatsCheckpointStore(nats_server, bucket=bucket)
    workflow, gate = gated()
    started: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    checkpointed = asyncio.Event()
    run = workflow.run_stream("go", checkpoint_store=store)
    program = asyncio.create_task(record_run(nats_server, workflow, run, started, checkpointed))
    try:
        run_id = await asyncio.wait_for(started, 30)
        await asyncio.wait_for(checkpointed.wait(), 30)
        yield GatedNatsRun(workflow, gate, store, run_id, program)
    finally:
        gate.opened.set()
        await asyncio.wait_for(program, 30)
        await store.close()


async def test_a_nats_run_is_followed_live_from_its_events(
    nats_server: str, viewers: list[RunViewer]
) -> None:
    async with gated_nats_run(nats_server) as run:
        run_id, workflow = run.run_id, run.workflow
        viewer = RunViewer([workflow], checkpoint_store=run.store, nats_url=nats_server)
        viewers.append(viewer)
        async with client_of(viewer) as client:
            listed = (await client.get("/api/runs")).json()["runs"]
            first = (await client.get(f"/api/runs/{run_id}")).json()
        midway = await until(
            viewer, run_id, lambda v: v.supersteps[-1].executors.get("gate") == "running"
        )
        run.gate.opened.set()
        final = await until(viewer, run_id, lambda v: v.status == "completed")
        await idle(viewer, run_id)
        await run.program

    assert any(r["run_id"] == run_id and r["source"] == "nats" for r in listed)
    assert first["source"] == "nats"
    assert first["mermaid"].startswith("flowchart TD")
    assert midway.status == "running"
    assert midway.supersteps[0].executors == {"opener": "completed"}
    assert [o.text for o in final.outputs] == ["go done"]
    assert final.supersteps[1].executors == {"gate": "completed"}
    assert final.source == "nats"
    assert "WorkflowCompletedEvent" in [e.type for e in final.events]


async def test_a_paused_nats_run_is_answered_from_the_viewer(
    nats_server: str, viewers: list[RunViewer]
) -> None:
    bucket = f"viewer_{uuid.uuid4().hex[:8]}"
    url_store: Any = registry.load("agentic.checkpoint_stores", "nats")
    store = url_store(nats_server, bucket=bucket)
    workflow = approval()
    started: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    await record_run(
        nats_server, workflow, workflow.run_stream("nats", checkpoint_store=store), started
    )
    run_id = started.result()
    viewer = RunViewer([approval()], checkpoint_store=store, nats_url=nats_server)
    viewers.append(viewer)
    try:
        async with client_of(viewer) as client:
            await client.get(f"/api/runs/{run_id}")  # starts following it
            waiting = await until(
                viewer, run_id, lambda v: v.status == "waiting" and bool(v.pending_requests)
            )
            await idle(viewer, run_id)  # the replay ends at the paused run's last event
            request_id = waiting.pending_requests[0].request_id
            answered = await client.post(
                f"/api/runs/{run_id}/responses", json={"responses": {request_id: False}}
            )
            final = await until(viewer, run_id, lambda v: v.status == "completed")
            await idle(viewer, run_id)
    finally:
        await store.close()

    assert waiting.source == "nats"
    assert waiting.can_answer is True
    assert waiting.pending_requests[0].data == {"text": "a post about nats"}
    assert answered.status_code == 202, answered.text
    assert [o.text for o in final.outputs] == ["rejected: a post about nats"]


# The moments to close at: before the replay connects, while it connects and subscribes, and
# while it waits for the run's next event.
@pytest.mark.parametrize("close_after_s", [0.0, 0.003, 0.005, 0.01, 0.05])
async def test_closing_the_viewer_while_it_follows_a_nats_run_returns_and_disconnects(
    nats_server: str, close_after_s: float
) -> None:
    import gc

    from nats.aio.client import Client as NatsClient

    def connected() -> int:
        return sum(1 for o in gc.get_objects() if isinstance(o, NatsClient) and o.is_connected)

    async with gated_nats_run(nats_server) as run:
        before = connected()
        viewer = RunViewer([run.workflow], checkpoint_store=run.store, nats_url=nats_server)
        async with client_of(viewer) as client:
            followed = await client.get(f"/api/runs/{run.run_id}")
            assert followed.status_code == 200  # now followed
        await asyncio.sleep(close_after_s)
        # The run never ends (its gate stays shut): closing must stop following it anyway. On
        # Python 3.11 a cancellation can be swallowed inside nats-py (asyncio.wait_for).
        closing = asyncio.ensure_future(viewer.aclose())
        done, _ = await asyncio.wait({closing}, timeout=20)  # a hang guard, not a speed check
        if not done:
            closing.cancel()  # a second cancellation unsticks it: the test ends either way
            with contextlib.suppress(BaseException):
                await closing
            pytest.fail("viewer.aclose() did not return within 20 s")
        closing.result()
        gc.collect()  # a socket left open would warn here (an error under filterwarnings)
        assert connected() == before


async def test_a_viewer_on_a_nats_runtime_starts_durable_runs_and_answers_them(
    nats_server: str, tmp_path: Any, viewers: list[RunViewer]
) -> None:
    """Runs started from the page on a ``NatsRuntime`` are its fenced, committed runs: their
    checkpoints go to NATS KV (the viewer's own store would be one no process could resume
    from), and an answer from the page goes on through the runtime's workers."""
    from agentic_bus import NatsRuntime, PoolSettings, Worker

    settings = PoolSettings(ack_wait_s=1.0, max_deliver=3)
    workflow = approval()
    worker = Worker(workflow, nats_server, slots=4, settings=settings)
    working = asyncio.create_task(worker.run())
    await worker.wait_ready()
    runtime = NatsRuntime(nats_server, settings=settings, worker_wait_s=5)
    try:
        viewer = RunViewer([workflow], checkpoint_store=tmp_path / "runs", runtime=runtime)
        viewers.append(viewer)
        async with client_of(viewer) as client:
            started = await client.post("/api/runs", json={"message": "durable"})
            assert started.status_code == 201, started.text
            run_id = started.json()["run_id"]
            waiting = await until(
                viewer, run_id, lambda v: v.status == "waiting" and bool(v.pending_requests)
            )
            await idle(viewer, run_id)
            committed = await (await runtime.checkpoint_store()).latest(run_id)
            request_id = waiting.pending_requests[0].request_id
            answered = await client.post(
                f"/api/runs/{run_id}/responses", json={"responses": {request_id: True}}
            )
            final = await until(viewer, run_id, lambda v: v.status == "completed")
            await idle(viewer, run_id)
    finally:
        await runtime.close()
        worker.stop()
        await working

    assert committed is not None
    assert committed.pending_requests
    assert not list((tmp_path / "runs").glob("**/*.json"))
    assert answered.status_code == 202, answered.text
    assert [o.text for o in final.outputs] == ["published: a post about durable"]
    assert worker.tasks_done >= 2
