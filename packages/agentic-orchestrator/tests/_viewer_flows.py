"""Workflows the run viewer's tests drive (importable on its own: ``agentic viewer --workflow
_viewer_flows:approval`` from this directory)."""

from __future__ import annotations

import asyncio
from typing import Never

from pydantic import BaseModel

from agentic_core import (
    Executor,
    RetryPolicy,
    Workflow,
    WorkflowBuilder,
    WorkflowContext,
    handler,
    response_handler,
)
from agentic_orchestrator import RunViewer
from agentic_orchestrator._viewer._views import RunView

SETTLED = frozenset({"waiting", "completed", "failed"})


class Draft(BaseModel):
    text: str


class Writer(Executor):
    @handler
    async def write(self, topic: str, ctx: WorkflowContext[Draft]) -> None:
        await ctx.send_message(Draft(text=f"a post about {topic}"))


class Approver(Executor):
    """Asks a person whether to publish the draft (a bool answer)."""

    @handler
    async def ask(self, draft: Draft, ctx: WorkflowContext[Never, str]) -> None:
        await ctx.request_info(draft, bool)

    @response_handler
    async def decided(self, draft: Draft, approved: bool, ctx: WorkflowContext[Never, str]) -> None:
        await ctx.yield_output(("published: " if approved else "rejected: ") + draft.text)


def approval() -> Workflow:
    """writer -> approver (asks for a bool) -> output."""
    writer, approver = Writer("writer"), Approver("approver")
    return WorkflowBuilder("approval").set_start_executor(writer).add_edge(writer, approver).build()


def review() -> Workflow:
    """approver alone: its input is a Draft (a pydantic model)."""
    return WorkflowBuilder("review").set_start_executor(Approver("approver")).build()


class Upper(Executor):
    @handler
    async def shout(self, text: str, ctx: WorkflowContext[str]) -> None:
        await ctx.send_message(text.upper())


class Exclaim(Executor):
    @handler
    async def exclaim(self, text: str, ctx: WorkflowContext[Never, str]) -> None:
        await ctx.yield_output(text + "!")


class Flaky(Executor):
    """Fails its first attempt of every invocation (retried), then passes the text on."""

    def __init__(self, executor_id: str, *, always: bool = False) -> None:
        super().__init__(executor_id, retry=RetryPolicy(max_attempts=2))
        self.always = always

    @handler
    async def once(self, text: str, ctx: WorkflowContext[str]) -> None:
        if self.always or ctx.attempt == 1:
            raise RuntimeError(f"flaky {self.id} attempt {ctx.attempt}")
        await ctx.send_message(text)


def shouting() -> Workflow:
    """upper -> flaky (fails once, retried) -> exclaim: three supersteps, no requests."""
    upper, flaky, exclaim = Upper("upper"), Flaky("flaky"), Exclaim("exclaim")
    return (
        WorkflowBuilder("shouting")
        .set_start_executor(upper)
        .add_edge(upper, flaky)
        .add_edge(flaky, exclaim)
        .build()
    )


def broken() -> Workflow:
    """upper -> flaky that always fails: the run fails in superstep 1."""
    upper, flaky, exclaim = Upper("upper"), Flaky("flaky", always=True), Exclaim("exclaim")
    return (
        WorkflowBuilder("broken")
        .set_start_executor(upper)
        .add_edge(upper, flaky)
        .add_edge(flaky, exclaim)
        .build()
    )


async def settled(viewer: RunViewer, run_id: str, *, timeout_s: float = 20.0) -> RunView:
    """The run's view once it waits, completes or fails (bounded, never a timing assertion)."""
    async with asyncio.timeout(timeout_s):
        while True:
            record = viewer.hub.get(run_id)
            if record is None:  # a stored run nobody follows: as its checkpoints tell
                return await viewer.get_run(run_id)
            version = record.version
            if record.status in SETTLED and not record.driving:
                return record.view()
            await record.wait_for_change(version)
