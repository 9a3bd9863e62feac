"""Executors, handlers, context and the five edge types, under every runtime."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, Never

import pytest
from pydantic import BaseModel

from agentic_core import (
    Case,
    Default,
    Executor,
    ExecutorKind,
    FanInIncompleteEvent,
    MaxSuperstepsExceededError,
    Runtime,
    WorkflowBuilder,
    WorkflowContext,
    WorkflowEvent,
    WorkflowExecutionError,
    WorkflowRunState,
    executor,
    handler,
)


class Report(BaseModel):
    title: str
    score: int


@dataclass
class Note:
    text: str


class Progress(WorkflowEvent):
    step: int


class Collect(Executor):
    """Yields whatever it receives as an output."""

    @handler
    async def collect(self, message: Any, ctx: WorkflowContext[Any, Any]) -> None:
        await ctx.yield_output(message)


@executor
async def double(n: int, ctx: WorkflowContext[int]) -> None:
    await ctx.send_message(n * 2)


async def test_a_chain_passes_messages_along(runtime: Runtime) -> None:
    @executor
    async def add_one(n: int, ctx: WorkflowContext[int]) -> None:
        await ctx.send_message(n + 1)

    sink = Collect("sink")
    workflow = (
        WorkflowBuilder("chain").set_start_executor(double).add_edge(double, add_one)
        .add_edge(add_one, sink).build()
    )  # fmt: skip
    result = await workflow.run(5, runtime=runtime)
    assert result.status is WorkflowRunState.COMPLETED
    assert result.get_outputs() == [11]
    assert result.superstep_count == 3


async def test_messages_go_to_the_first_handler_that_accepts_their_type(runtime: Runtime) -> None:
    class Router(Executor):
        @handler
        async def on_report(self, report: Report, ctx: WorkflowContext[Never, str]) -> None:
            await ctx.yield_output(f"report:{report.title}")

        @handler
        async def on_text_or_int(self, value: str | int, ctx: WorkflowContext[Never, str]) -> None:
            await ctx.yield_output(f"scalar:{value}")

        @handler
        async def on_notes(self, notes: list[Note], ctx: WorkflowContext[Never, str]) -> None:
            await ctx.yield_output(f"notes:{len(notes)}")

        @handler
        async def on_anything(self, value: Any, ctx: WorkflowContext[Never, str]) -> None:
            await ctx.yield_output(f"any:{type(value).__name__}")

    @executor
    async def fan(items: list[Any], ctx: WorkflowContext[Any]) -> None:
        for item in items:
            await ctx.send_message(item)

    router = Router("router")
    workflow = WorkflowBuilder().set_start_executor(fan).add_edge(fan, router).build()
    messages: list[Any] = [Report(title="a", score=1), "x", 3, [Note("n")], [1.5], 2.5]
    result = await workflow.run(messages, runtime=runtime)
    assert result.outputs == [
        "report:a",
        "scalar:x",
        "scalar:3",
        "notes:1",
        "any:list",
        "any:float",
    ]


async def test_a_message_no_handler_accepts_fails_naming_executor_and_type(
    runtime: Runtime,
) -> None:
    @executor
    async def only_ints(n: int, ctx: WorkflowContext) -> None:
        del n, ctx

    @executor
    async def start(text: str, ctx: WorkflowContext[Any]) -> None:
        await ctx.send_message(text)

    workflow = WorkflowBuilder().set_start_executor(start).add_edge(start, only_ints).build()
    with pytest.raises(
        WorkflowExecutionError, match="'only_ints' has no handler for a message of type str"
    ) as info:
        await workflow.run("x", runtime=runtime)
    assert info.value.executor_id == "only_ints"
    assert info.value.superstep == 1


async def test_send_message_to_a_target_id_goes_only_there(runtime: Runtime) -> None:
    @executor
    async def pick(n: int, ctx: WorkflowContext[int]) -> None:
        await ctx.send_message(n, target_id="b")

    a, b = Collect("a"), Collect("b")
    workflow = WorkflowBuilder().set_start_executor(pick).add_fan_out_edge(pick, [a, b]).build()
    result = await workflow.run(7, runtime=runtime)
    assert result.outputs == [7]
    assert result.superstep_count == 2


async def test_send_message_to_an_unconnected_target_is_an_error(runtime: Runtime) -> None:
    @executor
    async def pick(n: int, ctx: WorkflowContext[int]) -> None:
        await ctx.send_message(n, target_id="nowhere")

    workflow = WorkflowBuilder().set_start_executor(pick).add_edge(pick, Collect("a")).build()
    with pytest.raises(WorkflowExecutionError, match="'pick' has no edge to 'nowhere'"):
        await workflow.run(1, runtime=runtime)


async def test_an_unserializable_output_fails_at_yield_naming_executor_and_type(
    runtime: Runtime,
) -> None:
    class Opaque:
        pass

    @executor
    async def leak(n: int, ctx: WorkflowContext[Never, Any]) -> None:
        await ctx.yield_output({"x": Opaque()})

    workflow = WorkflowBuilder().set_start_executor(leak).build()
    with pytest.raises(
        WorkflowExecutionError, match="'leak' tried to yield a value of type dict"
    ) as info:
        await workflow.run(1, runtime=runtime)
    assert "Opaque" in str(info.value)


async def test_an_unserializable_message_fails_at_send(runtime: Runtime) -> None:
    @executor
    async def leak(n: int, ctx: WorkflowContext[Any]) -> None:
        await ctx.send_message(object())

    workflow = WorkflowBuilder().set_start_executor(leak).add_edge(leak, Collect("c")).build()
    with pytest.raises(WorkflowExecutionError, match="'leak' tried to send a value of type object"):
        await workflow.run(1, runtime=runtime)


async def test_custom_events_reach_run_result_and_stream(runtime: Runtime) -> None:
    @executor
    async def noisy(n: int, ctx: WorkflowContext[Never, int]) -> None:
        await ctx.add_event(Progress(step=n))
        await ctx.yield_output(n)

    workflow = WorkflowBuilder().set_start_executor(noisy).build()
    result = await workflow.run(4, runtime=runtime)
    assert [e for e in result.events if isinstance(e, Progress)] == [Progress(step=4)]
    streamed = [e async for e in workflow.run_stream(5, runtime=runtime)]
    assert Progress(step=5) in streamed
    names = [type(e).__name__ for e in streamed]
    assert names == [
        "WorkflowStartedEvent",
        "SuperstepStartedEvent",
        "ExecutorInvokedEvent",
        "Progress",
        "WorkflowOutputEvent",
        "ExecutorCompletedEvent",
        "SuperstepCompletedEvent",
        "WorkflowCompletedEvent",
    ]


async def test_shared_state_follows_bsp_visibility(runtime: Runtime) -> None:
    seen: dict[str, Any] = {}

    @executor
    async def start(n: int, ctx: WorkflowContext[int]) -> None:
        await ctx.send_message(n)

    @executor
    async def writer(n: int, ctx: WorkflowContext[int]) -> None:
        await ctx.set_shared_state("k", "from-writer")
        seen["writer_own"] = await ctx.get_shared_state("k")
        await ctx.send_message(n)

    @executor
    async def reader(n: int, ctx: WorkflowContext[int]) -> None:
        seen.setdefault("reader_same_superstep", await ctx.get_shared_state("k", "unset"))
        await ctx.send_message(n)

    @executor
    async def later(n: int, ctx: WorkflowContext[Never, Any]) -> None:
        await ctx.yield_output(await ctx.get_shared_state("k"))

    workflow = (
        WorkflowBuilder().set_start_executor(start).add_fan_out_edge(start, [writer, reader])
        .add_edge(writer, later).build()
    )  # fmt: skip
    result = await workflow.run(1, runtime=runtime)
    assert seen == {"writer_own": "from-writer", "reader_same_superstep": "unset"}
    assert result.outputs == ["from-writer"]


async def test_writes_in_one_superstep_apply_in_executor_id_order(runtime: Runtime) -> None:
    def writer(name: str) -> Executor:
        async def write(n: int, ctx: WorkflowContext[int]) -> None:
            await asyncio.sleep(0.01 if name == "b" else 0.0)
            await ctx.set_shared_state("last", name)
            await ctx.send_message(n)

        return executor(write, id=name)

    @executor
    async def start(n: int, ctx: WorkflowContext[int]) -> None:
        await ctx.send_message(n)

    @executor
    async def read(ns: list[int], ctx: WorkflowContext[Never, str]) -> None:
        await ctx.yield_output(await ctx.get_shared_state("last"))

    c, a, b = writer("c"), writer("a"), writer("b")
    workflow = (
        WorkflowBuilder().set_start_executor(start).add_fan_out_edge(start, [c, a, b])
        .add_fan_in_edge([c, a, b], read).build()
    )  # fmt: skip
    result = await workflow.run(0, runtime=runtime)
    assert result.outputs == ["c"]  # a, b, c applied in that order: c wins


async def test_outputs_are_in_executor_id_order_whatever_the_timing(runtime: Runtime) -> None:
    def emitter(name: str, delay: float) -> Executor:
        async def emit(n: int, ctx: WorkflowContext[Never, str]) -> None:
            await asyncio.sleep(delay)
            await ctx.yield_output(name)

        return executor(emit, id=name)

    @executor
    async def start(n: int, ctx: WorkflowContext[int]) -> None:
        await ctx.send_message(n)

    targets = [emitter("z", 0.0), emitter("m", 0.02), emitter("a", 0.01)]
    workflow = WorkflowBuilder().set_start_executor(start).add_fan_out_edge(start, targets).build()
    assert (await workflow.run(0, runtime=runtime)).outputs == ["a", "m", "z"]


async def test_conditional_edges_accept_sync_and_async_conditions(runtime: Runtime) -> None:
    async def is_big(n: int) -> bool:
        await asyncio.sleep(0)
        return n > 10

    big, small = Collect("big"), Collect("small")
    workflow = (
        WorkflowBuilder().set_start_executor(double)
        .add_conditional_edge(double, big, is_big)
        .add_edge(double, small, condition=lambda n: n <= 10).build()
    )  # fmt: skip
    assert (await workflow.run(3, runtime=runtime)).outputs == [6]
    assert (await workflow.run(30, runtime=runtime)).outputs == [60]


async def test_a_conditional_loop_runs_until_its_condition_fails(runtime: Runtime) -> None:
    @executor
    async def inc(n: int, ctx: WorkflowContext[int]) -> None:
        await ctx.send_message(n + 1)

    @executor
    async def check(n: int, ctx: WorkflowContext[int, int]) -> None:
        if n >= 5:
            await ctx.yield_output(n)
        else:
            await ctx.send_message(n)

    workflow = (
        WorkflowBuilder().set_start_executor(inc).add_edge(inc, check)
        .add_conditional_edge(check, inc, lambda n: n < 5).build()
    )  # fmt: skip
    result = await workflow.run(0, runtime=runtime)
    assert result.outputs == [5]
    assert result.superstep_count == 10


async def test_a_condition_that_raises_fails_the_run_naming_the_edge(runtime: Runtime) -> None:
    def broken(n: int) -> bool:
        raise KeyError("boom")

    workflow = (
        WorkflowBuilder().set_start_executor(double)
        .add_conditional_edge(double, Collect("x"), broken).build()
    )  # fmt: skip
    with pytest.raises(
        WorkflowExecutionError, match="condition of edge double -> x raised KeyError"
    ) as info:
        await workflow.run(1, runtime=runtime)
    assert info.value.executor_id == "double"
    assert isinstance(info.value.__cause__.__cause__, KeyError)  # type: ignore[union-attr]


async def test_switch_takes_the_first_matching_case_else_default(runtime: Runtime) -> None:
    small, medium, large = Collect("small"), Collect("medium"), Collect("large")
    workflow = (
        WorkflowBuilder().set_start_executor(double)
        .add_switch_edge(double, [
            Case(lambda n: n < 10, small),
            Case(lambda n: n < 100, medium),
            Default(large),
        ]).build()
    )  # fmt: skip
    results = [await workflow.run(n, runtime=runtime) for n in (1, 4, 40)]
    assert [r.outputs for r in results] == [[2], [8], [80]]
    routed = {n: (await workflow.run(n, runtime=runtime)).superstep_count for n in (1, 40)}
    assert routed == {1: 2, 40: 2}


async def test_switch_without_match_or_default_drops_the_message(runtime: Runtime) -> None:
    workflow = (
        WorkflowBuilder().set_start_executor(double)
        .add_switch_edge(double, [Case(lambda n: n < 0, Collect("neg"))]).build()
    )  # fmt: skip
    result = await workflow.run(1, runtime=runtime)
    assert result.outputs == []
    assert result.status is WorkflowRunState.COMPLETED


async def test_fan_out_reaches_every_target_or_the_selected_ones(runtime: Runtime) -> None:
    targets = [Collect(f"t{i}") for i in range(4)]
    everyone = (
        WorkflowBuilder().set_start_executor(double).add_fan_out_edge(double, targets).build()
    )
    assert (await everyone.run(1, runtime=runtime)).outputs == [2, 2, 2, 2]
    targets = [Collect(f"t{i}") for i in range(4)]
    some = (
        WorkflowBuilder().set_start_executor(double)
        .add_fan_out_edge(double, targets, selection=lambda n, count: [n % count, 3]).build()
    )  # fmt: skip
    result = await some.run(1, runtime=runtime)
    assert result.outputs == [2, 2]
    assert result.superstep_count == 2


async def test_fan_out_selection_returning_a_bad_index_fails_clearly(runtime: Runtime) -> None:
    workflow = (
        WorkflowBuilder().set_start_executor(double)
        .add_fan_out_edge(double, [Collect("a")], selection=lambda n, count: [5]).build()
    )  # fmt: skip
    with pytest.raises(WorkflowExecutionError, match=r"returned 5, not an index in 0\.\.0"):
        await workflow.run(1, runtime=runtime)


async def test_fan_in_delivers_one_list_in_source_order(runtime: Runtime) -> None:
    def shout(name: str, delay: float) -> Executor:
        async def run(n: int, ctx: WorkflowContext[str]) -> None:
            await asyncio.sleep(delay)
            await ctx.send_message(f"{name}{n}")

        return executor(run, id=name)

    @executor
    async def join(parts: list[str], ctx: WorkflowContext[Never, list[str]]) -> None:
        await ctx.yield_output(parts)

    sources = [shout("c", 0.0), shout("a", 0.01), shout("b", 0.0)]
    workflow = (
        WorkflowBuilder().set_start_executor(double).add_fan_out_edge(double, sources)
        .add_fan_in_edge(sources, join).build()
    )  # fmt: skip
    result = await workflow.run(1, runtime=runtime)
    assert result.outputs == [["c2", "a2", "b2"]]
    assert not [e for e in result.events if isinstance(e, FanInIncompleteEvent)]


async def test_fan_in_waits_for_every_source_and_reports_when_incomplete(runtime: Runtime) -> None:
    @executor
    async def yes(n: int, ctx: WorkflowContext[int]) -> None:
        await ctx.send_message(n)

    @executor
    async def no(n: int, ctx: WorkflowContext[int]) -> None:
        del n, ctx

    @executor
    async def join(parts: list[int], ctx: WorkflowContext[Never, list[int]]) -> None:
        await ctx.yield_output(parts)

    workflow = (
        WorkflowBuilder().set_start_executor(double).add_fan_out_edge(double, [yes, no])
        .add_fan_in_edge([yes, no], join).build()
    )  # fmt: skip
    result = await workflow.run(1, runtime=runtime)
    assert result.outputs == []
    [incomplete] = [e for e in result.events if isinstance(e, FanInIncompleteEvent)]
    assert incomplete.target_id == "join"
    assert incomplete.missing_source_ids == ["no"]


async def test_more_supersteps_than_allowed_raise(runtime: Runtime) -> None:
    @executor
    async def forever(n: int, ctx: WorkflowContext[int]) -> None:
        await ctx.send_message(n + 1)

    workflow = (
        WorkflowBuilder(max_supersteps=5).set_start_executor(forever)
        .add_edge(forever, forever).build()
    )  # fmt: skip
    with pytest.raises(MaxSuperstepsExceededError, match="max_supersteps=5") as info:
        await workflow.run(0, runtime=runtime)
    assert info.value.superstep == 5


async def test_one_workflow_serves_concurrent_runs_without_crosstalk(runtime: Runtime) -> None:
    @executor
    async def slow_double(n: int, ctx: WorkflowContext[int]) -> None:
        await asyncio.sleep(0.001 * (n % 5))
        await ctx.set_shared_state("mine", n)
        await ctx.send_message(n * 2)

    @executor
    async def check(n: int, ctx: WorkflowContext[Never, tuple[int, int]]) -> None:
        await ctx.yield_output((n, await ctx.get_shared_state("mine")))

    workflow = (
        WorkflowBuilder().set_start_executor(slow_double).add_edge(slow_double, check).build()
    )
    results = await asyncio.gather(*(workflow.run(n, runtime=runtime) for n in range(100)))
    assert [r.outputs for r in results] == [[(n * 2, n)] for n in range(100)]
    assert len({r.run_id for r in results}) == 100


async def test_executor_state_is_kept_per_run_through_snapshot_hooks(runtime: Runtime) -> None:
    class Counter(Executor):
        def __init__(self, id: str) -> None:  # noqa: A002
            super().__init__(id)
            self.count = 0

        def snapshot_state(self) -> Any:
            return {"count": self.count}

        def restore_state(self, state: Any) -> None:
            self.count = state["count"]

        @handler
        async def tick(self, n: int, ctx: WorkflowContext[int, int]) -> None:
            self.count += 1
            if n > 0:
                await ctx.send_message(n - 1)
            else:
                await ctx.yield_output(self.count)

    counter = Counter("counter")
    workflow = WorkflowBuilder().set_start_executor(counter).add_edge(counter, counter).build()
    results = await asyncio.gather(*(workflow.run(n, runtime=runtime) for n in (3, 5)))
    assert [r.outputs for r in results] == [[4], [6]]
    assert counter.count == 0  # the shared instance never holds per-run state


def test_executor_kind_and_ids() -> None:
    @executor(id="custom", kind=ExecutorKind.VALIDATOR)
    async def check(n: int, ctx: WorkflowContext[int]) -> None:
        del n, ctx

    assert (check.id, check.kind) == ("custom", ExecutorKind.VALIDATOR)
    assert double.id == "double"
    assert double.input_types == (int,)
    assert double.output_types == (int,)
    with pytest.raises(ValueError, match="non-empty string"):
        Collect("")


def test_handlers_need_annotations_and_async() -> None:
    from agentic_core import GraphValidationError

    with pytest.raises(GraphValidationError, match="needs a type annotation on 'message'"):

        class Bad(Executor):  # pyright: ignore[reportUnusedClass]
            @handler
            async def run(self, message, ctx: WorkflowContext) -> None:  # type: ignore[no-untyped-def]
                del message, ctx

    with pytest.raises(TypeError, match="must be an async def"):

        def sync(message: int, ctx: WorkflowContext) -> None:
            del message, ctx

        handler(sync)  # type: ignore[arg-type]
