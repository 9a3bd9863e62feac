"""``durability="sync" | "async" | "exit"``: when a run's checkpoints are written (LangGraph's).

The workflow counts from 0 to ``LAST``, one superstep per value; a ``Script`` makes a value fail,
ask a question first, or open a gate, and logs what ran. A ``RecordingStore`` logs each save as
it starts and ends, and can be slow, hold a save at a gate or fail one. Each mode's write
pattern, its ordering, what is waited for before the call returns or raises, and resuming from
what each mode left are checked under both runtimes. The last tests port two of LangGraph's own.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass, field
from typing import Any, get_args

import pytest

from agentic_core import (
    Checkpoint,
    CheckpointError,
    Durability,
    Executor,
    InMemoryCheckpointStore,
    MaxSuperstepsExceededError,
    RetryPolicy,
    Runtime,
    SuperstepCompletedEvent,
    Workflow,
    WorkflowBuilder,
    WorkflowCompletedEvent,
    WorkflowContext,
    WorkflowExecutionError,
    WorkflowFailedEvent,
    WorkflowOutputEvent,
    WorkflowRunState,
    executor,
    handler,
    response_handler,
)

LAST = 5
ALL_SUPERSTEPS = list(range(LAST + 1))
MODES: list[Durability] = list(get_args(Durability))


@dataclass
class Script:
    """What the counter does at each value, and what ran (shared with the store's log)."""

    fail: set[int] = field(default_factory=set[int])
    """Values whose handler raises at every attempt."""
    flaky: dict[int, int] = field(default_factory=dict[int, int])
    """Value -> how many of its first attempts raise."""
    ask: set[int] = field(default_factory=set[int])
    """Values that ask a question first (the run pauses; the answer goes on counting)."""
    opens: dict[int, asyncio.Event] = field(default_factory=dict[int, asyncio.Event])
    """Value -> a gate its handler opens as it starts."""
    log: list[str] = field(default_factory=list[str])


class Counter(Executor):
    """One superstep per value up to ``LAST``: yields it, records it as shared state ``last``,
    sends the next value (or, for a value in ``script.ask``, asks first)."""

    def __init__(self, script: Script) -> None:
        super().__init__("count", retry=RetryPolicy(max_attempts=2))
        self.script = script

    @handler
    async def count(self, value: int, ctx: WorkflowContext[int, int]) -> None:
        script = self.script
        script.log.append(f"run {value}")
        if value in script.opens:
            script.opens[value].set()
        await asyncio.sleep(0)  # a turn of the event loop: a write started at a barrier runs
        if value in script.fail:
            raise RuntimeError(f"boom at {value}")
        if script.flaky.get(value, 0) >= ctx.attempt:
            raise RuntimeError(f"flaky at {value}, attempt {ctx.attempt}")
        if value in script.ask:
            await ctx.request_info(value, str)
            return
        await self._went(value, ctx)

    @response_handler
    async def answered(self, value: int, answer: str, ctx: WorkflowContext[int, int]) -> None:
        self.script.log.append(f"answer {answer}")
        await self._went(value, ctx)

    async def _went(self, value: int, ctx: WorkflowContext[int, int]) -> None:
        await ctx.yield_output(value)
        await ctx.set_shared_state("last", value)
        if value < LAST:
            await ctx.send_message(value + 1)


def counting(script: Script, *, condition: Callable[[Any], bool] | None = None) -> Workflow:
    counter = Counter(script)
    builder = WorkflowBuilder("counting", max_supersteps=50).set_start_executor(counter)
    if condition is None:
        builder.add_edge(counter, counter)
    else:
        builder.add_conditional_edge(counter, counter, condition)
    return builder.build()


class RecordingStore(InMemoryCheckpointStore):
    """Logs every save as it starts and ends (into the script's log); ``yields`` turns of the
    event loop before storing make it slow; a gate holds a superstep's save until opened;
    ``fail_at`` makes a superstep's save raise."""

    def __init__(self, log: list[str]) -> None:
        super().__init__()
        self.log = log
        self.saved: list[int] = []
        self.in_flight = 0
        self.most_in_flight = 0
        self.yields = 0
        self.gates: dict[int, asyncio.Event] = {}
        self.fail_at: set[int] = set()

    async def save(self, checkpoint: Checkpoint) -> str:
        superstep = checkpoint.superstep
        self.log.append(f"save {superstep} start")
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            if superstep in self.gates:
                async with asyncio.timeout(30):  # a guard: opened long before when writes overlap
                    await self.gates[superstep].wait()
            for _ in range(self.yields):
                await asyncio.sleep(0)
            if superstep in self.fail_at:
                raise OSError(f"disk full at superstep {superstep}")
            saved = await super().save(checkpoint)
        finally:
            self.in_flight -= 1
        self.saved.append(superstep)
        self.log.append(f"save {superstep} end")
        return saved


def before(log: list[str], first: str, then: str) -> bool:
    return log.index(first) < log.index(then)


def comparable(checkpoint: Checkpoint | None) -> dict[str, Any]:
    """A checkpoint's content, without what differs between two runs of the same steps."""
    assert checkpoint is not None
    return checkpoint.model_dump(exclude={"id", "run_id", "created_at"})


async def only_run_id(store: InMemoryCheckpointStore) -> str:
    (run_id,) = {m.run_id for m in await store.list()}
    return run_id


# --- sync ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("durability", [None, "sync"])
async def test_sync_writes_each_barrier_before_the_next_superstep_starts(
    runtime: Runtime, durability: Durability | None
) -> None:
    script = Script()
    store = RecordingStore(script.log)

    result = await counting(script).run(
        0, checkpoint_store=store, runtime=runtime, durability=durability
    )

    assert result.outputs == ALL_SUPERSTEPS
    assert store.saved == ALL_SUPERSTEPS
    for value in range(LAST):
        assert before(script.log, f"save {value} end", f"run {value + 1}"), script.log
    assert result.last_checkpoint_id == (await store.list())[-1].id


# --- async ---------------------------------------------------------------------------------------


async def test_async_writes_each_barrier_while_the_next_superstep_runs(runtime: Runtime) -> None:
    script = Script()
    store = RecordingStore(script.log)
    for value in range(LAST):  # a save waits for the next superstep to start: only async ends
        store.gates[value] = script.opens[value + 1] = asyncio.Event()

    result = await counting(script).run(
        0, checkpoint_store=store, runtime=runtime, durability="async"
    )

    assert result.outputs == ALL_SUPERSTEPS
    assert store.saved == ALL_SUPERSTEPS  # every barrier, in order
    assert store.most_in_flight == 1  # one write at a time
    for value in range(LAST):
        assert before(script.log, f"run {value + 1}", f"save {value} end"), script.log
        assert before(script.log, f"save {value} end", f"save {value + 1} start"), script.log
    assert result.last_checkpoint_id == (await store.list())[-1].id


async def test_async_writes_every_barrier_in_order_when_no_superstep_yields(
    runtime: Runtime,
) -> None:
    log: list[str] = []

    @executor(id="count")
    async def count(value: int, ctx: WorkflowContext[int, int]) -> None:
        log.append(f"run {value}")  # never awaits anything that suspends
        await ctx.yield_output(value)
        if value < LAST:
            await ctx.send_message(value + 1)

    workflow = WorkflowBuilder("eager").set_start_executor(count).add_edge(count, count).build()
    store = RecordingStore(log)

    result = await workflow.run(0, checkpoint_store=store, runtime=runtime, durability="async")

    assert result.outputs == ALL_SUPERSTEPS
    assert store.saved == ALL_SUPERSTEPS
    assert store.most_in_flight == 1
    for value in range(LAST - 1):  # each written by the next barrier at the latest
        assert before(log, f"save {value} end", f"run {value + 2}"), log
    assert result.last_checkpoint_id == (await store.list())[-1].id


@pytest.mark.parametrize("form", ["run", "run_stream"])
async def test_async_finishes_the_last_write_before_the_call_returns(
    runtime: Runtime, form: str
) -> None:
    script = Script()
    store = RecordingStore(script.log)
    store.yields = 5  # a slow store: its writes would still be running without the wait

    if form == "run":
        result = await counting(script).run(
            0, checkpoint_store=store, runtime=runtime, durability="async"
        )
        assert result.last_checkpoint_id == (await store.list())[-1].id
    else:
        async for event in counting(script).run_stream(
            0, checkpoint_store=store, runtime=runtime, durability="async"
        ):
            if isinstance(event, WorkflowCompletedEvent):
                assert store.saved == ALL_SUPERSTEPS  # done before the last event
    assert store.saved == ALL_SUPERSTEPS
    assert store.in_flight == 0


async def test_async_finishes_the_last_write_before_the_run_pauses(runtime: Runtime) -> None:
    script = Script(ask={2})
    store = RecordingStore(script.log)
    store.yields = 5
    workflow = counting(script)

    paused = await workflow.run(0, checkpoint_store=store, runtime=runtime, durability="async")

    assert paused.status is WorkflowRunState.IDLE_WITH_PENDING_REQUESTS
    assert store.saved == [0, 1, 2]
    assert store.in_flight == 0
    latest = await store.latest(paused.run_id)
    assert latest is not None
    assert latest.id == paused.last_checkpoint_id
    assert latest.pending_request_ids == [paused.pending_requests[0].request_id]

    done = await workflow.run(
        responses={paused.pending_requests[0].request_id: "yes"},
        runtime=runtime,
        durability="async",
    )

    assert done.outputs == [2, 3, 4, 5]
    assert store.saved == [0, 1, 2, 3, 4, 5, 6]  # answering took one superstep more
    assert store.in_flight == 0


async def test_async_finishes_the_running_write_before_a_failure_is_raised(
    runtime: Runtime,
) -> None:
    script = Script(fail={3})
    store = RecordingStore(script.log)
    store.yields = 5

    with pytest.raises(WorkflowExecutionError, match="boom at 3"):
        await counting(script).run(0, checkpoint_store=store, runtime=runtime, durability="async")

    assert store.saved == [0, 1, 2]  # the last barrier's write finished, none after it
    assert store.in_flight == 0


async def test_async_a_failed_write_stops_the_run_at_the_next_barrier(runtime: Runtime) -> None:
    script = Script()
    store = RecordingStore(script.log)
    store.fail_at = {1}

    with pytest.raises(CheckpointError, match="disk full at superstep 1"):
        await counting(script).run(0, checkpoint_store=store, runtime=runtime, durability="async")

    assert "run 2" in script.log  # superstep 2 overlapped the failing write ...
    assert "run 3" not in script.log  # ... and the run stopped at its barrier
    assert store.saved == [0]


async def test_async_a_cancelled_run_still_finishes_the_write_it_was_waiting_for(
    runtime: Runtime,
) -> None:
    script = Script()
    store = RecordingStore(script.log)
    store.gates[0] = asyncio.Event()  # write 0 waits until the run is cancelled
    reached = script.opens[1] = asyncio.Event()
    task = asyncio.ensure_future(
        counting(script).run(0, checkpoint_store=store, runtime=runtime, durability="async")
    )
    async with asyncio.timeout(30):  # a guard: superstep 1 starts at once when writes overlap
        await reached.wait()
    for _ in range(10):  # the run goes on to its barrier and waits there for write 0
        await asyncio.sleep(0)

    task.cancel()
    store.gates[0].set()
    with pytest.raises(asyncio.CancelledError):
        await task

    assert store.saved == [0]  # the write went on after the cancel, and the call waited for it
    assert "save 0 end" in script.log


async def test_async_resumes_from_its_last_write_like_sync(runtime: Runtime) -> None:
    failing = Script(fail={3})
    store = RecordingStore(failing.log)
    with pytest.raises(WorkflowExecutionError):
        await counting(failing).run(0, checkpoint_store=store, runtime=runtime, durability="async")
    run_id = await only_run_id(store)
    latest = await store.latest(run_id)
    assert latest is not None
    assert latest.superstep == 2

    resumed = await counting(Script()).run(
        checkpoint_id=latest.id, checkpoint_store=store, runtime=runtime, durability="async"
    )

    assert resumed.outputs == [3, 4, 5]
    assert store.saved == [0, 1, 2, 3, 4, 5]


# --- exit ----------------------------------------------------------------------------------------


async def test_exit_writes_once_when_the_run_completes(runtime: Runtime) -> None:
    script = Script()
    store = RecordingStore(script.log)
    synced = InMemoryCheckpointStore()
    await counting(Script()).run(0, checkpoint_store=synced, runtime=runtime)

    result = await counting(script).run(
        0, checkpoint_store=store, runtime=runtime, durability="exit"
    )

    assert result.outputs == ALL_SUPERSTEPS
    assert store.saved == [LAST]
    latest = await store.latest(result.run_id)
    assert latest is not None
    assert latest.id == result.last_checkpoint_id
    assert comparable(latest) == comparable(await synced.latest(await only_run_id(synced)))
    assert latest.outputs == ALL_SUPERSTEPS  # stored with the call's end, as in sync mode


async def test_exit_writes_when_the_run_pauses_and_when_it_ends(runtime: Runtime) -> None:
    script = Script(ask={2})
    store = RecordingStore(script.log)

    paused = await counting(script).run(
        0, checkpoint_store=store, runtime=runtime, durability="exit"
    )

    assert paused.status is WorkflowRunState.IDLE_WITH_PENDING_REQUESTS
    assert store.saved == [2]
    request_id = paused.pending_requests[0].request_id

    # Resumed from the pause checkpoint by another Workflow object, as another process would.
    done = await counting(Script()).run(
        checkpoint_id=paused.last_checkpoint_id,
        checkpoint_store=store,
        responses={request_id: "yes"},
        runtime=runtime,
        durability="exit",
    )

    assert done.outputs == [2, 3, 4, 5]
    assert store.saved == [2, LAST + 1]


async def test_exit_answered_in_process_writes_the_end_too(runtime: Runtime) -> None:
    script = Script(ask={2})
    store = RecordingStore(script.log)
    workflow = counting(script)
    paused = await workflow.run(0, checkpoint_store=store, runtime=runtime, durability="exit")

    done = await workflow.run(
        responses={paused.pending_requests[0].request_id: "yes"},
        runtime=runtime,
        durability="exit",
    )

    assert done.outputs == [2, 3, 4, 5]
    assert store.saved == [2, LAST + 1]


async def test_exit_writes_the_last_barrier_when_a_superstep_fails(runtime: Runtime) -> None:
    synced = InMemoryCheckpointStore()
    with pytest.raises(WorkflowExecutionError):
        await counting(Script(fail={3}, flaky={1: 1})).run(
            0, checkpoint_store=synced, runtime=runtime
        )
    script = Script(fail={3}, flaky={1: 1})
    store = RecordingStore(script.log)

    with pytest.raises(WorkflowExecutionError, match="boom at 3"):
        await counting(script).run(0, checkpoint_store=store, runtime=runtime, durability="exit")

    assert store.saved == [2]
    written = await store.latest(await only_run_id(store))
    # Exactly what sync mode left: superstep 1's failed attempt is recorded, superstep 3's not.
    assert comparable(written) == comparable(await synced.latest(await only_run_id(synced)))
    assert written is not None
    assert written.pending_messages == {"count": [3]}
    assert [e["v"]["superstep"] for e in written.metadata["errors"]["count"]] == [1]

    fixed = Script()
    resumed = await counting(fixed).run(
        checkpoint_id=written.id, checkpoint_store=store, runtime=runtime, durability="exit"
    )

    assert resumed.outputs == [3, 4, 5]
    assert fixed.log == ["run 3", "run 4", "run 5"]  # the failed superstep runs again
    assert store.saved == [2, LAST]


async def test_exit_writes_nothing_when_no_superstep_passed_since_the_last_write(
    runtime: Runtime,
) -> None:
    store = RecordingStore([])
    with pytest.raises(WorkflowExecutionError):  # the first superstep fails: nothing to keep
        await counting(Script(fail={0})).run(
            0, checkpoint_store=store, runtime=runtime, durability="exit"
        )
    assert store.saved == []

    with pytest.raises(WorkflowExecutionError):
        await counting(Script(fail={3})).run(
            0, checkpoint_store=store, runtime=runtime, durability="exit"
        )
    assert store.saved == [2]
    written = await store.latest(await only_run_id(store))
    assert written is not None

    with pytest.raises(WorkflowExecutionError):  # fails again at once: the store has it already
        await counting(Script(fail={3})).run(
            checkpoint_id=written.id, checkpoint_store=store, runtime=runtime, durability="exit"
        )
    assert store.saved == [2]


async def test_exit_keeps_the_store_as_it_was_when_a_superstep_fails_half_applied(
    runtime: Runtime,
) -> None:
    def condition(value: Any) -> bool:
        if value == 3:
            raise ValueError("no route for 3")
        return True

    synced = RecordingStore([])
    with pytest.raises(WorkflowExecutionError, match="no route for 3"):
        await counting(Script(), condition=condition).run(
            0, checkpoint_store=synced, runtime=runtime
        )
    store = RecordingStore([])

    with pytest.raises(WorkflowExecutionError, match="no route for 3"):
        await counting(Script(), condition=condition).run(
            0, checkpoint_store=store, runtime=runtime, durability="exit"
        )

    # Superstep 2 had applied its output when routing failed: its barrier's state is gone, so
    # exit mode writes nothing rather than a mix (sync mode had written supersteps 0 and 1).
    assert synced.saved == [0, 1]
    assert store.saved == []


async def test_exit_writes_the_last_barrier_when_the_budget_runs_out(runtime: Runtime) -> None:
    store = RecordingStore([])

    with pytest.raises(MaxSuperstepsExceededError):
        await counting(Script()).run(
            0, checkpoint_store=store, runtime=runtime, durability="exit", max_supersteps=3
        )

    assert store.saved == [2]
    written = await store.latest(await only_run_id(store))
    assert written is not None
    resumed = await counting(Script()).run(
        checkpoint_id=written.id,
        checkpoint_store=store,
        runtime=runtime,
        durability="exit",
        max_supersteps=10,
    )
    assert resumed.outputs == [3, 4, 5]


async def test_exit_writes_the_last_barrier_when_a_stream_is_closed_early(
    runtime: Runtime,
) -> None:
    store = RecordingStore([])
    events = counting(Script()).run_stream(
        0, checkpoint_store=store, runtime=runtime, durability="exit"
    )
    assert isinstance(events, AsyncGenerator)
    async for event in events:
        if isinstance(event, SuperstepCompletedEvent) and event.superstep == 2:
            break
    await events.aclose()

    assert store.saved == [2]
    written = await store.latest(await only_run_id(store))
    assert written is not None
    assert written.pending_messages == {"count": [3]}


async def test_exit_a_forked_run_is_written_as_it_forks_and_as_it_ends(runtime: Runtime) -> None:
    store = RecordingStore([])
    first = await counting(Script()).run(0, checkpoint_store=store, runtime=runtime)
    second = (await store.list(run_id=first.run_id))[2]

    fork = await counting(Script()).run(
        checkpoint_id=second.id,
        checkpoint_store=store,
        fork=True,
        runtime=runtime,
        durability="exit",
    )

    assert fork.outputs == [3, 4, 5]
    listed = await store.list(run_id=fork.run_id)
    assert [m.superstep for m in listed] == [2, LAST]
    assert [m.parent_checkpoint_id for m in listed] == [second.id, None]


# --- every mode ----------------------------------------------------------------------------------


@pytest.mark.parametrize("durability", MODES)
async def test_run_stream_writes_what_run_writes(runtime: Runtime, durability: Durability) -> None:
    ran, streamed = RecordingStore([]), RecordingStore([])
    await counting(Script()).run(0, checkpoint_store=ran, runtime=runtime, durability=durability)

    outputs = [
        e.data
        async for e in counting(Script()).run_stream(
            0, checkpoint_store=streamed, runtime=runtime, durability=durability
        )
        if isinstance(e, WorkflowOutputEvent)
    ]

    assert outputs == ALL_SUPERSTEPS
    assert streamed.saved == ran.saved == ([LAST] if durability == "exit" else ALL_SUPERSTEPS)


@pytest.mark.parametrize("durability", MODES)
async def test_run_stream_yields_its_failure_after_the_writes(
    runtime: Runtime, durability: Durability
) -> None:
    store = RecordingStore([])
    store.yields = 5
    saved_at_failure: list[int] | None = None

    async for event in counting(Script(fail={3})).run_stream(
        0, checkpoint_store=store, runtime=runtime, durability=durability
    ):
        if isinstance(event, WorkflowFailedEvent):
            saved_at_failure = list(store.saved)

    assert saved_at_failure == ([2] if durability == "exit" else [0, 1, 2])


@pytest.mark.parametrize("durability", [*MODES, None])
async def test_durability_without_a_checkpoint_store_is_accepted_and_has_no_effect(
    runtime: Runtime, durability: Durability | None
) -> None:
    result = await counting(Script()).run(0, runtime=runtime, durability=durability)

    assert result.outputs == ALL_SUPERSTEPS
    assert result.last_checkpoint_id is None


@pytest.mark.parametrize("form", ["run", "run_stream"])
async def test_an_unknown_durability_is_refused_naming_the_modes(form: str) -> None:
    workflow = counting(Script())
    bad: Any = "eventually"

    with pytest.raises(ValueError, match=r"'sync', 'async' or 'exit'.*'eventually'"):
        if form == "run":
            await workflow.run(0, durability=bad)
        else:
            async for _ in workflow.run_stream(0, durability=bad):
                pass


# --- ported from LangGraph (libs/langgraph/tests/test_pregel_async.py) ---------------------------


@pytest.mark.parametrize("durability", MODES)
async def test_pending_writes_resume(durability: Durability) -> None:
    """LangGraph's ``test_pending_writes_resume``: a node that keeps failing after its retries
    fails the run; the latest checkpoint is the barrier before it, resuming runs only the
    failed node again (and saves nothing new while it still fails), and once it is fixed the
    run completes from there. (LangGraph keeps the successful parallel node's writes as
    "pending writes"; here the barrier before the failed superstep is what every mode keeps.)"""

    class AwhileMaker(Executor):
        def __init__(self, id: str, adds: int) -> None:  # noqa: A002
            super().__init__(id, retry=RetryPolicy(max_attempts=2))
            self.adds = adds
            self.error: Exception | None = None
            self.calls = 0

        @handler
        async def on(self, value: int, ctx: WorkflowContext[int, int]) -> None:
            self.calls += 1
            await asyncio.sleep(0)
            if self.error is not None:
                raise self.error
            if self.id == "one":
                await ctx.send_message(value + self.adds)
            else:
                await ctx.yield_output(value + self.adds)

    one, two = AwhileMaker("one", 2), AwhileMaker("two", 3)
    two.error = ConnectionError("I'm not good")
    graph = WorkflowBuilder("pending").set_start_executor(one).add_edge(one, two).build()
    store = InMemoryCheckpointStore()

    with pytest.raises(WorkflowExecutionError, match="I'm not good"):
        await graph.run(1, checkpoint_store=store, durability=durability)

    assert one.calls == 1
    assert two.calls == 2
    run_id = await only_run_id(store)
    state = await graph.get_state(run_id, checkpoint_store=store)
    assert state.status == "interrupted"
    assert state.next_executors == ["two"]
    history = await store.list(run_id=run_id)

    with pytest.raises(WorkflowExecutionError, match="I'm not good"):
        await graph.run(
            checkpoint_id=state.checkpoint_id, checkpoint_store=store, durability=durability
        )

    assert one.calls == 1  # node "one" succeeded before: not called again
    assert two.calls == 4
    assert await store.list(run_id=run_id) == history  # no new checkpoint saved

    two.error = None
    result = await graph.run(
        checkpoint_id=state.checkpoint_id, checkpoint_store=store, durability=durability
    )

    assert result.outputs == [6]  # 1 + 2 + 3
    assert [m.superstep for m in await store.list(run_id=run_id)] == [0, 1]


@pytest.mark.parametrize("form", ["run", "run_stream"])
async def test_checkpoint_put_after_cancellation(runtime: Runtime, form: str) -> None:
    """LangGraph's ``test_checkpoint_put_after_cancellation`` (and its ``stream_anext`` form):
    a run with ``durability="exit"`` cancelled while a node runs still writes its checkpoint,
    after the node ended, and the write is not cancelled. (Here the node is the second
    superstep's: before any barrier there is no state to keep, as in sync mode.)"""
    logs: list[str] = []
    started = asyncio.Event()

    class LongPutCheckpointer(InMemoryCheckpointStore):
        async def save(self, checkpoint: Checkpoint) -> str:
            logs.append("checkpoint.aput.start")
            try:
                for _ in range(5):  # LangGraph sleeps 1 s: any await that yields will do
                    await asyncio.sleep(0)
                return await super().save(checkpoint)
            finally:
                logs.append("checkpoint.aput.end")

    class Awhile(Executor):
        @handler
        async def on(self, value: int, ctx: WorkflowContext[int]) -> None:
            if value == 0:
                await ctx.send_message(1)
                return
            logs.append("awhile.start")
            started.set()
            try:
                await asyncio.Event().wait()  # until cancelled
            finally:
                logs.append("awhile.end")

    agent = Awhile("agent")
    graph = WorkflowBuilder("awhile").set_start_executor(agent).add_edge(agent, agent).build()
    store = LongPutCheckpointer()
    if form == "run":
        task = asyncio.ensure_future(
            graph.run(0, checkpoint_store=store, runtime=runtime, durability="exit")
        )
    else:
        stream = graph.run_stream(0, checkpoint_store=store, runtime=runtime, durability="exit")

        async def drain() -> None:
            async for _ in stream:
                pass

        task = asyncio.ensure_future(drain())
    async with asyncio.timeout(30):  # a guard: the node starts at once
        await started.wait()
    task.cancel()
    assert logs == ["awhile.start"], "cancelled before the checkpoint put started"

    with pytest.raises(asyncio.CancelledError):
        await task

    assert logs == [
        "awhile.start",
        "awhile.end",
        "checkpoint.aput.start",
        "checkpoint.aput.end",
    ], "the checkpoint put is not cancelled"
    (written,) = await store.list()
    assert written.superstep == 0
