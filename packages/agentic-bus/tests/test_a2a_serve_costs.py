"""What ``serve_a2a`` spares a message: the agent ``run`` (not streamed) for a blocking
``SendMessage``, task writes only when a run starts and stops, and the ``a2a-sdk``'s own spans
while no OpenTelemetry SDK tracer provider records them (ours stay, theirs come back with one)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from a2a.helpers import get_artifact_text
from a2a.server.context import ServerCallContext
from a2a.types import (
    ListTasksRequest,
    SendMessageConfiguration,
    SendMessageRequest,
    Task,
    TaskState,
    TaskStatus,
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

from agentic_bus import serve_a2a
from agentic_bus._a2a._task_store import StateTaskStore
from agentic_core import AgentResponse, AgentResponseUpdate, ChatAgent, InMemoryStateStore
from tests.fixtures.otel import sdk_spans

COMPLETED = TaskState.TASK_STATE_COMPLETED
INPUT_REQUIRED = TaskState.TASK_STATE_INPUT_REQUIRED
WORKING = TaskState.TASK_STATE_WORKING
SUBMITTED = TaskState.TASK_STATE_SUBMITTED
SDK_SERVER = "a2a.server."


class Recording(ChatAgent):
    """``echo_agent``'s answers, recording whether each turn ran or streamed."""

    def __init__(self) -> None:
        base = echo_agent()
        super().__init__(base.chat_client, name=base.name)
        self.calls: list[str] = []

    async def run(self, *args: Any, **kwargs: Any) -> AgentResponse:
        self.calls.append("run")
        return await super().run(*args, **kwargs)

    def run_stream(self, *args: Any, **kwargs: Any) -> AsyncIterator[AgentResponseUpdate]:
        self.calls.append("run_stream")
        return super().run_stream(*args, **kwargs)


