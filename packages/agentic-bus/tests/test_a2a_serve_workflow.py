"""``serve_a2a`` with a core ``Workflow``: each task one run; ``request_info`` as
``input-required`` answered by the next message (the run resumes from its checkpoint); cancel
stops the run; a dropped stream is resubscribed; and two tests ported from Microsoft Agent
Framework's A2A hosting (the card, and a failing agent failing its task)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from typing import Never, cast

import pytest
from a2a.client import Client
from a2a.helpers import get_artifact_text, get_message_text
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    CancelTaskRequest,
    GetTaskRequest,
    SendMessageConfiguration,
    SendMessageRequest,
    StreamResponse,
    SubscribeToTaskRequest,
    Task,
    TaskState,
)
from test_a2a_serve_support import (
    Approval,
    client_of,
    echo_agent,
    review_workflow,
    send,
    served,
    slow_workflow,
    task_of,
    user_message,
)

from agentic_bus import serve_a2a
from agentic_bus._a2a._answers import AnswerError, as_type
from agentic_bus._a2a._parts import data_of
from agentic_core import (
    ChatAgent,
    ChatMessage,
    ChatOptions,
    Executor,
    InMemoryStateStore,
    WorkflowBuilder,
    WorkflowContext,
    handler,
)
from agentic_core.testing import FunctionChatClient

COMPLETED = TaskState.TASK_STATE_COMPLETED
INPUT_REQUIRED = TaskState.TASK_STATE_INPUT_REQUIRED
CANCELED = TaskState.TASK_STATE_CANCELED
FAILED = TaskState.TASK_STATE_FAILED


async def test_request_info_is_input_required_and_the_answer_resumes_the_run() -> None:
    store = InMemoryStateStore()
    app = serve_a2a(review_workflow(), state_store=store)
    async with served(app) as url, client_of(url) as client:
        waiting = task_of(await send(client, user_message("draft-1")))

        assert waiting.status.state == INPUT_REQUIRED
        question = waiting.status.message
        assert "Approve 'draft-1'?" in get_message_text(question)
        [request] = data_of(question.parts)
        assert request["expects"] == "Approval"
        assert request["source"] == "reviewer"
        assert await store.keys("a2a/checkpoints/")  # the run is checkpointed in the store

        answer = user_message(data={"approved": True, "comment": "ok"}, task_id=waiting.id)
        done = task_of(await send(client, answer))

    assert done.status.state == COMPLETED
    assert [get_artifact_text(a, "") for a in done.artifacts] == [
        "Approve 'draft-1'? -> approved ok"
    ]


async def test_a_wrong_answer_keeps_the_task_waiting_and_says_what_was_expected() -> None:
    async with served(serve_a2a(review_workflow())) as url, client_of(url) as client:
        waiting = task_of(await send(client, user_message("draft-2")))
        wrong = task_of(await send(client, user_message("maybe?", task_id=waiting.id)))
        right = task_of(
            await send(client, user_message(data={"approved": False}, task_id=waiting.id))
        )

    assert wrong.status.state == INPUT_REQUIRED
    assert "Approval" in get_message_text(wrong.status.message)
    assert right.status.state == COMPLETED
    assert "rejected" in get_artifact_text(right.artifacts[-1], "")


async def test_an_input_the_start_executor_cannot_take_fails_the_task_by_name() -> None:
    async with served(serve_a2a(slow_workflow())) as url, client_of(url) as client:
        task = task_of(await send(client, user_message("not a number")))

    assert task.status.state == INPUT_REQUIRED
    assert "the input of workflow 'slow' must be float" in get_message_text(task.status.message)


async def _started(client: Client, text: str) -> Task:
    """A task sent with ``return_immediately`` (running in the background)."""
    request = SendMessageRequest(
        message=user_message(text),
        configuration=SendMessageConfiguration(return_immediately=True),
    )
    events = [e async for e in client.send_message(request)]
    return events[0].task


async def test_cancel_stops_the_run() -> None:
    async with served(serve_a2a(slow_workflow())) as url, client_of(url) as client:
        task = await _started(client, "30")
        canceled = await client.cancel_task(CancelTaskRequest(id=task.id))
        fetched = await client.get_task(GetTaskRequest(id=task.id))
        # The server still serves: a new run completes.
        after = task_of(await send(client, user_message("0")))

    assert canceled.status.state == CANCELED
    assert fetched.status.state == CANCELED
    assert after.status.state == COMPLETED


async def test_cancel_of_a_task_waiting_for_input_ends_it() -> None:
    async with served(serve_a2a(review_workflow())) as url, client_of(url) as client:
        waiting = task_of(await send(client, user_message("draft-3")))
        canceled = await client.cancel_task(CancelTaskRequest(id=waiting.id))

    assert canceled.status.state == CANCELED


async def test_aclose_stops_the_runs_of_the_server() -> None:
    stopped = asyncio.Event()

    class Sleeper(Executor):
        @handler
        async def sleep(self, seconds: float, ctx: WorkflowContext[Never, str]) -> None:
            try:
                await asyncio.sleep(seconds)
            except asyncio.CancelledError:
                stopped.set()
                raise
            await ctx.yield_output("woke")

    app = serve_a2a(WorkflowBuilder("sleeper").set_start_executor(Sleeper("sleeper")).build())
    async with served(app) as url, client_of(url) as client:
        await _started(client, "30")
        await app.aclose()
        async with asyncio.timeout(10):
            await stopped.wait()
        await app.aclose()  # again: nothing left to stop, no error


async def test_a_dropped_stream_is_resubscribed_and_the_run_goes_on() -> None:
    app = serve_a2a(slow_workflow())
    async with served(app) as url:
        async with client_of(url, streaming=True) as client:
            stream = client.send_message(SendMessageRequest(message=user_message("0.5")))
            first = await anext(stream)
            await cast(
                "AsyncGenerator[StreamResponse]", stream
            ).aclose()  # the client goes away mid-run
        task_id = first.task.id if first.HasField("task") else first.status_update.task_id
        async with client_of(url, streaming=True) as client:
            events = [e async for e in client.subscribe(SubscribeToTaskRequest(id=task_id))]
            final = await client.get_task(GetTaskRequest(id=task_id))

    assert events  # the subscription saw the run's events
    assert final.status.state == COMPLETED
    assert [get_artifact_text(a, "") for a in final.artifacts] == ["woke"]


# -- ported from Microsoft Agent Framework -------------------------------------------------------
# python/packages/hosting-a2a/tests/hosting_a2a/test_adapters.py and
# python/packages/a2a/tests/test_a2a_executor.py, on our API and a real server (no mocks).


async def test_agent_card_infers_metadata_and_keeps_a2a_policy_explicit() -> None:
    # MAF: test_agent_card_infers_metadata_and_keeps_a2a_policy_explicit
    agent = echo_agent()
    agent.name, agent.description = "Travel Agent", "Plans trips."
    async with served(serve_a2a(agent)) as url, client_of(url) as client:
        task = task_of(await send(client, user_message("hello")))
    card = serve_a2a(agent, url="https://example.com/a2a").card
    assert card.name == "Travel Agent"
    assert card.description == "Plans trips."
    assert card.capabilities.streaming is True
    assert card.supported_interfaces[0].url == "https://example.com/a2a"
    assert card.supported_interfaces[0].protocol_binding == "JSONRPC"
    # the text part reaches the agent as its input, and its reply comes back as text
    assert get_artifact_text(task.artifacts[0], "") == "echo: hello (turn 1)"

    interface = AgentInterface(url="https://example.com/a2a", protocol_binding="JSONRPC")
    skill = AgentSkill(
        id="plan_trip",
        name="Plan trip",
        description="Plan a trip.",
        tags=["travel"],
        examples=["Plan a weekend in Paris."],
    )
    explicit = AgentCard(
        name="Travel Agent",
        description="Plans trips.",
        version="1.0.0",
        default_input_modes=["text"],
        default_output_modes=["text"],
        capabilities=AgentCapabilities(streaming=True),
        supported_interfaces=[interface],
        skills=[skill],
    )
    served_card = serve_a2a(agent, card=explicit).card
    assert served_card.supported_interfaces == [interface]
    assert served_card.skills == [skill]
    assert served_card.default_input_modes == ["text"]


async def test_execute_handles_generic_exception() -> None:
    # MAF: TestA2AExecutor.test_execute_handles_generic_exception
    def broken(messages: list[ChatMessage], options: ChatOptions | None) -> str:
        raise ValueError("Test error")

    agent = ChatAgent(FunctionChatClient(broken), name="broken")
    async with served(serve_a2a(agent)) as url, client_of(url) as client:
        task = task_of(await send(client, user_message("Hello")))
        # the server keeps serving after a failed run
        fetched = await client.get_task(GetTaskRequest(id=task.id))

    assert task.status.state == FAILED
    parts = task.status.message.parts
    assert len(parts) == 1
    assert "Test error" in parts[0].text
    assert fetched.status.state == FAILED


async def test_a_run_past_its_timeout_fails_its_task() -> None:
    app = serve_a2a(slow_workflow(), run_timeout_s=0.2)
    async with served(app) as url, client_of(url) as client:
        task = task_of(await send(client, user_message("5")))
        quick = task_of(await send(client, user_message("0")))

    assert task.status.state == FAILED
    assert "did not finish within 0.2 s" in get_message_text(task.status.message)
    assert quick.status.state == COMPLETED


# -- what a message becomes ----------------------------------------------------------------------


def test_a_message_becomes_the_type_asked_for() -> None:
    text = user_message("hello")
    data = user_message(data={"approved": True})
    number = user_message("42")

    assert as_type(text, [str], "x") == "hello"
    assert as_type(number, [int], "x") == 42
    assert as_type(data, [Approval], "x") == Approval(approved=True)
    [chat] = as_type(text, [list[ChatMessage]], "x")
    assert chat.text == "hello"
    assert as_type(data, [], "x") == {"approved": True}  # no annotation: the data as it is


def test_a_message_that_fits_no_type_names_what_was_asked() -> None:
    with pytest.raises(AnswerError, match="the answer must be Approval"):
        as_type(user_message("maybe"), [Approval], "the answer")
