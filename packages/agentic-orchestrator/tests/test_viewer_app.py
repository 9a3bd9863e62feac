"""The run viewer's JSON API over ASGI: starting runs, their views (graph, per-superstep
statuses, events, outputs), answering a pending approval, and the errors a client can get."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from agentic_orchestrator import RunViewer, ViewerError

from ._viewer_flows import approval, broken, review, settled, shouting

BASE = "http://127.0.0.1:8765"  # a loopback name: the only kind the viewer answers by default


@pytest.fixture
async def viewer() -> AsyncIterator[RunViewer]:
    viewer = RunViewer([approval(), shouting(), broken()])
    yield viewer
    await viewer.aclose()


@pytest.fixture
async def client(viewer: RunViewer) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=viewer.app)
    async with httpx.AsyncClient(transport=transport, base_url=BASE) as client:
        yield client


async def start(client: httpx.AsyncClient, workflow: str, message: Any) -> str:
    response = await client.post("/api/runs", json={"workflow": workflow, "message": message})
    assert response.status_code == 201, response.text
    return response.json()["run_id"]


async def test_a_started_run_is_listed_as_live(
    viewer: RunViewer, client: httpx.AsyncClient
) -> None:
    run_id = await start(client, "shouting", "hi")
    await settled(viewer, run_id)

    runs = (await client.get("/api/runs")).json()["runs"]

    assert [(r["run_id"], r["source"], r["status"]) for r in runs] == [
        (run_id, "live", "completed")
    ]
    assert runs[0]["workflow_name"] == "shouting"
    assert runs[0]["superstep_count"] == 3


async def test_the_run_view_draws_the_graph_and_each_superstep(
    viewer: RunViewer, client: httpx.AsyncClient
) -> None:
    run_id = await start(client, "shouting", "hi")
    await settled(viewer, run_id)

    view = (await client.get(f"/api/runs/{run_id}")).json()

    assert view["status"] == "completed"
    assert view["mermaid"].startswith("flowchart TD")
    assert view["node_ids"] == {"upper": "n_upper", "flaky": "n_flaky", "exclaim": "n_exclaim"}
    assert all(node in view["mermaid"] for node in view["node_ids"].values())
    assert view["executor_ids"] == ["upper", "flaky", "exclaim"]
    assert view["supersteps"] == [
        {"superstep": 0, "executors": {"upper": "completed"}},
        {"superstep": 1, "executors": {"flaky": "completed"}},
        {"superstep": 2, "executors": {"exclaim": "completed"}},
    ]
    assert view["outputs"] == [{"source_executor_id": "exclaim", "text": "HI!", "data": "HI!"}]
    assert [e["seq"] for e in view["events"]] == list(range(len(view["events"])))
    assert view["events"][0]["type"] == "WorkflowStartedEvent"
    assert view["events"][-1]["type"] == "WorkflowCompletedEvent"
    retried = next(e for e in view["events"] if e["type"] == "ExecutorFailedEvent")
    assert retried["executor_id"] == "flaky"
    assert retried["superstep"] == 1
    assert "will retry" in retried["summary"]
    assert view["error"] is None


async def test_a_failing_executor_fails_its_superstep_and_the_run(
    viewer: RunViewer, client: httpx.AsyncClient
) -> None:
    run_id = await start(client, "broken", "hi")
    await settled(viewer, run_id)

    view = (await client.get(f"/api/runs/{run_id}")).json()

    assert view["status"] == "failed"
    assert view["supersteps"][1] == {"superstep": 1, "executors": {"flaky": "failed"}}
    assert "flaky" in view["error"]


async def test_an_approval_answered_over_http_completes_the_run(
    viewer: RunViewer, client: httpx.AsyncClient
) -> None:
    run_id = await start(client, "approval", "cats")
    waiting = (await client.get(f"/api/runs/{run_id}")).json()
    if waiting["status"] != "waiting":
        waiting = (await settled(viewer, run_id)).model_dump(mode="json")
    assert waiting["status"] == "waiting"
    assert waiting["can_answer"] is True
    [request] = waiting["pending_requests"]
    assert request["source_executor_id"] == "approver"
    assert request["data"] == {"text": "a post about cats"}
    assert "a post about cats" in request["prompt"]
    assert request["response_schema"] == {"type": "boolean"}

    answered = await client.post(
        f"/api/runs/{run_id}/responses", json={"responses": {request["request_id"]: True}}
    )
    assert answered.status_code == 202, answered.text
    assert answered.json() == {"run_id": run_id}
    final = await settled(viewer, run_id)

    assert final.status == "completed"
    assert [o.text for o in final.outputs] == ["published: a post about cats"]
    assert final.pending_requests == []
    assert final.supersteps[-1].executors == {"approver": "completed"}
    listed = (await client.get("/api/runs")).json()["runs"]
    assert [(r["run_id"], r["status"], r["pending_request_count"]) for r in listed] == [
        (run_id, "completed", 0)
    ]


async def test_an_answer_of_the_wrong_type_is_a_400_naming_the_request(
    viewer: RunViewer, client: httpx.AsyncClient
) -> None:
    run_id = await start(client, "approval", "cats")
    request_id = (await settled(viewer, run_id)).pending_requests[0].request_id

    response = await client.post(
        f"/api/runs/{run_id}/responses", json={"responses": {request_id: "perhaps"}}
    )

    assert response.status_code == 400
    assert request_id in response.json()["error"]
    assert "boolean" in response.json()["error"]
    still = (await client.get(f"/api/runs/{run_id}")).json()
    assert still["status"] == "waiting"
    assert [r["request_id"] for r in still["pending_requests"]] == [request_id]


async def test_unknown_runs_and_requests_are_404(
    viewer: RunViewer, client: httpx.AsyncClient
) -> None:
    run_id = await start(client, "approval", "cats")
    await settled(viewer, run_id)

    missing_run = await client.get("/api/runs/no-such-run")
    missing_stream = await client.get("/api/runs/no-such-run/stream")
    answer_missing_run = await client.post(
        "/api/runs/no-such-run/responses", json={"responses": {"r": True}}
    )
    answer_missing_request = await client.post(
        f"/api/runs/{run_id}/responses", json={"responses": {"no-such-request": True}}
    )

    assert missing_run.status_code == 404
    assert "no-such-run" in missing_run.json()["error"]
    assert missing_stream.status_code == 404
    assert answer_missing_run.status_code == 404
    assert answer_missing_request.status_code == 404
    assert "no-such-request" in answer_missing_request.json()["error"]


async def test_bad_start_requests_are_400_or_404(client: httpx.AsyncClient) -> None:
    no_message = await client.post("/api/runs", json={"workflow": "approval"})
    not_json = await client.post(
        "/api/runs", content=b"{nope", headers={"content-type": "application/json"}
    )
    unnamed = await client.post("/api/runs", json={"message": "x"})  # three workflows held
    unknown = await client.post("/api/runs", json={"workflow": "nope", "message": "x"})
    wrong_type = await client.post("/api/runs", json={"workflow": "approval", "message": 42})

    assert no_message.status_code == 400
    assert not_json.status_code == 400
    assert "not JSON" in not_json.json()["error"]
    assert unnamed.status_code == 400
    assert "approval" in unnamed.json()["error"]
    assert unknown.status_code == 404
    assert wrong_type.status_code == 400
    assert "writer" in wrong_type.json()["error"]


async def test_a_json_message_becomes_the_model_the_start_executor_takes() -> None:
    viewer = RunViewer([review()])
    try:
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=viewer.app), base_url=BASE
        ) as client:
            created = await client.post("/api/runs", json={"message": {"text": "by hand"}})
            run_id = created.json()["run_id"]
            view = await settled(viewer, run_id)
    finally:
        await viewer.aclose()

    assert created.status_code == 201
    assert view.status == "waiting"
    assert view.pending_requests[0].data == {"text": "by hand"}


async def test_workflows_are_listed_with_their_start_executor(client: httpx.AsyncClient) -> None:
    workflows = (await client.get("/api/workflows")).json()["workflows"]

    assert [(w["name"], w["start_executor_id"]) for w in workflows] == [
        ("approval", "writer"),
        ("shouting", "upper"),
        ("broken", "upper"),
    ]
    assert workflows[0]["id"] == approval().id


async def test_pages_and_static_files_are_served(client: httpx.AsyncClient) -> None:
    index = await client.get("/")
    run_page = await client.get("/runs/any-run-id")
    script = await client.get("/static/viewer.js")

    assert index.status_code == 200
    assert "text/html" in index.headers["content-type"]
    assert run_page.status_code == 200
    assert "text/html" in run_page.headers["content-type"]
    assert script.status_code == 200


async def test_a_run_a_program_drives_is_watched() -> None:
    workflow = approval()
    viewer = RunViewer([workflow])
    try:
        run_id = await viewer.watch(workflow, workflow.run_stream("dogs"))
        view = await settled(viewer, run_id)
        assert view.status == "waiting"
        assert view.source == "live"

        await viewer.answer(run_id, {view.pending_requests[0].request_id: False})
        final = await settled(viewer, run_id)
    finally:
        await viewer.aclose()

    assert final.status == "completed"
    assert [o.text for o in final.outputs] == ["rejected: a post about dogs"]


async def test_a_custom_event_with_its_own_str_is_its_summary() -> None:
    from agentic_core import WorkflowEvent
    from agentic_orchestrator._viewer._describe import event_summary

    class Progress(WorkflowEvent):
        percent: int

        def __str__(self) -> str:
            return f"{self.percent}% done"

    class Plain(WorkflowEvent):
        percent: int

    assert event_summary(Progress(percent=40)) == "40% done"
    assert event_summary(Plain(percent=40)) == 'Plain {"percent":40}'


async def test_serve_refuses_a_non_loopback_host() -> None:
    viewer = RunViewer([approval()])

    with pytest.raises(ViewerError, match=r"token=\.\.\."):
        await viewer.serve(host="0.0.0.0", port=0)  # noqa: S104 - the address refused


def test_a_conversation_output_reads_as_speaker_lines() -> None:
    from agentic_core import ChatMessage
    from agentic_orchestrator._viewer._describe import display_text

    conversation = [
        ChatMessage.user("Write a haiku"),
        ChatMessage.assistant("Old pond, a frog", author_name="poet"),
    ]

    assert display_text(conversation) == "user: Write a haiku\npoet: Old pond, a frog"
    assert display_text({"a": 1}) == "{'a': 1}"


async def test_closing_the_viewer_ends_the_stream_of_a_waiting_run() -> None:
    viewer = RunViewer([approval()])
    run_id = await viewer.start("cats")
    await settled(viewer, run_id)
    seen: list[str] = []

    async def read() -> None:
        async for view in viewer.snapshots(run_id):
            seen.append(view.status)
            await viewer.aclose()  # while the stream waits for a change that never comes

    await asyncio.wait_for(read(), 10)

    assert seen == ["waiting"]


async def test_posts_from_other_sites_or_not_json_are_refused(client: httpx.AsyncClient) -> None:
    # What a page of another site can send without a CORS preflight: a form or text/plain body,
    # or a fetch carrying its own Origin. None may start or answer a run.
    body = b'{"workflow": "approval", "message": "x"}'
    as_text = await client.post("/api/runs", content=body, headers={"content-type": "text/plain"})
    as_form = await client.post("/api/runs", data={"message": "x"})
    elsewhere = await client.post(
        "/api/runs",
        json={"workflow": "approval", "message": "x"},
        headers={"origin": "https://evil.example"},
    )
    answer = await client.post(
        "/api/runs/any/responses",
        json={"responses": {"r": True}},
        headers={"origin": "http://127.0.0.1:9"},
    )
    same_site = await client.post(
        "/api/runs",
        json={"workflow": "approval", "message": "x"},
        headers={"origin": BASE},  # the page's own origin (base_url's host)
    )

    assert as_text.status_code == 415
    assert "application/json" in as_text.json()["error"]
    assert as_form.status_code == 415
    assert elsewhere.status_code == 403
    assert "https://evil.example" in elsewhere.json()["error"]
    assert answer.status_code == 403
    assert same_site.status_code == 201
    assert len((await client.get("/api/runs")).json()["runs"]) == 1  # only the same-site run
