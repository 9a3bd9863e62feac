"""What the ``serve_a2a`` tests share (no tests here): targets scripted without a model, the
app served by uvicorn on a free loopback port, and ``a2a-sdk`` clients of it."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator, Mapping
from typing import Any, Never

import httpx
from a2a.client import Client, ClientConfig, ClientFactory
from a2a.helpers import new_data_part, new_text_part
from a2a.types import (
    Message,
    Part,
    Role,
    SendMessageRequest,
    StreamResponse,
    Task,
)

from agentic_bus import A2AApp
from agentic_core import (
    ChatAgent,
    ChatMessage,
    ChatOptions,
    Executor,
    Workflow,
    WorkflowBuilder,
    WorkflowContext,
    handler,
)
from agentic_core import (
    Role as ChatRole,
)
from agentic_core.testing import FunctionChatClient
from tests.fixtures.a2a_targets import Approval, approval_agent, review_workflow
from tests.fixtures.servers import free_port, wait_until_listening

__all__ = [
    "Approval",
    "approval_agent",
    "client_of",
    "echo_agent",
    "review_workflow",
    "send",
    "served",
    "task_of",
    "user_message",
]


@contextlib.asynccontextmanager
async def served(app: A2AApp) -> AsyncIterator[str]:
    """``app.run()`` on a free loopback port until the block ends; its base URL."""
    port = free_port()
    serving = asyncio.create_task(app.run(port=port))
    await wait_until_listening(port, serving, timeout_s=20)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        serving.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await serving


@contextlib.asynccontextmanager
async def client_of(
    url: str, *, streaming: bool = False, headers: Mapping[str, str] | None = None
) -> AsyncIterator[Client]:
    """An ``a2a-sdk`` client of the agent at ``url`` (its card read from the server)."""
    async with httpx.AsyncClient(headers=dict(headers or {}), timeout=10) as http:
        config = ClientConfig(httpx_client=http, streaming=streaming)
        client = await ClientFactory(config).create_from_url(url)  # type: ignore[attr-defined]
        try:
            yield client
        finally:
            await client.close()


def user_message(
    text: str | None = None,
    *,
    data: Any = None,
    task_id: str | None = None,
    context_id: str | None = None,
) -> Message:
    """A user message of ``text`` (and a data part of ``data``)."""
    parts: list[Part] = []
    if text is not None:
        parts.append(new_text_part(text))
    if data is not None:
        parts.append(new_data_part(data))
    return Message(
        role=Role.ROLE_USER,
        message_id=uuid.uuid4().hex,
        parts=parts,
        task_id=task_id or "",
        context_id=context_id or "",
    )


async def send(client: Client, message: Message) -> list[StreamResponse]:
    """Every event answering ``message``."""
    return [event async for event in client.send_message(SendMessageRequest(message=message))]


def task_of(events: list[StreamResponse]) -> Task:
    """The task of a non-streaming answer."""
    (event,) = events
    assert event.HasField("task"), event
    return event.task


# -- targets -------------------------------------------------------------------------------------


def echo_agent(**kwargs: Any) -> ChatAgent:
    """Answers ``echo: <text> (turn N)``, N counting the user messages of the thread."""

    def reply(messages: list[ChatMessage], options: ChatOptions | None) -> str:
        del options
        users = [m for m in messages if m.role is ChatRole.USER]
        return f"echo: {users[-1].text} (turn {len(users)})"

    return ChatAgent(FunctionChatClient(reply), name="echo", description="Echoes.", **kwargs)


class Slow(Executor):
    """Sleeps ``seconds`` (a float message), then yields ``"woke"``."""

    @handler
    async def sleep(self, seconds: float, ctx: WorkflowContext[Never, str]) -> None:
        await asyncio.sleep(seconds)
        await ctx.yield_output("woke")


def slow_workflow() -> Workflow:
    """One executor sleeping as long as its message says."""
    return WorkflowBuilder("slow").set_start_executor(Slow("slow")).build()
