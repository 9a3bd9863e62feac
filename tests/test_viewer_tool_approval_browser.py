"""The run viewer's form for a tool call waiting for approval, as a person uses it (headless
Chromium, Playwright, a real uvicorn): the call is shown whole; a reason typed and Enter
rejects (never approves); edited arguments are what the tool runs with."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from agentic_orchestrator import RunViewer
from tests.fixtures.approval_flows import release
from tests.fixtures.chromium import chromium_context, chromium_or_skip
from tests.fixtures.servers import free_port

pytestmark = pytest.mark.slow

_WAIT_MS = 20_000  # generous: a loaded CI machine may take seconds to render; never a speed check


@asynccontextmanager
async def serving(app: Any) -> AsyncIterator[str]:
    """``app`` served by uvicorn on a free loopback port; yields its base URL."""
    import uvicorn

    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", ws="none")
    )
    task = asyncio.create_task(server.serve())
    while not server.started:
        if task.done():
            task.result()
            pytest.fail("uvicorn stopped before it started serving")
        await asyncio.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await task


async def test_reject_with_a_reason_and_approve_edited_arguments_in_the_form(
    tmp_path: Path,
) -> None:
    chromium_or_skip()
    from playwright.async_api import expect

    expect.set_options(timeout=_WAIT_MS)
    viewer = RunViewer([release()])
    problems: list[str] = []
    try:
        async with serving(viewer.app) as base, chromium_context(tmp_path / "profile") as browser:
            page = await browser.new_page()
            page.set_default_timeout(_WAIT_MS)
            page.on("pageerror", lambda error: problems.append(f"page error: {error}"))

            rejected = await viewer.start("ship api 2.0", workflow="release")
            await page.goto(f"{base}/runs/{rejected}")
            form = page.locator('#requests form.request[data-kind="tool_approval"]')
            await expect(form).to_have_count(1)
            await expect(form.locator("pre.prompt")).to_contain_text(
                "releaser wants to call deploy"
            )
            await expect(form.locator("pre.prompt")).to_contain_text('"version": "2.0"')
            await form.locator('input[name="reason"]').fill("release freeze")
            await form.locator('input[name="reason"]').press("Enter")
            await expect(page.locator("#run-status")).to_have_attribute("data-status", "completed")
            await expect(page.locator("#outputs pre.output")).to_have_text(
                "tool said: Error: the user rejected this call of tool 'deploy': release freeze"
            )

            edited = await viewer.start("ship api 2.0", workflow="release")
            await page.goto(f"{base}/runs/{edited}")
            form = page.locator('#requests form.request[data-kind="tool_approval"]')
            await expect(form).to_have_count(1)
            await form.locator("details summary").click()
            await form.locator('textarea[name="arguments"]').fill(
                '{"service": "api", "version": "1.9"}'
            )
            await form.locator('button[value="edit"]').click()
            await expect(page.locator("#run-status")).to_have_attribute("data-status", "completed")
            await expect(page.locator("#outputs pre.output")).to_have_text(
                "tool said: deployed api 1.9"
            )
    finally:
        await viewer.aclose()
    assert problems == []
