# pyright: strict
"""Type-checked (pyright strict) uses of the engine API: this file fails CI if the types regress.

It also runs as a test module, so the examples stay executable.
"""

from __future__ import annotations

from typing import Never, assert_type

from pydantic import BaseModel

from agentic_core import (
    Case,
    Default,
    Executor,
    FunctionExecutor,
    InMemoryCheckpointStore,
    RetryPolicy,
    RunSnapshot,
    RunStatus,
    Workflow,
    WorkflowBuilder,
    WorkflowContext,
    WorkflowEvent,
    WorkflowRunResult,
    WorkflowRunState,
    executor,
    handler,
)


class Ticket(BaseModel):
    text: str


class Triage(Executor):
    @handler
    async def triage(self, ticket: Ticket, ctx: WorkflowContext[str]) -> None:
        await ctx.send_message(ticket.text)


@executor
async def shout(text: str, ctx: WorkflowContext[Never, str]) -> None:
    await ctx.yield_output(text.upper())


@executor(id="quiet", retry=RetryPolicy(max_attempts=2))
async def quiet(text: str, ctx: WorkflowContext[Never, str]) -> None:
    await ctx.yield_output(text.lower())


assert_type(shout, FunctionExecutor)
assert_type(quiet, FunctionExecutor)


def build() -> Workflow:
    triage = Triage("triage")
    builder = WorkflowBuilder("typing", max_supersteps=10).set_start_executor(triage)
    assert_type(builder, WorkflowBuilder)
    return (
        builder.add_switch_edge(
            triage, [Case(lambda text: text.endswith("!"), shout), Default(quiet)]
        )
        .with_checkpointing(InMemoryCheckpointStore())
        .build()
    )


async def test_typed_run() -> None:
    result = await build().run(Ticket(text="Help!"))
    assert_type(result, WorkflowRunResult)
    assert_type(result.status, WorkflowRunState)
    assert result.get_outputs() == ["HELP!"]
    async for event in build().run_stream(Ticket(text="fine")):
        assert_type(event, WorkflowEvent)


async def test_typed_get_state() -> None:
    workflow = build()
    result = await workflow.run(Ticket(text="Help!"))
    state = await workflow.get_state(result.run_id)
    assert_type(state, RunSnapshot)
    assert_type(state.status, RunStatus)
    assert (state.status, state.outputs) == ("completed", ["HELP!"])
