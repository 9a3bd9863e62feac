"""Shared by the OpenAI endpoint tests: the endpoint served by uvicorn on a free loopback port,
and agents whose model waits until the test lets it answer."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

import httpx

from agentic_core import Agent, ChatAgent, ChatMessage, ChatOptions, Workflow
from agentic_core.testing import FunctionChatClient
from agentic_orchestrator import serve_openai
from tests.fixtures.servers import free_port


@contextlib.asynccontextmanager
async def served(
    targets: Mapping[str, Agent | Workflow] | Sequence[Agent | Workflow], **options: Any
) -> AsyncIterator[str]:
    """The endpoint's base URL (``http://127.0.0.1:<port>/v1``) while it serves ``targets``."""
    port = free_port()
    server = asyncio.create_task(serve_openai(targets, port=port, **options))
    base = f"http://127.0.0.1:{port}"
    headers = {"authorization": f"Bearer {options['token']}"} if options.get("token") else {}
    async with httpx.AsyncClient(base_url=base, headers=headers) as probe, asyncio.timeout(20):
        while True:  # until uvicorn listens (a bounded wait, not a timing assertion)
            if server.done():
                server.result()  # serving failed: show why
            with contextlib.suppress(httpx.TransportError):
                if (await probe.get("/v1/models")).status_code == 200:
                    break
            await asyncio.sleep(0.05)
    try:
        yield f"{base}/v1"
    finally:
        server.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await server


class HeldModel:
    """A model that answers only once ``release`` is set; ``started`` is set when a request
    arrives, ``cancelled`` when its call is cancelled while it waits."""

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.release = asyncio.Event()
        self.cancelled = asyncio.Event()

    async def reply(self, messages: list[ChatMessage], options: ChatOptions | None) -> str:
        del messages, options
        self.started.set()
        try:
            await self.release.wait()
        except asyncio.CancelledError:
            self.cancelled.set()
            raise
        return "released"

    def agent(self, name: str = "held") -> ChatAgent:
        return ChatAgent(FunctionChatClient(self.reply), name=name)
