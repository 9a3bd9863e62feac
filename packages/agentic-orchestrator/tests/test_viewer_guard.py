"""The run viewer behind its ServerGuard: foreign hosts (DNS rebinding) read and start nothing,
bodies are bounded, large values reach pages truncated, a token locks it, client errors are 4xx
JSON naming no server path; and any start type the engine takes can be started from a page."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, Never

import httpx
import pytest
from rich.console import Console

from agentic_core import Workflow, WorkflowBuilder, WorkflowContext, executor
from agentic_orchestrator import RunViewer, ViewerError
from agentic_orchestrator._cli._errors import UsageError
from agentic_orchestrator._cli._viewer_command import ViewerOptions, serve_viewer
from agentic_orchestrator._viewer._limits import MAX_VALUE_BYTES

from ._viewer_flows import approval, review, settled

BASE = "http://127.0.0.1:8765"
EVIL = {"host": "evil.example:8765", "origin": "http://evil.example:8765"}
"""What a page of evil.example sends once its name resolves to 127.0.0.1 (DNS rebinding)."""
TOKEN = "viewer-test-token-0123456789"  # noqa: S105 - a fake secret


def client_of(viewer: RunViewer, base_url: str = BASE) -> httpx.AsyncClient:
    transport = httpx.ASGITransport(app=viewer.app)
    return httpx.AsyncClient(transport=transport, base_url=base_url)


@pytest.fixture
async def viewer() -> AsyncIterator[RunViewer]:
    viewer = RunViewer([approval()])
    yield viewer
    await viewer.aclose()


def echo(start_type: Any) -> Workflow:
    """One executor whose message annotation is ``start_type``; it yields what it gets."""

    async def echo_message(message: Any, ctx: WorkflowContext[Never, Any]) -> None:
        await ctx.yield_output(message)

    echo_message.__annotations__["message"] = start_type
    return WorkflowBuilder("echo").set_start_executor(executor(echo_message, id="echo")).build()


def big_output() -> Workflow:
    """Yields an output of about 1 MB (made here: no request body carries it)."""

    @executor(id="big")
    async def big(size: int, ctx: WorkflowContext[Never, str]) -> None:
        await ctx.yield_output("x" * size)

    return WorkflowBuilder("big").set_start_executor(big).build()


# -- 1, 2: DNS rebinding ---------------------------------------------------------------------------


async def test_a_rebound_host_cannot_read_the_runs(viewer: RunViewer) -> None:
    run_id = await viewer.start("cats")
    # Bounded: a stream that were answered would stay open for as long as the run waits.
    async with client_of(viewer) as client, asyncio.timeout(10):
        listed = await client.get("/api/runs", headers={"host": EVIL["host"]})
        one = await client.get(f"/api/runs/{run_id}", headers={"host": EVIL["host"]})
        stream = await client.get(f"/api/runs/{run_id}/stream", headers={"host": EVIL["host"]})
        page = await client.get("/", headers={"host": EVIL["host"]})

    for response in (listed, one, stream, page):
        assert response.status_code == 421
        assert response.headers["content-type"] == "application/json"
        assert run_id not in response.text
        assert "evil.example" in response.json()["error"]


async def test_a_rebound_page_cannot_start_a_run(viewer: RunViewer) -> None:
    async with client_of(viewer) as client:
        response = await client.post("/api/runs", json={"message": "cats"}, headers=EVIL)

    assert response.status_code == 421
    assert viewer.hub.records() == []


async def test_a_rebound_page_cannot_answer_a_pending_request(viewer: RunViewer) -> None:
    run_id = await viewer.start("cats")
    [request] = (await settled(viewer, run_id)).pending_requests
    async with client_of(viewer) as client:
        response = await client.post(
            f"/api/runs/{run_id}/responses",
            json={"responses": {request.request_id: True}},
            headers=EVIL,
        )

    assert response.status_code == 421
    still = await settled(viewer, run_id)
    assert still.status == "waiting"
    assert [r.request_id for r in still.pending_requests] == [request.request_id]


async def test_another_local_origin_cannot_post_even_to_a_loopback_host(viewer: RunViewer) -> None:
    async with client_of(viewer) as client:
        response = await client.post(
            "/api/runs", json={"message": "x"}, headers={"origin": "http://localhost:3000"}
        )

    assert response.status_code == 403
    assert viewer.hub.records() == []


async def test_hosts_allowed_by_name_are_answered() -> None:
    # As behind a proxy on this machine: the connection is local, the Host is the public name.
    viewer = RunViewer([approval()], allowed_hosts=["runs.example.com"])
    public = {"host": "runs.example.com", "origin": "https://runs.example.com"}
    async with client_of(viewer) as client:
        listed = await client.get("/api/runs", headers={"host": public["host"]})
        started = await client.post("/api/runs", json={"message": "x"}, headers=public)
    await viewer.aclose()

    assert listed.status_code == 200
    assert started.status_code == 201


# -- 3: any start type the engine takes ------------------------------------------------------------


@pytest.mark.parametrize(
    ("start_type", "message"),
    [
        (Any, {"free": ["form", 1]}),
        (object, "anything"),
        (int | str, 7),
        (list[int], [1, 2, 3]),
        (dict[str, Any], {"a": None}),
    ],
)
async def test_a_start_executor_of_any_accepted_type_starts_from_the_page(
    start_type: Any, message: Any
) -> None:
    viewer = RunViewer([echo(start_type)])
    try:
        async with client_of(viewer) as client:
            created = await client.post("/api/runs", json={"message": message})
        assert created.status_code == 201, created.text
        view = await settled(viewer, created.json()["run_id"])
    finally:
        await viewer.aclose()

    assert view.status == "completed"
    assert [o.data for o in view.outputs] == [message]


async def test_a_message_no_start_handler_takes_is_still_a_400() -> None:
    viewer = RunViewer([echo(list[int])])
    async with client_of(viewer) as client:
        response = await client.post("/api/runs", json={"message": {"not": "a list"}})
    await viewer.aclose()

    assert response.status_code == 400
    assert "echo" in response.json()["error"]


# -- 6: bounded bodies and bounded views -----------------------------------------------------------


async def test_a_body_over_one_mebibyte_is_refused_with_413(viewer: RunViewer) -> None:
    message = "x" * (1024 * 1024)  # with the JSON around it: just over 1 MiB
    async with client_of(viewer) as client:
        response = await client.post("/api/runs", json={"message": message})

    assert response.status_code == 413
    assert response.headers["content-type"] == "application/json"
    assert "1048576 bytes" in response.json()["error"]
    assert viewer.hub.records() == []


async def test_a_streamed_body_over_the_limit_is_refused_before_it_is_all_read() -> None:
    viewer = RunViewer([approval()], max_body_bytes=1000)
    sent: list[int] = []

    async def chunks() -> AsyncIterator[bytes]:
        yield b'{"message": "'
        for _ in range(1000):  # 100 kB, if it were all read
            sent.append(100)
            yield b"x" * 100
        yield b'"}'

    async with client_of(viewer) as client:
        response = await client.post(
            "/api/runs", content=chunks(), headers={"content-type": "application/json"}
        )
    await viewer.aclose()

    assert response.status_code == 413
    assert sum(sent) < 2000
    assert viewer.hub.records() == []


async def test_the_body_limit_is_configurable() -> None:
    viewer = RunViewer([approval()], max_body_bytes=100)
    async with client_of(viewer) as client:
        small = await client.post("/api/runs", json={"message": "cats"})
        large = await client.post("/api/runs", json={"message": "c" * 100})
    await viewer.aclose()

    assert small.status_code == 201
    assert large.status_code == 413


async def test_a_large_output_reaches_pages_truncated_with_a_marker() -> None:
    viewer = RunViewer([big_output()])
    try:
        async with client_of(viewer) as client:
            run_id = (await client.post("/api/runs", json={"message": 1_000_000})).json()["run_id"]
            await settled(viewer, run_id)
            view = (await client.get(f"/api/runs/{run_id}")).json()
            stream = await client.get(f"/api/runs/{run_id}/stream")
    finally:
        await viewer.aclose()

    [output] = view["outputs"]
    assert output["data"]["$truncated"] is True
    assert output["data"]["bytes"] == 1_000_002  # the JSON string: its quotes too
    assert output["data"]["preview"].startswith('"xxx')
    assert output["data"]["preview"].endswith("…")
    assert len(output["text"]) <= 2000
    events = [line for line in stream.text.splitlines() if line.startswith("data:")]
    assert events
    assert all(len(line) < 4 * MAX_VALUE_BYTES for line in events)


async def test_a_large_request_reaches_pages_truncated_and_can_still_be_answered() -> None:
    viewer = RunViewer([review()])
    try:
        async with client_of(viewer) as client:
            text = "y" * (2 * MAX_VALUE_BYTES)
            created = await client.post("/api/runs", json={"message": {"text": text}})
            run_id = created.json()["run_id"]
            [request] = (await settled(viewer, run_id)).pending_requests
            answered = await client.post(
                f"/api/runs/{run_id}/responses", json={"responses": {request.request_id: True}}
            )
            final = await settled(viewer, run_id)
    finally:
        await viewer.aclose()

    assert request.data["$truncated"] is True
    assert answered.status_code == 202
    assert final.status == "completed"


# -- 12: client errors are 4xx JSON without server paths -----------------------------------------


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/api/runs/%2e%2e"),
        ("GET", "/api/runs/%2e%2e/stream"),
        ("POST", "/api/runs/%2e%2e/responses"),
        ("GET", "/api/runs/.hidden"),
        ("GET", "/api/runs/a%20b"),
    ],
)
async def test_an_invalid_run_id_is_a_400_naming_no_server_path(
    tmp_path: Path, method: str, path: str
) -> None:
    viewer = RunViewer([approval()], checkpoint_store=tmp_path)
    async with client_of(viewer) as client:
        response = await client.request(method, path, json={"responses": {"r": True}})
    await viewer.aclose()

    assert response.status_code == 400
    assert response.headers["content-type"] == "application/json"
    assert "not a run id" in response.json()["error"]
    assert str(tmp_path) not in response.text


async def test_unknown_routes_and_methods_are_json_4xx(viewer: RunViewer) -> None:
    async with client_of(viewer) as client:
        missing = await client.get("/api/nothing-here")
        wrong_method = await client.delete("/api/runs")

    assert missing.status_code == 404
    assert missing.json() == {"error": "Not Found"}
    assert wrong_method.status_code == 405
    assert wrong_method.headers["content-type"] == "application/json"


async def test_an_unexpected_error_is_a_json_500_that_tells_nothing(
    viewer: RunViewer, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def fail(*_: Any, **__: Any) -> str:
        raise RuntimeError("boom at /srv/secret/place")

    monkeypatch.setattr(viewer, "start", fail)
    transport = httpx.ASGITransport(app=viewer.app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url=BASE) as client:
        response = await client.post("/api/runs", json={"message": "x"})

    assert response.status_code == 500
    assert response.headers["content-type"] == "application/json"
    assert "/srv/secret" not in response.text


# -- tokens and binding ----------------------------------------------------------------------------


async def test_a_viewer_with_a_token_answers_only_requests_carrying_it() -> None:
    viewer = RunViewer([approval()], token=TOKEN)
    basic = base64.b64encode(f"me:{TOKEN}".encode()).decode()
    async with client_of(viewer) as client:
        anonymous = await client.get("/api/runs")
        page = await client.get("/")
        bearer = await client.get("/api/runs", headers={"authorization": f"Bearer {TOKEN}"})
        browser = await client.get("/", headers={"authorization": f"Basic {basic}"})
    await viewer.aclose()

    assert anonymous.status_code == 401
    assert page.status_code == 401
    assert page.headers["www-authenticate"] == 'Basic realm="agentic"'  # a browser asks for it
    assert TOKEN not in anonymous.text
    assert bearer.status_code == 200
    assert browser.status_code == 200


@pytest.mark.parametrize(
    "options",
    [{"token": ""}, {"allowed_hosts": ["http://runs.example.com"]}, {"max_body_bytes": 0}],
)
def test_bad_guard_options_are_viewer_errors(options: dict[str, Any]) -> None:
    with pytest.raises(ViewerError):
        RunViewer([approval()], **options)


async def test_serving_beyond_loopback_without_a_token_is_refused() -> None:
    viewer = RunViewer([approval()])

    with pytest.raises(ViewerError, match=r"token=\.\.\."):
        await viewer.serve(host="0.0.0.0", port=0)  # noqa: S104 - the address refused


async def test_the_command_refuses_a_remote_host_without_a_token_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("AGENTIC_VIEWER_TOKEN", raising=False)

    with pytest.raises(UsageError, match=r"\$AGENTIC_VIEWER_TOKEN") as raised:
        await serve_viewer(ViewerOptions(host="0.0.0.0"), Console())  # noqa: S104

    assert "--host 0.0.0.0" in str(raised.value)


async def test_the_command_refuses_a_token_variable_that_is_not_set(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("MY_VIEWER_TOKEN", raising=False)
    options = ViewerOptions(token_env="MY_VIEWER_TOKEN")  # noqa: S106 - a variable's name

    with pytest.raises(UsageError, match=r"--token-env MY_VIEWER_TOKEN"):
        await serve_viewer(options, Console())
