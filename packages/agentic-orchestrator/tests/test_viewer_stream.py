"""The run stream over a real uvicorn server: server-sent ``run`` events carry the whole view at
connect and after every change, an answer posted meanwhile resumes the run on the same stream,
and the server closes the stream after the completed run's last view."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from agentic_orchestrator import RunViewer
from tests.fixtures.servers import free_port

from ._viewer_flows import approval


@pytest.fixture
async def served() -> AsyncIterator[tuple[RunViewer, str]]:
    viewer = RunViewer([approval()])
    port = free_port()
    server = asyncio.create_task(viewer.serve(host="127.0.0.1", port=port))
    base = f"http://127.0.0.1:{port}"
    async with httpx.AsyncClient(base_url=base) as probe, asyncio.timeout(20):
        while True:  # until uvicorn listens (a bounded wait, not a timing assertion)
            if server.done():
                server.result()  # serve() failed: show why
            with contextlib.suppress(httpx.TransportError):
                if (await probe.get("/api/workflows")).status_code == 200:
                    break
            await asyncio.sleep(0.05)
    yield viewer, base
    server.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await server


async def run_events(response: httpx.Response) -> AsyncIterator[dict[str, Any]]:
    """The ``run`` events of an SSE response, decoded, until the server closes it."""
    event, data = "", []
    async for line in response.aiter_lines():
        if line.startswith("event:"):
            event = line.removeprefix("event:").strip()
        elif line.startswith("data:"):
            data.append(line.removeprefix("data:").strip())
        elif line == "" and data:
            if event == "run":
                yield json.loads("\n".join(data))
            event, data = "", []


@pytest.mark.slow
async def test_the_stream_follows_a_run_through_an_answer_to_its_end(
    served: tuple[RunViewer, str],
) -> None:
    _, base = served
    statuses: list[str] = []
    views: list[dict[str, Any]] = []
    async with httpx.AsyncClient(base_url=base, timeout=30) as client, asyncio.timeout(30):
        created = await client.post("/api/runs", json={"message": "cats"})
        run_id = created.json()["run_id"]
        async with client.stream("GET", f"/api/runs/{run_id}/stream") as response:
            assert response.status_code == 200
            assert response.headers["content-type"].startswith("text/event-stream")
            answered = False
            async for view in run_events(response):
                views.append(view)
                statuses.append(view["status"])
                if view["status"] == "waiting" and not answered:
                    request_id = view["pending_requests"][0]["request_id"]
                    reply = await client.post(
                        f"/api/runs/{run_id}/responses",
                        json={"responses": {request_id: True}},
                    )
                    assert reply.status_code == 202, reply.text
                    answered = True
        # the loop ended: the server closed the stream after the final snapshot

    assert statuses[-1] == "completed"
    assert "waiting" in statuses
    assert statuses.index("waiting") < len(statuses) - 1
    final = views[-1]
    assert final["run_id"] == run_id
    assert [o["text"] for o in final["outputs"]] == ["published: a post about cats"]
    assert final["pending_requests"] == []
    seqs = [e["seq"] for e in final["events"]]
    assert seqs == sorted(seqs)


@pytest.mark.slow
async def test_the_stream_of_a_finished_run_sends_one_view_and_closes(
    served: tuple[RunViewer, str],
) -> None:
    viewer, base = served
    run_id = await viewer.start("dogs")
    request_id = ""
    async with asyncio.timeout(20):
        async for view in viewer.snapshots(run_id):
            if view.status == "waiting":
                request_id = view.pending_requests[0].request_id
                break
    await viewer.answer(run_id, {request_id: False})
    async with asyncio.timeout(20):
        async for view in viewer.snapshots(run_id):
            if view.status == "completed":
                break
    record = viewer.hub.get(run_id)
    assert record is not None
    async with asyncio.timeout(20):
        while record.driving:
            await record.wait_for_change(record.version)

    async with (
        httpx.AsyncClient(base_url=base) as client,
        asyncio.timeout(20),
        client.stream("GET", f"/api/runs/{run_id}/stream") as response,
    ):
        views = [view async for view in run_events(response)]

    assert [v["status"] for v in views] == ["completed"]
    assert [o["text"] for o in views[0]["outputs"]] == ["rejected: a post about dogs"]
