"""NatsRuntime: each superstep's invocations run as tasks on a JetStream work queue.

The engine plans a superstep and applies its results exactly as with ``LocalRuntime``; this
runtime only moves the invocations to workers and their results back (``_gather``: tasks out,
first stored results back, poison tasks and missing workers turned into errors).

It also drives whole runs (core's run-driver hook): ``workflow.run(message, runtime=runtime)``
and ``run_stream`` come to ``NatsRuntime.run``/``run_stream``, which claim the run, commit each
superstep's checkpoint to NATS KV (fenced) and append its outputs to the committed log; the
engine runs inside on ``_Tasks``, this runtime seen as a plain ``Runtime``.

With OpenTelemetry on, each task's headers carry the W3C trace context current when the engine
called ``execute`` (its superstep span), and workers run the invocation under it: a run spread
over many processes is one trace.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from nats.aio.client import Client as NatsClient
from nats.js.client import JetStreamContext
from nats.js.errors import NotFoundError

from agentic_bus._commit_log import (
    CommittingStore,
    committed_outputs,
    last_committed_superstep,
    publish_committed,
)
from agentic_bus._connect import DEFAULT_NATS_URL, connect_nats
from agentic_bus._driven_runs import (
    FENCED,
    OutputStash,
    RecentRuns,
    RunOptions,
    check_durability,
    fenced_cause,
)
from agentic_bus._gather import Gather
from agentic_bus._kv._blobs import Blobs
from agentic_bus._pool import PoolSettings, ensure_pool_consumer, pool_of
from agentic_bus._requests import publish_requests, wait_for_responses
from agentic_bus._streams import (
    RESULTS_STREAM,
    TASKS_STREAM,
    declare_events_stream,
    declare_streams,
)
from agentic_bus._subjects import Subjects
from agentic_core import (
    BusError,
    Checkpoint,
    CheckpointError,
    CheckpointStore,
    Durability,
    Invocation,
    InvocationResult,
    RequestInfoEvent,
    Workflow,
    WorkflowCompletedEvent,
    WorkflowEvent,
    WorkflowGraph,
    WorkflowRunResult,
    WorkflowRunState,
    WorkflowStartedEvent,
    inject_trace_context,
    redact_urls,
)

__all__ = ["NatsRuntime"]


class NatsRuntime:
    """A ``Runtime`` that runs executor invocations on ``Worker`` processes through NATS.

    ``workflow.run(message, runtime=NatsRuntime(url))`` runs the same workflow with each
    superstep's invocations dispatched as tasks; start workers with ``Worker(factory, url)``
    (or ``agentic-worker MODULE:FACTORY --nats URL``). Outputs are identical to a local run.

    Example:
        ```python
        runtime = NatsRuntime("nats://127.0.0.1:4222")
        result = await workflow.run("hello", runtime=runtime)
        await runtime.close()
        ```

    Args:
        servers: NATS URL(s).
        pools: executor id -> named pool, for executors that need special workers (``gpu``).
        build: a build id appended to the default pool (pin a deployment's workers).
        settings: delivery settings (``ack_wait_s``, ``max_deliver``); the workers' must match.
        worker_wait_s: how long a superstep may wait with no worker on its pool.
    """

    def __init__(
        self,
        servers: str | list[str] = DEFAULT_NATS_URL,
        *,
        pools: Mapping[str, str] | None = None,
        build: str | None = None,
        settings: PoolSettings | None = None,
        worker_wait_s: float = 60.0,
        subjects: Subjects | None = None,
        connect_timeout_s: float = 5.0,
    ) -> None:
        if not worker_wait_s > 0:
            raise ValueError(f"worker_wait_s must be positive, got {worker_wait_s!r}")
        self._servers = servers
        self._pools = dict(pools or {})
        self._build = build
        self.settings = settings or PoolSettings()
        self.worker_wait_s = worker_wait_s
        self.subjects = subjects or Subjects()
        self._connect_timeout_s = connect_timeout_s
        self.coordinator_id = f"coordinator-{uuid.uuid4().hex[:10]}"
        self._client: NatsClient | None = None
        self._js: JetStreamContext | None = None
        self._blobs: Blobs | None = None
        self._lock = asyncio.Lock()
        self._consumers: set[str] = set()
        # Bounded: a long-lived runtime forgets old runs (forgetting costs one extra read).
        self._runs_seen = RecentRuns()
        self._claimed = RecentRuns()
        self._stash: dict[str, OutputStash] = {}
        self._fenced_runs: set[str] = set()  # run ids a run_stream of this runtime drives
        self._store: CommittingStore | None = None
        self._advisories_read: dict[tuple[str, str], int] = {}
        """Per (pool, run): the last AGENTIC_ADVISORIES sequence read (poison found while away)."""
        self._closed = False
        self._tasks = _Tasks(self)
        """This runtime as a plain ``Runtime``: what the engine calls inside the runs it drives."""

    def __repr__(self) -> str:
        servers = redact_urls(self._servers)
        return f"NatsRuntime({servers!r}, worker_wait_s={self.worker_wait_s:g})"

    async def client(self) -> NatsClient:
        """The runtime's NATS connection (opened on first use)."""
        await self._jetstream()
        assert self._client is not None  # noqa: S101 - set by _jetstream
        return self._client

    def pool_for(self, workflow: WorkflowGraph, executor_id: str) -> str:
        """The pool whose workers run ``executor_id`` of ``workflow``."""
        return self._pools.get(executor_id) or pool_of(workflow, self._build)

    async def close(self) -> None:
        """Close the connection (idempotent)."""
        self._closed = True
        client, self._client = self._client, None
        if client is not None:
            with contextlib.suppress(Exception):
                await client.drain()

    async def __aenter__(self) -> NatsRuntime:
        await self._jetstream()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    # -- the Runtime protocol -------------------------------------------------------------------

    async def execute(
        self, workflow: WorkflowGraph, invocations: Sequence[Invocation]
    ) -> list[InvocationResult]:
        """Run ``invocations`` on workers; results in the same order."""
        if not invocations:
            return []
        js = await self._jetstream()
        first = invocations[0]
        run_id, superstep = first.run_id, first.superstep
        pools = {inv.executor_id: self.pool_for(workflow, inv.executor_id) for inv in invocations}
        for pool in set(pools.values()):
            if pool not in self._consumers:
                await ensure_pool_consumer(js, self.subjects, pool, self.settings)
                self._consumers.add(pool)
        if self._fenced(run_id) and run_id not in self._claimed:
            await self._claim(run_id)
        # The caller's context (the engine's superstep span), once per superstep: every task
        # of it, re-published ones included, names the same parent. Stays empty when off.
        trace_headers: dict[str, str] = {}
        inject_trace_context(trace_headers)
        gather = Gather(
            self, js, self._blob_store, workflow, invocations, pools, trace_headers,
            self._advisories_read,
        )  # fmt: skip
        await gather.subscribe()
        try:
            if run_id not in self._runs_seen:
                self._runs_seen.add(run_id)
                await gather.collect_stored()  # a resumed run: results stored before the crash
            await gather.publish_missing()
            results = await gather.wait()
        except asyncio.CancelledError:
            with contextlib.suppress(Exception):  # nobody will want these tasks' results
                await js.purge_stream(  # pyright: ignore[reportUnknownMemberType]
                    TASKS_STREAM, subject=self.subjects.superstep_tasks(run_id, superstep)
                )
            raise
        finally:
            await gather.unsubscribe()
        self._keep_outputs(workflow, invocations, results)
        return results

    # -- runs with durable checkpoints, fencing and the committed log --------------------------

    async def checkpoint_store(self) -> CheckpointStore:
        """The runtime's checkpoint store: NATS KV (fenced), logging each committed superstep."""
        return await self._committing_store()

    async def _committing_store(self) -> CommittingStore:
        if self._store is None:
            from agentic_bus._kv._checkpoints import NatsCheckpointStore

            client = await self.client()
            js = await self._jetstream()
            subjects = self.subjects

            async def after_commit(checkpoint: Checkpoint) -> None:
                await publish_committed(js, subjects, checkpoint, self._blob_store)

            self._store = CommittingStore(
                NatsCheckpointStore(client), self._take_outputs, after_commit, driver=self
            )
        return self._store

    async def run(
        self,
        workflow: Workflow,
        message: Any = None,
        *,
        wait_for_responses_s: float | None = None,
        **kwargs: Any,
    ) -> WorkflowRunResult:
        """``workflow.run`` on workers, checkpointed in NATS KV after every superstep.

        The same run as ``workflow.run(message, runtime=runtime)``, which comes here too. The
        run is claimed by this coordinator (a fencing epoch): if another process resumes it,
        this one stops at its next commit with ``CoordinatorFencedError``. Its outputs are also
        appended to the committed log (``committed_outputs``) as each superstep commits.
        ``kwargs`` are ``workflow.run``'s: ``checkpoint_id`` must name the run's last commit
        (or come with ``fork=True``); ``checkpoint_store`` can only be this runtime's own;
        ``durability`` can only be ``"sync"`` (every superstep is committed before the next).

        A run that pauses on requests publishes them on NATS (``agentic.workflow.<run>.request.
        <id>``); with ``wait_for_responses_s`` this coordinator waits that long for answers sent
        with ``answer_request`` from any process and resumes the run when all have come.
        """
        resolved = await self._resolve(message, RunOptions(**kwargs))
        result = await self._drive(workflow, message, **resolved.engine_kwargs())
        return await self._after_pause(workflow, result, wait_for_responses_s)

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
    ) -> WorkflowRunResult:
        """What ``workflow.run(..., runtime=self)`` calls (core's run-driver hook): ``run``,
        without waiting for answers to the requests a paused run publishes."""
        return await self.run(
            workflow, message, checkpoint_id=checkpoint_id, checkpoint_store=checkpoint_store,
            responses=responses, max_supersteps=max_supersteps, fork=fork,
            update_state=update_state, durability=durability,
        )  # fmt: skip

    async def resume(
        self,
        workflow: Workflow,
        run_id: str,
        *,
        responses: Mapping[str, Any] | None = None,
        wait_for_responses_s: float | None = None,
        **kwargs: Any,
    ) -> WorkflowRunResult:
        """Continue run ``run_id`` from its last committed checkpoint, from any process.

        Claims the run first (fencing any coordinator still running it), re-publishes the last
        committed-log entry if a crash lost it, and runs on; ``responses`` answers the run's
        pending requests. Raises ``CheckpointError`` if the run has no checkpoint.
        """
        check_durability(kwargs.get("durability"))  # before the run is claimed
        checkpoint = await self._prepare_resume(run_id)
        result = await self._drive(
            workflow, None, checkpoint_id=checkpoint.id, responses=responses, **kwargs
        )
        return await self._after_pause(workflow, result, wait_for_responses_s)

    async def run_stream(
        self,
        workflow: Workflow,
        message: Any = None,
        *,
        resume_run_id: str | None = None,
        responses: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[WorkflowEvent]:
        """The streaming form of ``run`` (or, with ``resume_run_id``, of ``resume``): every
        event of ``workflow.run_stream``, each superstep's after its commit, so a
        ``NatsEventSink.record`` of it stores what a crash cannot take back. A run that pauses
        publishes its pending requests when the stream ends (answer them with
        ``resume(..., responses=...)`` or ``run_stream(..., resume_run_id=..., responses=...)``).
        ``workflow.run_stream(message, runtime=runtime)`` is the same stream.
        """
        if resume_run_id is not None:
            check_durability(kwargs.get("durability"))  # before the run is claimed
            checkpoint = await self._prepare_resume(resume_run_id)
            kwargs = {**kwargs, "checkpoint_id": checkpoint.id, "responses": responses}
        else:
            resolved = await self._resolve(message, RunOptions(responses=responses, **kwargs))
            kwargs = resolved.engine_kwargs()
        store = await self._committing_store()
        run_id: str | None = None
        requests: dict[str, RequestInfoEvent] = {}
        try:
            async for event in workflow.run_stream(
                message, runtime=self._tasks, checkpoint_store=store, **kwargs
            ):
                if isinstance(event, WorkflowStartedEvent):
                    run_id = event.run_id
                    self._fenced_runs.add(run_id)
                elif isinstance(event, RequestInfoEvent):
                    requests[event.request_id] = event
                elif (
                    isinstance(event, WorkflowCompletedEvent)
                    and event.status is WorkflowRunState.IDLE_WITH_PENDING_REQUESTS
                    and run_id is not None
                ):
                    client = await self.client()
                    pending = list(requests.values())
                    await publish_requests(client, self.subjects, workflow, run_id, pending)
                yield event
        except CheckpointError as exc:
            raise fenced_cause(exc) from exc.__cause__
        finally:
            if run_id is not None:
                self._fenced_runs.discard(run_id)

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
    ) -> AsyncIterator[WorkflowEvent]:
        """What ``workflow.run_stream(..., runtime=self)`` calls (core's run-driver hook):
        ``run_stream``."""
        return self.run_stream(
            workflow, message, checkpoint_id=checkpoint_id, checkpoint_store=checkpoint_store,
            responses=responses, max_supersteps=max_supersteps, fork=fork,
            update_state=update_state, durability=durability,
        )  # fmt: skip

    async def _resolve(self, message: Any, options: RunOptions) -> RunOptions:
        """``workflow.run``'s keywords as this runtime gives them meaning, or a clear error.

        ``checkpoint_store``: only this runtime's own (a run must commit where any process can
        resume it, fenced). ``checkpoint_id`` without ``fork``: the run's last commit, claimed
        here (a resume). ``responses`` need a ``checkpoint_id`` (``workflow.run`` finds it for
        a run paused in this process). ``durability``: only ``"sync"``.
        """
        check_durability(options.durability)
        if self._closed:  # a run it paused is answered through it (workflow.send_responses)
            raise BusError(
                "the NatsRuntime was closed: continue its runs with NatsRuntime.resume(workflow, "
                "run_id, responses=...) on an open one"
            )
        if message is not None and options.checkpoint_id is not None:  # before any claim
            raise ValueError(
                "pass either a message (a new run) or a checkpoint_id (resume), not both"
            )
        store = await self._committing_store()
        given = options.checkpoint_store
        if given is not None and given is not store and given is not store.inner:
            raise ValueError(
                f"checkpoint_store={given!r}: a NatsRuntime commits a run's checkpoints to its "
                f"own NATS KV store ({store.inner!r}), fenced, where any process can resume the "
                "run; drop checkpoint_store= (read the run's checkpoints from "
                "`await runtime.checkpoint_store()`)"
            )
        if options.checkpoint_id is None:
            if options.responses:
                raise ValueError(
                    "responses answer a paused run: NatsRuntime.resume(workflow, run_id, "
                    "responses=...), or workflow.run(responses=..., runtime=runtime) in the "
                    "process where it paused"
                )
            return options
        if options.fork:
            return options  # a new run from there: the original run is left as it is
        checkpoint = await store.load(options.checkpoint_id)
        if checkpoint is None:
            raise CheckpointError(
                f"no checkpoint with id {options.checkpoint_id!r} in NATS KV ({store.inner!r})"
            )
        latest = await store.latest(checkpoint.run_id)
        if latest is not None and latest.id == checkpoint.id:
            latest = await self._prepare_resume(checkpoint.run_id)  # claims the run
        if latest is None or latest.id != checkpoint.id:
            last = "none" if latest is None else repr(latest.id)
            raise CheckpointError(
                f"checkpoint {checkpoint.id!r} is not the last commit of run "
                f"{checkpoint.run_id} (that is {last}): a NatsRuntime continues a run only from "
                "its last commit, so that no output is committed twice; continue it with "
                "NatsRuntime.resume(workflow, run_id), or start a new run from this checkpoint "
                "with fork=True"
            )
        return options

    async def _prepare_resume(self, run_id: str) -> Checkpoint:
        """Claim ``run_id`` and find its last commit (re-publishing its log entry if lost)."""
        store = await self.checkpoint_store()
        await self._claim(run_id)
        checkpoint = await store.latest(run_id)
        if checkpoint is None:
            raise CheckpointError(
                f"run {run_id!r} has no checkpoint in NATS KV to resume from: it never ran, or "
                "it stopped before its first superstep committed (so it output nothing); "
                "start it again with run()"
            )
        js = await self._jetstream()
        last = await last_committed_superstep(js, self.subjects, run_id)
        if last is None or last < checkpoint.superstep:
            await publish_committed(js, self.subjects, checkpoint, self._blob_store)
        return checkpoint

    async def _drive(self, workflow: Workflow, message: Any, **kwargs: Any) -> WorkflowRunResult:
        """``workflow.run`` on this runtime, claimed, checkpointed and logged per superstep."""
        store = await self._committing_store()
        token = FENCED.set(True)
        try:
            return await workflow.run(
                message, runtime=self._tasks, checkpoint_store=store, **kwargs
            )
        except CheckpointError as exc:
            raise fenced_cause(exc) from exc.__cause__
        finally:
            FENCED.reset(token)

    async def _after_pause(
        self, workflow: Workflow, result: WorkflowRunResult, wait_s: float | None
    ) -> WorkflowRunResult:
        """Publish a paused run's requests; optionally wait for answers and resume."""
        while result.pending_requests:
            client = await self.client()
            ids = {r.request_id for r in result.pending_requests}
            waiting = None
            if wait_s is not None:  # subscribe before publishing: no answer can be missed
                ready = asyncio.Event()
                waiting = asyncio.ensure_future(
                    wait_for_responses(client, self.subjects, result.run_id, ids, wait_s, ready)
                )
                subscribed = asyncio.ensure_future(ready.wait())
                await asyncio.wait({waiting, subscribed}, return_when=asyncio.FIRST_COMPLETED)
                subscribed.cancel()  # done, or never: the wait ended first
            await publish_requests(
                client, self.subjects, workflow, result.run_id, result.pending_requests
            )
            if waiting is None:
                return result
            answers = await waiting
            if not answers:
                return result
            result = await self.resume(workflow, result.run_id, responses=answers)
        return result

    async def committed_outputs(self, workflow: WorkflowGraph, run_id: str) -> list[Any]:
        """Every output run ``run_id`` committed so far, in order, each exactly once (across
        coordinator crashes and resumes)."""
        js = await self._jetstream()
        return await committed_outputs(js, self.subjects, run_id, workflow, self._blob_store)

    async def _claim(self, run_id: str) -> None:
        store = await self.checkpoint_store()
        inner = store.inner if isinstance(store, CommittingStore) else store
        await inner.claim_run(run_id, self.coordinator_id)  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType]
        self._claimed.add(run_id)  # the store logs run_claimed with the epoch

    def _keep_outputs(
        self,
        workflow: WorkflowGraph,
        invocations: Sequence[Invocation],
        results: Sequence[InvocationResult],
    ) -> None:
        """Remember the superstep's outputs until its checkpoint is saved (retries replace)."""
        run_id, superstep = invocations[0].run_id, invocations[0].superstep
        if not self._fenced(run_id):
            return
        stash = self._stash.get(run_id)
        if stash is None or stash.superstep != superstep:
            stash = self._stash[run_id] = OutputStash(superstep)
        encode = workflow.type_registry.encode
        for inv, result in zip(invocations, results, strict=True):
            stash.outputs[(inv.executor_id, inv.index)] = [encode(o) for o in result.outputs]

    def _fenced(self, run_id: str) -> bool:
        """Driven by run/resume (the context says so) or run_stream (the run id says so)."""
        return FENCED.get() or run_id in self._fenced_runs

    def _take_outputs(self, run_id: str) -> list[Any] | None:
        stash = self._stash.pop(run_id, None)
        if stash is None:
            return None
        return [o for outputs in stash.outputs.values() for o in outputs]

    async def forget_run(self, run_id: str) -> None:
        """Delete a finished run's stored results and queued tasks (they expire on their own)."""
        js = await self._jetstream()
        with contextlib.suppress(NotFoundError):
            await js.purge_stream(RESULTS_STREAM, subject=self.subjects.run_results(run_id))  # pyright: ignore[reportUnknownMemberType]
        with contextlib.suppress(NotFoundError):
            await js.purge_stream(TASKS_STREAM, subject=self.subjects.run_tasks(run_id))  # pyright: ignore[reportUnknownMemberType]
        self._runs_seen.discard(run_id)
        self._claimed.discard(run_id)
        for key in [k for k in self._advisories_read if k[1] == run_id]:
            del self._advisories_read[key]

    # -- internals ------------------------------------------------------------------------------

    async def _jetstream(self) -> JetStreamContext:
        if self._js is not None:
            return self._js
        if self._closed:
            raise BusError("the NatsRuntime was closed")
        async with self._lock:
            if self._js is None:
                client = await connect_nats(
                    self._servers, name=f"agentic {self.coordinator_id}",
                    connect_timeout_s=self._connect_timeout_s,
                )  # fmt: skip
                js = client.jetstream()  # pyright: ignore[reportUnknownMemberType]
                await declare_streams(
                    js, self.subjects, results_max_age_s=self.settings.results_max_age_s
                )
                await declare_events_stream(js, self.subjects)
                self._client, self._blobs, self._js = client, Blobs(client), js
        return self._js

    @property
    def _blob_store(self) -> Blobs:
        assert self._blobs is not None  # noqa: S101 - set with the connection
        return self._blobs


class _Tasks:
    """A ``NatsRuntime`` seen as a plain ``Runtime`` (``execute`` only, no run-driver hook):
    the engine runs on it inside the runs the ``NatsRuntime`` drives, so nothing recurses."""

    __slots__ = ("_runtime",)

    def __init__(self, runtime: NatsRuntime) -> None:
        self._runtime = runtime

    async def execute(
        self, workflow: WorkflowGraph, invocations: Sequence[Invocation]
    ) -> list[InvocationResult]:
        return await self._runtime.execute(workflow, invocations)
