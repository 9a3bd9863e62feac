"""Workflows the distributed tests run: importable by worker processes (``bus_graphs:NAME``).

Misbehaviour is driven by files in the directory named by ``AGENTIC_TEST_FLAGS`` (shared by
the test and its worker processes), so a kill point is deterministic: e.g. ``hang-<exec>``
makes that executor wait until the file ``release-<exec>`` exists, after printing GOT.
"""

from __future__ import annotations

import asyncio
import os
import random
import sys
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from agentic_core import (
    AgentRunUpdateEvent,
    Case,
    Default,
    Executor,
    RetryPolicy,
    Workflow,
    WorkflowBuilder,
    WorkflowContext,
    handler,
    response_handler,
)


def _flags() -> Path | None:
    value = os.environ.get("AGENTIC_TEST_FLAGS")
    return Path(value) if value else None


def _flag(name: str) -> bool:
    flags = _flags()
    return flags is not None and (flags / name).exists()


def _record(name: str, line: str) -> None:
    flags = _flags()
    if flags is not None:
        with (flags / name).open("a") as f:
            f.write(line + "\n")


async def _hang_if_flagged(executor_id: str, invocation_id: str) -> None:
    """With ``hang-<exec>`` and no ``release-<exec>``: print GOT and wait for the release."""
    if _flag(f"hang-{executor_id}") and not _flag(f"release-{executor_id}"):
        print(f"GOT {invocation_id}", flush=True)
        while not _flag(f"release-{executor_id}"):  # noqa: ASYNC110 - another process's file
            await asyncio.sleep(0.02)


class Blob(BaseModel):
    """A large payload (claim-check tests)."""

    text: str


class Step(Executor):
    """Adds its number, records each execution, misbehaves when a flag file says so."""

    def __init__(self, executor_id: str, add: int) -> None:
        super().__init__(executor_id)
        self.add = add

    @handler
    async def on_int(self, message: int, ctx: WorkflowContext[int, int]) -> None:
        await self._step(message, ctx)

    @handler
    async def on_list(self, message: list[int], ctx: WorkflowContext[int, int]) -> None:
        await self._step(sum(message), ctx)

    async def _step(self, value: int, ctx: WorkflowContext[int, int]) -> None:
        _record(f"ran-{self.id}", ctx.invocation_id)
        pause = float(os.environ.get("AGENTIC_TEST_STEP_SLEEP", "0"))
        if pause:
            await asyncio.sleep(pause)
        await _hang_if_flagged(self.id, ctx.invocation_id)
        if _flag(f"block-{self.id}"):  # a blocking executor: no heartbeat while it runs
            print(f"BLOCK {ctx.invocation_id}", flush=True)
            time.sleep(1.6)  # noqa: ASYNC251 - blocking on purpose
        if _flag(f"poison-{self.id}"):
            print(f"POISON {ctx.invocation_id}", flush=True)
            sys.stdout.flush()
            os._exit(3)
        if _flag(f"fail-{self.id}") and ctx.attempt < 3:
            raise RuntimeError(f"{self.id} fails on attempt {ctx.attempt}")
        if ctx.previous_errors:
            _record(f"previous-{self.id}", str(len(ctx.previous_errors)))
        out = value + self.add
        await ctx.yield_output(out)
        await ctx.send_message(out)


class Sink(Executor):
    """Ends a branch: yields what it gets."""

    @handler
    async def on_int(self, message: int, ctx: WorkflowContext[None, int]) -> None:
        await ctx.yield_output(message * 10)

    @handler
    async def on_list(self, message: list[int], ctx: WorkflowContext[None, int]) -> None:
        await ctx.yield_output(sum(message) * 10)


def loop(rounds: int = 6) -> Workflow:
    """start -> fan-out a, b, c -> fan-in join -> back to the fan-out while below a bound:
    ``rounds`` rounds of 2 supersteps, outputs at every step (crash tests)."""
    start, a, b, c = Step("start", 1), Step("a", 10), Step("b", 100), Step("c", 1000)
    join = Step("join", 0)
    limit = 1116 * 3**rounds  # join roughly triples each round
    return (
        WorkflowBuilder("bus-loop", max_supersteps=4 * rounds + 4)
        .set_start_executor(start)
        .add_fan_out_edge(start, [a, b, c])
        .add_fan_out_edge(
            join, [a, b, c], selection=lambda m, n: list(range(n)) if m < limit else []
        )
        .add_fan_in_edge([a, b, c], join)
        .build()
    )


