"""A reference A2A server written only with ``a2a-sdk``'s own server classes, for testing
``A2AAgent`` against the protocol as the SDK implements it (nothing of ours on that side).

``ScriptedExecutor`` (an ``a2a`` ``AgentExecutor``) answers by the first word of the user's text:

- ``ask``: ``input-required`` ("What is your name?"); the answer on the same task completes it
  with ``Hello, <answer>!``.
- ``fail`` / ``reject`` / ``auth``: the task ends ``failed`` / ``rejected`` / waits in
  ``auth-required``.
- ``gated``: streams ``one``, waits for ``executor.gate``, then streams ``two`` ``three``.
- ``slow``: sleeps a minute (for timeouts).
- ``message``: a direct ``Message`` reply, no task.
- ``turn``: ``turn N in <context id>``: N counts the user messages of the context.
- anything else: ``echo: <text>``, streamed word by word as appended artifact chunks; data parts
  in the message come back as one data part ``{"echo": [data...]}``.

``served(app)`` serves a Starlette app with uvicorn on a free loopback port; ``python
a2a_reference_server.py PORT`` serves a ``ChatAgent`` (scripted, no LLM, a weather tool) with
``agentic_bus.serve_a2a`` in another process.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import sys
from collections.abc import AsyncIterator
from typing import Any

import uvicorn
from a2a.helpers import get_data_parts, new_data_part, new_task_from_user_message, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    Message,
    Role,
    TaskState,
)
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.base import BaseHTTPMiddleware, RequestResponseEndpoint
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

GREETING_QUESTION = "What is your name?"


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def reference_card(base_url: str, *, name: str = "reference", streaming: bool = True) -> AgentCard:
    """The card of an agent served at ``base_url`` over JSON-RPC."""
    return AgentCard(
        name=name,
        description="A2A reference agent built on a2a-sdk's server classes.",
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(protocol_binding="JSONRPC", url=f"{base_url}/", protocol_version="1.0")
        ],
        capabilities=AgentCapabilities(streaming=streaming),
        default_input_modes=["text/plain", "application/json"],
        default_output_modes=["text/plain", "application/json"],
        skills=[AgentSkill(id="echo", name="Echo", description="Echoes its input.", tags=["test"])],
    )


class ScriptedExecutor(AgentExecutor):
    """An ``a2a`` ``AgentExecutor`` acting by the first word of the user's text (see module)."""

    def __init__(self) -> None:
        self.gate = asyncio.Event()
        self.turns: dict[str, int] = {}
        self.received: list[Message] = []
        self.cancelled = asyncio.Event()

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        message = context.message
        assert message is not None
        assert context.task_id
        assert context.context_id
        self.received.append(message)
        text = context.get_user_input()
        word = text.split(maxsplit=1)[0].lower() if text.strip() else ""
        if word == "message":
            reply = Message(
                role=Role.ROLE_AGENT,
                message_id=f"reply-{message.message_id}",
                context_id=context.context_id,
                parts=[new_text_part("a direct message")],
            )
            await event_queue.enqueue_event(reply)
            return
        task = context.current_task
        if task is None:
            await event_queue.enqueue_event(new_task_from_user_message(message))
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.start_work()
        if task is not None and task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED:
            await self._stream(updater, [f"Hello, {text}!"])
            await updater.complete()
            return
        if word == "ask":
            await updater.requires_input(
                updater.new_agent_message([new_text_part(GREETING_QUESTION)])
            )
        elif word == "fail":
            await updater.failed(updater.new_agent_message([new_text_part("boom: it broke")]))
        elif word == "reject":
            await updater.reject(updater.new_agent_message([new_text_part("not my job")]))
        elif word == "auth":
            await updater.requires_auth(updater.new_agent_message([new_text_part("log in first")]))
        elif word == "slow":
            await asyncio.sleep(60)
        elif word == "gated":
            await self._stream(updater, ["one "])
            await self.gate.wait()
            await self._stream(updater, ["two ", "three"], first=False)
            await updater.complete()
        elif word == "turn":
            count = self.turns.get(context.context_id, 0) + 1
            self.turns[context.context_id] = count
            await self._stream(updater, [f"turn {count} in {context.context_id}"])
            await updater.complete()
        else:
            data = get_data_parts(list(message.parts))
            if data:
                await updater.add_artifact([new_data_part({"echo": data})], name="data")
            words = f"echo: {text}".split(" ")
            await self._stream(updater, [w + " " for w in words[:-1]] + words[-1:])
            await updater.complete()

    async def _stream(self, updater: TaskUpdater, chunks: list[str], *, first: bool = True) -> None:
        for index, chunk in enumerate(chunks):
            await updater.add_artifact(
                [new_text_part(chunk)],
                artifact_id="answer",
                append=not (first and index == 0),
                last_chunk=None,
            )

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.task_id
        assert context.context_id
        self.cancelled.set()
        await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()


class _BearerOnly(BaseHTTPMiddleware):
    def __init__(self, app: Any, token: str) -> None:
        super().__init__(app)
        self.token = token

    async def dispatch(self, request: Request, call_next: RequestResponseEndpoint) -> Response:
        if request.headers.get("authorization") != f"Bearer {self.token}":
            return JSONResponse({"error": "unauthorized"}, status_code=401)
        return await call_next(request)


def reference_app(
    executor: AgentExecutor, card: AgentCard, *, token: str | None = None
) -> Starlette:
    """The card route and the JSON-RPC route of ``executor``, as the SDK builds them."""
    handler = DefaultRequestHandler(
        agent_executor=executor, task_store=InMemoryTaskStore(), agent_card=card
    )
    middleware = [Middleware(_BearerOnly, token=token)] if token else []
    return Starlette(
        routes=[*create_agent_card_routes(card), *create_jsonrpc_routes(handler, "/")],
        middleware=middleware,
    )


@contextlib.asynccontextmanager
async def served(app: Any, port: int) -> AsyncIterator[str]:
    """``app`` served by uvicorn on ``127.0.0.1:port`` until the block ends; its base URL."""
    server = uvicorn.Server(
        uvicorn.Config(
            app, host="127.0.0.1", port=port, log_level="warning", timeout_graceful_shutdown=1
        )
    )
    serving = asyncio.create_task(server.serve())
    async with asyncio.timeout(20):
        while not server.started:  # a bounded wait until uvicorn listens
            if serving.done():
                serving.result()
            await asyncio.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await serving


# -- another process: a ChatAgent served over A2A ----------------------------------------------


def weather_agent() -> Any:
    """A ChatAgent whose scripted model looks the weather up with a tool and reports it."""
    from agentic_core import ChatAgent, ChatMessage, FunctionCallContent, tool
    from agentic_core.testing import ScriptedChatClient

    @tool
    def get_weather(city: str) -> str:
        """The weather in ``city``."""
        return f"sunny and 22 C in {city}"

    call = FunctionCallContent(call_id="w1", name="get_weather", arguments={"city": "Paris"})
    client = ScriptedChatClient(
        [ChatMessage.assistant(contents=[call]), "Paris: sunny and 22 C."] * 20
    )
    return ChatAgent(client, name="weather", tools=[get_weather])


async def _serve_weather(port: int) -> None:
    from agentic_bus import serve_a2a

    await serve_a2a(weather_agent()).run(port=port)


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve_weather(int(sys.argv[1])))
