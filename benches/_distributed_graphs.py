"""The workflow of benches/distributed.py, and the raw-protocol floor's worker (not a benchmark).

Worker processes import the workflow as ``_distributed_graphs:build`` (benches/ on
``PYTHONPATH``): ``python -m agentic_bus worker _distributed_graphs:build --nats URL``. One
graph serves every scenario, so one set of workers runs them all:

- ``entry`` takes an ``int`` n (the loop) or a ``Job`` (a fan-out);
- ``tick`` sends n - 1 to itself until 0: n sequential one-task supersteps;
- ``w0`` ... ``w{WIDTH-1}``: ``entry`` sends a ``Job`` to the first ``job.width`` of them, one
  superstep of ``job.width`` tasks; each does nothing (``noop``), burns ``job.work`` iterations
  of CPU (``cpu``) or awaits ``asyncio.sleep(job.ms / 1000)`` (``io``), then yields its index.

``python benches/_distributed_graphs.py raw-worker URL`` is the floor's worker: the protocol of
the prototype (research/distribution.md §4.2, "recommended" row) in bare nats-py, with no
framework: pull one task from a work queue, store a result with "expected last subject sequence
0", ack; and a core request/reply responder on ``RAW_ECHO``. It prints ``READY`` when pulling.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from typing import Literal

import nats
from nats.aio.msg import Msg
from nats.js import api
from nats.js.client import JetStreamContext
from pydantic import BaseModel

from agentic_core import (
    Executor,
    Workflow,
    WorkflowBuilder,
    WorkflowContext,
    configure_logging,
    handler,
)

WIDTH = 200
"""Fan-out executors in the graph (a ``Job`` uses the first ``width``)."""

RAW_TASKS, RAW_RESULTS = "BENCH_RAW_TASKS", "BENCH_RAW_RESULTS"
RAW_TASK, RAW_RESULT, RAW_ECHO = "bench.raw.task", "bench.raw.result", "bench.raw.echo"
RAW_CONSUMER = "bench_raw"


class Job(BaseModel):
    """One fan-out superstep: ``width`` tasks of one kind."""

    kind: Literal["noop", "cpu", "io"]
    width: int
    work: int = 0
    """``cpu``: iterations of ``burn`` per task."""
    ms: float = 0.0
    """``io``: milliseconds each task awaits."""


def burn(iterations: int) -> int:
    """A fixed amount of CPU work (the same in every process), returning a checksum."""
    total = 0
    for i in range(iterations):
        total = (total + i * i) % 1_000_003
    return total


class Entry(Executor):
    """Starts a loop (``int``) or a fan-out (``Job``)."""

    @handler
    async def on_loop(self, message: int, ctx: WorkflowContext[int | Job, int]) -> None:
        await ctx.send_message(message, target_id="tick")

    @handler
    async def on_job(self, message: Job, ctx: WorkflowContext[int | Job, int]) -> None:
        if not 0 < message.width <= WIDTH:
            raise ValueError(f"width must be in 1..{WIDTH}, got {message.width}")
        for i in range(message.width):
            await ctx.send_message(message, target_id=f"w{i}")


class Tick(Executor):
    """Counts down in one-task supersteps; yields 0 at the end."""

    @handler
    async def on_int(self, message: int, ctx: WorkflowContext[int, int]) -> None:
        if message > 0:
            await ctx.send_message(message - 1)
        else:
            await ctx.yield_output(0)


class Work(Executor):
    """One task of a fan-out: no-op, CPU-bound or I/O-bound; yields its index."""

    def __init__(self, index: int) -> None:
        super().__init__(f"w{index}")
        self.index = index

    @handler
    async def on_job(self, message: Job, ctx: WorkflowContext[int, int]) -> None:
        if message.kind == "cpu":
            burn(message.work)  # blocks the event loop, as CPU-bound Python code does
        elif message.kind == "io":
            await asyncio.sleep(message.ms / 1000)
        await ctx.yield_output(self.index)


def build() -> Workflow:
    """entry -> tick (a self-loop), entry -> w0 ... w{WIDTH-1} (a fan-out): every scenario."""
    entry, tick = Entry("entry"), Tick("tick")
    workers = [Work(i) for i in range(WIDTH)]
    return (
        WorkflowBuilder("bench-distributed", max_supersteps=1_000_000)
        .set_start_executor(entry)
        .add_edge(entry, tick)
        .add_edge(tick, tick)
        .add_fan_out_edge(entry, workers)
        .build()
    )


def build_quiet() -> Workflow:
    """``build()``, in a worker process that logs at INFO.

    The worker CLI configures no logging, so structlog's defaults print every debug line
    (two per task); this factory measures the worker without them.
    """
    configure_logging(level="INFO")
    return build()


# -- the floor: the bare protocol in nats-py ------------------------------------------------------


async def declare_raw(js: JetStreamContext) -> None:
    """The floor's task work queue, result stream and pull consumer (idempotent)."""
    await js.add_stream(  # pyright: ignore[reportUnknownMemberType]
        name=RAW_TASKS,
        subjects=[f"{RAW_TASK}.>"],
        retention=api.RetentionPolicy.WORK_QUEUE,
        storage=api.StorageType.FILE,
        duplicate_window=120.0,
    )
    await js.add_stream(  # pyright: ignore[reportUnknownMemberType]
        name=RAW_RESULTS,
        subjects=[f"{RAW_RESULT}.>"],
        retention=api.RetentionPolicy.LIMITS,
        storage=api.StorageType.FILE,
        duplicate_window=120.0,
    )
    await js.add_consumer(  # pyright: ignore[reportUnknownMemberType]
        RAW_TASKS,
        api.ConsumerConfig(
            durable_name=RAW_CONSUMER,
            ack_policy=api.AckPolicy.EXPLICIT,
            ack_wait=10.0,
            max_deliver=3,
        ),
    )


async def raw_worker(url: str) -> None:
    """Serve the floor until SIGTERM: one task at a time, result stored, then ack."""
    client = await nats.connect(url, name="bench raw worker")  # pyright: ignore[reportUnknownMemberType]
    js = client.jetstream()  # pyright: ignore[reportUnknownMemberType]
    await declare_raw(js)

    async def echo(msg: Msg) -> None:
        await msg.respond(msg.data)

    await client.subscribe(RAW_ECHO, queue="raw", cb=echo)  # pyright: ignore[reportUnknownMemberType]
    subscription = await js.pull_subscribe_bind(durable=RAW_CONSUMER, stream=RAW_TASKS)
    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stopping.set)
    print("READY", flush=True)
    while not stopping.is_set():
        try:
            messages = await subscription.fetch(1, timeout=0.5)
        except TimeoutError:
            continue
        for msg in messages:
            task_id = msg.subject.rsplit(".", 1)[1]
            await js.publish(
                f"{RAW_RESULT}.{task_id}",
                msg.data,
                headers={"Nats-Expected-Last-Subject-Sequence": "0"},
            )
            await msg.ack()
    await client.close()  # not drain(): the pull subscription may hold a status reply forever


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] != "raw-worker":
        sys.exit("usage: python benches/_distributed_graphs.py raw-worker NATS_URL")
    asyncio.run(raw_worker(sys.argv[2]))
