"""Child process of test_crash_resume.py: runs (or resumes) a checkpointed ~21-superstep workflow.

Usage::

    python crash_resume_child.py run <store_dir> [options]              # a new run
    python crash_resume_child.py resume <store_dir> <run_id> [options]  # from its latest checkpoint

Options: ``--durability sync|async|exit`` (the run's checkpoint writes, ``sync`` by default) and
``--ask`` (``head`` asks for a go-ahead at round ``ASK_ROUND``: the run pauses, and this process
answers at once, as does a process resuming it from the pause).

It prints one JSON object per line and flushes each: ``started`` (run id), ``resumed``
(checkpoint id, superstep, outputs_so_far), ``output`` (data), ``superstep`` (index), ``paused``
(the superstep it paused after; it answers next) and ``done`` (superstep count), so a parent that
kills it knows how far it got.

The workflow is the same in every process (built deterministically here): per round, ``head``
writes the round to shared state and fans a ``Token`` out to three workers; each worker reads
the shared state, sleeps and sends an int; ``join`` (a fan-in, with per-run state kept through
``snapshot_state``) yields a round report and sends the next ``Token`` back to ``head``.
"""

import argparse
import asyncio
import json
import sys
from collections.abc import AsyncIterator
from typing import Any

from pydantic import BaseModel

from agentic_core import (
    Executor,
    FileCheckpointStore,
    RequestInfoEvent,
    SuperstepCompletedEvent,
    Workflow,
    WorkflowBuilder,
    WorkflowCompletedEvent,
    WorkflowContext,
    WorkflowEvent,
    WorkflowFailedEvent,
    WorkflowOutputEvent,
    WorkflowRunState,
    WorkflowStartedEvent,
    handler,
    response_handler,
)

ROUNDS = 7  # 3 supersteps per round: 21 supersteps (22 with --ask: the answer takes one)
STEP_DELAY_S = 0.05
MOD = 1_000_003
ASK_ROUND = 1


class Token(BaseModel):
    round: int
    acc: int


class Head(Executor):
    def __init__(self, id: str, *, ask: bool) -> None:  # noqa: A002
        super().__init__(id)
        self.ask = ask

    @handler
    async def start(self, token: Token, ctx: WorkflowContext[Token]) -> None:
        await asyncio.sleep(STEP_DELAY_S)
        if self.ask and token.round == ASK_ROUND:
            await ctx.request_info(token, str)
            return
        await self.go(token, ctx)

    @response_handler
    async def answered(self, token: Token, answer: str, ctx: WorkflowContext[Token]) -> None:
        assert answer == "go", answer
        await self.go(token, ctx)

    async def go(self, token: Token, ctx: WorkflowContext[Token]) -> None:
        await ctx.set_shared_state("round", token.round)
        await ctx.send_message(token)


class Worker(Executor):
    def __init__(self, id: str, factor: int) -> None:  # noqa: A002
        super().__init__(id)
        self.factor = factor

    @handler
    async def work(self, token: Token, ctx: WorkflowContext[int]) -> None:
        await asyncio.sleep(STEP_DELAY_S)
        round_ = await ctx.get_shared_state("round")
        assert round_ == token.round, (round_, token.round)
        await ctx.send_message((token.acc * self.factor + round_ + 1) % MOD)


class Join(Executor):
    """Keeps the history of every round (per run, through snapshot/restore)."""

    def __init__(self, id: str) -> None:  # noqa: A002
        super().__init__(id)
        self.history: list[int] = []

    def snapshot_state(self) -> Any:
        return list(self.history)

    def restore_state(self, state: Any) -> None:
        self.history = list(state or [])

    @handler
    async def join(self, values: list[int], ctx: WorkflowContext[Token, dict[str, Any]]) -> None:
        await asyncio.sleep(STEP_DELAY_S)
        round_ = await ctx.get_shared_state("round")
        acc = sum((i + 1) * v for i, v in enumerate(values)) % MOD
        self.history.append(acc)
        await ctx.yield_output({"round": round_, "values": values, "acc": acc})
        if round_ + 1 < ROUNDS:
            await ctx.send_message(Token(round=round_ + 1, acc=acc))
        else:
            await ctx.yield_output({"history": self.history})


def build_workflow(*, ask: bool = False) -> Workflow:
    head = Head("head", ask=ask)
    workers = [Worker(f"worker{i}", factor) for i, factor in enumerate((3, 5, 7))]
    join = Join("join")
    return (
        WorkflowBuilder("crash-resume")
        .set_start_executor(head)
        .add_fan_out_edge(head, workers)
        .add_fan_in_edge(workers, join)
        .add_edge(join, head)
        .build()
    )


def emit(**fields: Any) -> None:
    print(json.dumps(fields), flush=True)


async def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["run", "resume"])
    parser.add_argument("store_dir")
    parser.add_argument("run_id", nargs="?")
    parser.add_argument("--durability", choices=["sync", "async", "exit"], default="sync")
    parser.add_argument("--ask", action="store_true")
    args = parser.parse_args(argv)
    store = FileCheckpointStore(args.store_dir)
    workflow = build_workflow(ask=args.ask)
    if args.mode == "run":
        stream = workflow.run_stream(
            Token(round=0, acc=1), checkpoint_store=store, durability=args.durability
        )
    else:
        checkpoint = await store.latest(args.run_id)
        if checkpoint is None:
            emit(event="error", error=f"no checkpoint for run {args.run_id}")
            return 2
        emit(
            event="resumed",
            checkpoint_id=checkpoint.id,
            superstep=checkpoint.superstep,
            outputs_so_far=checkpoint.outputs_so_far,
        )
        answers = dict.fromkeys(checkpoint.pending_request_ids, "go")
        stream = workflow.run_stream(
            checkpoint_id=checkpoint.id,
            checkpoint_store=store,
            responses=answers or None,
            durability=args.durability,
        )
    while True:
        outcome = await relay(stream)
        if not isinstance(outcome, dict):
            return outcome
        # Paused: answer at once, in this process (the run waits in workflow's paused runs).
        stream = workflow.run_stream(responses=outcome, durability=args.durability)


async def relay(stream: AsyncIterator[WorkflowEvent]) -> int | dict[str, str]:
    """Print the stream's events; the answers to give when the run paused, else an exit code."""
    requests: list[str] = []
    superstep = -1
    async for event in stream:
        if isinstance(event, WorkflowStartedEvent):
            emit(event="started", run_id=event.run_id)
        elif isinstance(event, WorkflowOutputEvent):
            emit(event="output", data=event.data)
        elif isinstance(event, SuperstepCompletedEvent):
            superstep = event.superstep
            emit(event="superstep", superstep=superstep)
        elif isinstance(event, RequestInfoEvent):
            requests.append(event.request_id)
        elif isinstance(event, WorkflowFailedEvent):
            emit(event="failed", error=event.error)
            return 1
        elif isinstance(event, WorkflowCompletedEvent):
            if event.status is WorkflowRunState.IDLE_WITH_PENDING_REQUESTS:
                emit(event="paused", superstep=superstep)
                return dict.fromkeys(requests, "go")
            emit(event="done", superstep_count=event.superstep_count)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1:])))
