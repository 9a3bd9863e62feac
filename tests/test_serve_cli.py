# pyright: strict
"""``agentic serve`` as a real process: one port, three protocols, each called by its own SDK.

The run file's agents answer with the scripted model (``--model python:tests.cli_models:...``):
``<first word of the instructions>: <the message>``. One server (module-scoped, started once)
serves OpenAI at ``/v1``, MCP at ``/mcp`` and A2A at ``/a2a`` behind a token; the tests call it
with the ``openai`` SDK, the ``mcp`` SDK's ``ClientSession`` and the ``a2a-sdk`` client, and
check the guard (401 without the token, the agent card public, 421 for a foreign ``Host``).
"""

from __future__ import annotations

import importlib.util
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncGenerator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import ClientSession
from mcp import types as mcp_types
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client  # pyright: ignore[reportPrivateUsage]
from openai import AsyncOpenAI, AuthenticationError

from agentic_core.registry import available
from tests.fixtures.servers import free_port, stop_process
from tests.serve_support import PAIR_RUN_FILE, SCRIPTED

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
AGENTIC = Path(sys.executable).with_name("agentic")
TOKEN = "serve-cli-token-0123456789"  # noqa: S105 - a fake secret
TOKEN_VARIABLE = "SERVE_CLI_TOKEN"  # noqa: S105 - a variable's name
A2A_READY = (
    "a2a" in available("agentic.servers")
    and importlib.util.find_spec("a2a") is not None
    and importlib.util.find_spec("agentic_bus._a2a._serve") is not None
)
needs_a2a = pytest.mark.skipif(not A2A_READY, reason="agentic-bus's serve_a2a is not there yet")


@dataclass
class Served:
    base: str
    process: subprocess.Popen[bytes]
    protocols: list[str]


