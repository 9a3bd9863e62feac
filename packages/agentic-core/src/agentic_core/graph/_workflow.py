"""Workflow: a compiled graph and the API that runs it, any number of runs at once.

The engine's parts, one job each: ``CompiledGraph`` (the structure), ``RunState`` (one run),
``_step`` (the pure superstep: plan, apply, route), ``_loop`` (runtime calls, retries,
checkpoints, event relay) and ``PausedRuns`` (runs waiting for answers). This module only
turns the public calls into those steps, or hands them to a ``RunDriver``: a runtime that owns
whole runs (a durable distributed one must claim the run and commit each superstep where any
process can resume it), so ``workflow.run(message, runtime=r)`` is the same run as ``r``'s own.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from time import perf_counter
from typing import (
    TYPE_CHECKING,
    Any,
    Literal,
    NamedTuple,
    NotRequired,
    Protocol,
    TypedDict,
    runtime_checkable,
)

from agentic_core._errors import (
    CheckpointError,
    IncompatibleCheckpointError,
    SerializationError,
    WorkflowExecutionError,
)
from agentic_core._telemetry_spans import RunObservation, observe_run
from agentic_core.graph._direct import drive_direct
from agentic_core.graph._durability import (
    CheckpointWrites,
    Durability,
    check_durability,
    checkpoint_writes,
    save_checkpoint,
)
from agentic_core.graph._graph import CompiledGraph
from agentic_core.graph._invoke import all_direct, execute_direct
from agentic_core.graph._loop import (
    drive,
    drive_observed,
    execute,
    execute_live,
    finish_superstep,
    monotonic,
)
from agentic_core.graph._paused import PausedRun, PausedRuns
from agentic_core.graph._run_state import RunState, new_run_id, restore_run, start_run
from agentic_core.graph._runtime import LocalRuntime, SerializingRuntime
from agentic_core.graph._snapshot import RunSnapshot, snapshot_of
from agentic_core.graph._step import (
    deliver_responses,
    end_call,
    plan_superstep,
    reissue_pending,
    started_events,
    update_shared_state,
)
from agentic_core.protocols._checkpoint import (
    CHECKPOINT_SCHEMA_VERSION,
    Checkpoint,
    CheckpointMetadata,
    CheckpointStore,
)
from agentic_core.protocols._events import (
    RequestInfoEvent,
    WorkflowCompletedEvent,
    WorkflowEvent,
    WorkflowFailedEvent,
    WorkflowRunState,
    WorkflowStartedEvent,
)
from agentic_core.protocols._runtime import ExecutorErrorInfo, InvocationResult, Runtime

if TYPE_CHECKING:
    from agentic_core.protocols._agent import Agent

_DEFAULT_RUNTIME = LocalRuntime()


@dataclass
class WorkflowRunResult:
    """What a run returns: status, outputs, events, pending requests and bookkeeping.

    ``events`` holds what ``run()`` keeps: custom events, ``RequestInfoEvent``s,
    ``ExecutorFailedEvent``s and ``FanInIncompleteEvent``s. Lifecycle events (superstep and
    executor started/completed, outputs) are created only for ``run_stream`` listeners.
    """

    status: WorkflowRunState
    outputs: list[Any]
    events: list[WorkflowEvent]
    superstep_count: int
    duration_s: float
    pending_requests: list[RequestInfoEvent]
    run_id: str
    last_checkpoint_id: str | None = None
    errors: list[ExecutorErrorInfo] = field(default_factory=list[ExecutorErrorInfo])

    def get_outputs(self) -> list[Any]:
        """The outputs the run yielded, in order."""
        return self.outputs


class _Start(NamedTuple):
    """A run about to be driven by one call, and how it began."""

    run: RunState
    store: CheckpointStore | None
    resumed: bool


@runtime_checkable
class RunDriver(Protocol):
    """A runtime that drives whole runs: ``Workflow.run``/``run_stream`` hand the call to it.

    Each method takes ``Workflow.run``'s keywords (``runtime`` aside) and must give them their
    documented meaning, or raise an error naming what to call instead; the driver runs the
    engine itself on a plain ``Runtime`` (one without these methods), so nothing recurses.
    When ``responses`` answer a run paused in this process, ``checkpoint_id`` is its last
    checkpoint. ``durability`` is passed only when the caller gave one (so a driver written
    before it still runs every call that does not ask for a mode); a driver that cannot honour
    a mode raises ``ValueError`` naming those it can. A checkpoint store whose ``run_driver``
    attribute is a driver belongs to it: runs paused there are answered through it
    (``send_responses`` included).
    """

    async def drive_run(
        self,
        workflow: Workflow,
        message: Any,
        *,
        checkpoint_id: str | None,
        checkpoint_store: CheckpointStore | None,
        responses: Mapping[str, Any] | None,
        max_supersteps: int | None,
        fork: bool,
        update_state: Mapping[str, Any] | None,
        durability: Durability | None = None,
    ) -> WorkflowRunResult: ...

    def drive_run_stream(
        self,
        workflow: Workflow,
        message: Any,
        *,
        checkpoint_id: str | None,
        checkpoint_store: CheckpointStore | None,
        responses: Mapping[str, Any] | None,
        max_supersteps: int | None,
        fork: bool,
        update_state: Mapping[str, Any] | None,
        durability: Durability | None = None,
    ) -> AsyncIterator[WorkflowEvent]: ...


class Workflow(CompiledGraph):
    """A compiled, validated graph. Build it with ``WorkflowBuilder``; run it many times at once.

    Per-run state lives in the run, never here: one ``Workflow`` serves concurrent runs. The
    only thing it keeps is a bounded index of runs paused in this process on requests, so
    ``send_responses`` can find them.
    """

    @cached_property
    def _paused(self) -> PausedRuns:
        return PausedRuns()

    def to_mermaid(self) -> str:
        """The graph as a Mermaid flowchart; executor ids are escaped labels, never markup."""
        from agentic_core.graph._viz import to_mermaid

        return to_mermaid(self)

    def to_dot(self) -> str:
        """The graph in Graphviz DOT (node ids as in ``to_mermaid``, executor ids as labels)."""
        from agentic_core.graph._viz import to_dot

        return to_dot(self)

    def mermaid_node_ids(self) -> dict[str, str]:
        """Each executor's node id in ``to_mermaid()`` and ``to_dot()``, by executor id.

        For a tool that styles the drawn graph per executor: node ids are one to one with
        executor ids but are not the ids themselves (those are only labels, shown as text).
        """
        from agentic_core.graph._viz import node_id

        return {executor_id: node_id(executor_id) for executor_id in self.executors}

    def __repr__(self) -> str:
        size = f"executors={len(self.executors)}, edges={len(self.edges)}"
        return f"Workflow(name={self.name!r}, {size})"

    def as_agent(
        self,
        name: str | None = None,
        *,
        reply: Literal["last_agent", "new_messages"] = "last_agent",
    ) -> Agent:
        """This workflow behind the Agent interface (its start executor takes list[ChatMessage]).

        Returns a ``WorkflowAgent``. A ``list[ChatMessage]`` output (a pattern's conversation)
        answers with the last agent's turn, or with ``reply="new_messages"`` every message
        after the input (a concurrent pattern's answers).
        """
        # The agent layer builds on the graph, so the graph reaches up to it only here.
        from agentic_core.agents._workflow_agent import WorkflowAgent

        return WorkflowAgent(self, name=name, reply=reply)

    # -- running --------------------------------------------------------------------------------

    async def run(
        self,
        message: Any = None,
        *,
        checkpoint_id: str | None = None,
        checkpoint_store: CheckpointStore | None = None,
        responses: Mapping[str, Any] | None = None,
        runtime: Runtime | None = None,
        max_supersteps: int | None = None,
        fork: bool = False,
        update_state: Mapping[str, Any] | None = None,
        durability: Durability | None = None,
    ) -> WorkflowRunResult:
        """Run to completion (or until it waits on requests) and return the result.

        ``message`` goes to the start executor in superstep 0. ``checkpoint_id`` resumes that
        run from that checkpoint instead (``responses`` then answers its pending requests);
        with ``fork=True`` it starts a new run from there, after applying ``update_state`` to
        its shared state. ``responses`` alone answers a run paused in this process.
        ``max_supersteps`` is this run's budget (the builder's by default), counted across
        every resume. Raises ``WorkflowExecutionError`` when an executor fails after its
        retries.

        ``durability`` chooses when checkpoints are written, with LangGraph's meaning:
        ``"sync"`` (the default) at every barrier, before the next superstep starts;
        ``"async"`` at every barrier too, while the next superstep runs, the last write
        finished before the call returns or raises; ``"exit"`` only when the call ends: the run
        completed, waits on requests, or failed (then the last barrier's state, so a resume
        runs the failed superstep again). A crash (a killed process) loses at most the running
        superstep with ``"sync"``, the running one and the one before with ``"async"``, and
        the whole call with ``"exit"``. Without a checkpoint store it has no effect.

        A ``runtime`` that drives whole runs (a durable distributed one, such as agentic-bus's
        ``NatsRuntime``) runs the call itself, with these keywords' meaning; so does the
        runtime a paused run was checkpointed by, when ``responses`` answer it.
        """
        if checkpoint_id is None and not responses and type(runtime) in _FRESH_RUNTIMES:
            # A new run on this process's engine (the common case): nothing to route or load.
            if (
                max_supersteps is not None
                or fork
                or update_state is not None
                or durability is not None
            ):
                _check_options(
                    message, checkpoint_id, max_supersteps, fork, update_state, durability
                )
            run = start_run(self, message, max_supersteps=max_supersteps)
            start = _Start(run, checkpoint_store or self.checkpoint_store, False)
        else:
            _check_options(message, checkpoint_id, max_supersteps, fork, update_state, durability)
            driver, paused = self._route(runtime, message, checkpoint_id, responses)
            if driver is not None:
                return await driver.drive_run(
                    self,
                    message,
                    **_driven(
                        driver, paused, checkpoint_id, checkpoint_store, responses, durability
                    ),
                    max_supersteps=max_supersteps,
                    fork=fork,
                    update_state=update_state,
                )
            start = await self._start(
                message, checkpoint_id, checkpoint_store, responses, max_supersteps, fork,
                update_state, paused,
            )  # fmt: skip
            run = start.run
            if start.resumed:
                reissue_pending(run)
        began = perf_counter()
        observed = observe_run(run, resumed=start.resumed)  # None: telemetry off
        runtime = runtime or _DEFAULT_RUNTIME
        writes = checkpoint_writes(durability, start.store, run)
        try:
            if observed is None:
                if type(runtime) is LocalRuntime:  # the common case: its direct path
                    await drive_direct(run, runtime, writes)
                else:
                    await drive(run, runtime, writes)
            else:
                await drive_observed(run, runtime, writes, observed)
        except BaseException as exc:
            if writes is not None:
                await writes.on_failure(run, exc)
            raise
        if writes is not None:
            await _end_writes(writes, run, observed)
        outcome = end_call(run)
        status = self._settle(run, start.store)
        if observed is not None:
            observed.end(status.value)
        return WorkflowRunResult(
            status=status,
            outputs=outcome.outputs,
            events=outcome.events,
            superstep_count=run.superstep,
            duration_s=perf_counter() - began,
            pending_requests=list(run.pending_requests.values()),
            run_id=run.run_id,
            last_checkpoint_id=run.last_checkpoint_id,
            errors=[e for errors in run.errors.values() for e in errors] if run.errors else [],
        )

    async def run_stream(
        self,
        message: Any = None,
        *,
        checkpoint_id: str | None = None,
        checkpoint_store: CheckpointStore | None = None,
        responses: Mapping[str, Any] | None = None,
        runtime: Runtime | None = None,
        max_supersteps: int | None = None,
        fork: bool = False,
        update_state: Mapping[str, Any] | None = None,
        durability: Durability | None = None,
    ) -> AsyncIterator[WorkflowEvent]:
        """Run and yield every event: each superstep's start as it starts, the rest at its
        barrier, agents' streaming updates as they come.

        Takes ``run()``'s keywords. A resumed run first yields the requests it still waits
        for; the last event is a ``WorkflowCompletedEvent`` whose ``status`` says whether the
        run completed or waits for answers. On failure it yields a ``WorkflowFailedEvent`` and
        stops. A runtime that drives whole runs streams the run itself (see ``run``). With
        ``durability="async"`` or ``"exit"``, the checkpoint writes ``run`` waits for are done
        before the last event (or the failure event) is yielded; a stream closed early is a
        stopped run (``"exit"`` writes the last barrier's state).
        """
        _check_options(message, checkpoint_id, max_supersteps, fork, update_state, durability)
        driver, paused = self._route(runtime, message, checkpoint_id, responses)
        if driver is not None:
            driven = driver.drive_run_stream(
                self,
                message,
                **_driven(driver, paused, checkpoint_id, checkpoint_store, responses, durability),
                max_supersteps=max_supersteps,
                fork=fork,
                update_state=update_state,
            )
            async for event in driven:
                yield event
            return
        start = await self._start(
            message, checkpoint_id, checkpoint_store, responses, max_supersteps, fork, update_state,
            paused,
        )  # fmt: skip
        run = start.run
        events: list[WorkflowEvent] = []
        run.stream = events
        began = monotonic()
        yield WorkflowStartedEvent(run_id=run.run_id, workflow_id=self.id)
        if start.resumed:
            reissue_pending(run)
        observed = observe_run(run, resumed=start.resumed)  # None: telemetry off
        runtime = runtime or _DEFAULT_RUNTIME
        writes = checkpoint_writes(durability, start.store, run)
        try:
            for event in events:
                yield event
            events.clear()
            local = type(runtime) is LocalRuntime
            while run.inboxes:
                direct = local and all_direct(run.inboxes, self.plans)  # before planning moves them
                invocations = plan_superstep(run)
                if observed is not None:
                    observed.start_superstep(invocations)
                for event in started_events(run, invocations):
                    yield event  # as the superstep starts, not at its barrier
                if self.streams_live:
                    results: list[InvocationResult] = []
                    async for event in execute_live(run, runtime, invocations, results, observed):
                        yield event
                elif observed is None:
                    results = await execute(
                        run, runtime, invocations, execute_direct if direct else None
                    )
                else:
                    with observed.in_superstep():  # current while awaited, never at a yield
                        results = await execute(run, runtime, invocations)
                await finish_superstep(run, results, writes)
                if observed is not None:
                    observed.end_superstep()
                for event in events:
                    yield event
                events.clear()
            if writes is not None:
                await writes.at_end(run)
        except WorkflowExecutionError as exc:
            if writes is not None:
                await writes.on_failure(run, exc)
            if observed is not None:
                observed.fail(exc)
            for event in events:
                yield event
            yield WorkflowFailedEvent(
                error=str(exc), superstep=exc.superstep, executor_id=exc.executor_id
            )
            return
        except BaseException as exc:  # another error, or the consumer stopped iterating
            if writes is not None:
                await writes.on_failure(run, exc)
            if observed is not None:
                observed.fail(exc)
            raise
        outcome = end_call(run)
        status = self._settle(run, start.store)
        if observed is not None:
            observed.end(status.value)
        for event in outcome.tail:
            yield event
        yield WorkflowCompletedEvent(
            superstep_count=run.superstep, duration_s=monotonic() - began, status=status
        )

    async def send_responses(self, responses: Mapping[str, Any]) -> WorkflowRunResult:
        """Answer pending requests of a run paused in this process, and continue it."""
        return await self.run(responses=responses)

    async def get_run_history(
        self, run_id: str, *, checkpoint_store: CheckpointStore | None = None
    ) -> list[CheckpointMetadata]:
        """The checkpoints of run ``run_id``, oldest first (time travel: fork from any of them).

        Uses the workflow's checkpoint store unless ``checkpoint_store`` is given.
        """
        store = self._store_for("list the history of run " + repr(run_id), checkpoint_store)
        return await store.list(workflow_id=self.id, run_id=run_id)

    async def get_state(
        self, run_id: str, *, checkpoint_store: CheckpointStore | None = None
    ) -> RunSnapshot:
        """Where run ``run_id`` stands, from the checkpoint store alone (LangGraph's
        ``get_state``): status, last superstep, outputs so far, pending requests, shared state.

        Reads the run's latest checkpoint (the workflow's store unless ``checkpoint_store`` is
        given; any process, any ``Workflow`` object of the same graph, runs driven by a
        ``RunDriver`` such as NatsRuntime included). Raises ``CheckpointError`` when the store
        holds no checkpoint of the run, ``IncompatibleCheckpointError`` when another graph
        wrote it.
        """
        store = self._store_for(f"read the state of run {run_id!r}", checkpoint_store)
        latest = await store.latest(run_id)
        if latest is None:
            raise CheckpointError(f"no checkpoint of run {run_id!r} in the store")
        self._check_loaded(latest)
        try:
            return snapshot_of(latest, self.type_registry)
        except SerializationError as exc:
            raise CheckpointError(
                f"checkpoint {latest.id!r} of run {run_id} cannot be decoded: {exc}"
            ) from exc

    # -- how a call starts ----------------------------------------------------------------------

    async def _start(
        self,
        message: Any,
        checkpoint_id: str | None,
        checkpoint_store: CheckpointStore | None,
        responses: Mapping[str, Any] | None,
        max_supersteps: int | None,
        fork: bool,
        update_state: Mapping[str, Any] | None,
        paused: PausedRun | None,
    ) -> _Start:
        if checkpoint_id is not None:
            store = self._store_for(f"resume from checkpoint {checkpoint_id!r}", checkpoint_store)
            checkpoint = await self._load(checkpoint_id, store)
            if fork:
                run = self._restore(checkpoint, run_id=new_run_id(), max_supersteps=max_supersteps)
                run.parent_checkpoint_id = checkpoint_id
                if update_state:
                    update_shared_state(run, update_state)
                await save_checkpoint(run, store)  # the fork exists, resumable, before it runs
            else:
                run = self._restore(checkpoint, max_supersteps=max_supersteps)
                self._paused.forget(run.run_id)  # resumed here: an older paused copy is stale
            if responses:
                deliver_responses(run, responses)
            return _Start(run, store, resumed=True)
        if paused is not None and responses:
            return await self._answer_paused(paused, responses, checkpoint_store, max_supersteps)
        store = checkpoint_store or self.checkpoint_store
        return _Start(start_run(self, message, max_supersteps=max_supersteps), store, False)

    def _route(
        self,
        runtime: Runtime | None,
        message: Any,
        checkpoint_id: str | None,
        responses: Mapping[str, Any] | None,
    ) -> tuple[RunDriver | None, PausedRun | None]:
        """Who runs the call (a driver, or None: the engine here) and, for ``responses`` alone,
        the paused run they answer (taken from the paused runs)."""
        driver = _run_driver(runtime)
        if not responses or checkpoint_id is not None:
            return driver, None
        if message is not None:
            raise ValueError("pass either a message or responses, not both")
        paused = self._paused.take(responses)
        if runtime is None:
            driver = _store_driver(paused.store)  # paused by a driver: answered through it
        if driver is not None and isinstance(paused.kept, RunState):  # no checkpoint to resume
            self._paused.add(paused.kept, paused.store)  # still paused: nothing is lost
            raise ValueError(
                f"run {paused.run_id} paused without a checkpoint, in this process: answer it "
                "on the runtime it ran on (without runtime=)"
            )
        return driver, paused

    async def _answer_paused(
        self,
        paused: PausedRun,
        responses: Mapping[str, Any],
        checkpoint_store: CheckpointStore | None,
        max_supersteps: int | None,
    ) -> _Start:
        store = paused.store or checkpoint_store or self.checkpoint_store
        if isinstance(paused.kept, RunState):
            run = paused.kept
            if max_supersteps is not None:
                run.max_supersteps = max_supersteps
                run.max_supersteps_overridden = True
        else:
            checkpoint_id, kept_in = paused.kept
            checkpoint = await self._load(checkpoint_id, kept_in)
            run = self._restore(checkpoint, max_supersteps=max_supersteps)
        try:
            deliver_responses(run, responses)
        except Exception:
            self._paused.add(run, store)  # a wrong answer loses nothing: still paused
            raise
        return _Start(run, store, resumed=True)

    def _settle(self, run: RunState, store: CheckpointStore | None) -> WorkflowRunState:
        """The status a call ends with; a run that waits is kept for ``send_responses``."""
        if run.pending_requests:
            self._paused.add(run, store)
            return WorkflowRunState.IDLE_WITH_PENDING_REQUESTS
        return WorkflowRunState.COMPLETED

    def _store_for(self, doing: str, given: CheckpointStore | None) -> CheckpointStore:
        store = given or self.checkpoint_store
        if store is None:
            raise CheckpointError(
                f"cannot {doing}: no checkpoint store (pass checkpoint_store= or build with "
                "with_checkpointing)"
            )
        return store

    async def _load(self, checkpoint_id: str, store: CheckpointStore) -> Checkpoint:
        checkpoint = await store.load(checkpoint_id)
        if checkpoint is None:
            raise CheckpointError(f"no checkpoint with id {checkpoint_id!r} in the store")
        self._check_loaded(checkpoint)
        return checkpoint

    def _check_loaded(self, checkpoint: Checkpoint) -> None:
        """Refuse a checkpoint another graph, or a newer agentic_core, wrote."""
        checkpoint_id = checkpoint.id
        if checkpoint.workflow_fingerprint != self.fingerprint():
            raise IncompatibleCheckpointError(
                f"checkpoint {checkpoint_id!r} was written by a different graph "
                f"(workflow {checkpoint.workflow_name!r}, fingerprint "
                f"{checkpoint.workflow_fingerprint[:12]}) than {self.name!r} "
                f"(fingerprint {self.fingerprint()[:12]})"
            )
        if checkpoint.schema_version > CHECKPOINT_SCHEMA_VERSION:
            raise CheckpointError(
                f"checkpoint {checkpoint_id!r} has schema version {checkpoint.schema_version}; "
                f"this agentic_core reads up to {CHECKPOINT_SCHEMA_VERSION}"
            )

    def _restore(
        self, checkpoint: Checkpoint, *, run_id: str | None = None, max_supersteps: int | None
    ) -> RunState:
        try:
            return restore_run(self, checkpoint, run_id=run_id, max_supersteps=max_supersteps)
        except CheckpointError:
            raise
        except (SerializationError, KeyError, TypeError, ValueError, AttributeError) as exc:
            raise CheckpointError(
                f"checkpoint {checkpoint.id!r} of run {checkpoint.run_id} cannot be decoded: "
                f"{type(exc).__name__}: {exc}"
            ) from exc


def _check_options(
    message: Any,
    checkpoint_id: str | None,
    max_supersteps: int | None,
    fork: bool,
    update_state: Mapping[str, Any] | None,
    durability: Durability | None,
) -> None:
    """The keyword values and combinations no runtime accepts."""
    check_durability(durability)
    if checkpoint_id is not None and message is not None:
        raise ValueError("pass either a message (a new run) or a checkpoint_id (resume), not both")
    if max_supersteps is not None and max_supersteps < 1:
        raise ValueError(f"max_supersteps must be at least 1, got {max_supersteps}")
    if update_state is not None and not fork:
        raise ValueError("update_state edits a fork: pass fork=True with checkpoint_id=")
    if fork and checkpoint_id is None:
        raise ValueError("fork=True starts a new run from a checkpoint: pass checkpoint_id=")


class _Driven(TypedDict):
    checkpoint_id: str | None
    checkpoint_store: CheckpointStore | None
    responses: Mapping[str, Any] | None
    durability: NotRequired[Durability]


def _driven(
    driver: RunDriver,
    paused: PausedRun | None,
    checkpoint_id: str | None,
    checkpoint_store: CheckpointStore | None,
    responses: Mapping[str, Any] | None,
    durability: Durability | None,
) -> _Driven:
    """The resume keywords a driver gets: answering a paused run names its last checkpoint
    (and the driver's own store, when the run was checkpointed there); ``durability`` only
    when the caller chose one (a driver may predate it)."""
    if paused is not None:
        checkpoint_id = paused.checkpoint_id
        if checkpoint_store is None and _store_driver(paused.store) is driver:
            checkpoint_store = paused.store
    driven = _Driven(
        checkpoint_id=checkpoint_id, checkpoint_store=checkpoint_store, responses=responses
    )
    if durability is not None:
        driven["durability"] = durability
    return driven


async def _end_writes(
    writes: CheckpointWrites, run: RunState, observed: RunObservation | None
) -> None:
    """The checkpoint writes ending a call; one that fails fails the call (telemetry too)."""
    try:
        await writes.at_end(run)
    except BaseException as exc:
        if observed is not None:
            observed.fail(exc)
        raise


_PLAIN_RUNTIMES: frozenset[type] = frozenset({LocalRuntime, SerializingRuntime})
_FRESH_RUNTIMES: frozenset[type] = frozenset({type(None), LocalRuntime, SerializingRuntime})
"""``runtime=`` values with which a new run is driven here (not by a ``RunDriver``)."""


def _run_driver(runtime: Runtime | None) -> RunDriver | None:
    """``runtime`` if it drives whole runs; None for the default and the built-in runtimes."""
    if runtime is None or type(runtime) in _PLAIN_RUNTIMES:  # the common case: no protocol check
        return None
    return runtime if isinstance(runtime, RunDriver) else None


def _store_driver(store: CheckpointStore | None) -> RunDriver | None:
    """The driver a checkpoint store belongs to (its ``run_driver``), if any."""
    driver: object = getattr(store, "run_driver", None)
    return driver if isinstance(driver, RunDriver) else None