def pipeline() -> Workflow:
    """start -> fan-out a, b, c -> fan-in join -> tail -> sink (5 supersteps)."""
    start, a, b, c = Step("start", 1), Step("a", 10), Step("b", 100), Step("c", 1000)
    join, tail, sink = Step("join", 0), Step("tail", 7), Sink("sink")
    retry = RetryPolicy(max_attempts=3, backoff_s=0.05)
    a.retry = retry
    return (
        WorkflowBuilder("bus-pipeline")
        .set_start_executor(start)
        .add_fan_out_edge(start, [a, b, c])
        .add_fan_in_edge([a, b, c], join)
        .add_edge(join, tail)
        .add_edge(tail, sink)
        .build()
    )


class Echo(Executor):
    """Echoes a Blob (claim-check tests)."""

    @handler
    async def on_blob(self, message: Blob, ctx: WorkflowContext[Blob, Blob]) -> None:
        await ctx.yield_output(Blob(text=message.text[::-1]))


def large() -> Workflow:
    """One executor echoing a large pydantic payload."""
    return WorkflowBuilder("bus-large").set_start_executor(Echo("echo")).build()


# -- random graphs (parity with LocalRuntime) -----------------------------------------------------


class Node(Executor):
    """A node of a random graph: a deterministic function of its input."""

    def __init__(self, executor_id: str, factor: int, emit: bool) -> None:
        super().__init__(executor_id)
        self.factor = factor
        self.emit = emit

    @handler
    async def on_int(self, message: int, ctx: WorkflowContext[int, int]) -> None:
        await self._step(message, ctx)

    @handler
    async def on_list(self, message: list[int], ctx: WorkflowContext[int, int]) -> None:
        await self._step(sum(message) + len(message), ctx)

    async def _step(self, value: int, ctx: WorkflowContext[int, int]) -> None:
        out = (value * self.factor + 3) % 1000
        # Shared state crosses the wire both ways. A read-modify-write of one key would be a
        # lost update when this executor handles several messages concurrently (a map), so
        # each superstep reads the last one's count and writes its own key.
        step = ctx.superstep
        state = await ctx.get_shared_state(f"seen.{ctx.executor_id}.{step - 1}") if step else None
        await ctx.set_shared_state(f"seen.{ctx.executor_id}.{step}", (state or 0) + 1)
        if self.emit:
            await ctx.yield_output(out)
        await ctx.send_message(out)


def random_graph(seed: int) -> Workflow:
    """A random DAG over all five edge types, from ``seed`` (the same in every process)."""
    rng = random.Random(seed)
    n = rng.randint(4, 8)
    nodes = [Node(f"n{i}", rng.randint(2, 9), emit=rng.random() < 0.6) for i in range(n)]
    builder = WorkflowBuilder(f"random-{seed}").set_start_executor(nodes[0])
    for node in nodes:
        builder.add_executor(node)
    reached = {0}
    for i in range(1, n):
        src = rng.choice(sorted(x for x in reached if x < i))
        kind = rng.choice(["direct", "conditional", "switch", "fan_out", "fan_in"])
        if kind == "fan_in" and len([x for x in reached if x < i]) >= 2:
            sources = rng.sample(sorted(x for x in reached if x < i), 2)
            builder.add_fan_in_edge([nodes[s] for s in sources], nodes[i])
            builder.add_edge(nodes[src], nodes[i])  # so it is reached even if a source is not
        elif kind == "conditional":
            modulus = rng.randint(2, 3)
            builder.add_conditional_edge(
                nodes[src], nodes[i], lambda m, k=modulus: _value(m) % k != 0
            )
            builder.add_edge(nodes[src], nodes[i]) if rng.random() < 0.3 else None
        elif kind == "switch" and i + 1 < n:
            modulus = rng.randint(2, 4)
            builder.add_switch_edge(
                nodes[src],
                [Case(lambda m, k=modulus: _value(m) % k == 0, nodes[i]), Default(nodes[i + 1])],
            )
            reached.add(i + 1)
        elif kind == "fan_out" and i + 1 < n:
            builder.add_fan_out_edge(nodes[src], [nodes[i], nodes[i + 1]])
            reached.add(i + 1)
        else:
            builder.add_edge(nodes[src], nodes[i])
        reached.add(i)
    return builder.build()


class Streamer(Executor):
    """Streams three updates while it runs, like an agent, then outputs the text."""

    streams_live = True

    @handler
    async def on_text(self, message: str, ctx: WorkflowContext[str, str]) -> None:
        for word in message.split():
            await ctx.add_event(AgentRunUpdateEvent(executor_id=self.id, update=word))
            await asyncio.sleep(0.01)
        await ctx.yield_output(message.upper())


def streaming() -> Workflow:
    """One streaming executor (live updates go worker -> coordinator over core NATS)."""
    return WorkflowBuilder("streaming").set_start_executor(Streamer("talker")).build()


class Question(BaseModel):
    """What the approval graph asks a person."""

    text: str


class Drafter(Executor):
    @handler
    async def on_text(self, message: str, ctx: WorkflowContext[str, str]) -> None:
        await ctx.yield_output(f"draft: {message}")
        await ctx.send_message(message.upper())


