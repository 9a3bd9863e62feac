# pyright: reportMissingImports=false, reportMissingModuleSource=false
# (the peers come from the optional `bench` dependency group: `uv run --group bench ...`)
"""Graph engine overhead: agentic_core against a plain-asyncio floor, LangGraph and MAF.

Run: ``uv run --group bench python benches/engine.py [--rounds N] [--only SHAPE]``.

Every executor body is trivial (add an int, pass it on), so the figures are engine overhead.
Shapes (BENCHMARKS.md): ``chain`` (100 executors in a line, µs/step), ``fanout`` (1 -> 1,000
parallel -> fan-in into 1, µs per parallel executor), ``loop`` (2 executors and a conditional
edge, 1,000 iterations, µs/iteration), ``many`` (1,000 concurrent runs of a 5-executor chain on
one compiled workflow, µs/run and runs/s), ``import`` (fresh processes, via benches/imports.py),
and the agentic-only ``checkpoint`` (chain with an InMemoryCheckpointStore, written every
superstep; ``checkpoint exit``: with ``durability="exit"``, written once at the end; both against
``checkpoint none``, the same chain without a store in the same rounds, as ``x chain``)
and ``stream`` (chain consumed through ``run_stream``).

Besides the plain-asyncio floor, the ``superstep probe`` (class ``Probe``, about 60 lines) runs
each shape with an engine's semantics and nothing else: nodes ``async def f(x) -> y``, direct,
conditional, fan-out and fan-in edges, supersteps that ``gather`` only when more than one call
fires, no events, tracing, checkpoints or type checks. ``x probe`` is agentic_core's cost over
it in the same round (issue 32's reference).

Method: one warm-up run per case calibrates how many runs make a round last ``--target-s``;
then the implementations of a shape are timed round robin (floor, probe, ours, LangGraph, MAF,
floor, ...), so load on the shared machine hits every side alike; each round builds a fresh workflow
(untimed), runs ``gc.collect()``, then times those runs. The table shows the median and the
min-max over rounds (the cyclic GC stays enabled: figures are as users see them), and the
ratios ours / floor and peer / ours computed round by round, then their median and min-max.
The import rows alternate their subjects the same way. Every implementation's result is
checked against the expected value.
``--profile IMPL`` prints a pyinstrument profile (about 1 s of runs per shape) instead.
"""

import argparse
import asyncio
import gc
import itertools
import operator
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Annotated, Any, Never, TypedDict

from _common import (
    alternate,
    alternate_sync,
    per_round,
    progress,
    ratio_summary,
    summary,
)
from imports import measure  # benches/imports.py: one fresh-process import probe

CHAIN_LEN = 100
FANOUT_WIDTH = 1_000
FANOUT_INPUT = 1
LOOP_ITERATIONS = 1_000
MANY_RUNS = 1_000
MANY_LEN = 5

EXPECTED: dict[str, int] = {
    "chain": CHAIN_LEN,
    "checkpoint": CHAIN_LEN,
    "stream": CHAIN_LEN,
    "fanout": FANOUT_WIDTH * FANOUT_INPUT + sum(range(FANOUT_WIDTH)),
    "loop": LOOP_ITERATIONS,
    "many": sum(range(MANY_RUNS)) + MANY_RUNS * MANY_LEN,
}
# (unit, units of work per run: the per-unit figure is run time / units)
UNITS: dict[str, tuple[str, int]] = {
    "chain": ("µs/step", CHAIN_LEN),
    "checkpoint": ("µs/step", CHAIN_LEN),
    "stream": ("µs/step", CHAIN_LEN),
    "fanout": ("µs/executor", FANOUT_WIDTH),
    "loop": ("µs/iteration", LOOP_ITERATIONS),
    "many": ("µs/run", MANY_RUNS),
}
# BENCHMARKS.md targets for agentic_core: (max µs per unit, max ratio to the floor or None)
TARGETS: dict[str, tuple[float, float | None]] = {
    "chain": (5.0, 20.0),
    "fanout": (15.0, 3.0),
    "loop": (10.0, 35.0),
    "many": (60.0, None),
    "checkpoint": (25.0, None),
    "stream": (10.0, None),
}
# Issue 32's targets, each checked on the medians of one run: (what, how it is computed).
MANY_BEFORE_RUNS_S = 32_918  # many, runs/s, measured on 2026-11-28 before issue 32's direct path
ISSUE_32: dict[str, str] = {
    "chain": "<= 2x probe",
    "loop": "<= 2x probe",
    "fanout": "<= 1.3x floor",
    "many": f">= 50,000 runs/s and >= 2x {MANY_BEFORE_RUNS_S:,} runs/s (before)",
    "stream": "<= 1.5x chain",
}
CHAIN_REFERENCE = "checkpoint none"
# issue 32: a checkpointed chain against the same chain without a store (same rounds, interleaved)
CHAIN_RATIO_TARGETS: dict[str, float] = {"checkpoint": 3.0, "checkpoint exit": 1.2}
SHAPES = ["chain", "fanout", "loop", "many", "import", "checkpoint", "stream"]
FLOOR, OURS, LANGGRAPH, MAF = "asyncio floor", "agentic_core", "langgraph", "agent_framework"
PROBE = "superstep probe"  # the 60-line superstep loop (class Probe): issue 32's reference
PEERS = {LANGGRAPH, MAF}

