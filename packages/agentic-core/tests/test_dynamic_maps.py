"""Dynamic maps: several messages to one stateless executor in a superstep run concurrently,
and a collect edge hands the reduce side all of the map's results at once (LangGraph's Send)."""

from __future__ import annotations

import asyncio
from typing import Never

import pytest
from pydantic import BaseModel

from agentic_core import (
    Executor,
    GraphValidationError,
    RetryPolicy,
    Runtime,
    WorkflowBuilder,
    WorkflowContext,
    executor,
    handler,
    response_handler,
)


class Rendezvous:
    """Lets ``n`` branches through only once all ``n`` are in flight at the same time."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.arrived = 0
        self.all_here = asyncio.Event()

    async def meet(self) -> None:
        self.arrived += 1
        if self.arrived == self.n:
            self.all_here.set()
        # Handled one after another, the first branch would wait here for ever.
        async with asyncio.timeout(10):
            await self.all_here.wait()


@executor
async def split(n: int, ctx: WorkflowContext[int]) -> None:
    for k in range(n):
        await ctx.send_message(k)


async def test_a_stateless_executor_handles_each_message_of_a_superstep_concurrently(
    runtime: Runtime,
) -> None:
    rendezvous = Rendezvous(4)

    @executor
    async def branch(k: int, ctx: WorkflowContext[Never, int]) -> None:
        await rendezvous.meet()
        await ctx.yield_output(k * 10)

    workflow = WorkflowBuilder().set_start_executor(split).add_edge(split, branch).build()
    result = await workflow.run(4, runtime=runtime)
    assert result.outputs == [0, 10, 20, 30]


async def test_map_results_keep_delivery_order_whatever_finishes_first(runtime: Runtime) -> None:
    @executor
    async def slow_first(k: int, ctx: WorkflowContext[int, int]) -> None:
        await asyncio.sleep(0.001 * (5 - k))  # the first message finishes last
        await ctx.yield_output(k)
        await ctx.send_message(k)

    @executor
    async def after(k: int, ctx: WorkflowContext[Never, str]) -> None:
        await ctx.yield_output(f"after {k}")

    workflow = (
        WorkflowBuilder()
        .set_start_executor(split)
        .add_edge(split, slow_first)
        .add_edge(slow_first, after)
        .build()
    )
    result = await workflow.run(5, runtime=runtime)
    assert result.outputs == [0, 1, 2, 3, 4, "after 0", "after 1", "after 2", "after 3", "after 4"]


async def test_a_collect_edge_delivers_all_of_a_maps_results_as_one_list(runtime: Runtime) -> None:
    @executor
    async def square(k: int, ctx: WorkflowContext[int]) -> None:
        await asyncio.sleep(0.001 * (5 - k))
        await ctx.send_message(k * k)

    @executor
    async def total(squares: list[int], ctx: WorkflowContext[Never, list[int]]) -> None:
        await ctx.yield_output(squares)

    workflow = (
        WorkflowBuilder()
        .set_start_executor(split)
        .add_edge(split, square)
        .add_collect_edge(square, total)
        .build()
    )
    result = await workflow.run(5, runtime=runtime)
    assert result.outputs == [[0, 1, 4, 9, 16]]
    assert result.superstep_count == 3


async def test_a_collect_edge_delivers_nothing_in_a_superstep_its_source_sent_nothing() -> None:
    @executor
    async def keep_even(k: int, ctx: WorkflowContext[int]) -> None:
        if k % 2 == 0:
            await ctx.send_message(k)

    @executor
    async def report(found: list[int], ctx: WorkflowContext[Never, list[int]]) -> None:
        await ctx.yield_output(found)

    workflow = (
        WorkflowBuilder()
        .set_start_executor(split)
        .add_edge(split, keep_even)
        .add_collect_edge(keep_even, report)
        .build()
    )
    assert (await workflow.run(5)).outputs == [[0, 2, 4]]
    assert (await workflow.run(1)).outputs == [[0]]
    # One message, odd: nothing sent, nothing delivered.
    assert (await WorkflowBuilder().set_start_executor(keep_even).add_collect_edge(
        keep_even, report).build().run(3)).outputs == []  # fmt: skip


def test_a_collect_target_needs_a_handler_for_a_list() -> None:
    @executor
    async def one(k: int, ctx: WorkflowContext[int]) -> None:
        await ctx.send_message(k)

    @executor
    async def scalar(k: int, ctx: WorkflowContext) -> None:
        del k, ctx

    builder = WorkflowBuilder().set_start_executor(split).add_edge(split, one)
    with pytest.raises(GraphValidationError, match="collect target 'scalar' has no handler for"):
        builder.add_collect_edge(one, scalar).build()


async def test_a_failed_branch_is_retried_alone(runtime: Runtime) -> None:
    calls: list[tuple[int, int]] = []

    @executor(retry=RetryPolicy(max_attempts=2))
    async def fragile(k: int, ctx: WorkflowContext[Never, int]) -> None:
        calls.append((k, ctx.attempt))
        if k == 1 and ctx.attempt == 1:
            raise RuntimeError("branch 1 fails once")
        await ctx.yield_output(k)

    workflow = WorkflowBuilder().set_start_executor(split).add_edge(split, fragile).build()
    result = await workflow.run(3, runtime=runtime)
    assert result.outputs == [0, 1, 2]
    assert sorted(calls) == [(0, 1), (1, 1), (1, 2), (2, 1)]


class Ask(Executor):
    """Each branch asks its own question."""

    @handler
    async def ask(self, k: int, ctx: WorkflowContext[Never, str]) -> None:
        await ctx.request_info(f"question {k}", str)

    @response_handler
    async def answered(self, question: str, answer: str, ctx: WorkflowContext[Never, str]) -> None:
        await ctx.yield_output(f"{question} -> {answer}")


async def test_each_branch_of_a_map_gets_its_own_request_id(runtime: Runtime) -> None:
    ask = Ask("ask")
    workflow = WorkflowBuilder().set_start_executor(split).add_edge(split, ask).build()
    paused = await workflow.run(3, runtime=runtime)
    ids = [r.request_id for r in paused.pending_requests]
    assert len(set(ids)) == 3
    answers = {r.request_id: r.data.replace("question", "answer") for r in paused.pending_requests}
    done = await workflow.run(responses=answers, runtime=runtime)
    assert sorted(done.outputs) == [f"question {k} -> answer {k}" for k in range(3)]


def test_mermaid_draws_a_collect_edge() -> None:
    @executor
    async def square(k: int, ctx: WorkflowContext[int]) -> None:
        await ctx.send_message(k * k)

    @executor
    async def total(squares: list[int], ctx: WorkflowContext) -> None:
        del squares, ctx

    workflow = (
        WorkflowBuilder()
        .set_start_executor(split)
        .add_edge(split, square)
        .add_collect_edge(square, total)
        .build()
    )
    assert "n_square -.->|collect| n_total" in workflow.to_mermaid()


# --- LangGraph's map-reduce how-to (Send), ported ---------------------------------------------
# langgraph: generate_topics -> Send("generate_joke", {"subject": s}) for each subject ->
# generate_joke (one joke per subject, in parallel) -> jokes reduced with operator.add ->
# best_joke. Here the model calls are replaced by deterministic functions of the input.


class Subjects(BaseModel):
    subjects: list[str]


class Joke(BaseModel):
    subject: str
    text: str


class BestJoke(BaseModel):
    joke: str
    out_of: int


@executor
async def generate_topics(topic: str, ctx: WorkflowContext[str]) -> None:
    subjects = Subjects(subjects=[f"{topic} cats", f"{topic} dogs", f"{topic} otters"])
    for subject in subjects.subjects:  # continue_to_jokes: one Send per subject
        await ctx.send_message(subject)


jokes_in_flight: list[str] = []


@executor
async def generate_joke(subject: str, ctx: WorkflowContext[Joke]) -> None:
    jokes_in_flight.append(subject)
    await asyncio.sleep(0.01)  # a model call
    await ctx.send_message(Joke(subject=subject, text=f"Why did the {subject} cross the road?"))


@executor
async def best_joke(jokes: list[Joke], ctx: WorkflowContext[Never, BestJoke]) -> None:
    best = max(jokes, key=lambda joke: len(joke.subject))  # the model's choice
    await ctx.yield_output(BestJoke(joke=best.text, out_of=len(jokes)))


async def test_langgraph_map_reduce_one_joke_per_subject(runtime: Runtime) -> None:
    jokes_in_flight.clear()
    workflow = (
        WorkflowBuilder("map-reduce")
        .set_start_executor(generate_topics)
        .add_edge(generate_topics, generate_joke)
        .add_collect_edge(generate_joke, best_joke)
        .build()
    )
    result = await workflow.run("animals", runtime=runtime)
    assert result.outputs == [BestJoke(joke="Why did the animals otters cross the road?", out_of=3)]
    assert sorted(jokes_in_flight) == ["animals cats", "animals dogs", "animals otters"]
    assert result.superstep_count == 3
