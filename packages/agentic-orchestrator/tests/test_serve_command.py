# pyright: strict
"""``agentic serve``'s parts in-process: the path dispatch and its guarded rest, the mounted
apps' lifespans, the request spans, and the options refused before anything is served."""

from __future__ import annotations

import asyncio
import contextlib
import io
import socket
from collections.abc import AsyncGenerator, Iterator, MutableMapping
from pathlib import Path
from typing import Any

import httpx
import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from rich.console import Console
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from agentic_orchestrator._cli._errors import UsageError
from agentic_orchestrator._cli._serve._lifespan import LifespanError, running_lifespan
from agentic_orchestrator._cli._serve._mounts import Mount, ServedApps
from agentic_orchestrator._cli._serve._protocols import open_state_store
from agentic_orchestrator._cli._serve._tracing import RequestTracing
from agentic_orchestrator._cli._serve_command import ServeOptions, serve_config
from tests.fixtures.otel import sdk_spans
from tests.fixtures.servers import free_port
from tests.serve_support import PAIR_RUN_FILE, SCRIPTED, serving

TOKEN = "serve-test-token-0123456789"  # noqa: S105 - a fake secret
TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT_ID = "00f067aa0ba902b7"

Scope = MutableMapping[str, Any]


class Recorder:
    """An ASGI app answering 200 with the path and root path it was given."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str]] = []

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return  # speaks no lifespan
        self.seen.append((scope["path"], scope.get("root_path", "")))
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})


def client(app: Any, **headers: str) -> httpx.AsyncClient:
    return httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1", headers=headers
    )


# -- dispatch ------------------------------------------------------------------------------------


async def test_paths_reach_their_app_and_the_rest_is_guarded() -> None:
    openai, a2a = Recorder(), Recorder()
    served = ServedApps(
        [
            Mount("openai", "/v1", openai),
            Mount("a2a", "/a2a", a2a, strip=True, root_paths=("/.well-known/agent-card.json",)),
        ],
        token=TOKEN,
        allowed_hosts=(),
        max_body_bytes=1024,
    )
    async with client(served, authorization=f"Bearer {TOKEN}") as http:
        assert (await http.get("/v1/models")).status_code == 200
        assert (await http.post("/a2a", json={})).status_code == 200
        assert (await http.get("/a2a/x")).status_code == 200
        assert (await http.get("/.well-known/agent-card.json")).status_code == 200
        assert (await http.get("/a2a/.well-known/agent-card.json")).status_code == 200
        index = await http.get("/")
        assert index.json() == {"served": {"openai": "/v1", "a2a": "/a2a"}}
        missing = await http.get("/v2/models")
        assert missing.status_code == 404
        assert "/v1 (openai), /a2a (a2a)" in missing.json()["error"]
        foreign = await http.get("/", headers={"host": "evil.example"})
        assert foreign.status_code == 421
    assert openai.seen == [("/v1/models", "")]
    # Prefixed apps route relative to their mount; the bare prefix is the app's root.
    assert a2a.seen == [
        ("/a2a/", "/a2a"),
        ("/a2a/x", "/a2a"),
        ("/.well-known/agent-card.json", ""),
        ("/.well-known/agent-card.json", ""),  # the card under the endpoint is the root's
    ]
    async with client(served) as anonymous:
        assert (await anonymous.get("/")).status_code == 401  # the rest needs the token too
        assert (await anonymous.get("/nothing")).status_code == 401


# -- lifespans -----------------------------------------------------------------------------------


def lifespan_app(events: list[str], *, fail: bool = False) -> Starlette:
    @contextlib.asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncGenerator[None]:
        if fail:
            raise RuntimeError("no database")
        events.append("started")
        yield
        events.append("stopped")

    async def hello(_: Any) -> PlainTextResponse:
        return PlainTextResponse("hello")

    return Starlette(routes=[Route("/mcp", hello)], lifespan=lifespan)


async def test_the_mounted_apps_lifespans_run_around_serving() -> None:
    events: list[str] = []
    served = ServedApps(
        [Mount("mcp", "/mcp", lifespan_app(events)), Mount("openai", "/v1", Recorder())],
        token=None,
        allowed_hosts=(),
        max_body_bytes=1024,
    )
    async with served.lifespan():
        assert events == ["started"]
        async with client(served) as http:
            assert (await http.get("/mcp")).text == "hello"
    assert events == ["started", "stopped"]


async def test_a_server_running_the_lifespan_starts_the_mounted_apps() -> None:
    events: list[str] = []
    served = ServedApps(
        [Mount("mcp", "/mcp", lifespan_app(events))], token=None, allowed_hosts=(), max_body_bytes=1
    )
    inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    outbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    task = asyncio.create_task(served({"type": "lifespan"}, inbox.get, outbox.put))
    await inbox.put({"type": "lifespan.startup"})
    assert (await outbox.get())["type"] == "lifespan.startup.complete"
    assert events == ["started"]
    await inbox.put({"type": "lifespan.shutdown"})
    assert (await outbox.get())["type"] == "lifespan.shutdown.complete"
    await task
    assert events == ["started", "stopped"]


async def test_a_failed_startup_is_one_line_naming_the_app() -> None:
    with pytest.raises(LifespanError, match=r"^the mcp app failed to start: .*no database$"):
        async with running_lifespan(lifespan_app([], fail=True), "mcp"):
            pytest.fail("started")


async def test_an_app_speaking_no_lifespan_is_served_without_one() -> None:
    async def http_only(scope: Scope, receive: Any, send: Any) -> None:
        assert scope["type"] == "http"  # raises on a lifespan scope, as some apps do

    async with running_lifespan(http_only, "plain"), running_lifespan(Recorder(), "recorder"):
        pass


# -- spans ---------------------------------------------------------------------------------------


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    """An SDK tracer provider for this test; the OTel globals reset after it."""
    with sdk_spans() as exporter:
        yield exporter


async def test_each_request_is_a_span_continuing_the_callers_trace(
    spans: InMemorySpanExporter,
) -> None:
    app = RequestTracing(Recorder(), {"/v1": "openai"})
    traceparent = f"00-{TRACE_ID}-{PARENT_ID}-01"
    async with client(app) as http:
        await http.post("/v1/chat/completions", json={}, headers={"traceparent": traceparent})
        await http.get("/elsewhere")
    continued, fresh = spans.get_finished_spans()
    assert continued.name == "POST /v1"
    assert continued.kind is trace.SpanKind.SERVER
    assert continued.context is not None
    assert format(continued.context.trace_id, "032x") == TRACE_ID
    assert continued.parent is not None
    assert format(continued.parent.span_id, "016x") == PARENT_ID
    assert continued.attributes is not None
    assert continued.attributes["http.response.status_code"] == 200
    assert continued.attributes["agentic.serve.protocol"] == "openai"
    assert continued.attributes["url.path"] == "/v1/chat/completions"
    assert fresh.name == "GET /*"
    assert fresh.parent is None


async def test_without_a_tracer_provider_requests_pass_untraced() -> None:
    app = RequestTracing(Recorder(), {"/v1": "openai"})
    async with client(app) as http:
        answer = await http.get(
            "/v1/models", headers={"traceparent": f"00-{TRACE_ID}-{PARENT_ID}-01"}
        )
    assert answer.status_code == 200


# -- options refused before serving --------------------------------------------------------------


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "pair.toml"
    path.write_text(PAIR_RUN_FILE, encoding="utf-8")
    return path


def quiet() -> Console:
    return Console(file=io.StringIO())


async def test_another_machines_reach_without_a_token_is_refused(
    config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AGENTIC_SERVE_TOKEN", raising=False)
    options = ServeOptions(config, protocols=["openai"], host="0.0.0.0")  # noqa: S104
    with pytest.raises(UsageError, match=r"^--host 0\.0\.0\.0: serving on '0\.0\.0\.0' lets other"):
        await serve_config(options, quiet())


async def test_a_token_variable_not_set_is_refused(
    config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MY_TOKEN", raising=False)
    options = ServeOptions(config, protocols=["openai"], token_env="MY_TOKEN")  # noqa: S106
    with pytest.raises(UsageError, match=r"^--token-env MY_TOKEN: \$MY_TOKEN is not set$"):
        await serve_config(options, quiet())


async def test_state_without_a2a_is_refused(config: Path) -> None:
    options = ServeOptions(config, protocols=["openai"], state="redis://127.0.0.1:6379/0")
    with pytest.raises(UsageError, match="--state keeps A2A tasks"):
        await serve_config(options, quiet())


def test_a_state_url_of_no_installed_store_names_the_installed_ones() -> None:
    with pytest.raises(UsageError) as caught:
        open_state_store("ftp://user:hunter2@example.com/state")
    assert "no 'ftp' state store installed" in str(caught.value)
    assert "hunter2" not in str(caught.value)
    with pytest.raises(UsageError, match="expected a URL"):
        open_state_store("127.0.0.1:6379")


async def test_a_busy_port_is_refused_in_one_line(config: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        options = ServeOptions(config, protocols=["openai"], port=port, model=SCRIPTED)
        with pytest.raises(UsageError, match=rf"^--host 127\.0\.0\.1 --port {port}: .*in use"):
            await serve_config(options, quiet())


# -- served for real (uvicorn on a free loopback port) -------------------------------------------


async def test_openai_and_the_viewer_served_on_one_port_behind_one_token(
    config: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("SERVE_TEST_TOKEN", TOKEN)
    options = ServeOptions(
        config,
        protocols=["openai"],
        ui=True,
        port=free_port(),
        token_env="SERVE_TEST_TOKEN",  # noqa: S106 - a variable's name
        allowed_hosts=["agents.example.com"],
        model=SCRIPTED,
    )
    async with (
        serving(options) as base,
        httpx.AsyncClient(base_url=base, headers={"authorization": f"Bearer {TOKEN}"}) as http,
    ):
        models = (await http.get("/v1/models")).json()
        assert [m["id"] for m in models["data"]] == ["pair", "writer", "editor"]
        reply = await http.post(
            "/v1/chat/completions",
            json={"model": "writer", "messages": [{"role": "user", "content": "tea"}]},
        )
        assert reply.json()["choices"][0]["message"]["content"] == "Writer: tea"
        page = await http.get("/ui/")
        assert page.status_code == 200
        assert '<body data-base="/ui" data-page="index">' in page.text
        assert 'src="/ui/static/viewer.js"' in page.text
        assert (await http.get("/ui/static/viewer.js")).status_code == 200
        workflows = (await http.get("/ui/api/workflows")).json()["workflows"]
        assert [w["name"] for w in workflows] == ["pair"]
        for path in ("/v1/models", "/ui/", "/"):  # --allow-host reaches every app
            named = await http.get(path, headers={"host": "agents.example.com"})
            assert named.status_code == 200, path
            assert (await http.get(path, headers={"host": "evil.example"})).status_code == 421
        async with httpx.AsyncClient(base_url=base) as anonymous:
            assert (await anonymous.get("/v1/models")).status_code == 401
            assert (await anonymous.get("/ui/")).status_code == 401
    printed = capsys.readouterr().out
    assert f"OpenAI  {base}/v1" in printed
    assert f"viewer  {base}/ui/" in printed
    assert "token from $SERVE_TEST_TOKEN" in printed
    assert TOKEN not in printed


async def test_a_served_run_continues_the_callers_trace(
    config: Path, spans: InMemorySpanExporter
) -> None:
    options = ServeOptions(config, protocols=["openai"], port=free_port(), model=SCRIPTED)
    traceparent = f"00-{TRACE_ID}-{PARENT_ID}-01"
    async with serving(options) as base, httpx.AsyncClient(base_url=base) as http:
        spans.clear()  # the readiness probe's
        reply = await http.post(
            "/v1/chat/completions",
            json={"model": "writer", "messages": [{"role": "user", "content": "tea"}]},
            headers={"traceparent": traceparent},
        )
        assert reply.status_code == 200
    finished = spans.get_finished_spans()
    [request] = [s for s in finished if s.name == "POST /v1"]
    assert request.parent is not None
    assert format(request.parent.span_id, "016x") == PARENT_ID
    assert request.attributes is not None
    assert request.attributes["http.response.status_code"] == 200
    inner = [s for s in finished if s is not request]
    assert inner, "the agent's run made no span"
    for span in inner:  # the agent's run (core's spans) is part of the caller's trace
        assert span.context is not None
        assert format(span.context.trace_id, "032x") == TRACE_ID, span.name
