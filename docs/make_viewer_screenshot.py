"""Make ``docs/images/viewer.png``: the run viewer on a run that paused for a human's approval.

Offline and self-contained: a small research workflow (no model calls) runs inside a ``RunViewer``
served by uvicorn on 127.0.0.1; headless Debian Chromium (Playwright, ``/usr/bin/chromium``) opens
the run, clicks Approve in the request form, waits for the run to complete and takes a 1280x800
screenshot. Run it from the repository root:

    uv run python docs/make_viewer_screenshot.py [OUTPUT.png]
"""

from __future__ import annotations

import asyncio
import socket
import sys
import tempfile
from pathlib import Path
from typing import Never

import uvicorn
from playwright.async_api import async_playwright, expect

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

OUTPUT = Path(__file__).resolve().parent / "images" / "viewer.png"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip


class HumanReview(Executor):
    """Shows the merged findings to a person and asks whether to publish them."""

    @handler
    async def ask(self, findings: list[str], ctx: WorkflowContext[str]) -> None:
        await ctx.request_info("\n".join(findings), bool)

    @response_handler
    async def answered(self, findings: str, approved: bool, ctx: WorkflowContext[str]) -> None:
        await ctx.send_message(findings if approved else "(not approved)")


def research_workflow() -> Workflow:
    """plan -> web_search, paper_search -> fan-in -> human_review -> write_brief."""

    @executor(id="plan")
    async def plan(question: str, ctx: WorkflowContext[str]) -> None:
        await ctx.send_message(question)

    @executor(id="web_search")
    async def web_search(question: str, ctx: WorkflowContext[str]) -> None:
        await asyncio.sleep(0.3)  # a little work, so durations in the event log look real
        await ctx.send_message(f"- web: 3 vendor benchmarks on {question}")

    @executor(id="paper_search")
    async def paper_search(question: str, ctx: WorkflowContext[str]) -> None:
        await asyncio.sleep(0.4)
        await ctx.send_message(f"- papers: 2 surveys on {question}")

    @executor(id="write_brief")
    async def write_brief(findings: str, ctx: WorkflowContext[Never, str]) -> None:
        await ctx.yield_output(f"Brief: vector database choices\n{findings}")

    review = HumanReview("human_review")
    return (
        WorkflowBuilder("research-brief")
        .set_start_executor(plan)
        .add_fan_out_edge(plan, [web_search, paper_search])
        .add_fan_in_edge([web_search, paper_search], review)
        .add_edge(review, write_brief)
        .build()
    )


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def make_screenshot(output: Path) -> None:
    viewer = RunViewer(workflows=[research_workflow()])
    port = _free_port()
    server = uvicorn.Server(
        uvicorn.Config(viewer.app, host="127.0.0.1", port=port, log_level="warning", ws="none")
    )
    serving = asyncio.create_task(server.serve())
    while not server.started:
        if serving.done():
            serving.result()
            raise RuntimeError("uvicorn stopped before it started serving")
        await asyncio.sleep(0.02)
    try:
        run_id = await viewer.start("vector database choices")
        with tempfile.TemporaryDirectory() as profile:
            async with async_playwright() as playwright:
                browser = await playwright.chromium.launch_persistent_context(
                    profile, executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS,
                    viewport={"width": 1280, "height": 800},
                )  # fmt: skip
                page = await browser.new_page()
                await page.goto(f"http://127.0.0.1:{port}/runs/{run_id}")
                await page.locator('#requests button[value="true"]').click()
                await expect(page.locator("#run-status")).to_have_attribute(
                    "data-status", "completed"
                )
                await expect(page.locator("#live")).to_have_attribute("data-state", "ended")
                # Show the pause for the approval at the top of the event log's visible part.
                await page.locator("#events").evaluate(
                    """list => {
                        const asked = list.querySelector('li[data-type="RequestInfoEvent"]');
                        if (asked) list.scrollTop = asked.offsetTop - list.offsetTop - 4;
                    }"""
                )
                await page.wait_for_timeout(400)  # let the colour transitions settle
                output.parent.mkdir(parents=True, exist_ok=True)
                await page.screenshot(path=str(output))
                await browser.close()
    finally:
        server.should_exit = True
        await serving
    print(f"wrote {output}")  # noqa: T201 - a command-line script reports its result


if __name__ == "__main__":
    asyncio.run(make_screenshot(Path(sys.argv[1]) if len(sys.argv) > 1 else OUTPUT))