Run = Callable[[], Awaitable[int]]  # one run of a shape; returns the value to check
Prepare = Callable[[], Run]  # builds a fresh workflow (untimed) and returns its runner


# --------------------------------------------------------------------------------------------
# plain asyncio: the floor (the same calls, hand-written, no engine)


def floor_cases() -> dict[str, Prepare]:
    def inc(k: int) -> Callable[[int], Awaitable[int]]:
        async def step(n: int) -> int:
            return n + k

        return step

    def chain() -> Run:
        steps = [inc(1) for _ in range(CHAIN_LEN)]

        async def run() -> int:
            n = 0
            for step in steps:
                n = await step(n)
            return n

        return run

    def fanout() -> Run:
        source = inc(0)
        workers = [inc(k) for k in range(FANOUT_WIDTH)]

        async def join(values: list[int]) -> int:
            return sum(values)

        async def run() -> int:
            x = await source(FANOUT_INPUT)
            return await join(list(await asyncio.gather(*(w(x) for w in workers))))

        return run

    def loop() -> Run:
        a, b = inc(1), inc(0)

        async def run() -> int:
            n = 0
            while True:
                n = await b(await a(n))
                if not n < LOOP_ITERATIONS:  # the conditional edge b -> a
                    return n

        return run

    def many() -> Run:
        steps = [inc(1) for _ in range(MANY_LEN)]

        async def one(n: int) -> int:
            for step in steps:
                n = await step(n)
            return n

        async def run() -> int:
            return sum(await asyncio.gather(*(one(i) for i in range(MANY_RUNS))))

        return run

    return {"chain": chain, "fanout": fanout, "loop": loop, "many": many}


# --------------------------------------------------------------------------------------------
# the superstep probe: the same semantics as a graph engine, nothing else (no events, tracing,
# checkpoints or type checks). Issue 32 measures agentic_core against it.


class Probe:
    """A 60-line superstep loop. Nodes are ``async def f(x) -> y``; edges are direct,
    conditional (``when``), fan-out (several edges from one node) and fan-in (``fan_in``: the
    target gets the list of its sources' values once all of them delivered). Each superstep
    runs every node with a message, ``gather`` only when more than one call fires; a value no
    edge takes is an output."""

    def __init__(self) -> None:
        self.nodes: dict[str, Callable[[Any], Awaitable[Any]]] = {}
        self.edges: dict[str, list[tuple[str, Callable[[Any], bool] | None]]] = {}
        self.fan_ins: dict[str, tuple[str, list[str]]] = {}  # source -> (target, sources)

    def node(self, name: str, fn: Callable[[Any], Awaitable[Any]]) -> None:
        self.nodes[name] = fn

    def edge(self, src: str, dst: str, when: Callable[[Any], bool] | None = None) -> None:
        self.edges.setdefault(src, []).append((dst, when))

    def fan_in(self, sources: list[str], dst: str) -> None:
        for source in sources:
            self.fan_ins[source] = (dst, sources)

    async def run(self, start: str, value: Any) -> list[Any]:
        outputs: list[Any] = []
        pending: list[tuple[str, Any]] = [(start, value)]
        while pending:
            if len(pending) == 1:
                name, message = pending[0]
                results = [(name, await self.nodes[name](message))]
            else:
                values = await asyncio.gather(*(self.nodes[n](m) for n, m in pending))
                results = [(n, v) for (n, _), v in zip(pending, values, strict=True)]
            pending = []
            gathered: dict[str, dict[str, Any]] = {}
            for name, result in results:
                fan = self.fan_ins.get(name)
                if fan is not None:
                    arrived = gathered.setdefault(fan[0], {})
                    arrived[name] = result
                    if len(arrived) == len(fan[1]):
                        pending.append((fan[0], [arrived[s] for s in fan[1]]))
                    continue
                taken = False
                for dst, when in self.edges.get(name, ()):
                    if when is None or when(result):
                        pending.append((dst, result))
                        taken = True
                if not taken:
                    outputs.append(result)
        return outputs


