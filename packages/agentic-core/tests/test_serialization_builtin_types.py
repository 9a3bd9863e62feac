"""Core's own message and agent payload types decode in any process, declared or not.

A distributed runtime encodes a result with the worker's registry and decodes it with the
coordinator's, two registries that saw different values. An agent's streamed
``AgentResponseUpdate`` travels in ``AgentRunUpdateEvent.update: Any``, which no handler
declares: it must decode anyway. A user's undeclared type still must not.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import pytest
from pydantic import BaseModel

from agentic_core import (
    AgentExecutor,
    AgentExecutorResponse,
    AgentResponse,
    AgentResponseUpdate,
    AgentRunUpdateEvent,
    ChatAgent,
    ChatMessage,
    ChatResponseUpdate,
    FinishReason,
    FunctionCallContent,
    Invocation,
    InvocationResult,
    Role,
    SerializationError,
    ToolCallDelta,
    TypeRegistry,
    UsageDetails,
    Workflow,
    WorkflowBuilder,
    WorkflowGraph,
    WorkflowOutputEvent,
)
from agentic_core.testing import ScriptedChatClient


class Unlisted(BaseModel):
    """A user type no handler declares."""

    name: str


def agent_chain() -> Workflow:
    """Two agents, the second one's response an output; built afresh per "process"."""
    writer = ChatAgent(ScriptedChatClient(["one two three"]), name="writer")
    editor = ChatAgent(ScriptedChatClient(["four five"]), name="editor")
    first = AgentExecutor(writer, id="writer")
    second = AgentExecutor(editor, id="editor", output_response=True)
    return WorkflowBuilder("agents").set_start_executor(first).add_edge(first, second).build()


class TwoProcessRuntime:
    """Runs each invocation on a separately built copy of the workflow (the "worker"), whose
    registry encodes the result; the coordinator's registry decodes it, as over a bus."""

    def __init__(self, worker: Workflow) -> None:
        self.worker = worker

    async def execute(
        self, workflow: WorkflowGraph, invocations: Sequence[Invocation]
    ) -> list[InvocationResult]:
        results: list[InvocationResult] = []
        for invocation in invocations:
            wire = json.dumps(workflow.type_registry.encode(invocation.to_data()))
            received = Invocation.from_data(self.worker.type_registry.decode(json.loads(wire)))
            result = await self.worker.run_invocation(received)
            wire = json.dumps(self.worker.type_registry.encode(result.to_data()))
            results.append(
                InvocationResult.from_data(workflow.type_registry.decode(json.loads(wire)))
            )
        return results


async def test_agent_updates_stream_through_a_coordinator_that_never_encoded_one() -> None:
    coordinator = agent_chain()
    runtime = TwoProcessRuntime(worker=agent_chain())
    events = [e async for e in coordinator.run_stream("go", runtime=runtime)]
    updates = [e for e in events if isinstance(e, AgentRunUpdateEvent)]
    assert all(isinstance(e.update, AgentResponseUpdate) for e in updates)
    writer_text = " ".join(
        e.update.text for e in updates if e.executor_id == "writer" and not e.update.done
    )
    assert writer_text.split() == ["one", "two", "three"]
    [output] = [e.data for e in events if isinstance(e, WorkflowOutputEvent)]
    assert isinstance(output, AgentResponse)
    assert output.text == "four five"


def test_a_fresh_registry_decodes_what_another_encoded() -> None:
    response = AgentResponse(
        messages=[
            ChatMessage.assistant("hi"),
            ChatMessage.assistant(
                contents=[FunctionCallContent(call_id="1", name="f", arguments={"x": 1})]
            ),
        ],
        text="hi",
        usage=UsageDetails(input_tokens=3, output_tokens=1),
        agent_id="a",
    )
    values = [
        AgentRunUpdateEvent(
            executor_id="writer",
            update=AgentResponseUpdate(text="hi", done=True, response=response),
        ),
        AgentExecutorResponse(
            executor_id="writer",
            agent_response=response,
            full_conversation=[ChatMessage.user("q"), *response.messages],
        ),
        ChatResponseUpdate(
            text="x",
            tool_call_deltas=[ToolCallDelta(call_id="1", name="f")],
            finish_reason=FinishReason.STOP,
        ),
        Role.TOOL,
    ]
    for value in values:
        wire = json.dumps(TypeRegistry().encode(value))
        assert TypeRegistry().decode(json.loads(wire)) == value


def test_an_undeclared_user_type_still_does_not_decode() -> None:
    wire = json.dumps(
        TypeRegistry().encode(AgentRunUpdateEvent(executor_id="e", update=Unlisted(name="x")))
    )
    with pytest.raises(SerializationError, match=r"Unlisted.*not in the type registry"):
        TypeRegistry().decode(json.loads(wire))
