"""Child process of test_redis_crash_resume.py: a checkpointed workflow on Redis, killed or resumed.

Usage::

    python redis_crash_child.py run <redis_url> <prefix> [<crash_round>]
    python redis_crash_child.py resume <redis_url> <prefix> <run_id>

It prints one JSON object per line, flushed: ``started`` (run id), ``resumed`` (checkpoint id,
superstep, outputs_so_far), ``output`` (data) and ``done``. With ``crash_round`` a worker SIGKILLs
its own process in the middle of that round's superstep: no clean-up runs, as in a real crash.

Per round, ``head`` writes the round to shared state and fans a ``Token`` out to three workers;
each reads the shared state and sends an int; ``join`` (a fan-in that keeps per-run history in
``snapshot_state``) yields a round report and sends the next ``Token`` back to ``head``.
"""

import asyncio
import json
import os
import signal
import sys
from typing import Any

from pydantic import BaseModel

from agentic_core import (
    Executor,
    Workflow,
    WorkflowBuilder,
    WorkflowCompletedEvent,
    WorkflowContext,
    WorkflowFailedEvent,
    WorkflowOutputEvent,
    WorkflowStartedEvent,
    handler,
)
from agentic_storage import RedisCheckpointStore

ROUNDS = 6
MOD = 1_000_003


class Token(BaseModel):
    round: int
    acc: int


class Head(Executor):
    @handler
    async def start(self, token: Token, ctx: WorkflowContext[Token]) -> None:
        await ctx.set_shared_state("round", token.round)
        await ctx.send_message(token)


class Worker(Executor):
    def __init__(self, id: str, factor: int, crash_round: int | None) -> None:  # noqa: A002
        super().__init__(id)
        self.factor = factor
        self.crash_round = crash_round

    @handler
    async def work(self, token: Token, ctx: WorkflowContext[int]) -> None:
        round_ = await ctx.get_shared_state("round")
        if self.crash_round == round_ and self.id == "worker1":
            os.kill(os.getpid(), signal.SIGKILL)
        await ctx.send_message((token.acc * self.factor + round_ + 1) % MOD)


class Join(Executor):
    def __init__(self, id: str) -> None:  # noqa: A002
        super().__init__(id)
        self.history: list[int] = []

    def snapshot_state(self) -> Any:
        return list(self.history)

    def restore_state(self, state: Any) -> None:
        self.history = list(state or [])

    @handler
    async def join(self, values: list[int], ctx: WorkflowContext[Token, dict[str, Any]]) -> None:
        round_ = await ctx.get_shared_state("round")
        acc = sum((i + 1) * v for i, v in enumerate(values)) % MOD
        self.history.append(acc)
        await ctx.yield_output({"round": round_, "values": values, "acc": acc})
        if round_ + 1 < ROUNDS:
            await ctx.send_message(Token(round=round_ + 1, acc=acc))
        else:
            await ctx.yield_output({"history": self.history})


def build_workflow(crash_round: int | None) -> Workflow:
    head = Head("head")
    workers = [Worker(f"worker{i}", f, crash_round) for i, f in enumerate((3, 5, 7))]
    join = Join("join")
    return (
        WorkflowBuilder("redis-crash-resume")
        .set_start_executor(head)
        .add_fan_out_edge(head, workers)
        .add_fan_in_edge(workers, join)
        .add_edge(join, head)
        .build()
    )


def emit(**fields: Any) -> None:
    print(json.dumps(fields), flush=True)


async def main(argv: list[str]) -> int:
    mode, url, prefix = argv[0], argv[1], argv[2]
    async with RedisCheckpointStore(url, prefix=prefix) as store:
        if mode == "run":
            crash_round = int(argv[3]) if len(argv) > 3 else None
            stream = build_workflow(crash_round).run_stream(
                Token(round=0, acc=1), checkpoint_store=store
            )
        else:
            checkpoint = await store.latest(argv[3])
            if checkpoint is None:
                emit(event="error", error=f"no checkpoint for run {argv[3]}")
                return 2
            emit(
                event="resumed",
                checkpoint_id=checkpoint.id,
                superstep=checkpoint.superstep,
                outputs_so_far=checkpoint.outputs_so_far,
            )
            stream = build_workflow(None).run_stream(
                checkpoint_id=checkpoint.id, checkpoint_store=store
            )
        async for event in stream:
            if isinstance(event, WorkflowStartedEvent):
                emit(event="started", run_id=event.run_id)
            elif isinstance(event, WorkflowOutputEvent):
                emit(event="output", data=event.data)
            elif isinstance(event, WorkflowFailedEvent):
                emit(event="failed", error=event.error)
                return 1
            elif isinstance(event, WorkflowCompletedEvent):
                emit(event="done", superstep_count=event.superstep_count)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1:])))