def probe_cases() -> dict[str, Prepare]:
    def inc(k: int) -> Callable[[int], Awaitable[int]]:
        async def step(n: int) -> int:
            return n + k

        return step

    def line(probe: Probe, length: int) -> None:
        for i in range(length):
            probe.node(f"s{i}", inc(1))
            if i:
                probe.edge(f"s{i - 1}", f"s{i}")

    def chain() -> Run:
        probe = Probe()
        line(probe, CHAIN_LEN)

        async def run() -> int:
            return (await probe.run("s0", 0))[0]

        return run

    def fanout() -> Run:
        probe = Probe()
        probe.node("source", inc(0))
        workers = [f"w{k}" for k in range(FANOUT_WIDTH)]
        for k, worker in enumerate(workers):
            probe.node(worker, inc(k))
            probe.edge("source", worker)

        async def join(values: list[int]) -> int:
            return sum(values)

        probe.node("join", join)
        probe.fan_in(workers, "join")

        async def run() -> int:
            return (await probe.run("source", FANOUT_INPUT))[0]

        return run

    def loop() -> Run:
        probe = Probe()
        probe.node("a", inc(1))
        probe.node("b", inc(0))
        probe.edge("a", "b")
        probe.edge("b", "a", when=lambda n: n < LOOP_ITERATIONS)

        async def run() -> int:
            return (await probe.run("a", 0))[0]

        return run

    def many() -> Run:
        probe = Probe()
        line(probe, MANY_LEN)

        async def run() -> int:
            runs = await asyncio.gather(*(probe.run("s0", i) for i in range(MANY_RUNS)))
            return sum(outputs[0] for outputs in runs)

        return run

    return {"chain": chain, "fanout": fanout, "loop": loop, "many": many}


# --------------------------------------------------------------------------------------------
# agentic_core (API.md section 1)


def agentic_unavailable() -> str | None:
    """Why agentic_core's engine cannot be benchmarked, or None when it can."""
    try:
        from agentic_core import WorkflowBuilder, executor  # noqa: F401
    except ImportError as exc:
        return f"{type(exc).__name__}: {exc}"
    return None


def agentic_cases() -> dict[str, Prepare]:
    from agentic_core import (
        InMemoryCheckpointStore,
        WorkflowBuilder,
        WorkflowContext,
        WorkflowOutputEvent,
        executor,
    )

    async def step(msg: int, ctx: WorkflowContext[int]) -> None:
        await ctx.send_message(msg + 1)

    async def last(msg: int, ctx: WorkflowContext[Never, int]) -> None:
        await ctx.yield_output(msg + 1)

    def chain_builder(name: str, length: int) -> WorkflowBuilder:
        nodes = [executor(id=f"s{i}")(step) for i in range(length - 1)]
        nodes.append(executor(id=f"s{length - 1}")(last))
        builder = WorkflowBuilder(name, max_supersteps=length + 10).set_start_executor(nodes[0])
        for source, target in itertools.pairwise(nodes):
            builder.add_edge(source, target)
        return builder

    def chain() -> Run:
        workflow = chain_builder("chain", CHAIN_LEN).build()

        async def run() -> int:
            return (await workflow.run(0)).get_outputs()[-1]

        return run

    def checkpoint() -> Run:
        store = InMemoryCheckpointStore()
        workflow = chain_builder("chain", CHAIN_LEN).with_checkpointing(store).build()

        async def run() -> int:
            return (await workflow.run(0)).get_outputs()[-1]

        return run

    def checkpoint_exit() -> Run:
        store = InMemoryCheckpointStore()
        workflow = chain_builder("chain", CHAIN_LEN).with_checkpointing(store).build()

        async def run() -> int:
            return (await workflow.run(0, durability="exit")).get_outputs()[-1]

        return run

    def stream() -> Run:
        workflow = chain_builder("chain", CHAIN_LEN).build()

        async def run() -> int:
            value = -1
            async for event in workflow.run_stream(0):
                if isinstance(event, WorkflowOutputEvent):
                    value = event.data
            return value

        return run

    def fanout() -> Run:
        def worker(k: int):
            async def work(msg: int, ctx: WorkflowContext[int]) -> None:
                await ctx.send_message(msg + k)

            return executor(id=f"w{k}")(work)

        async def source(msg: int, ctx: WorkflowContext[int]) -> None:
            await ctx.send_message(msg)

        async def join(msgs: list[int], ctx: WorkflowContext[Never, int]) -> None:
            await ctx.yield_output(sum(msgs))

        src, sink = executor(id="source")(source), executor(id="join")(join)
        workers = [worker(k) for k in range(FANOUT_WIDTH)]
        workflow = (
            WorkflowBuilder("fanout")
            .set_start_executor(src)
            .add_fan_out_edge(src, workers)
            .add_fan_in_edge(workers, sink)
            .build()
        )

        async def run() -> int:
            return (await workflow.run(FANOUT_INPUT)).get_outputs()[-1]

        return run

    def loop() -> Run:
        async def a(msg: int, ctx: WorkflowContext[int]) -> None:
            await ctx.send_message(msg + 1)

        async def b(msg: int, ctx: WorkflowContext[int, int]) -> None:
            if msg >= LOOP_ITERATIONS:
                await ctx.yield_output(msg)
            await ctx.send_message(msg)

        ea, eb = executor(id="a")(a), executor(id="b")(b)
        workflow = (
            WorkflowBuilder("loop", max_supersteps=2 * LOOP_ITERATIONS + 10)
            .set_start_executor(ea)
            .add_edge(ea, eb)
            .add_conditional_edge(eb, ea, lambda n: n < LOOP_ITERATIONS)
            .build()
        )

        async def run() -> int:
            return (await workflow.run(0)).get_outputs()[-1]

        return run

    def many() -> Run:
        workflow = chain_builder("many", MANY_LEN).build()  # one Workflow, concurrent runs

        async def run() -> int:
            results = await asyncio.gather(*(workflow.run(i) for i in range(MANY_RUNS)))
            return sum(r.get_outputs()[-1] for r in results)

        return run

    return {
        "chain": chain,
        "fanout": fanout,
        "loop": loop,
        "many": many,
        "checkpoint": checkpoint,
        "checkpoint exit": checkpoint_exit,
        CHAIN_REFERENCE: chain,
        "stream": stream,
    }


