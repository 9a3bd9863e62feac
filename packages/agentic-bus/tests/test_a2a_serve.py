"""``serve_a2a`` with a core ``Agent``: the ``a2a-sdk`` client against the real server on a
loopback port (send, stream, threads per context, tool approvals as ``input-required``, get,
cancel, resubscribe), the card, and the options' checks."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest
from a2a.helpers import get_artifact_text, get_message_text
from a2a.types import (
    CancelTaskRequest,
    GetTaskRequest,
    SendMessageConfiguration,
    SendMessageRequest,
    TaskState,
)
from test_a2a_serve_support import (
    approval_agent,
    client_of,
    echo_agent,
    send,
    served,
    task_of,
    user_message,
)

from agentic_bus import A2AServeError, serve_a2a
from agentic_bus._a2a._parts import data_of
from agentic_core import (
    ChatAgent,
    ChatMessage,
    ChatOptions,
    InMemoryCheckpointStore,
    InMemoryStateStore,
)
from agentic_core.testing import FunctionChatClient

COMPLETED = TaskState.TASK_STATE_COMPLETED
INPUT_REQUIRED = TaskState.TASK_STATE_INPUT_REQUIRED
CANCELED = TaskState.TASK_STATE_CANCELED


async def test_a_message_is_answered_with_a_completed_task() -> None:
    async with served(serve_a2a(echo_agent())) as url, client_of(url) as client:
        task = task_of(await send(client, user_message("hello")))

        assert task.status.state == COMPLETED
        assert [get_artifact_text(a, "") for a in task.artifacts] == ["echo: hello (turn 1)"]
        fetched = await client.get_task(GetTaskRequest(id=task.id))
        assert fetched.status.state == COMPLETED
        assert fetched.artifacts == task.artifacts


async def test_text_streams_as_appended_chunks_of_one_artifact() -> None:
    async with served(serve_a2a(echo_agent())) as url, client_of(url, streaming=True) as client:
        events = await send(client, user_message("one two three"))

    chunks = [e.artifact_update for e in events if e.HasField("artifact_update")]
    assert len(chunks) > 1  # streamed, not one piece at the end
    assert len({c.artifact.artifact_id for c in chunks}) == 1
    assert [c.append for c in chunks] == [False] + [True] * (len(chunks) - 1)
    assert "".join(get_artifact_text(c.artifact, "") for c in chunks) == (
        "echo: one two three (turn 1)"
    )
    states = [e.status_update.status.state for e in events if e.HasField("status_update")]
    assert states[-1] == COMPLETED


async def test_a_context_keeps_its_conversation_and_contexts_stay_apart() -> None:
    async with served(serve_a2a(echo_agent())) as url, client_of(url) as client:
        first = task_of(await send(client, user_message("a")))
        second = task_of(await send(client, user_message("b", context_id=first.context_id)))
        other = task_of(await send(client, user_message("c")))

    assert get_artifact_text(second.artifacts[0], "") == "echo: b (turn 2)"
    assert get_artifact_text(other.artifacts[0], "") == "echo: c (turn 1)"
    assert other.context_id != first.context_id


async def test_a_tool_approval_is_input_required_and_the_next_message_answers_it() -> None:
    async with served(serve_a2a(approval_agent())) as url, client_of(url) as client:
        waiting = task_of(await send(client, user_message("clean up")))

        assert waiting.status.state == INPUT_REQUIRED
        question = waiting.status.message
        assert "'delete_file'" in get_message_text(question)
        [request] = data_of(question.parts)
        assert request["tool_name"] == "delete_file"
        assert request["arguments"] == {"path": "/tmp/x"}

        answer = user_message("yes", task_id=waiting.id, context_id=waiting.context_id)
        done = task_of(await send(client, answer))

    assert done.id == waiting.id
    assert done.status.state == COMPLETED
    assert get_artifact_text(done.artifacts[-1], "") == "Done: deleted /tmp/x"


async def test_cancel_after_a_restart_ends_the_waiting_task_and_forgets_what_it_waited_for() -> (
    None
):
    # The server that parked the task is gone: the restarted one has no run of it to cancel,
    # so the SDK ends the stored task itself. What the task waited for goes with it.
    store = InMemoryStateStore()
    first = serve_a2a(approval_agent(), state_store=store)
    async with served(first) as url, client_of(url) as client:
        waiting = task_of(await send(client, user_message("clean up")))
    assert await store.keys("a2a/pending/") == [f"a2a/pending/{waiting.id}"]

    restarted = serve_a2a(approval_agent(), state_store=store)
    async with served(restarted) as url, client_of(url) as client:
        canceled = await client.cancel_task(CancelTaskRequest(id=waiting.id))
        fetched = await client.get_task(GetTaskRequest(id=waiting.id))

    assert canceled.status.state == CANCELED
    assert fetched.status.state == CANCELED
    assert await store.keys("a2a/pending/") == []


async def test_a_rejection_reaches_the_model_as_the_tools_error_result() -> None:
    async with served(serve_a2a(approval_agent())) as url, client_of(url) as client:
        waiting = task_of(await send(client, user_message("clean up")))
        answer = user_message(data={"approved": False, "reason": "keep it"}, task_id=waiting.id)
        done = task_of(await send(client, answer))

    assert done.status.state == COMPLETED
    assert "keep it" in get_artifact_text(done.artifacts[-1], "")


async def test_a_streamed_turn_that_waits_ends_its_stream_in_input_required() -> None:
    app = serve_a2a(approval_agent())
    async with served(app) as url, client_of(url, streaming=True) as client:
        events = await send(client, user_message("clean up"))
        last = events[-1].status_update
        answer = user_message("approve", task_id=last.task_id)
        resumed = await send(client, answer)

    assert last.status.state == INPUT_REQUIRED
    assert resumed[-1].status_update.status.state == COMPLETED


async def test_the_card_names_the_agent_its_tools_and_the_endpoint_it_was_read_at() -> None:
    async with served(serve_a2a(approval_agent())) as url, httpx.AsyncClient() as http:
        card = (await http.get(f"{url}/.well-known/agent-card.json")).json()

    assert card["name"] == "janitor"
    assert card["capabilities"]["streaming"] is True
    assert [s["id"] for s in card["skills"]] == ["delete_file"]
    assert card["supportedInterfaces"][0]["url"] == f"{url}/"
    assert card["supportedInterfaces"][0]["protocolBinding"] == "JSONRPC"


async def test_a_card_with_a_token_says_one_is_needed_and_never_holds_it() -> None:
    secret = "card-secret-token-123"  # noqa: S105 - a test token
    app = serve_a2a(echo_agent(), token=secret, url="https://agents.example.com/a2a")
    async with served(app) as url, httpx.AsyncClient() as http:
        answer = await http.get(f"{url}/.well-known/agent-card.json")

    assert answer.status_code == 200
    assert secret not in answer.text
    card = answer.json()
    assert card["supportedInterfaces"][0]["url"] == "https://agents.example.com/a2a"
    assert card["securitySchemes"]["bearer"]["httpAuthSecurityScheme"]["scheme"] == "Bearer"


async def test_tasks_are_kept_in_the_state_store_given() -> None:
    store = InMemoryStateStore()
    async with served(serve_a2a(echo_agent(), state_store=store)) as url, client_of(url) as client:
        task = task_of(await send(client, user_message("keep me")))

    stored = await store.get(f"a2a/task/{task.id}")
    assert stored is not None
    assert json.dumps(stored).count("keep me") >= 1
    assert await store.get(f"a2a/thread/{task.context_id}") is not None


def test_what_is_no_agent_or_workflow_is_refused_by_name() -> None:
    with pytest.raises(A2AServeError, match="not a str"):
        serve_a2a("agent")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("option", "value", "match"),
    [
        ("max_concurrent_runs", 0, "max_concurrent_runs must be at least 1"),
        ("run_timeout_s", 0, "run_timeout_s must be positive"),
        ("max_body_bytes", 0, "max_body_bytes must be at least 1"),
    ],
)
def test_bounds_below_their_minimum_are_refused(option: str, value: float, match: str) -> None:
    options: dict[str, Any] = {option: value}
    with pytest.raises(A2AServeError, match=match):
        serve_a2a(echo_agent(), **options)


@pytest.mark.parametrize(
    "url", ["https://user:pw@agents.example.com/", "https://agents.example.com/?token=abc123"]
)
def test_a_card_url_with_credentials_is_refused_without_showing_them(url: str) -> None:
    with pytest.raises(A2AServeError, match="holds credentials") as caught:
        serve_a2a(echo_agent(), url=url)
    assert "pw@" not in str(caught.value)
    assert "abc123" not in str(caught.value)


def test_a_checkpoint_store_is_for_workflows_only() -> None:
    with pytest.raises(A2AServeError, match="checkpoint_store is for workflows"):
        serve_a2a(echo_agent(), checkpoint_store=InMemoryCheckpointStore())


async def test_cancel_stops_an_agents_turn_and_its_context_goes_on() -> None:
    async def slow_then_quick(messages: list[ChatMessage], options: ChatOptions | None) -> str:
        del options
        if messages[-1].text == "slow":
            await asyncio.sleep(30)
        return f"answered {messages[-1].text}"

    agent = ChatAgent(FunctionChatClient(slow_then_quick), name="slowpoke")
    async with served(serve_a2a(agent)) as url, client_of(url) as client:
        request = SendMessageRequest(
            message=user_message("slow"),
            configuration=SendMessageConfiguration(return_immediately=True),
        )
        [started] = [e async for e in client.send_message(request)]
        canceled = await client.cancel_task(CancelTaskRequest(id=started.task.id))
        later = task_of(
            await send(client, user_message("quick", context_id=started.task.context_id))
        )

    assert canceled.status.state == TaskState.TASK_STATE_CANCELED
    assert later.status.state == COMPLETED
    assert get_artifact_text(later.artifacts[0], "") == "answered quick"
