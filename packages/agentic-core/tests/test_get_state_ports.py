"""LangGraph tests of ``get_state`` after an interrupt, after a resume and after completion,
ported to ``Workflow.get_state`` (``RunSnapshot``).

How their names map to ours: a thread is a run (``run_id``); ``interrupt(value)`` inside a node
is ``ctx.request_info(value, type)`` and the node's code after it is a ``@response_handler``;
``invoke(Command(resume=x), config)`` is ``run(checkpoint_id=<latest>, responses={id: x})``;
``state.values`` is ``shared_state`` (what the graph wrote) and the run's ``outputs``;
``state.interrupts`` / ``state.tasks[i].interrupts`` are ``pending_requests``. A node's
locals between two interrupts (LangGraph re-runs the node and replays the answers) live in the
executor's checkpointed state (``snapshot_state`` / ``restore_state``).
"""

from __future__ import annotations

from typing import Any, Never

import pytest

from agentic_core import (
    Executor,
    InMemoryCheckpointStore,
    Workflow,
    WorkflowBuilder,
    WorkflowContext,
    WorkflowRunState,
    handler,
    response_handler,
)

# -- tests/test_pregel.py::test_multiple_interrupt_state_persistence ---------------------------


class InterruptibleNode(Executor):
    """``interruptible_node``: two interrupts, then returns ``{"steps": [first, second]}``."""

    def __init__(self, id: str) -> None:  # noqa: A002
        super().__init__(id)
        self.answers: list[str] = []

    def snapshot_state(self) -> list[str]:
        return list(self.answers)

    def restore_state(self, state: Any) -> None:
        self.answers = list(state or [])

    @handler
    async def on(self, state: dict[str, list[str]], ctx: WorkflowContext[Never, Any]) -> None:
        await ctx.set_shared_state("steps", state["steps"])  # the graph's input
        await ctx.request_info("First interrupt", str)

    @response_handler
    async def resumed(self, asked: str, answer: str, ctx: WorkflowContext[Never, Any]) -> None:
        self.answers.append(answer)
        if asked == "First interrupt":
            await ctx.request_info("Second interrupt", str)
            return
        first, second = self.answers
        # operator.add reducer on "steps"
        steps = [*await ctx.get_shared_state("steps", []), first, second]
        await ctx.set_shared_state("steps", steps)
        await ctx.yield_output({"steps": steps})


async def test_multiple_interrupt_state_persistence() -> None:
    """Test that state is preserved correctly across multiple interrupts."""
    store = InMemoryCheckpointStore()

    def build() -> Workflow:
        node = InterruptibleNode("node")
        return WorkflowBuilder("multi_interrupt").set_start_executor(node).build()

    app = build()

    # First execution - should hit first interrupt
    first = await app.run({"steps": []}, checkpoint_store=store)
    config = first.run_id

    # State should still be empty since node hasn't returned
    state = await app.get_state(config, checkpoint_store=store)
    assert state.shared_state == {"steps": []}
    assert state.outputs == []
    assert [r.data for r in state.pending_requests] == ["First interrupt"]

    # Resume after first interrupt - should hit second interrupt
    # (a new Workflow object, as another process would)
    await build().run(
        checkpoint_id=state.checkpoint_id,
        checkpoint_store=store,
        responses={state.pending_requests[0].request_id: "step1"},
    )

    # State should still be empty since node hasn't returned
    state = await app.get_state(config, checkpoint_store=store)
    assert state.shared_state == {"steps": []}
    assert state.outputs == []
    assert [r.data for r in state.pending_requests] == ["Second interrupt"]

    # Resume after second interrupt - node should complete
    result = await build().run(
        checkpoint_id=state.checkpoint_id,
        checkpoint_store=store,
        responses={state.pending_requests[0].request_id: "step2"},
    )

    # Now state should contain both steps since node returned
    assert result.outputs[-1]["steps"] == ["step1", "step2"]
    state = await app.get_state(config, checkpoint_store=store)
    assert state.shared_state["steps"] == ["step1", "step2"]
    assert state.status == "completed"
    assert state.outputs == [{"steps": ["step1", "step2"]}]


# -- tests/test_pregel_async.py::test_handles_multiple_interrupts_from_tasks -------------------


class AddParticipant(Executor):
    """The ``@task add_participant``: asks, then answers its caller."""

    @handler
    async def add(self, name: str, ctx: WorkflowContext[str]) -> None:
        await ctx.request_info(f"Hey do you want to add {name}?", bool)

    @response_handler
    async def feedback(self, asked: str, feedback: bool, ctx: WorkflowContext[str]) -> None:
        name = asked.removeprefix("Hey do you want to add ").removesuffix("?")
        if feedback is False:
            await ctx.send_message(f"The user changed their mind and doesn't want to add {name}!")
            return
        if feedback is True:  # pyright: ignore[reportUnnecessaryComparison]
            await ctx.send_message(f"Added {name}!")
            return
        raise ValueError("Invalid feedback")