# --------------------------------------------------------------------------------------------
# LangGraph: StateGraph, async nodes, compiled graph invoked with ainvoke


class Counter(TypedDict):
    n: int


class FanState(TypedDict):
    x: int
    total: Annotated[int, operator.add]  # the fan-in: each parallel node adds its value
    out: int


class WorkTask(TypedDict):
    x: int
    k: int


def langgraph_cases() -> dict[str, Prepare]:
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import Send

    async def inc(state: Counter) -> Counter:
        return {"n": state["n"] + 1}

    def chain_graph(length: int):
        graph = StateGraph(Counter)
        names = [f"s{i}" for i in range(length)]
        for name in names:
            graph.add_node(name, inc)
        graph.add_edge(START, names[0])
        for source, target in itertools.pairwise(names):
            graph.add_edge(source, target)
        graph.add_edge(names[-1], END)
        return graph.compile()

    def chain() -> Run:
        app = chain_graph(CHAIN_LEN)

        async def run() -> int:
            out = await app.ainvoke({"n": 0}, {"recursion_limit": CHAIN_LEN + 10})
            return out["n"]

        return run

    async def source(state: FanState) -> dict[str, Any]:
        return {}

    async def join(state: FanState) -> dict[str, Any]:
        return {"out": state["total"]}

    def fanout() -> Run:
        """Parallel edges: 1,000 distinct nodes, a waiting edge from all of them into join."""

        def worker(k: int):
            async def work(state: FanState) -> dict[str, Any]:
                return {"total": state["x"] + k}

            return work

        graph = StateGraph(FanState)
        graph.add_node("source", source)
        names = [f"w{k}" for k in range(FANOUT_WIDTH)]
        for k, name in enumerate(names):
            graph.add_node(name, worker(k))
            graph.add_edge("source", name)
        graph.add_node("join", join)
        graph.add_edge(START, "source")
        graph.add_edge(names, "join")
        graph.add_edge("join", END)
        app = graph.compile()

        async def run() -> int:
            return (await app.ainvoke({"x": FANOUT_INPUT, "total": 0, "out": 0}))["out"]

        return run

    def fanout_send() -> Run:
        """Map-reduce with Send: one worker node invoked 1,000 times in one superstep."""

        async def work(state: WorkTask) -> dict[str, Any]:
            return {"total": state["x"] + state["k"]}

        def scatter(state: FanState) -> list[Send]:
            return [Send("work", {"x": state["x"], "k": k}) for k in range(FANOUT_WIDTH)]

        graph = StateGraph(FanState)
        graph.add_node("source", source)
        graph.add_node("work", work)
        graph.add_node("join", join)
        graph.add_edge(START, "source")
        graph.add_conditional_edges("source", scatter, ["work"])
        graph.add_edge("work", "join")
        graph.add_edge("join", END)
        app = graph.compile()

        async def run() -> int:
            return (await app.ainvoke({"x": FANOUT_INPUT, "total": 0, "out": 0}))["out"]

        return run

    def loop() -> Run:
        async def passthrough(state: Counter) -> dict[str, Any]:
            return {}

        def route(state: Counter) -> str:
            return "a" if state["n"] < LOOP_ITERATIONS else END

        graph = StateGraph(Counter)
        graph.add_node("a", inc)
        graph.add_node("b", passthrough)
        graph.add_edge(START, "a")
        graph.add_edge("a", "b")
        graph.add_conditional_edges("b", route, ["a", END])
        app = graph.compile()

        async def run() -> int:
            out = await app.ainvoke({"n": 0}, {"recursion_limit": 2 * LOOP_ITERATIONS + 10})
            return out["n"]

        return run

    def many() -> Run:
        app = chain_graph(MANY_LEN)  # a compiled graph is reentrant: concurrent ainvoke

        async def run() -> int:
            outs = await asyncio.gather(*(app.ainvoke({"n": i}) for i in range(MANY_RUNS)))
            return sum(out["n"] for out in outs)

        return run

    return {
        "chain": chain,
        "fanout": fanout,
        "fanout (Send)": fanout_send,
        "loop": loop,
        "many": many,
    }


