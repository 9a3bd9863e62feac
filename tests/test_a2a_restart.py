"""``serve_a2a`` on a real Redis, restarted mid-task: a task paused in ``input-required`` (an
agent's tool approval, a workflow's ``request_info``), its server process killed by its PID,
a new server started on the same Redis, and the task answered by a second client, which gets
the completed result.

Run as a program (``python test_a2a_restart.py PORT REDIS_URL PREFIX agent|workflow``) it is
that server: ``serve_a2a`` over a ``RedisStateStore``, until killed.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Never

import httpx
import pytest
from a2a.client import Client, ClientConfig, ClientFactory
from a2a.helpers import get_artifact_text, new_data_part, new_text_part
from a2a.types import GetTaskRequest, Message, Part, Role, SendMessageRequest, Task, TaskState
from pydantic import BaseModel

from agentic_core import (
    ChatAgent,
    ChatMessage,
    ChatOptions,
    Executor,
    FunctionCallContent,
    Workflow,
    WorkflowBuilder,
    WorkflowContext,
    handler,
    response_handler,
    tool,
)
from agentic_core.testing import FunctionChatClient

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

# -- the served targets (no model: scripted by what the conversation holds) ----------------------


@tool(approval_mode="always_require")
def delete_file(path: str) -> str:
    """Delete a file (needs a person's approval)."""
    return f"deleted {path}"


def janitor() -> ChatAgent:
    """Calls ``delete_file`` (waiting for approval), then says what the tool answered."""

    def reply(messages: list[ChatMessage], options: ChatOptions | None) -> ChatMessage | str:
        del options
        results = [r for m in messages for r in m.function_results]
        if results:
            return f"Done: {results[-1].result}"
        call = FunctionCallContent(call_id="c1", name="delete_file", arguments={"path": "/tmp/x"})
        return ChatMessage.assistant(contents=[call])

    return ChatAgent(FunctionChatClient(reply), name="janitor", tools=[delete_file])


class Approval(BaseModel):
    """A reviewer's answer."""

    approved: bool
    comment: str = ""


class Reviewer(Executor):
    """Asks for an ``Approval`` of its draft, then yields the verdict."""

    @handler
    async def review(self, draft: str, ctx: WorkflowContext[Never, str]) -> None:
        await ctx.request_info(f"Approve {draft!r}?", Approval)

    @response_handler
    async def on_answer(
        self, question: str, answer: Approval, ctx: WorkflowContext[Never, str]
    ) -> None:
        verdict = "approved" if answer.approved else "rejected"
        await ctx.yield_output(f"{question} -> {verdict} {answer.comment}".strip())


def review() -> Workflow:
    """A draft in, a request for an ``Approval``, the verdict out."""
    return WorkflowBuilder("review").set_start_executor(Reviewer("reviewer")).build()


async def serve(port: int, redis_url: str, prefix: str, kind: str) -> None:
    """Serve the ``kind`` target on ``port`` over Redis until killed."""
    from agentic_bus import serve_a2a
    from agentic_storage import RedisStateStore

    target = janitor() if kind == "agent" else review()
    app = serve_a2a(target, state_store=RedisStateStore(redis_url, prefix=prefix))
    await app.run(port=port)


# -- the test ------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def server_process(port: int, redis_url: str, prefix: str, kind: str) -> Iterator[str]:
    """The server program on ``port``; killed (SIGKILL, by its PID) when the block ends."""
    proc = subprocess.Popen(
        [sys.executable, str(Path(__file__)), str(port), redis_url, prefix, kind],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.kill()  # this process's own child, by its PID: no shutdown, no cleanup
        proc.wait(timeout=10)
        if proc.stderr is not None:
            proc.stderr.close()


@contextlib.asynccontextmanager
async def client_of(url: str) -> AsyncIterator[Client]:
    """An ``a2a-sdk`` client, once the server answers its card (a bounded wait)."""
    async with httpx.AsyncClient(timeout=10) as http:
        async with asyncio.timeout(30):
            while True:
                with contextlib.suppress(httpx.TransportError):
                    if (await http.get(f"{url}/.well-known/agent-card.json")).is_success:
                        break
                await asyncio.sleep(0.1)
        client = await ClientFactory(
            ClientConfig(httpx_client=http, streaming=False)
        ).create_from_url(url)
        try:
            yield client
        finally:
            await client.close()


def message(parts: list[Part], task_id: str = "") -> Message:
    return Message(role=Role.ROLE_USER, message_id=uuid.uuid4().hex, parts=parts, task_id=task_id)


async def sent(client: Client, parts: list[Part], task_id: str = "") -> Task:
    events = [
        e async for e in client.send_message(SendMessageRequest(message=message(parts, task_id)))
    ]
    (event,) = events
    return event.task


@pytest.mark.parametrize(
    ("kind", "first", "answer", "result"),
    [
        ("agent", [new_text_part("clean up")], [new_text_part("yes")], "Done: deleted /tmp/x"),
        (
            "workflow",
            [new_text_part("draft-7")],
            [new_data_part({"approved": True, "comment": "ship it"})],
            "Approve 'draft-7'? -> approved ship it",
        ),
    ],
)
async def test_a_task_waiting_for_input_is_answered_after_the_server_restarts(
    redis_server: str, kind: str, first: list[Part], answer: list[Part], result: str
) -> None:
    prefix = f"a2a-restart-{uuid.uuid4().hex}"
    with server_process(free_port(), redis_server, prefix, kind) as url:
        async with client_of(url) as client:
            waiting = await sent(client, first)
    assert waiting.status.state == TaskState.TASK_STATE_INPUT_REQUIRED

    with server_process(free_port(), redis_server, prefix, kind) as url:
        async with client_of(url) as second:
            before = await second.get_task(GetTaskRequest(id=waiting.id))
            done = await sent(second, answer, task_id=waiting.id)

    assert before.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
    assert done.id == waiting.id
    assert done.status.state == TaskState.TASK_STATE_COMPLETED
    assert get_artifact_text(done.artifacts[-1], "") == result


if __name__ == "__main__":
    asyncio.run(serve(int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]))