def wait_for_port(
    process: subprocess.Popen[bytes], port: int, *, log: Path | None = None, timeout_s: float = 60
) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            out, err = process.communicate()
            said = log.read_text(encoding="utf-8") if log else f"{out!r} {err!r}"
            pytest.fail(f"agentic serve exited {process.returncode}: {said}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    pytest.fail("agentic serve did not listen in time")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """``agentic serve pair.toml`` with every protocol installed, behind a token."""
    config = tmp_path_factory.mktemp("serve") / "pair.toml"
    config.write_text(PAIR_RUN_FILE, encoding="utf-8")
    port = free_port()
    protocols = ["--openai", "--mcp"] + (["--a2a"] if A2A_READY else [])
    command = [
        str(AGENTIC), "serve", str(config), *protocols, "--port", str(port),
        "--model", SCRIPTED, "--token-env", TOKEN_VARIABLE,
    ]  # fmt: skip
    env = {**os.environ, TOKEN_VARIABLE: TOKEN}
    log = config.with_suffix(".log")
    with log.open("wb") as output:
        process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=output, stderr=output)
    try:
        wait_for_port(process, port, log=log)
        yield Served(f"http://127.0.0.1:{port}", process, [p[2:] for p in protocols])
    finally:
        stop_process(process, timeout_s=10)


async def test_the_openai_sdk_calls_the_pattern_and_each_agent(served: Served) -> None:
    async with AsyncOpenAI(base_url=f"{served.base}/v1", api_key=TOKEN) as client:
        models = [m.id async for m in client.models.list()]
        assert models == ["pair", "writer", "editor"]
        reply = await client.chat.completions.create(
            model="pair", messages=[{"role": "user", "content": "tea"}]
        )
        assert reply.choices[0].message.content == "Editor: tea"
        reply = await client.chat.completions.create(
            model="writer", messages=[{"role": "user", "content": "tea"}]
        )
        assert reply.choices[0].message.content == "Writer: tea"
    async with AsyncOpenAI(base_url=f"{served.base}/v1", api_key="wrong") as client:
        with pytest.raises(AuthenticationError):
            await client.models.list()


@asynccontextmanager
async def mcp_session(url: str, token: str) -> AsyncGenerator[ClientSession]:
    async with (
        create_mcp_http_client(headers={"authorization": f"Bearer {token}"}) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write, read_timeout_seconds=30) as session,
    ):
        await session.initialize()
        yield session


def text_of(result: mcp_types.CallToolResult) -> str:
    return "".join(c.text for c in result.content if isinstance(c, mcp_types.TextContent))


async def test_the_mcp_sdk_lists_and_calls_the_tools(served: Served) -> None:
    async with mcp_session(f"{served.base}/mcp", TOKEN) as session:
        tools = await session.list_tools()
        assert sorted(t.name for t in tools.tools) == ["editor", "pair", "writer"]
        answer = await session.call_tool("writer", {"message": "tea"})
        assert not answer.is_error
        assert text_of(answer) == "Writer: tea"
        flow = await session.call_tool("pair", {"message": "tea"})
        assert "Editor: tea" in text_of(flow)


@needs_a2a
async def test_the_a2a_sdk_reads_the_card_and_sends_a_message(served: Served) -> None:
    from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
    from a2a.types import Message, Role, SendMessageRequest
    from a2a.types import Part as A2APart

    async with httpx.AsyncClient(timeout=30) as anonymous:
        card = await A2ACardResolver(anonymous, served.base).get_agent_card()  # no token needed
    assert next(i.url for i in card.supported_interfaces).startswith(f"{served.base}/a2a")
    headers = {"authorization": f"Bearer {TOKEN}"}
    async with httpx.AsyncClient(headers=headers, timeout=30) as http:
        client = ClientFactory(ClientConfig(httpx_client=http, streaming=False)).create(card)
        message = Message(role=Role.ROLE_USER, message_id="m-1", parts=[A2APart(text="tea")])
        texts: list[str] = []
        async for event in client.send_message(SendMessageRequest(message=message)):
            texts.extend(_texts(event))
    assert "Editor: tea" in "\n".join(texts)


def _texts(event: object) -> list[str]:
    """Every text part of an A2A stream response (a task's artifacts and status, a message)."""
    from a2a.types import StreamResponse

    assert isinstance(event, StreamResponse)
    found: list[str] = []
    kind = event.WhichOneof("payload")
    if kind == "task":
        for artifact in event.task.artifacts:
            found.extend(p.text for p in artifact.parts if p.HasField("text"))
        found.extend(p.text for p in event.task.status.message.parts if p.HasField("text"))
    elif kind == "message":
        found.extend(p.text for p in event.message.parts if p.HasField("text"))
    elif kind == "artifact_update":
        found.extend(p.text for p in event.artifact_update.artifact.parts if p.HasField("text"))
    elif kind == "status_update":
        status = event.status_update.status
        found.extend(p.text for p in status.message.parts if p.HasField("text"))
    return found


async def test_the_token_is_required_except_for_the_agent_card(served: Served) -> None:
    async with httpx.AsyncClient(base_url=served.base) as anonymous:
        for path in ("/v1/models", "/mcp", "/", "/a2a"):
            answer = (
                await anonymous.post(path, json={}) if path != "/" else await anonymous.get(path)
            )
            assert answer.status_code == 401, path
        if "a2a" in served.protocols:
            card = await anonymous.get("/.well-known/agent-card.json")
            assert card.status_code == 200
            assert card.json()["name"]


async def test_a_foreign_host_is_421(served: Served) -> None:
    headers = {"host": "evil.example", "authorization": f"Bearer {TOKEN}"}
    async with httpx.AsyncClient(base_url=served.base, headers=headers) as http:
        for path in ("/v1/models", "/mcp", "/"):
            assert (await http.get(path)).status_code == 421, path


def test_binding_beyond_loopback_without_a_token_is_refused(tmp_path: Path) -> None:
    config = tmp_path / "pair.toml"
    config.write_text(PAIR_RUN_FILE, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "AGENTIC_SERVE_TOKEN"}
    result = subprocess.run(
        [str(AGENTIC), "serve", str(config), "--host", "0.0.0.0", "--model", SCRIPTED],  # noqa: S104
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert result.returncode == 2, result.stderr
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("agentic: --host 0.0.0.0: serving on '0.0.0.0' lets other machines")
    assert "--token-env VAR" in line
    assert result.stdout == ""


def test_urls_printed_token_hidden_and_ctrl_c_exits_0(tmp_path: Path) -> None:
    config = tmp_path / "pair.toml"
    config.write_text(PAIR_RUN_FILE, encoding="utf-8")
    port = free_port()
    process = subprocess.Popen(
        [str(AGENTIC), "serve", str(config), "--port", str(port),  # every protocol installed
         "--model", SCRIPTED, "--token-env", TOKEN_VARIABLE],
        cwd=ROOT, env={**os.environ, TOKEN_VARIABLE: TOKEN},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        wait_for_port(process, port)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=30)
    finally:
        stop_process(process, timeout_s=10)
    assert process.returncode == 0, err.decode()
    printed = out.decode()
    base = f"http://127.0.0.1:{port}"
    assert f"agentic serve: pair, writer, editor on {base}" in printed
    assert f"OpenAI  {base}/v1" in printed
    assert f"MCP     {base}/mcp" in printed
    if A2A_READY:
        assert f"A2A     {base}/a2a  (agent card: {base}/.well-known/agent-card.json)" in printed
    assert f"${TOKEN_VARIABLE}" in printed
    assert TOKEN not in printed + err.decode()
    assert "Traceback" not in err.decode()


def start_serving(config: Path, port: int, *extra: str) -> subprocess.Popen[bytes]:
    """``agentic serve CONFIG --port PORT EXTRA...`` (output to ``CONFIG.log``), listening."""
    command = [
        str(AGENTIC), "serve", str(config), "--port", str(port), "--model", SCRIPTED, *extra,
    ]  # fmt: skip
    log = config.with_suffix(".log")
    with log.open("wb") as output:
        process = subprocess.Popen(command, cwd=ROOT, stdout=output, stderr=output)
    try:
        wait_for_port(process, port, log=log)
    except BaseException:
        stop_process(process, timeout_s=10)
        raise
    return process


@needs_a2a
@pytest.mark.parametrize("store", ["redis", "nats"])
async def test_a2a_tasks_kept_in_a_state_store_outlive_the_server(
    tmp_path: Path, store: str, request: pytest.FixtureRequest
) -> None:
    from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
    from a2a.types import GetTaskRequest, Message, Role, SendMessageRequest
    from a2a.types import Part as A2APart

    config = tmp_path / "pair.toml"
    config.write_text(PAIR_RUN_FILE, encoding="utf-8")
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    if store == "redis":
        server: str = request.getfixturevalue("redis_server")
        state = server.rsplit("/", 1)[0] + "/5"  # a database of its own
    else:
        state = request.getfixturevalue("nats_server")

    async def a2a_client(http: httpx.AsyncClient) -> Any:
        card = await A2ACardResolver(http, base).get_agent_card()
        return ClientFactory(ClientConfig(httpx_client=http, streaming=False)).create(card)

    first = start_serving(config, port, "--a2a", "--state", state)
    try:
        async with httpx.AsyncClient(timeout=30) as http:
            client = await a2a_client(http)
            message = Message(role=Role.ROLE_USER, message_id="m-1", parts=[A2APart(text="tea")])
            task_ids = [
                event.task.id
                async for event in client.send_message(SendMessageRequest(message=message))
                if event.WhichOneof("payload") == "task"
            ]
    finally:
        stop_process(first, timeout_s=10)
    [task_id] = task_ids
    second = start_serving(config, port, "--a2a", "--state", state)
    try:
        async with httpx.AsyncClient(timeout=30) as http:
            client = await a2a_client(http)
            task = await client.get_task(GetTaskRequest(id=task_id))
    finally:
        stop_process(second, timeout_s=10)
    texts = [p.text for a in task.artifacts for p in a.parts if p.HasField("text")]
    assert "Editor: tea" in "\n".join(texts)