# --------------------------------------------------------------------------------------------
# Microsoft Agent Framework (agent-framework-core): WorkflowBuilder, @executor, await run()


def maf_cases() -> dict[str, Prepare]:
    from agent_framework import Executor, Workflow, WorkflowBuilder, WorkflowContext, executor

    async def step(msg: int, ctx: WorkflowContext[int]) -> None:
        await ctx.send_message(msg + 1)

    async def last(msg: int, ctx: WorkflowContext[Never, int]) -> None:
        await ctx.yield_output(msg + 1)

    def chain_workflow(length: int) -> Workflow:
        nodes: list[Executor] = [executor(id=f"s{i}")(step) for i in range(length - 1)]
        nodes.append(executor(id=f"s{length - 1}")(last))
        builder = WorkflowBuilder(max_iterations=length + 10, start_executor=nodes[0])
        for source, target in itertools.pairwise(nodes):
            builder.add_edge(source, target)
        return builder.build()

    def chain() -> Run:
        workflow = chain_workflow(CHAIN_LEN)

        async def run() -> int:
            return (await workflow.run(0)).get_outputs()[-1]

        return run

    def fanout() -> Run:
        def worker(k: int) -> Executor:
            async def work(msg: int, ctx: WorkflowContext[int]) -> None:
                await ctx.send_message(msg + k)

            return executor(id=f"w{k}")(work)

        async def source(msg: int, ctx: WorkflowContext[int]) -> None:
            await ctx.send_message(msg)

        async def join(msgs: list[int], ctx: WorkflowContext[Never, int]) -> None:
            await ctx.yield_output(sum(msgs))

        src, sink = executor(id="source")(source), executor(id="join")(join)
        workers = [worker(k) for k in range(FANOUT_WIDTH)]
        workflow = (
            WorkflowBuilder(start_executor=src)
            .add_fan_out_edges(src, workers)
            .add_fan_in_edges(workers, sink)
            .build()
        )

        async def run() -> int:
            return (await workflow.run(FANOUT_INPUT)).get_outputs()[-1]

        return run

    def loop() -> Run:
        async def a(msg: int, ctx: WorkflowContext[int]) -> None:
            await ctx.send_message(msg + 1)

        async def b(msg: int, ctx: WorkflowContext[int, int]) -> None:
            if msg >= LOOP_ITERATIONS:
                await ctx.yield_output(msg)
            await ctx.send_message(msg)

        ea, eb = executor(id="a")(a), executor(id="b")(b)
        workflow = (
            WorkflowBuilder(max_iterations=2 * LOOP_ITERATIONS + 10, start_executor=ea)
            .add_edge(ea, eb)
            .add_edge(eb, ea, condition=lambda n: n < LOOP_ITERATIONS)
            .build()
        )

        async def run() -> int:
            return (await workflow.run(0)).get_outputs()[-1]

        return run

    def many() -> Run:
        # A MAF Workflow refuses concurrent runs ("concurrent runs are not allowed on the same
        # instance"): one Workflow per concurrent run, built before timing.
        workflows = [chain_workflow(MANY_LEN) for _ in range(MANY_RUNS)]

        async def run() -> int:
            results = await asyncio.gather(*(w.run(i) for i, w in enumerate(workflows)))
            return sum(r.get_outputs()[-1] for r in results)

        return run

    return {"chain": chain, "fanout": fanout, "loop": loop, "many": many}