class CountingStore(InMemoryStateStore):
    """An in-memory state store counting the writes of each key."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: dict[str, int] = {}

    async def set(self, key: str, value: Any, **kwargs: Any) -> None:
        self.writes[key] = self.writes.get(key, 0) + 1
        await super().set(key, value, **kwargs)


# -- run or stream ---------------------------------------------------------------------------------


async def test_a_blocking_send_runs_the_agent_and_a_streamed_one_streams_it() -> None:
    agent = Recording()
    async with served(serve_a2a(agent)) as url:
        async with client_of(url) as client:
            task = task_of(await send(client, user_message("one two")))
        assert agent.calls == ["run"]
        async with client_of(url, streaming=True) as client:
            events = await send(client, user_message("three four"))
        assert agent.calls == ["run", "run_stream"]
        async with client_of(url) as client:
            request = SendMessageRequest(
                message=user_message("five"),
                configuration=SendMessageConfiguration(return_immediately=True),
            )
            [started] = [e async for e in client.send_message(request)]
        assert agent.calls == ["run", "run_stream", "run_stream"]  # it may be subscribed to
        assert started.HasField("task")

    assert task.status.state == COMPLETED
    assert [get_artifact_text(a, "") for a in task.artifacts] == ["echo: one two (turn 1)"]
    chunks = [e.artifact_update for e in events if e.HasField("artifact_update")]
    assert len(chunks) > 1
    assert "".join(get_artifact_text(c.artifact, "") for c in chunks) == "echo: three four (turn 1)"


# -- task writes -----------------------------------------------------------------------------------


@pytest.mark.parametrize("streaming", [False, True])
async def test_a_task_is_written_when_it_starts_and_when_it_stops(streaming: bool) -> None:
    store = CountingStore()
    app = serve_a2a(echo_agent(), state_store=store)
    async with served(app) as url, client_of(url, streaming=streaming) as client:
        events = await send(client, user_message("hello there"))

    task_id = next(e.task.id for e in events if e.HasField("task"))
    assert store.writes[f"a2a/task/{task_id}"] == 2  # created, completed: no chunk, no status
    stored = await StateTaskStore(store).get(task_id, ServerCallContext())
    assert stored is not None
    assert stored.status.state == COMPLETED
    assert "".join(get_artifact_text(a, "") for a in stored.artifacts) == (
        "echo: hello there (turn 1)"
    )


async def test_a_task_waiting_for_input_is_in_the_store_and_so_is_its_end() -> None:
    store = CountingStore()
    app = serve_a2a(approval_agent(), state_store=store)
    async with served(app) as url, client_of(url) as client:
        waiting = task_of(await send(client, user_message("clean up")))
        stored = await StateTaskStore(store).get(waiting.id, ServerCallContext())
        assert stored is not None
        assert stored.status.state == INPUT_REQUIRED
        done = task_of(await send(client, user_message("yes", task_id=waiting.id)))

    assert waiting.status.state == INPUT_REQUIRED
    assert done.status.state == COMPLETED
    stored = await StateTaskStore(store).get(waiting.id, ServerCallContext())
    assert stored is not None
    assert stored.status.state == COMPLETED
    assert get_artifact_text(stored.artifacts[-1], "") == "Done: deleted /tmp/x"


async def test_a_running_tasks_saves_stay_here_and_are_read_back_here() -> None:
    store = CountingStore()
    tasks = StateTaskStore(store)
    call = ServerCallContext()
    task = Task(id="t1", context_id="c1", status=TaskStatus(state=SUBMITTED))
    await tasks.save(task, call)
    task.status.state = WORKING
    await tasks.save(task, call)
    task.status.state = INPUT_REQUIRED  # changed after the save: not what was saved
    stale = await StateTaskStore(store).get("t1", call)  # another server on the same store
    here = await tasks.get("t1", call)
    listed = await tasks.list(ListTasksRequest(), call)

    assert store.writes == {"a2a/task/t1": 1}
    assert stale is not None
    assert stale.status.state == SUBMITTED
    assert here is not None
    assert here.status.state == WORKING
    assert [t.status.state for t in listed.tasks] == [WORKING]

    await tasks.save(task, call)  # input-required: written
    task.status.state = WORKING
    await tasks.save(task, call)  # running again: written once more
    task.status.state = COMPLETED
    await tasks.save(task, call)
    fresh = await StateTaskStore(store).get("t1", call)

    assert store.writes == {"a2a/task/t1": 4}
    assert fresh is not None
    assert fresh.status.state == COMPLETED
    await tasks.delete("t1", call)
    assert await tasks.get("t1", call) is None


# -- the SDK's spans -------------------------------------------------------------------------------


class _Span:
    def set_status(self, *args: Any, **kwargs: Any) -> None:
        del args, kwargs

    def set_attribute(self, *args: Any, **kwargs: Any) -> None:
        del args, kwargs

    def record_exception(self, *args: Any, **kwargs: Any) -> None:
        del args, kwargs


class _Tracer:
    """What the SDK's span wrappers get from ``trace.get_tracer``: records the span names."""

    def __init__(self, names: list[str]) -> None:
        self.names = names

    def start_as_current_span(self, name: str, **kwargs: Any) -> contextlib.nullcontext[_Span]:
        del kwargs
        self.names.append(name)
        return contextlib.nullcontext(_Span())


async def test_without_a_tracer_provider_the_sdk_server_makes_no_span(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from opentelemetry import trace

    asked: list[str] = []
    monkeypatch.setattr(trace, "get_tracer", lambda *args, **kwargs: _Tracer(asked))
    async with served(serve_a2a(echo_agent())) as url, client_of(url) as client:
        task = task_of(await send(client, user_message("quiet")))
        during = list(asked)  # (not the server's shutdown, outside any request)

    assert task.status.state == COMPLETED
    assert during  # the client's spans: the SDK's own, untouched
    assert [name for name in during if name.startswith(SDK_SERVER)] == []


@pytest.fixture
def exporter() -> Iterator[Any]:
    """An SDK tracer provider installed for one test; its finished spans."""
    with sdk_spans() as spans:
        yield spans


async def test_with_a_tracer_provider_the_sdk_spans_are_made_beside_ours(exporter: Any) -> None:
    async with served(serve_a2a(echo_agent())) as url, client_of(url) as client:
        task = task_of(await send(client, user_message("traced")))

    names = [span.name for span in exporter.get_finished_spans()]
    assert task.status.state == COMPLETED
    assert "invoke_agent echo" in names
    handler = "a2a.server.request_handlers.default_request_handler_v2.DefaultRequestHandlerV2"
    assert f"{handler}.on_message_send" in names
    assert any(name.startswith("a2a.server.events.event_queue_v2.") for name in names)