class Program(Executor):
    """The ``@entrypoint program``: ``first = add_participant("James")``, then ``second =
    add_participant("Will")``, returns ``[first, second]``; its locals are its state."""

    def __init__(self, id: str) -> None:  # noqa: A002
        super().__init__(id)
        self.results: list[str] = []

    def snapshot_state(self) -> list[str]:
        return list(self.results)

    def restore_state(self, state: Any) -> None:
        self.results = list(state or [])

    @handler
    async def start(self, _state: dict[str, str], ctx: WorkflowContext[str, list[str]]) -> None:
        await ctx.send_message("James")

    @handler
    async def task_done(self, result: str, ctx: WorkflowContext[str, list[str]]) -> None:
        self.results.append(result)
        if len(self.results) == 1:
            await ctx.send_message("Will")
        else:
            await ctx.yield_output(list(self.results))


def participants() -> Workflow:
    program, add_participant = Program("program"), AddParticipant("add_participant")
    return (
        WorkflowBuilder("program")
        .set_start_executor(program)
        .add_edge(program, add_participant)
        .add_edge(add_participant, program)
        .build()
    )


async def test_handles_multiple_interrupts_from_tasks() -> None:
    store = InMemoryCheckpointStore()
    program = participants()

    result = await program.run({"_": "this is ignored"}, checkpoint_store=store)
    assert result.status == WorkflowRunState.IDLE_WITH_PENDING_REQUESTS
    assert [r.data for r in result.pending_requests] == ["Hey do you want to add James?"]
    config = result.run_id

    state = await program.get_state(config, checkpoint_store=store)
    assert len(state.pending_requests) == 1
    task_interrupt = state.pending_requests[0]
    assert task_interrupt.data == "Hey do you want to add James?"
    assert task_interrupt.source_executor_id == "add_participant"

    result = await program.run(
        checkpoint_id=state.checkpoint_id,
        checkpoint_store=store,
        responses={task_interrupt.request_id: True},
    )
    assert [r.data for r in result.pending_requests] == ["Hey do you want to add Will?"]

    state = await program.get_state(config, checkpoint_store=store)
    assert len(state.pending_requests) == 1
    task_interrupt = state.pending_requests[0]
    assert task_interrupt.data == "Hey do you want to add Will?"

    result = await program.run(
        checkpoint_id=state.checkpoint_id,
        checkpoint_store=store,
        responses={task_interrupt.request_id: True},
    )
    assert result.status == WorkflowRunState.COMPLETED
    (outcome,) = result.outputs
    assert len(outcome) == 2
    assert outcome[0] == "Added James!"
    assert outcome[1] == "Added Will!"
    assert (await program.get_state(config, checkpoint_store=store)).outputs == [outcome]


# -- tests/test_pregel.py::test_multi_resume ---------------------------------------------------


class AssignWorkers(Executor):
    """``assign_workers``: one ``Send("child_graph", {"prompt": p})`` per prompt."""

    @handler
    async def assign(self, state: dict[str, list[str]], ctx: WorkflowContext[str]) -> None:
        await ctx.set_shared_state("prompts", state["prompts"])
        for prompt in state["prompts"]:
            await ctx.send_message(prompt)


class GetHumanInput(Executor):
    """The child graph's ``get_human_input``: ``interrupt(state["prompt"])``."""

    @handler
    async def ask(self, prompt: str, ctx: WorkflowContext[str]) -> None:
        await ctx.request_info(prompt, str)

    @response_handler
    async def answered(self, prompt: str, human_input: str, ctx: WorkflowContext[str]) -> None:
        await ctx.send_message(human_input)


class Cleanup(Executor):
    """``cleanup``: every prompt got its human input (``human_inputs`` merged by
    ``operator.add``: a collect edge hands them over at once)."""

    @handler
    async def cleanup(
        self, human_inputs: list[str], ctx: WorkflowContext[Never, dict[str, list[str]]]
    ) -> None:
        prompts: list[str] = await ctx.get_shared_state("prompts")
        assert len(human_inputs) == len(prompts)
        await ctx.set_shared_state("human_inputs", human_inputs)
        await ctx.yield_output({"prompts": prompts, "human_inputs": human_inputs})


@pytest.mark.parametrize("prompts", [["a", "b", "c", "d", "e"]])
async def test_multi_resume(prompts: list[str]) -> None:
    store = InMemoryCheckpointStore()
    assign, child, cleanup = (
        AssignWorkers("assign"),
        GetHumanInput("child_graph"),
        Cleanup("cleanup"),
    )
    parent_graph = (
        WorkflowBuilder("parent")
        .set_start_executor(assign)
        .add_edge(assign, child)
        .add_collect_edge(child, cleanup)
        .build()
    )

    events = await parent_graph.run({"prompts": prompts}, checkpoint_store=store)

    assert len(events.pending_requests) == len(prompts)
    interrupt_values = {i.data for i in events.pending_requests}
    assert interrupt_values == set(prompts)

    state = await parent_graph.get_state(events.run_id, checkpoint_store=store)
    resume_map: dict[str, str] = {
        i.request_id: f"human input for prompt {i.data}" for i in state.pending_requests
    }

    result = await parent_graph.run(
        checkpoint_id=state.checkpoint_id, checkpoint_store=store, responses=resume_map
    )
    assert result.outputs[-1] == {
        "prompts": prompts,
        "human_inputs": [f"human input for prompt {prompt}" for prompt in prompts],
    }
    state = await parent_graph.get_state(events.run_id, checkpoint_store=store)
    assert state.status == "completed"
    assert state.outputs == result.outputs
    assert state.shared_state == result.outputs[-1]