# --------------------------------------------------------------------------------------------
# measurement


@dataclass
class Result:
    shape: str
    impl: str
    variant: str  # e.g. "fanout (Send)"; equals shape for the main implementation
    prepare: Prepare
    rounds: int  # timed rounds this case takes part in (the first ones)
    samples: list[float] = field(default_factory=list[float])  # µs per unit, one per round
    reps: int = 1
    note: str = ""

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    def check(self, value: int) -> None:
        expected = EXPECTED[self.shape]
        if value != expected:
            raise SystemExit(
                f"{self.impl} {self.variant}: computed {value!r}, expected {expected!r}"
            )


async def calibrate_case(result: Result, target_s: float) -> None:
    """Warm-up run (imports, caches, lazy initialisation); sets the runs per round."""
    run = result.prepare()
    t0 = time.perf_counter()
    result.check(await run())
    first = time.perf_counter() - t0
    result.reps = max(1, min(100_000, round(target_s / first)))


async def time_one(result: Result) -> None:
    """One round of ``result``: a fresh workflow (untimed), then ``reps`` timed runs."""
    if len(result.samples) >= result.rounds:
        return  # a peer with fewer rounds (--peer-rounds) sits the last rounds out
    gc.collect()
    run = result.prepare()
    gc.collect()
    value = -1
    t0 = time.perf_counter()
    for _ in range(result.reps):
        value = await run()
    elapsed = time.perf_counter() - t0
    result.check(value)
    result.samples.append(elapsed / result.reps / UNITS[result.shape][1] * 1e6)


@dataclass
class ImportResult:
    name: str
    code: str
    ms: list[float] = field(default_factory=list[float])
    rss: list[float] = field(default_factory=list[float])


def import_results(rounds: int, peers: bool) -> list[ImportResult]:
    """Fresh-process imports, the subjects alternated round by round (floor first)."""
    subjects = [
        ("floor: pydantic + structlog", "import pydantic, structlog"),
        ("python (nothing)", "pass"),
        (OURS, "import agentic_core"),
        (f"{OURS} + WorkflowBuilder", "from agentic_core import WorkflowBuilder"),
    ]
    if peers:
        subjects.append((LANGGRAPH, "from langgraph.graph import StateGraph"))
        subjects.append((MAF, "from agent_framework import WorkflowBuilder"))
    results: list[ImportResult] = []
    for name, code in subjects:
        try:
            measure(code)  # warm-up: file system caches, .pyc files
        except subprocess.CalledProcessError:
            print(f"import: {code!r} fails; row skipped", file=sys.stderr)
            continue
        results.append(ImportResult(name, code))

    def one(result: ImportResult) -> None:
        sample = measure(result.code)
        result.ms.append(sample["ms"])
        result.rss.append(sample["rss_mib"])

    alternate_sync(results, rounds, one, label="import round")
    return results


# --------------------------------------------------------------------------------------------
# report


