"""The run viewer as a person uses it: headless Chromium (Playwright) against a real uvicorn.

The workflow: ``start`` fans out to two workers that wait on a gate (so the page sees them
running), their results fan in to ``approve``, which asks a human (a ``bool`` request); once
approved, ``publish`` yields the output. The test watches the run live on its page, answers the
request in the form, sees the run complete, then scrubs the timeline back to superstep 0.
Screenshots go to ``$AGENTIC_TEST_ARTIFACTS`` (else the test's tmp dir); their paths are printed.

Pages of other origins are attackers: one whose name is rebound to 127.0.0.1 (Chromium's
``--host-resolver-rules`` plays the DNS), one on another loopback port. Neither can read the runs
nor start one.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator, MutableMapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Never

import pytest
from pydantic import BaseModel

from agentic_core import (
    Executor,
    Workflow,
    WorkflowBuilder,
    WorkflowContext,
    executor,
    handler,
    response_handler,
)
from agentic_orchestrator import RunViewer
from tests.fixtures.chromium import artifacts_dir, chromium_context, chromium_or_skip
from tests.fixtures.servers import free_port

if TYPE_CHECKING:
    from playwright.async_api import Page

pytestmark = pytest.mark.slow

_WAIT_MS = 20_000  # generous: a loaded CI machine may take seconds to render; never a speed check


class Approval(Executor):
    """Asks a human to approve the joined drafts; forwards them with the verdict."""

    @handler
    async def ask(self, drafts: list[str], ctx: WorkflowContext[str]) -> None:
        await ctx.request_info(" | ".join(drafts), bool)

    @response_handler
    async def answered(self, drafts: str, approved: bool, ctx: WorkflowContext[str]) -> None:
        await ctx.send_message(f"{drafts} ({'approved' if approved else 'rejected'})")


def review_workflow(gate: asyncio.Event) -> Workflow:
    """start -> worker_a, worker_b (both wait for ``gate``) -> fan-in -> approve -> publish."""

    @executor(id="start")
    async def start(topic: str, ctx: WorkflowContext[str]) -> None:
        await ctx.send_message(topic)

    @executor(id="worker_a")
    async def worker_a(topic: str, ctx: WorkflowContext[str]) -> None:
        await gate.wait()
        await ctx.send_message(f"summary of {topic}")

    @executor(id="worker_b")
    async def worker_b(topic: str, ctx: WorkflowContext[str]) -> None:
        await gate.wait()
        await ctx.send_message(f"risks of {topic}")

    @executor(id="publish")
    async def publish(text: str, ctx: WorkflowContext[Never, str]) -> None:
        await ctx.yield_output(f"published: {text}")

    approve = Approval("approve")
    return (
        WorkflowBuilder("release-review")
        .set_start_executor(start)
        .add_fan_out_edge(start, [worker_a, worker_b])
        .add_fan_in_edge([worker_a, worker_b], approve)
        .add_edge(approve, publish)
        .build()
    )


class SignOff(BaseModel):
    """A structured answer: the page offers a JSON editor for it."""

    approved: bool
    comment: str


class SignOffDesk(Executor):
    """Asks for a structured sign-off on a plan; yields the comment."""

    @handler
    async def ask(self, plan: str, ctx: WorkflowContext[Never, str]) -> None:
        await ctx.request_info(plan, SignOff)

    @response_handler
    async def answered(self, plan: str, answer: SignOff, ctx: WorkflowContext[Never, str]) -> None:
        await ctx.yield_output(f"{plan}: {answer.comment}")


def sign_off_workflow() -> Workflow:
    """One executor asking for a ``SignOff`` (an object schema, answered as JSON)."""
    return WorkflowBuilder("sign-off").set_start_executor(SignOffDesk("desk")).build()


@dataclass
class ServedViewer:
    viewer: RunViewer
    base_url: str
    gate: asyncio.Event


@asynccontextmanager
async def _serving(app: Any) -> AsyncIterator[int]:
    """``app`` served by uvicorn on a free loopback port (yielded) until the block ends."""
    import uvicorn

    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", ws="none")
    )
    serving = asyncio.create_task(server.serve())
    while not server.started:  # uvicorn sets it once the socket listens
        if serving.done():
            serving.result()  # startup failed: raise its error
            pytest.fail("uvicorn stopped before it started serving")
        await asyncio.sleep(0.02)
    try:
        yield port
    finally:
        server.should_exit = True
        await serving


@pytest.fixture
async def served_viewer() -> AsyncIterator[ServedViewer]:
    """A ``RunViewer`` holding both workflows, served by uvicorn on a free loopback port."""
    chromium_or_skip()  # before starting anything: skip (or fail in CI) without a browser
    gate = asyncio.Event()
    viewer = RunViewer(workflows=[review_workflow(gate), sign_off_workflow()])
    try:
        async with _serving(viewer.app) as port:
            try:
                yield ServedViewer(viewer, f"http://127.0.0.1:{port}", gate)
            finally:
                gate.set()  # never leave a run blocked on the gate
    finally:
        await viewer.aclose()


def _watch_console(page: Page, problems: list[str]) -> None:
    page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    page.on(
        "console",
        lambda message: (
            problems.append(f"console {message.type}: {message.text}")
            if message.type == "error"
            else None
        ),
    )


async def _screenshot(page: Page, directory: Path, name: str) -> Path:
    path = directory / name
    await page.screenshot(path=str(path), full_page=True)
    print(f"viewer screenshot: {path}")
    return path


async def test_a_live_run_turns_green_is_approved_in_the_form_and_completes(
    served_viewer: ServedViewer, tmp_path: Path
) -> None:
    from playwright.async_api import expect

    expect.set_options(timeout=_WAIT_MS)
    shots = artifacts_dir(tmp_path / "artifacts")
    run_id = await served_viewer.viewer.start("release notes", workflow="release-review")
    problems: list[str] = []
    async with chromium_context(tmp_path / "profile") as browser:
        page = await browser.new_page()
        page.set_default_timeout(_WAIT_MS)
        _watch_console(page, problems)
        try:
            await page.goto(f"{served_viewer.base_url}/runs/{run_id}")
            await expect(page.locator("#run-title")).to_contain_text(run_id)

            # The workers wait on the gate: the page shows them running, in the list and the graph.
            for worker in ("worker_a", "worker_b"):
                item = page.locator(f'#executors li[data-executor="{worker}"]')
                await expect(item).to_have_attribute("data-status", "running")
                node = page.locator(f'#graph g.node[data-executor="{worker}"]')
                await expect(node).to_have_class(_has_class("st-running"))
            await expect(page.locator("#run-status")).to_have_attribute("data-status", "running")
            await expect(page.locator("#live")).to_have_attribute("data-state", "live")

            served_viewer.gate.set()
            for worker in ("worker_a", "worker_b"):
                item = page.locator(f'#executors li[data-executor="{worker}"]')
                await expect(item).to_have_attribute("data-status", "completed")
                node = page.locator(f'#graph g.node[data-executor="{worker}"]')
                await expect(node).to_have_class(_has_class("st-completed"))

            # The approval waits for a human: a form with Approve / Reject.
            await expect(page.locator("#run-status")).to_have_attribute("data-status", "waiting")
            form = page.locator("#requests form.request")
            await expect(form).to_have_count(1)
            await expect(form).to_contain_text("summary of release notes | risks of release notes")
            reject = form.locator('button[name="answer"][value="false"]')
            await expect(reject).to_have_text("Reject")
            await form.locator('button[name="answer"][value="true"]').click()

            await expect(page.locator("#run-status")).to_have_attribute("data-status", "completed")
            output = page.locator("#outputs pre.output")
            await expect(output).to_have_count(1)
            await expect(output).to_have_text(
                "published: summary of release notes | risks of release notes (approved)"
            )
            await expect(page.locator("#requests form.request")).to_have_count(0)
            publish = page.locator('#graph g.node[data-executor="publish"]')
            await expect(publish).to_have_class(_has_class("st-completed"))
            await expect(page.locator("#live")).to_have_attribute("data-state", "ended")
            await _screenshot(page, shots, "viewer-run-completed.png")

            # Scrub back to superstep 0: only the start executor has run there.
            await page.locator("#timeline").fill("0")
            await expect(page.locator("#follow")).not_to_be_checked()
            await expect(page.locator("#timeline-label")).to_contain_text("Superstep 0")
            start = page.locator('#executors li[data-executor="start"]')
            await expect(start).to_have_attribute("data-status", "completed")
            for other in ("worker_a", "worker_b", "approve", "publish"):
                item = page.locator(f'#executors li[data-executor="{other}"]')
                await expect(item).to_have_attribute("data-status", "pending")
            start_node = page.locator('#graph g.node[data-executor="start"]')
            await expect(start_node).to_have_class(_has_class("st-completed"))
            worker_node = page.locator('#graph g.node[data-executor="worker_a"]')
            await expect(worker_node).to_have_class(_has_class("st-pending"))
            highlighted = page.locator("#events li.current")
            assert await highlighted.count() > 0
            steps = await highlighted.evaluate_all("items => items.map(i => i.dataset.superstep)")
            assert set(steps) == {"0"}
        finally:
            await _screenshot(page, shots, "viewer-run-final.png")
    assert problems == []


async def test_the_runs_list_links_to_each_run_and_starts_new_ones(
    served_viewer: ServedViewer, tmp_path: Path
) -> None:
    from playwright.async_api import expect

    expect.set_options(timeout=_WAIT_MS)
    served_viewer.gate.set()  # let the run go straight on to its approval
    run_id = await served_viewer.viewer.start("changelog", workflow="release-review")
    problems: list[str] = []
    async with chromium_context(tmp_path / "profile") as browser:
        page = await browser.new_page()
        page.set_default_timeout(_WAIT_MS)
        _watch_console(page, problems)
        await page.goto(f"{served_viewer.base_url}/")
        row = page.locator(f'#runs tr[data-run-id="{run_id}"]')
        await expect(row).to_have_count(1)
        await expect(row).to_have_attribute("data-status", "waiting")  # the list refreshes
        await expect(row).to_contain_text("release-review")
        await row.locator(f'a[href="/runs/{run_id}"]').click()
        await page.wait_for_url(f"**/runs/{run_id}")
        await expect(page.locator("#run-title")).to_contain_text(run_id)
        await expect(page.locator("#requests form.request")).to_have_count(1)

        # The list page also starts runs: the form posts to /api/runs and opens the new run.
        await page.goto(f"{served_viewer.base_url}/")
        await page.locator("#start-workflow").select_option("release-review")
        await page.locator("#start-message").fill('"from the page"')
        await page.locator('#start-form button[type="submit"]').click()
        await page.wait_for_url(re.compile(r".*/runs/(?!" + re.escape(run_id) + r")[^/]+$"))
        await expect(page.locator("#run-title")).to_contain_text("release-review")
        await expect(page.locator("#requests form.request")).to_contain_text("from the page")
    assert problems == []


async def test_a_wrong_answer_shows_the_error_in_the_form_and_a_right_one_resumes(
    served_viewer: ServedViewer, tmp_path: Path
) -> None:
    from playwright.async_api import expect

    expect.set_options(timeout=_WAIT_MS)
    run_id = await served_viewer.viewer.start("migrate the database", workflow="sign-off")
    problems: list[str] = []
    async with chromium_context(tmp_path / "profile") as browser:
        page = await browser.new_page()
        page.set_default_timeout(_WAIT_MS)
        _watch_console(page, problems)
        await page.goto(f"{served_viewer.base_url}/runs/{run_id}")
        form = page.locator('#requests form.request[data-kind="json"]')
        await expect(form).to_contain_text("migrate the database")
        answer = form.locator('textarea[name="answer"]')
        send = form.locator('button[type="submit"]')
        error = form.locator("p.error")

        await answer.fill("{not json")
        await send.click()
        await expect(error).to_contain_text("Not valid JSON")

        await answer.fill('{"approved": "perhaps", "comment": "ok"}')
        await send.click()  # the server rejects it (400): its message names the request
        request_id = await form.get_attribute("data-request-id")
        assert request_id is not None
        await expect(error).to_contain_text(request_id)
        await expect(error).to_contain_text("approved")
        await expect(page.locator("#run-status")).to_have_attribute("data-status", "waiting")

        await answer.fill('{"approved": true, "comment": "go ahead"}')
        await send.click()
        await expect(page.locator("#run-status")).to_have_attribute("data-status", "completed")
        await expect(page.locator("#outputs pre.output")).to_have_text(
            "migrate the database: go ahead"
        )
    # The rejected POST is the only console error: the browser logs every 4xx response.
    assert [p for p in problems if "400" not in p] == []


def _has_class(name: str) -> re.Pattern[str]:
    return re.compile(rf"(^|\s){re.escape(name)}(\s|$)")


# --- executor ids are text on the page, never markup ------------------------------------------

_BAIT = "/static/never-fetched.png"
HOSTILE_IDS = (
    f"<img src={_BAIT} onerror=alert(1)>",
    '<a href="javascript:alert(2)">click</a>',
    'a"b',
    "a\nb",
    "a-b",
    "a_b",
)


def hostile_ids_workflow() -> Workflow:
    """The first hostile id fans out to the others, each of which yields what it got."""

    @executor(id=HOSTILE_IDS[0])
    async def first(text: str, ctx: WorkflowContext[str]) -> None:
        await ctx.send_message(text)

    def last(executor_id: str) -> Executor:
        @executor(id=executor_id)
        async def echo(text: str, ctx: WorkflowContext[Never, str]) -> None:
            await ctx.yield_output(f"{executor_id}: {text}")

        return echo

    rest = [last(i) for i in HOSTILE_IDS[1:]]
    return (
        WorkflowBuilder("hostile-ids")
        .set_start_executor(first)
        .add_fan_out_edge(first, rest)
        .build()
    )


async def test_executor_ids_are_drawn_as_text_in_their_own_nodes(tmp_path: Path) -> None:
    from playwright.async_api import expect

    chromium_or_skip()
    import uvicorn

    expect.set_options(timeout=_WAIT_MS)
    viewer = RunViewer(workflows=[hostile_ids_workflow()])
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(viewer.app, host="127.0.0.1", port=port, log_level="warning", ws="none")
    )
    serving = asyncio.create_task(server.serve())
    requests: list[str] = []
    dialogs: list[str] = []
    problems: list[str] = []
    try:
        while not server.started:
            if serving.done():
                serving.result()
                pytest.fail("uvicorn stopped before it started serving")
            await asyncio.sleep(0.02)
        run_id = await viewer.start("hi", workflow="hostile-ids")
        async with chromium_context(tmp_path / "profile") as browser:
            page = await browser.new_page()
            page.set_default_timeout(_WAIT_MS)
            _watch_console(page, problems)
            page.on("request", lambda request: requests.append(request.url))
            page.on("dialog", lambda dialog: dialogs.append(dialog.message))
            await page.goto(f"http://127.0.0.1:{port}/runs/{run_id}")
            await expect(page.locator("#run-status")).to_have_attribute("data-status", "completed")
            nodes = page.locator("#graph g.node[data-executor]")
            await expect(nodes).to_have_count(len(HOSTILE_IDS))  # a-b and a_b: two nodes
            drawn = await nodes.evaluate_all(
                "gs => gs.map(g => [g.dataset.executor, g.classList.contains('st-completed'),"
                " g.textContent])"
            )
            await page.wait_for_timeout(500)  # time for a stray <img> to fetch, were there one
            graph = page.locator("#graph")
            assert await graph.locator("img").count() == 0
            assert await graph.locator("a").count() == 0
            assert await page.locator('a[href^="javascript:"]').count() == 0
    finally:
        server.should_exit = True
        await serving
        await viewer.aclose()
    assert sorted(executor_id for executor_id, _, _ in drawn) == sorted(HOSTILE_IDS)
    assert all(completed for _, completed, _ in drawn)  # coloured by the node ids core gave
    labels = {executor_id: text for executor_id, _, text in drawn}
    assert "<img src=" in labels[HOSTILE_IDS[0]]  # the id itself, shown as text
    assert 'a"b' in labels['a"b']
    assert not [url for url in requests if _BAIT in url]
    assert dialogs == []
    assert problems == []


# -- pages of other origins ----------------------------------------------------------------------

_ATTACK_SCRIPT = """
window.results = (async () => {
  const attempt = async (url, init) => {
    try {
      const response = await fetch(url, init);
      return {status: response.status, text: await response.text()};
    } catch (error) {
      return {error: String(error)};
    }
  };
  const post = (body) => ({
    method: "POST", headers: {"content-type": "application/json"}, body: JSON.stringify(body),
  });
  return {
    list: await attempt(VIEWER + "/api/runs"),
    start: await attempt(VIEWER + "/api/runs", post({workflow: "sign-off", message: "stolen"})),
    form: await attempt(VIEWER + "/api/runs", {
      method: "POST", mode: "no-cors", body: JSON.stringify({message: "stolen"}),
    }),
  };
})();
"""


def _attack_page(viewer_url: str) -> bytes:
    """An attacker's page: reads the runs and tries to start one at ``viewer_url``."""
    script = f"const VIEWER = {json.dumps(viewer_url)};{_ATTACK_SCRIPT}"
    return f"<!doctype html><title>attack</title><script>{script}</script>".encode()


