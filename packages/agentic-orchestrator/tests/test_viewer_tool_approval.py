"""A tool call waiting for approval in the run viewer: the request shows the call and the
ToolApprovalResponse schema (the page draws Approve / Reject with a reason / edit the arguments
from it), and each of the three answers resumes the run."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from agentic_orchestrator import RunViewer
from tests.fixtures.approval_flows import release

from ._viewer_flows import settled

BASE = "http://127.0.0.1:8765"


@pytest.fixture
async def viewer() -> AsyncIterator[RunViewer]:
    viewer = RunViewer([release()])
    yield viewer
    await viewer.aclose()


@pytest.fixture
async def client(viewer: RunViewer) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=viewer.app)
    async with httpx.AsyncClient(transport=transport, base_url=BASE) as client:
        yield client


async def waiting_request(viewer: RunViewer) -> tuple[str, dict[str, Any]]:
    run_id = await viewer.start("ship api 2.0", workflow="release")
    view = (await settled(viewer, run_id)).model_dump(mode="json")
    assert view["status"] == "waiting"
    [request] = view["pending_requests"]
    return run_id, request


async def test_the_request_shows_the_call_and_the_answer_schema_the_form_is_drawn_from(
    viewer: RunViewer,
) -> None:
    _, request = await waiting_request(viewer)
    assert request["data"] == {
        "call_id": "c1",
        "tool_name": "deploy",
        "arguments": {"service": "api", "version": "2.0"},
        "agent_name": "releaser",
    }
    schema = request["response_schema"]
    # viewer.js draws the approval form for this title: approve / reject(reason) / edit.
    assert schema["title"] == "ToolApprovalResponse"
    assert set(schema["properties"]) == {"approved", "reason", "arguments"}
    assert schema["required"] == ["approved"]


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        ({"approved": True}, "tool said: deployed api 2.0"),
        (
            {"approved": False, "reason": "freeze"},
            "tool said: Error: the user rejected this call of tool 'deploy': freeze",
        ),
        (
            {"approved": True, "arguments": {"service": "api", "version": "1.9"}},
            "tool said: deployed api 1.9",
        ),
    ],
    ids=["approve", "reject-with-reason", "edit-arguments"],
)
async def test_each_answer_the_form_sends_resumes_the_run(
    viewer: RunViewer, client: httpx.AsyncClient, answer: dict[str, Any], said: str
) -> None:
    run_id, request = await waiting_request(viewer)
    sent = await client.post(
        f"/api/runs/{run_id}/responses", json={"responses": {request["request_id"]: answer}}
    )
    assert sent.status_code == 202, sent.text
    final = await settled(viewer, run_id)
    assert final.status == "completed"
    assert [o.text for o in final.outputs] == [said]


async def test_edited_arguments_on_a_rejection_are_a_400(
    viewer: RunViewer, client: httpx.AsyncClient
) -> None:
    run_id, request = await waiting_request(viewer)
    answer = {"approved": False, "arguments": {"version": "1.9"}}
    sent = await client.post(
        f"/api/runs/{run_id}/responses", json={"responses": {request["request_id"]: answer}}
    )
    assert sent.status_code == 400
    assert "edited arguments need approved=True" in sent.json()["error"]


async def test_the_page_script_draws_the_approval_form(client: httpx.AsyncClient) -> None:
    script = (await client.get("/static/viewer.js")).text
    assert 'schema.title === "ToolApprovalResponse"' in script
    for control in ('value: "approve"', 'value: "reject"', 'value: "edit"', 'name: "reason"'):
        assert control in script