def print_table(results: list[Result], rounds: int, peer_rounds: int) -> None:
    floor = {r.shape: r.samples for r in results if r.impl == FLOOR}
    ours = {r.shape: r.samples for r in results if r.impl == OURS and r.variant == r.shape}
    probe = {r.shape: r.samples for r in results if r.impl == PROBE}
    plain_chain = next((r.samples for r in results if r.variant == CHAIN_REFERENCE), None)
    head = (
        f"{'shape':<15} {'implementation':<16} {'median (min-max)':>22} {'unit':<13} "
        f"{'rounds x runs':>13} {'x floor':>20} {'x probe':>20} {'peer/ours':>22}  note"
    )
    print(head)
    print("-" * len(head))
    previous = ""
    for r in results:
        if r.shape != previous and previous:
            print()
        previous = r.shape
        unit = UNITS[r.shape][0]
        x_floor = ""
        if r.impl != FLOOR and r.shape in floor:
            x_floor = ratio_summary(r.samples, floor[r.shape])
        x_probe = ""
        if r.impl == OURS and r.shape in probe:
            x_probe = ratio_summary(r.samples, probe[r.shape])
        vs = ""
        if r.impl in PEERS and r.shape in ours:
            vs = ratio_summary(r.samples, ours[r.shape])
        note = r.note
        if r.shape == "many":
            note = f"{1e6 / r.median:,.0f} runs/s" + (f"; {note}" if note else "")
        if r.impl == OURS and r.shape in TARGETS and r.variant != CHAIN_REFERENCE:
            limit, ratio = TARGETS[r.shape]
            verdict = f"target <= {limit:g} µs: {'ok' if r.median <= limit else 'MISSED'}"
            if ratio is not None and r.shape in floor:
                ok = statistics.median(per_round(r.samples, floor[r.shape])) <= ratio
                verdict += f", <= {ratio:g}x floor: {'ok' if ok else 'MISSED'}"
            note = verdict + (f"; {note}" if note else "")
        if r.impl == OURS and r.shape in ISSUE_32:
            note += f"; issue 32: {issue_32_verdict(r, floor, probe, ours)}"
        if r.impl == OURS and r.variant in CHAIN_RATIO_TARGETS and plain_chain is not None:
            limit = CHAIN_RATIO_TARGETS[r.variant]
            x_chain = statistics.median(per_round(r.samples, plain_chain))
            verdict = f"x chain {x_chain:.2f} (target <= {limit:g}: "
            note += f"; {verdict}{'ok' if x_chain <= limit else 'MISSED'})"
        label = r.variant if r.variant != r.shape else r.shape
        print(
            f"{label:<15} {r.impl:<16} {summary(r.samples):>22} {unit:<13} "
            f"{f'{len(r.samples)} x {r.reps}':>13} {x_floor:>20} {x_probe:>20} {vs:>22}  {note}"
        )
    print(
        f"\nrounds: {rounds} for the floor and agentic_core, {peer_rounds} for the peers (after "
        "one warm-up run each), every shape's implementations alternated round by round (floor, "
        "probe, ours, peers, floor, ...); median (min-max) over rounds; x floor and peer/ours = "
        "the ratio in each round, then its median (min-max); x probe = agentic_core / the "
        "superstep probe (class Probe: the same semantics, nothing else); peer/ours = how "
        "many times faster "
        "agentic_core is. many: MAF cannot run one Workflow concurrently, so it gets "
        f"{MANY_RUNS:,} Workflow instances built before timing."
    )


def issue_32_verdict(
    r: Result,
    floor: dict[str, list[float]],
    probe: dict[str, list[float]],
    ours: dict[str, list[float]],
) -> str:
    """Issue 32's target for ``r`` (agentic_core's row), with the figure it is judged on."""
    target = ISSUE_32[r.shape]
    if r.shape in ("chain", "loop") and r.shape in probe:
        x = statistics.median(per_round(r.samples, probe[r.shape]))
        return f"{target}: {x:.2f}x {'ok' if x <= 2.0 else 'MISSED'}"
    if r.shape == "fanout" and r.shape in floor:
        x = statistics.median(per_round(r.samples, floor[r.shape]))
        return f"{target}: {x:.2f}x {'ok' if x <= 1.3 else 'MISSED'}"
    if r.shape == "many":
        runs_s = 1e6 / r.median
        ok = runs_s >= 50_000 and runs_s >= 2 * MANY_BEFORE_RUNS_S
        return f"{target}: {runs_s / MANY_BEFORE_RUNS_S:.2f}x before {'ok' if ok else 'MISSED'}"
    if r.shape == "stream" and "chain" in ours:
        limit = 1.5
        x = r.median / statistics.median(ours["chain"])
        return f"{target}: {x:.2f}x (medians) {'ok' if x <= limit else 'MISSED'}"
    return f"{target}: not measured in this run (run chain too)"


