# pyright: strict
"""Type-checked (pyright strict) uses of the agentic_bus API: fails CI if the types regress.

It also runs as a test module, without a nats-server: the NATS classes connect on first use,
so they are only built here, and the agent round trip runs on core's ``InMemoryBus``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Never, assert_type

import pytest

from agentic_bus import (
    AgentServer,
    NatsBus,
    NatsCheckpointStore,
    NatsConnectionError,
    NatsEventSink,
    NatsKVStateStore,
    NatsRuntime,
    NoWorkerError,
    PayloadTooLargeError,
    PendingRequest,
    PoolSettings,
    ProxyAgent,
    Subjects,
    Worker,
    answer_request,
    replay_events,
    serve_agent,
    subject_token,
)
from agentic_core import (
    AgentResponse,
    AgentResponseUpdate,
    BusError,
    ChatAgent,
    CheckpointStore,
    InMemoryBus,
    MessageBus,
    NoRespondersError,
    Runtime,
    StateStore,
    Workflow,
    WorkflowBuilder,
    WorkflowContext,
    WorkflowEvent,
    WorkflowExecutionError,
    executor,
)
from agentic_core.testing import ScriptedChatClient

URL = "nats://127.0.0.1:4222"


@executor
async def shout(text: str, ctx: WorkflowContext[Never, str]) -> None:
    await ctx.yield_output(text.upper())


def build_workflow() -> Workflow:
    return WorkflowBuilder("shout").set_start_executor(shout).build()


async def test_the_nats_classes_implement_core_protocols() -> None:
    bus: MessageBus = NatsBus(URL, name="typing")
    state: StateStore = NatsKVStateStore(URL, bucket="typing_state")
    checkpoints: CheckpointStore = NatsCheckpointStore(URL, bucket="typing_checkpoints")
    runtime: Runtime = NatsRuntime(URL, settings=PoolSettings(ack_wait_s=8.0))

    assert_type(bus.is_connected, bool)
    assert not bus.is_connected
    assert isinstance(state, StateStore)
    assert isinstance(checkpoints, CheckpointStore)
    assert isinstance(runtime, NatsRuntime)


def test_a_worker_takes_a_workflow_or_a_factory() -> None:
    assert isinstance(Worker(build_workflow, URL, slots=2), Worker)
    assert isinstance(Worker(build_workflow(), [URL], pool="shouting"), Worker)


def test_events_go_to_a_sink_and_come_back_as_workflow_events() -> None:
    sink = NatsEventSink(URL, workflow=build_workflow(), include_live=True)
    events = replay_events(URL, "run-1", kinds=["output"])

    assert isinstance(sink, NatsEventSink)
    assert_type(events, AsyncIterator[WorkflowEvent])


def test_subjects_and_settings_are_plain_values() -> None:
    subjects = Subjects(prefix="typing")
    settings = PoolSettings(ack_wait_s=8.0, max_deliver=5)

    assert_type(subjects.agent("writer", "run"), str)
    assert_type(subject_token("a.b c"), str)
    assert_type(settings.heartbeat_s, float)
    assert subjects.agent("writer", "run") == "typing.agent.writer.run"
    assert settings.heartbeat_s == 2.0


async def test_a_served_agent_is_called_through_a_proxy() -> None:
    bus = InMemoryBus()
    agent = ChatAgent(ScriptedChatClient(["Hi.", "Hello again."]), id="greeter")
    server = await serve_agent(agent, bus, thread_store="memory")
    try:
        proxy = ProxyAgent(agent.id, bus, timeout_s=5.0)
        response = await proxy.run("hello")
        updates = [update async for update in proxy.run_stream("again")]
    finally:
        await server.close(grace_s=1.0)

    assert_type(server, AgentServer)
    assert_type(response, AgentResponse)
    assert_type(updates, list[AgentResponseUpdate])
    assert response.text == "Hi."
    assert updates[-1].done


async def test_answering_a_request_nobody_waits_for_raises_no_responders() -> None:
    pending = PendingRequest(
        run_id="run-1",
        workflow_name="review",
        request_id="request-1",
        source_executor_id="reviewer",
        data={"draft": "text"},
        response_type="builtins.str",
        reply_subject="agentic.typing.reply",
    )

    with pytest.raises(NoRespondersError):
        await answer_request(InMemoryBus(), pending, "approved", timeout_s=1.0)


def test_the_errors_are_core_families() -> None:
    assert issubclass(NatsConnectionError, BusError)
    assert issubclass(PayloadTooLargeError, BusError)
    assert issubclass(NoWorkerError, WorkflowExecutionError)
