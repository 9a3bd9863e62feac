"""``serve_a2a`` on a real Redis, restarted mid-task: a task paused in ``input-required`` (an
agent's tool approval, a workflow's ``request_info``), its server process killed by its PID,
a new server started on the same Redis, and the task answered by a second client, which gets
the completed result.

Run as a module from the repository root (``python -m tests.test_a2a_restart PORT REDIS_URL
PREFIX agent|workflow``) it is that server: ``serve_a2a`` over a ``RedisStateStore``, until killed.
"""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest
from a2a.client import Client, ClientConfig, ClientFactory
from a2a.helpers import get_artifact_text, new_data_part, new_text_part
from a2a.types import GetTaskRequest, Message, Part, Role, SendMessageRequest, Task, TaskState

from tests.fixtures.a2a_targets import approval_agent, review_workflow
from tests.fixtures.servers import free_port

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]
ROOT = Path(__file__).resolve().parents[1]

# -- the served targets: tests/fixtures/a2a_targets.py -------------------------------------------


async def serve(port: int, redis_url: str, prefix: str, kind: str) -> None:
    """Serve the ``kind`` target on ``port`` over Redis until killed."""
    from agentic_bus import serve_a2a
    from agentic_storage import RedisStateStore

    target = approval_agent() if kind == "agent" else review_workflow()
    app = serve_a2a(target, state_store=RedisStateStore(redis_url, prefix=prefix))
    await app.run(port=port)


# -- the test ------------------------------------------------------------------------------------


@contextlib.contextmanager
def server_process(port: int, redis_url: str, prefix: str, kind: str) -> Iterator[str]:
    """The server program on ``port``; killed (SIGKILL, by its PID) when the block ends."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.test_a2a_restart", str(port), redis_url, prefix, kind],
        cwd=ROOT,
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
