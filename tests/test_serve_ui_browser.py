"""``agentic serve --ui``: the run viewer mounted at ``/ui/`` as a person uses it (headless
Chromium against the served app): the page, its script, its API calls and the run page all
under ``/ui``, behind the server's token (the browser logs in with it as a password)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentic_orchestrator._cli._serve_command import ServeOptions
from tests.fixtures.chromium import chromium_context, chromium_or_skip
from tests.fixtures.servers import free_port
from tests.serve_support import PAIR_RUN_FILE, SCRIPTED, serving

pytestmark = pytest.mark.slow

TOKEN = "serve-ui-token-0123456789"  # noqa: S105 - a fake secret
WAIT_MS = 20_000  # generous: a loaded machine may take seconds to render; never a speed check


async def test_a_run_started_on_the_mounted_viewer_is_followed_under_ui(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    chromium_or_skip()
    from playwright.async_api import expect

    expect.set_options(timeout=WAIT_MS)
    config = tmp_path / "pair.toml"
    config.write_text(PAIR_RUN_FILE, encoding="utf-8")
    monkeypatch.setenv("SERVE_UI_TOKEN", TOKEN)
    options = ServeOptions(
        config,
        protocols=["openai"],
        ui=True,
        port=free_port(),
        token_env="SERVE_UI_TOKEN",  # noqa: S106 - a variable's name
        model=SCRIPTED,
    )
    problems: list[str] = []
    async with (
        serving(options) as base,
        chromium_context(tmp_path / "profile", login=("me", TOKEN)) as browser,
    ):
        page = await browser.new_page()
        page.set_default_timeout(WAIT_MS)
        page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
        await page.goto(f"{base}/ui/")
        await expect(page.locator("#start-card")).to_be_visible()  # /ui/api/workflows answered
        await page.locator("#start-message").fill('"tea"')
        await page.locator("#start-form button[type=submit]").click()
        await page.wait_for_url(f"{base}/ui/runs/*")
        await expect(page.locator("#run-status")).to_have_attribute("data-status", "completed")
        await page.locator("a.back").click()
        await page.wait_for_url(f"{base}/ui/")
        await expect(page.locator("#runs tr[data-run-id]")).to_have_count(1)
    assert problems == []