def print_imports(rows: list[ImportResult], rounds: int) -> None:
    floor = rows[0]
    by_name = {row.name: row for row in rows}
    # the peers' figures are for getting a workflow builder: compare with ours doing the same
    ours = by_name.get(f"{OURS} + WorkflowBuilder", by_name.get(OURS))
    print(
        f"\nimport, {rounds} rounds of fresh processes, subjects alternated (peak RSS via "
        "getrusage): median (min-max)"
    )
    head = (
        f"{'subject':<30} {'statement':<44} {'ms':>20} {'x floor':>20} {'RSS MiB':>8} "
        f"{'+MiB':>6} {'peer/ours':>20}  note"
    )
    print(head)
    print("-" * len(head))
    for row in rows:
        vs = ratio_summary(row.ms, ours.ms) if row.name in PEERS and ours else ""
        rss = statistics.median(row.rss)
        plus = rss - statistics.median(floor.rss)
        note = ""
        if row.name.startswith(OURS):
            ok = statistics.median(per_round(row.ms, floor.ms)) <= 1.3 and plus <= 4.0
            note = f"target <= 1.3x floor, <= +4 MiB: {'ok' if ok else 'MISSED'}"
        x_floor = ratio_summary(row.ms, floor.ms) if row is not floor else ""
        print(
            f"{row.name:<30} {row.code:<44} {summary(row.ms):>20} {x_floor:>20} {rss:>8.1f} "
            f"{plus:>+6.1f} {vs:>20}  {note}"
        )
    print(
        "RSS: a child's peak RSS reads at least its parent's at fork (Linux keeps ru_maxrss "
        "across exec), hence 'python (nothing)'; peer/ours compares with "
        f"{OURS} + WorkflowBuilder when it imports."
    )


async def profile(impl: str, shapes: list[str], cases: dict[str, dict[str, Prepare]]) -> None:
    from pyinstrument import Profiler

    for variant, prepare in cases[impl].items():
        if variant.split()[0] not in shapes:
            continue
        run = prepare()
        await run()  # warm-up
        profiler = Profiler(interval=0.0002, async_mode="enabled")
        profiler.start()
        deadline = time.perf_counter() + 1.0  # about a second of runs: enough samples
        while time.perf_counter() < deadline:
            await run()
        profiler.stop()
        print(f"==== {impl} {variant}")
        print(profiler.output_text(unicode=True, color=False))


async def main_async(args: argparse.Namespace, import_rows: list[ImportResult] | None) -> None:
    shapes: list[str] = args.only or SHAPES
    missing = agentic_unavailable()
    cases: dict[str, dict[str, Prepare]] = {FLOOR: floor_cases(), PROBE: probe_cases()}
    if missing is None:
        cases[OURS] = agentic_cases()
    if not args.no_peers:
        cases[LANGGRAPH] = langgraph_cases()
        cases[MAF] = maf_cases()

    print(f"engine overhead (Python {sys.version.split()[0]}, {sys.platform}, GC enabled)")
    if missing is not None:
        print(f"agentic_core: not available ({missing}); its rows are skipped")

    if args.profile:
        if args.profile not in cases:
            raise SystemExit(f"--profile {args.profile}: not available; one of {list(cases)}")
        await profile(args.profile, shapes, cases)
        return

    peer_rounds = args.peer_rounds or args.rounds
    results: list[Result] = []
    for shape in SHAPES:
        if shape not in shapes or shape == "import":
            continue
        # every implementation of the shape (floor, ours, peers), alternated round by round
        shape_results: list[Result] = []
        for impl, impl_cases in cases.items():
            for variant, prepare in impl_cases.items():
                if variant.split()[0] == shape:
                    rounds = peer_rounds if impl in PEERS else args.rounds
                    shape_results.append(Result(shape, impl, variant, prepare, rounds))
        for result in shape_results:
            progress(f"{result.variant} / {result.impl}: warm-up")
            await calibrate_case(result, args.target_s)
        most = max(r.rounds for r in shape_results)
        await alternate(shape_results, most, time_one, label=f"{shape} round")
        results += shape_results
    if results:
        print()
        print_table(results, args.rounds, peer_rounds)
    if import_rows is not None:
        print_imports(import_rows, args.rounds)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=5, help="timed rounds (default 5)")
    parser.add_argument(
        "--peer-rounds", type=int, default=0, help="rounds for the peers (default: --rounds)"
    )
    parser.add_argument(
        "--only", action="append", choices=SHAPES, help="run only this shape (repeatable)"
    )
    parser.add_argument(
        "--target-s", type=float, default=0.2, help="seconds per timed round (default 0.2)"
    )
    parser.add_argument("--no-peers", action="store_true", help="skip LangGraph and MAF")
    parser.add_argument(
        "--profile",
        metavar="IMPL",
        help=f"print a pyinstrument profile (~1 s of runs per shape) of IMPL ({OURS!r}, ...)",
    )
    args = parser.parse_args()
    import_rows = None
    if "import" in (args.only or SHAPES) and not args.profile:
        # First, while this process is small: on Linux a child's ru_maxrss starts at its
        # parent's peak RSS (kept across fork and exec), so a parent that has loaded the peers
        # would hide the children's figures.
        import_rows = import_results(args.rounds, not args.no_peers)
    asyncio.run(main_async(args, import_rows))


if __name__ == "__main__":
    main()
