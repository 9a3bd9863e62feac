"""``serve_a2a`` refusing what it must: malformed JSON-RPC, unknown tasks, oversized bodies,
foreign hosts, missing tokens (the card stays readable), more runs than slots, and a client
that never reads its stream; each a clear protocol error, and the server keeps serving."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import uuid
from collections.abc import AsyncGenerator
from typing import Any, cast

import httpx
import pytest
import structlog
from a2a.client import A2AClientError
from a2a.types import GetTaskRequest, SendMessageRequest, StreamResponse, TaskState
from a2a.utils.constants import PROTOCOL_VERSION_CURRENT, VERSION_HEADER
from a2a.utils.errors import TaskNotFoundError
from test_a2a_serve_support import (
    client_of,
    echo_agent,
    send,
    served,
    slow_workflow,
    task_of,
    user_message,
)

from agentic_bus import serve_a2a
from agentic_core import ServerGuardError, serve_asgi

TOKEN = "a2a-test-token-0123456789"  # noqa: S105 - a test token
CARD = "/.well-known/agent-card.json"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def raw_http() -> httpx.AsyncClient:
    """A plain HTTP client speaking A2A 1.0 (the version header the SDK's clients send)."""
    return httpx.AsyncClient(headers={VERSION_HEADER: PROTOCOL_VERSION_CURRENT})


def rpc(method: str, params: dict[str, Any], request_id: int = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


def send_params(text: str) -> dict[str, Any]:
    message = {"messageId": uuid.uuid4().hex, "role": "ROLE_USER", "parts": [{"text": text}]}
    return {"message": message}


async def test_malformed_json_rpc_gets_protocol_errors_and_the_server_keeps_serving() -> None:
    async with served(serve_a2a(echo_agent())) as url, raw_http() as http:
        headers = {"content-type": "application/json"}
        not_json = await http.post(f"{url}/", content=b"{nope", headers=headers)
        no_method = await http.post(f"{url}/", json={"jsonrpc": "2.0", "id": 1})
        unknown = await http.post(f"{url}/", json=rpc("NoSuchMethod", {}))
        bad_params = await http.post(f"{url}/", json=rpc("SendMessage", {"message": 5}))
        fine = await http.post(f"{url}/", json=rpc("SendMessage", send_params("still here")))

    assert not_json.json()["error"]["code"] == -32700  # parse error
    assert no_method.json()["error"]["code"] == -32600  # invalid request
    assert unknown.json()["error"]["code"] == -32601  # method not found
    assert bad_params.json()["error"]["code"] in (-32600, -32602)
    assert fine.json()["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_unknown_task_ids_are_task_not_found() -> None:
    async with served(serve_a2a(echo_agent())) as url, client_of(url) as client:
        with pytest.raises(TaskNotFoundError):
            await client.get_task(GetTaskRequest(id="no-such-task"))
        with pytest.raises(TaskNotFoundError):
            await send(client, user_message("hi", task_id="no-such-task"))
        assert task_of(await send(client, user_message("ok"))).status.state == (
            TaskState.TASK_STATE_COMPLETED
        )


async def test_an_oversized_body_is_a_413() -> None:
    app = serve_a2a(echo_agent(), max_body_bytes=2000)
    async with served(app) as url, raw_http() as http:
        big = await http.post(f"{url}/", json=rpc("SendMessage", send_params("x" * 5000)))
        small = await http.post(f"{url}/", json=rpc("SendMessage", send_params("x")))

    assert big.status_code == 413
    assert small.status_code == 200


async def test_a_foreign_host_is_a_421() -> None:
    async with served(serve_a2a(echo_agent())) as url, raw_http() as http:
        foreign = await http.get(f"{url}{CARD}", headers={"host": "evil.example"})
        allowed = await http.get(f"{url}{CARD}")

    assert foreign.status_code == 421
    assert allowed.status_code == 200


async def test_without_the_token_only_the_card_answers() -> None:
    app = serve_a2a(echo_agent(), token=TOKEN)
    async with served(app) as url, raw_http() as http:
        card = await http.get(f"{url}{CARD}")
        refused = await http.post(f"{url}/", json=rpc("SendMessage", send_params("hi")))
        wrong = await http.post(
            f"{url}/",
            json=rpc("SendMessage", send_params("hi")),
            headers={"authorization": "Bearer nope"},
        )
        async with client_of(url, headers={"authorization": f"Bearer {TOKEN}"}) as client:
            task = task_of(await send(client, user_message("with token")))

    assert card.status_code == 200
    assert TOKEN not in card.text
    assert refused.status_code == 401
    assert wrong.status_code == 401
    assert TOKEN not in refused.text + wrong.text
    assert task.status.state == TaskState.TASK_STATE_COMPLETED


def test_binding_beyond_loopback_needs_a_token() -> None:
    with pytest.raises(ServerGuardError, match=r"serve_a2a\(token=\.\.\.\)"):
        serve_a2a(echo_agent()).check_bind("0.0.0.0")  # noqa: S104 - the refused address
    serve_a2a(echo_agent(), token=TOKEN).check_bind("0.0.0.0")  # noqa: S104


async def test_a_message_past_the_run_slots_is_a_429_while_reads_still_pass() -> None:
    app = serve_a2a(slow_workflow(), max_concurrent_runs=1)
    async with served(app) as url, raw_http() as http:
        params = {**send_params("1"), "configuration": {"returnImmediately": True}}
        first = (await http.post(f"{url}/", json=rpc("SendMessage", params))).json()
        task_id = first["result"]["task"]["id"]
        busy = await http.post(f"{url}/", json=rpc("SendMessage", send_params("0"), 7))
        read = await http.post(f"{url}/", json=rpc("GetTask", {"id": task_id}))

    assert busy.status_code == 429
    assert busy.json()["id"] == 7
    assert "at most 1 tasks at once" in busy.json()["error"]["message"]
    assert read.status_code == 200
    assert "result" in read.json()


async def test_a_client_that_never_reads_its_stream_does_not_stop_the_server() -> None:
    app = serve_a2a(echo_agent())
    async with served(app) as url:
        port = int(url.rsplit(":", 1)[1])
        body = json.dumps(rpc("SendStreamingMessage", send_params("word " * 2000))).encode()
        stalled = socket.create_connection(("127.0.0.1", port))
        stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
        stalled.sendall(
            b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Accept: text/event-stream\r\nContent-Length: "
            + str(len(body)).encode()
            + b"\r\n\r\n"
            + body
        )
        try:
            async with asyncio.timeout(10), client_of(url) as client:
                task = task_of(await send(client, user_message("meanwhile")))
        finally:
            stalled.close()

    assert task.status.state == TaskState.TASK_STATE_COMPLETED


async def test_a_client_gone_mid_stream_is_logged_once_and_its_task_completes() -> None:
    app = serve_a2a(slow_workflow())
    with structlog.testing.capture_logs() as logs:
        async with served(app) as url:
            async with client_of(url, streaming=True) as client:
                stream = client.send_message(SendMessageRequest(message=user_message("0.3")))
                first = await anext(stream)
                await cast("AsyncGenerator[StreamResponse]", stream).aclose()
            task_id = first.task.id
            await asyncio.sleep(0.6)
            async with client_of(url) as client:
                final = await client.get_task(GetTaskRequest(id=task_id))

    gone = [entry for entry in logs if entry["event"] == "a2a.client_disconnected"]
    assert len(gone) == 1
    assert final.status.state == TaskState.TASK_STATE_COMPLETED


async def test_a_client_error_names_no_secret() -> None:
    app = serve_a2a(echo_agent(), token=TOKEN)
    async with served(app) as url:
        with pytest.raises(A2AClientError) as caught:
            async with client_of(url, headers={"authorization": "Bearer wrong"}) as client:
                await send(client, user_message("hi"))
    assert TOKEN not in str(caught.value)


async def test_under_an_asgi_server_with_lifespan_on_shutdown_stops_running_tasks() -> None:
    app = serve_a2a(slow_workflow())
    port = free_port()
    serving = asyncio.create_task(serve_asgi(app, host="127.0.0.1", port=port, lifespan="on"))
    url = f"http://127.0.0.1:{port}"
    async with asyncio.timeout(10):
        while True:
            with contextlib.suppress(httpx.TransportError):
                async with raw_http() as http:
                    if (await http.get(f"{url}{CARD}")).is_success:
                        break
            await asyncio.sleep(0.05)
    async with raw_http() as http:
        params = {**send_params("30"), "configuration": {"returnImmediately": True}}
        started = (await http.post(f"{url}/", json=rpc("SendMessage", params))).json()
    assert started["result"]["task"]["id"]

    serving.cancel()
    async with asyncio.timeout(10):  # bounded: the running task does not hold the shutdown
        with contextlib.suppress(asyncio.CancelledError):
            await serving
