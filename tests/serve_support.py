"""Shared by the ``agentic serve`` tests: a two-agent run file on the scripted model, and
``serve_config`` running in this process on a free loopback port."""

from __future__ import annotations

import asyncio
import contextlib
import io
from collections.abc import AsyncGenerator

import httpx
from rich.console import Console

from agentic_orchestrator._cli._serve_command import ServeOptions, serve_config

__all__ = ["PAIR_RUN_FILE", "SCRIPTED", "serving"]

SCRIPTED = "python:tests.cli_models:scripted"
"""``--model`` for every agent: ``<first word of its instructions>: <the message>``."""

PAIR_RUN_FILE = """\
name = "pair"

[[agents]]
name = "writer"
description = "Drafts."
instructions = "Writer. Draft."

[[agents]]
name = "editor"
instructions = "Editor. Edit."

[pattern]
type = "sequential"
"""
"""A writer then an editor: ``pair`` answers ``Editor: <message>``."""


@contextlib.asynccontextmanager
async def serving(options: ServeOptions) -> AsyncGenerator[str]:
    """``serve_config(options)`` running for the block; yields its base URL once it answers."""
    task = asyncio.create_task(serve_config(options, Console(file=io.StringIO())))
    base = f"http://127.0.0.1:{options.port}"
    try:
        async with httpx.AsyncClient(base_url=base) as probe, asyncio.timeout(30):
            while True:  # until uvicorn listens (a bounded wait, not a timing assertion)
                if task.done():
                    task.result()  # why it stopped
                with contextlib.suppress(httpx.TransportError):
                    await probe.get("/")
                    break
                await asyncio.sleep(0.05)
        yield base
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