@dataclass
class Recorded:
    """An ASGI app serving ``pages`` itself (the attacker's server) and everything else with
    ``app``, noting the status of each answer."""

    app: Any
    pages: dict[str, bytes] = field(default_factory=dict[str, bytes])
    answers: list[tuple[str, str, int]] = field(default_factory=list[tuple[str, str, int]])

    async def __call__(self, scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        page = self.pages.get(scope["path"])
        if page is not None:
            headers = [(b"content-type", b"text/html")]
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            await send({"type": "http.response.body", "body": page})
            return

        async def noting(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start":
                self.answers.append((scope["method"], scope["path"], message["status"]))
            await send(message)

        await self.app(scope, receive, noting)


async def _attack(tmp_path: Path, page_url: str, args: tuple[str, ...] = ()) -> dict[str, Any]:
    async with chromium_context(tmp_path / "profile", args=args) as browser:
        page = await browser.new_page()
        page.set_default_timeout(_WAIT_MS)
        await page.goto(page_url)
        return await page.evaluate("() => window.results")


async def test_a_page_rebound_to_127_0_0_1_can_neither_read_runs_nor_start_one(
    tmp_path: Path,
) -> None:
    # DNS rebinding: evil.example served this page, then its name resolved to 127.0.0.1, so
    # for the browser the viewer *is* evil.example: same origin, every answer readable.
    chromium_or_skip()
    viewer = RunViewer(workflows=[sign_off_workflow()])
    run_id = await viewer.start("the launch codes", workflow="sign-off")
    app = Recorded(viewer.app, pages={"/attack.html": _attack_page("")})
    try:
        async with _serving(app) as port:
            results = await _attack(
                tmp_path,
                f"http://evil.example:{port}/attack.html",
                ("--host-resolver-rules=MAP evil.example 127.0.0.1",),
            )
    finally:
        await viewer.aclose()

    assert results["list"]["status"] == 421
    assert run_id not in results["list"]["text"]
    assert results["start"]["status"] == 421
    assert [r.run_id for r in viewer.hub.records()] == [run_id]
    # Chromium sends a request answered 421 a second time, on a new connection: same answer.
    assert {status for _, path, status in app.answers if path == "/api/runs"} == {421}


async def test_a_page_of_another_loopback_port_can_neither_read_runs_nor_start_one(
    tmp_path: Path,
) -> None:
    chromium_or_skip()
    viewer = RunViewer(workflows=[sign_off_workflow()])
    run_id = await viewer.start("the launch codes", workflow="sign-off")
    app = Recorded(viewer.app)
    try:
        async with _serving(app) as viewer_port:
            viewer_url = f"http://127.0.0.1:{viewer_port}"
            attacker = Recorded(None, pages={"/attack.html": _attack_page(viewer_url)})
            async with _serving(attacker) as attacker_port:
                results = await _attack(tmp_path, f"http://localhost:{attacker_port}/attack.html")
    finally:
        await viewer.aclose()

    # The browser hides every answer from the page; the viewer refused each request anyway.
    assert "error" in results["list"]
    assert "error" in results["start"]  # its CORS preflight was refused
    assert [r.run_id for r in viewer.hub.records()] == [run_id]
    assert ("GET", "/api/runs", 403) in app.answers
    assert ("OPTIONS", "/api/runs", 403) in app.answers
    assert ("POST", "/api/runs", 403) in app.answers  # the no-cors one: refused by its Origin
    assert not any(status < 400 for _, path, status in app.answers if path == "/api/runs")


async def test_a_viewer_with_a_token_is_used_in_a_browser_logged_in_with_it(
    tmp_path: Path,
) -> None:
    from playwright.async_api import expect

    chromium_or_skip()
    expect.set_options(timeout=_WAIT_MS)
    token = "browser-test-token-0123456789"  # noqa: S105 - a fake secret
    viewer = RunViewer(workflows=[sign_off_workflow()], token=token)
    run_id = await viewer.start("rotate the keys", workflow="sign-off")
    try:
        async with _serving(viewer.app) as port:
            base = f"http://127.0.0.1:{port}"
            async with chromium_context(tmp_path / "logged-in", login=("me", token)) as browser:
                page = await browser.new_page()
                page.set_default_timeout(_WAIT_MS)
                await page.goto(f"{base}/runs/{run_id}")  # the page, its script, its stream
                form = page.locator('#requests form.request[data-kind="json"]')
                await expect(form).to_contain_text("rotate the keys")
                await form.locator('textarea[name="answer"]').fill(
                    '{"approved": true, "comment": "done"}'
                )
                await form.locator('button[type="submit"]').click()  # a POST, logged in too
                await expect(page.locator("#outputs pre.output")).to_have_text(
                    "rotate the keys: done"
                )
    finally:
        await viewer.aclose()


@executor(id="echo_any")
async def echo_any(message: Any, ctx: WorkflowContext[Never, Any]) -> None:
    await ctx.yield_output(message)


async def test_the_page_starts_an_any_typed_run_and_its_own_bad_requests_get_json_4xx(
    tmp_path: Path,
) -> None:
    """Items of the viewer's hardening, as the page meets them: a start executor typed ``Any``
    starts from the form (it was a text/plain 500); a body over the limit is a 413 before the
    server reads it all; an invalid run id is a 400 whose JSON names no server directory."""
    from playwright.async_api import expect

    chromium_or_skip()
    expect.set_options(timeout=_WAIT_MS)
    runs = tmp_path / "runs"
    viewer = RunViewer(
        workflows=[WorkflowBuilder("echo").set_start_executor(echo_any).build()],
        checkpoint_store=runs,
    )
    problems: list[str] = []
    try:
        async with (
            _serving(viewer.app) as port,
            chromium_context(tmp_path / "profile") as browser,
        ):
            page = await browser.new_page()
            page.set_default_timeout(_WAIT_MS)
            await page.goto(f"http://127.0.0.1:{port}/")
            _watch_console(page, problems)
            await page.locator("#start-message").fill('{"any": [1, 2]}')
            await page.locator('#start-form button[type="submit"]').click()
            await page.wait_for_url(re.compile(r".*/runs/[^/]+$"))
            await expect(page.locator("#run-title")).to_contain_text("echo")
            await expect(page.locator("#outputs")).to_contain_text("any")
            answers = await page.evaluate(
                """async () => {
                    const big = JSON.stringify({workflow: "echo", message: "x".repeat(2 << 20)});
                    const posted = await fetch("/api/runs", {
                        method: "POST", headers: {"content-type": "application/json"}, body: big,
                    });
                    // (a browser resolves %2e%2e itself: it never sends it)
                    const bad = await fetch("/api/runs/no%20such%20run%21");
                    return {
                        posted: posted.status, postedType: posted.headers.get("content-type"),
                        bad: bad.status, badType: bad.headers.get("content-type"),
                        badText: await bad.text(),
                    };
                }"""
            )
    finally:
        await viewer.aclose()

    assert answers["posted"] == 413
    assert answers["postedType"].startswith("application/json")
    assert answers["bad"] == 400
    assert answers["badType"].startswith("application/json")
    assert str(tmp_path) not in answers["badText"]
    # The refused fetches are logged by the browser as failed resources, nothing else.
    assert all("status of 413" in p or "status of 400" in p for p in problems), problems
