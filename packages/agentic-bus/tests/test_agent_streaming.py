"""A workflow of AgentExecutors streams over NatsRuntime as it does locally (a real nats-server).

The worker runs its own build of the workflow, as a worker process does: its registry encodes
the agents' ``AgentResponseUpdate``s (in ``AgentRunUpdateEvent.update: Any``, declared by no
handler) and the coordinator's registry, which never encoded one, decodes them.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from typing import Any

from pydantic import BaseModel

from agentic_bus import NatsBus, NatsEventSink, NatsRuntime, PoolSettings, Worker, replay_events
from agentic_core import (
    AgentExecutor,
    AgentResponse,
    AgentResponseUpdate,
    AgentRunUpdateEvent,
    AgentThread,
    ChatAgent,
    ChatMessage,
    ChatOptions,
    ContinuationToken,
    Workflow,
    WorkflowBuilder,
    WorkflowEvent,
    WorkflowOutputEvent,
    WorkflowStartedEvent,
)
from agentic_core.testing import ScriptedChatClient

SETTINGS = PoolSettings(ack_wait_s=1.0, max_deliver=3)


class Gate:
    """Holds each agent after an update until the coordinator's stream has shown it.

    Live updates are best effort (core NATS): one still in flight when the result arrives is
    dropped. Waiting makes every update count, so a dropped one (an undecodable one) shows.
    """

    def __init__(self) -> None:
        self.sent = 0
        self.shown = 0
        self.changed = asyncio.Condition()

    async def wait_shown(self) -> None:
        self.sent += 1
        target = self.sent
        async with self.changed:
            await self.changed.wait_for(lambda: self.shown >= target)

    async def show(self) -> None:
        async with self.changed:
            self.shown += 1
            self.changed.notify_all()


class GatedAgent(ChatAgent):
    """A ChatAgent whose stream waits at its gate after each update."""

    def __init__(self, reply: str, name: str, gate: Gate | None) -> None:
        super().__init__(ScriptedChatClient([reply]), name=name)
        self.gate = gate

    async def run_stream(
        self,
        messages: str | ChatMessage | Sequence[ChatMessage] | None = None,
        *,
        thread: AgentThread | None = None,
        options: ChatOptions | None = None,
        response_format: type[BaseModel] | None = None,
        continuation_token: ContinuationToken | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[AgentResponseUpdate]:
        async for update in super().run_stream(
            messages,
            thread=thread,
            options=options,
            response_format=response_format,
            continuation_token=continuation_token,
            **kwargs,
        ):
            yield update
            if self.gate is not None:
                await self.gate.wait_shown()


def agent_chain(gate: Gate | None = None) -> Workflow:
    """A writer agent, then an editor agent whose response is the output."""
    first = AgentExecutor(GatedAgent("one two three", "writer", gate), id="writer")
    second = AgentExecutor(
        GatedAgent("four five", "editor", gate), id="editor", output_response=True
    )
    return WorkflowBuilder("agents").set_start_executor(first).add_edge(first, second).build()


def update_texts(events: list[WorkflowEvent]) -> list[tuple[str, str, bool]]:
    return [
        (e.executor_id, e.update.text, e.update.done)
        for e in events
        if isinstance(e, AgentRunUpdateEvent) and isinstance(e.update, AgentResponseUpdate)
    ]


async def test_agent_updates_and_responses_cross_the_bus(nats_server: str) -> None:
    coordinator = agent_chain()
    gate = Gate()
    worker = Worker(agent_chain(gate), nats_server, slots=2, settings=SETTINGS)
    serving = asyncio.create_task(worker.run())
    remote: list[WorkflowEvent] = []
    try:
        await worker.wait_ready()
        async with (
            NatsRuntime(nats_server, settings=SETTINGS, worker_wait_s=5) as runtime,
            NatsBus(nats_server) as bus,
            # Bounds a hang only: an update the coordinator drops never opens the gate.
            asyncio.timeout(30),
        ):
            async with NatsEventSink(bus, workflow=coordinator) as sink:
                async for event in sink.record(coordinator.run_stream("go", runtime=runtime)):
                    remote.append(event)
                    if isinstance(event, AgentRunUpdateEvent):
                        await gate.show()
            local = [e async for e in agent_chain().run_stream("go")]
            assert update_texts(remote) == update_texts(local)
            writer = "".join(t for who, t, _ in update_texts(remote) if who == "writer")
            assert writer == "one two three"
            [output] = [e.data for e in remote if isinstance(e, WorkflowOutputEvent)]
            assert isinstance(output, AgentResponse)
            assert output.text == "four five"
            done = [
                e.update for e in remote if isinstance(e, AgentRunUpdateEvent) and e.update.done
            ]
            assert done[-1].response == output  # the done update carries the whole response
            # No workflow: a dashboard's process decodes core's AgentResponse all the same.
            assert isinstance(remote[0], WorkflowStartedEvent)
            replayed = [
                e.data
                async for e in replay_events(bus, remote[0].run_id, kinds=["output"])
                if isinstance(e, WorkflowOutputEvent)
            ]
            assert replayed == [output]
    finally:
        worker.stop()
        await serving