class Approver(Executor):
    """Asks whether to publish; publishes (an output) once answered."""

    @handler
    async def on_text(self, message: str, ctx: WorkflowContext[None, str]) -> None:
        await ctx.request_info(Question(text=f"publish {message}?"), bool)

    @response_handler
    async def on_answer(
        self, question: Question, answer: bool, ctx: WorkflowContext[None, str]
    ) -> None:
        await ctx.yield_output(f"{question.text} {'yes' if answer else 'no'}")


def approval() -> Workflow:
    """drafter -> approver, which pauses on a request (human-in-the-loop tests)."""
    drafter, approver = Drafter("drafter"), Approver("approver")
    return (
        WorkflowBuilder("bus-approval")
        .set_start_executor(drafter)
        .add_edge(drafter, approver)
        .build()
    )


class Splitter(Executor):
    @handler
    async def on_int(self, message: int, ctx: WorkflowContext[int]) -> None:
        for i in range(message):
            await ctx.send_message(i + 1)


class Square(Executor):
    """Stateless: several messages in one superstep run as a dynamic map."""

    @handler
    async def on_int(self, message: int, ctx: WorkflowContext[int]) -> None:
        _record(f"ran-{self.id}", ctx.invocation_id)
        await ctx.send_message(message * message)


class Total(Executor):
    @handler
    async def on_list(self, message: list[int], ctx: WorkflowContext[None, list[int]]) -> None:
        await ctx.yield_output(message)


def mapped(width: int = 5) -> Workflow:
    """split -> square (a dynamic map of ``width`` branches) -> collect -> total."""
    split, square, total = Splitter("split"), Square("square"), Total("total")
    return (
        WorkflowBuilder(f"bus-map-{width}")
        .set_start_executor(split)
        .add_edge(split, square)
        .add_collect_edge(square, total)
        .build()
    )


# -- LangGraph's map-reduce how-to ("Map-Reduce and the Send API"), ported --------------------
# Their graph: START -> generate_topics -(Send per subject)-> generate_joke -> best_joke -> END,
# with ``jokes: Annotated[list[str], operator.add]`` gathering the map. Ours: a message per
# subject to a stateless executor (a dynamic map, one task per subject on the workers) and a
# collect edge in place of the list reducer.

JOKES = {
    "lions": "Why don't lions like fast food? Because they can't catch it!",
    "elephants": "Why don't elephants use computers? They're afraid of the mouse!",
    "penguins": (
        "Why don't penguins like talking to strangers at parties? "
        "Because they find it hard to break the ice."
    ),
}


class GenerateTopics(Executor):
    @handler
    async def on_topic(self, state: dict[str, str], ctx: WorkflowContext[dict[str, str]]) -> None:
        for subject in ["lions", "elephants", "penguins"]:  # continue_to_jokes: one Send each
            await ctx.send_message({"subject": subject})


class GenerateJoke(Executor):
    @handler
    async def on_subject(
        self, state: dict[str, str], ctx: WorkflowContext[dict[str, list[str]]]
    ) -> None:
        _record(f"ran-{self.id}", ctx.invocation_id)
        await _hang_if_flagged(self.id, ctx.invocation_id)
        await ctx.send_message({"jokes": [JOKES[state["subject"]]]})


class BestJoke(Executor):
    @handler
    async def on_jokes(
        self, updates: list[dict[str, list[str]]], ctx: WorkflowContext[None, dict[str, Any]]
    ) -> None:
        jokes = [joke for update in updates for joke in update["jokes"]]  # operator.add
        await ctx.yield_output({"jokes": jokes, "best_selected_joke": "penguins"})


def jokes() -> Workflow:
    """LangGraph's map-reduce sample: topics -> a joke per subject (map) -> the best joke."""
    topics, joke, best = (
        GenerateTopics("generate_topics"),
        GenerateJoke("generate_joke"),
        BestJoke("best_joke"),
    )
    return (
        WorkflowBuilder("bus-jokes")
        .set_start_executor(topics)
        .add_edge(topics, joke)
        .add_collect_edge(joke, best)
        .build()
    )


def _value(message: Any) -> int:
    return sum(message) if isinstance(message, list) else int(message)


def build(name: str | None = None) -> Workflow:
    """The graph named by ``name`` or ``AGENTIC_TEST_GRAPH`` (``pipeline``, ``large``,
    ``random-<seed>``): the factory worker processes load."""
    chosen = name or os.environ.get("AGENTIC_TEST_GRAPH", "pipeline")
    if chosen.startswith("random-"):
        return random_graph(int(chosen.removeprefix("random-")))
    return {
        "pipeline": pipeline,
        "large": large,
        "loop": loop,
        "streaming": streaming,
        "approval": approval,
        "mapped": mapped,
        "jokes": jokes,
    }[chosen]()
