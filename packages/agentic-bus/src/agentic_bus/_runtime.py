"""NatsRuntime: each superstep's invocations run as tasks on a JetStream work queue.

The engine plans a superstep and applies its results exactly as with ``LocalRuntime``; this
runtime only moves the invocations to workers and their results back:

1. subscribe to the superstep's result subjects (before publishing, on the same connection, so
   no result can be missed);
2. publish one task per invocation (``Nats-Msg-Id`` = the invocation id: a re-published
   superstep is deduplicated while its tasks are queued); a run seen for the first time by
   this runtime first collects results already stored (a coordinator resumed mid-superstep);
3. wait for one result per task: the first stored result wins (workers publish with
   "expected last subject sequence 0"); results missed on the core subscription are read back
   from the stream every second; a task that exhausted ``max_deliver`` (poison) fails the run
   naming the executor; no worker on the pool for ``worker_wait_s`` fails it naming the pool.

With OpenTelemetry on, each task's headers carry the W3C trace context current when the engine
called ``execute`` (its superstep span), and workers run the invocation under it: a run spread
over many processes is one trace.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
import uuid
from collections import OrderedDict
from collections.abc import AsyncIterator, Mapping, Sequence
from contextvars import ContextVar
from typing import Any

import structlog
from nats.aio.client import Client as NatsClient
from nats.aio.msg import Msg
from nats.js.client import JetStreamContext
from nats.js.errors import NotFoundError

from agentic_bus._blobs import BLOB_THRESHOLD, Blobs
from agentic_bus._commit_log import (
    CommittingStore,
    committed_outputs,
    last_committed_superstep,
    publish_committed,
)
from agentic_bus._connect import DEFAULT_NATS_URL, connect_nats
from agentic_bus._errors import CoordinatorFencedError, NoWorkerError
from agentic_bus._pool import (
    ADVISORIES_STREAM,
    MAX_DELIVERIES_ADVISORY,
    RESULTS_STREAM,
    TASKS_STREAM,
    PoolSettings,
    consumer_name,
    declare_events_stream,
    declare_streams,
    ensure_pool_consumer,
    pool_of,
)
from agentic_bus._protocol import TaskMessage, TaskResultMessage
from agentic_bus._requests import publish_requests, wait_for_responses
from agentic_bus._subjects import Subjects, subject_token
from agentic_core import (
    BusError,
    Checkpoint,
    CheckpointError,
    CheckpointStore,
    Invocation,
    InvocationResult,
    RequestInfoEvent,
    Workflow,
    WorkflowCompletedEvent,
    WorkflowEvent,
    WorkflowExecutionError,
    WorkflowGraph,
    WorkflowRunResult,
    WorkflowRunState,
    WorkflowStartedEvent,
    inject_trace_context,
)

__all__ = ["NatsRuntime"]

_log = structlog.get_logger("agentic_bus.runtime")
_POLL_S = 1.0


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
        self._runs_seen = _Recent()
        self._claimed = _Recent()
        self._stash: dict[str, _Stash] = {}
        self._fenced_runs: set[str] = set()  # run ids a run_stream of this runtime drives
        self._store: CommittingStore | None = None
        self._advisories_read: dict[tuple[str, str], int] = {}
        """Per (pool, run): the last AGENTIC_ADVISORIES sequence read (poison found while away)."""
        self._closed = False

    def __repr__(self) -> str:
        from agentic_bus._urls import redact_urls

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
        gather = _Gather(self, js, self._blob_store, workflow, invocations, pools, trace_headers)
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
                    TASKS_STREAM,
                    subject=f"{self.subjects.prefix}.task.*.{subject_token(run_id)}.{superstep}.*",
                )
            raise
        finally:
            await gather.unsubscribe()
        self._keep_outputs(workflow, invocations, results)
        return results

    # -- runs with durable checkpoints, fencing and the committed log --------------------------

    async def checkpoint_store(self) -> CheckpointStore:
        """The runtime's checkpoint store: NATS KV (fenced), logging each committed superstep."""
        if self._store is None:
            from agentic_bus._kv_checkpoints import NatsCheckpointStore

            client = await self.client()
            js = await self._jetstream()
            subjects = self.subjects

            async def after_commit(checkpoint: Checkpoint) -> None:
                await publish_committed(js, subjects, checkpoint, self._blob_store)

            self._store = CommittingStore(
                NatsCheckpointStore(client), self._take_outputs, after_commit
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

        The run is claimed by this coordinator (a fencing epoch): if another process resumes it,
        this one stops at its next commit with ``CoordinatorFencedError``. Its outputs are also
        appended to the committed log (``committed_outputs``) as each superstep commits.

        A run that pauses on requests publishes them on NATS (``agentic.workflow.<run>.request.
        <id>``); with ``wait_for_responses_s`` this coordinator waits that long for answers sent
        with ``answer_request`` from any process and resumes the run when all have come.
        """
        result = await self._drive(workflow, message, **kwargs)
        return await self._after_pause(workflow, result, wait_for_responses_s)

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
        """
        store = await self.checkpoint_store()
        if resume_run_id is not None:
            checkpoint = await self._prepare_resume(resume_run_id)
            kwargs = {**kwargs, "checkpoint_id": checkpoint.id, "responses": responses}
        elif responses is not None:
            raise ValueError("responses answer a paused run: pass resume_run_id= as well")
        run_id: str | None = None
        requests: dict[str, RequestInfoEvent] = {}
        try:
            async for event in workflow.run_stream(
                message, runtime=self, checkpoint_store=store, **kwargs
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
            raise _fenced_cause(exc) from exc.__cause__
        finally:
            if run_id is not None:
                self._fenced_runs.discard(run_id)

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
        store = await self.checkpoint_store()
        token = _FENCED.set(True)
        try:
            return await workflow.run(message, runtime=self, checkpoint_store=store, **kwargs)
        except CheckpointError as exc:
            raise _fenced_cause(exc) from exc.__cause__
        finally:
            _FENCED.reset(token)

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
            stash = self._stash[run_id] = _Stash(superstep)
        encode = workflow.type_registry.encode
        for inv, result in zip(invocations, results, strict=True):
            stash.outputs[(inv.executor_id, inv.index)] = [encode(o) for o in result.outputs]

    def _fenced(self, run_id: str) -> bool:
        """Driven by run/resume (the context says so) or run_stream (the run id says so)."""
        return _FENCED.get() or run_id in self._fenced_runs

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
                await declare_streams(js, self.subjects, self.settings)
                await declare_events_stream(js, self.subjects)
                self._client, self._blobs, self._js = client, Blobs(client), js
        return self._js

    @property
    def _blob_store(self) -> Blobs:
        assert self._blobs is not None  # noqa: S101 - set with the connection
        return self._blobs


class _Recent:
    """A set of the most recent run ids (the oldest dropped past ``limit``)."""

    __slots__ = ("_ids", "_limit")

    def __init__(self, limit: int = 4096) -> None:
        self._ids: OrderedDict[str, None] = OrderedDict()
        self._limit = limit

    def __contains__(self, run_id: object) -> bool:
        return run_id in self._ids

    def add(self, run_id: str) -> None:
        self._ids[run_id] = None
        self._ids.move_to_end(run_id)
        if len(self._ids) > self._limit:
            self._ids.popitem(last=False)

    def discard(self, run_id: str) -> None:
        self._ids.pop(run_id, None)


_FENCED: ContextVar[bool] = ContextVar("agentic_bus_fenced", default=False)
"""Set while ``NatsRuntime.run``/``resume`` drive a run: its supersteps are claimed and logged."""


class _Stash:
    """One superstep's outputs, by (executor id, map index) in first-execution order."""

    __slots__ = ("outputs", "superstep")

    def __init__(self, superstep: int) -> None:
        self.superstep = superstep
        self.outputs: dict[tuple[str, int | None], list[Any]] = {}


def _advisory_subject(pool: str, subjects: Subjects) -> str:
    """The server's max-deliveries advisory subject for ``pool``'s consumer."""
    return f"{MAX_DELIVERIES_ADVISORY}.{TASKS_STREAM}.{consumer_name(pool, subjects)}"


def _fenced_cause(exc: CheckpointError) -> BaseException:
    """The ``CoordinatorFencedError`` the engine wrapped in a ``CheckpointError``, else ``exc``."""
    cause = exc.__cause__
    return cause if isinstance(cause, CoordinatorFencedError) else exc


class _Gather:
    """One superstep on the wire: its tasks out, their first results back."""

    def __init__(
        self,
        runtime: NatsRuntime,
        js: JetStreamContext,
        blobs: Blobs,
        workflow: WorkflowGraph,
        invocations: Sequence[Invocation],
        pools: dict[str, str],
        trace_headers: Mapping[str, str],
    ) -> None:
        self.runtime = runtime
        self.js = js
        self.blobs = blobs
        self.workflow = workflow
        self.invocations = list(invocations)
        self.pools = pools
        self.trace_headers = trace_headers
        """``traceparent``/``tracestate`` for every task message; empty when telemetry is off."""
        self.run_id = invocations[0].run_id
        self.superstep = invocations[0].superstep
        loop = asyncio.get_running_loop()
        self.waiting: dict[str, asyncio.Future[TaskResultMessage]] = {
            inv.invocation_id: loop.create_future() for inv in invocations
        }
        self.by_task = {inv.invocation_id: inv for inv in invocations}
        self.failure: asyncio.Future[BaseException] = loop.create_future()
        self.subscriptions: list[Any] = []
        self.last_progress = time.monotonic()
        subjects = runtime.subjects
        self.result_subjects = {
            inv.invocation_id: subjects.result(
                self.run_id, self.superstep, inv.executor_id, inv.attempt, inv.index
            )
            for inv in invocations
        }

    async def subscribe(self) -> None:
        client = await self.runtime.client()
        subjects = self.runtime.subjects
        pattern = f"{subjects.prefix}.result.{subject_token(self.run_id)}.{self.superstep}.>"
        self.subscriptions.append(await client.subscribe(pattern, cb=self._on_result))  # pyright: ignore[reportUnknownMemberType]
        for pool in set(self.pools.values()):
            advisory = _advisory_subject(pool, self.runtime.subjects)
            self.subscriptions.append(await client.subscribe(advisory, cb=self._on_advisory))  # pyright: ignore[reportUnknownMemberType]
        if any(inv.live is not None for inv in self.invocations):
            live = subjects.live_all(self.run_id)
            self.subscriptions.append(await client.subscribe(live, cb=self._on_live))  # pyright: ignore[reportUnknownMemberType]

    async def unsubscribe(self) -> None:
        for subscription in self.subscriptions:
            with contextlib.suppress(Exception):
                await subscription.unsubscribe()

    async def collect_stored(self) -> None:
        js = self.js
        await asyncio.gather(*(self._read_stored(js, task_id) for task_id in self.waiting))
        await self._scan_advisories(js)

    async def publish_missing(
        self, *, fresh_ids: bool = False, pools: set[str] | None = None
    ) -> None:
        js = self.js
        subjects = self.runtime.subjects
        registry = self.workflow.type_registry
        fingerprint = self.workflow.fingerprint()
        publishes: list[Any] = []
        for inv in self.invocations:
            task_id = inv.invocation_id
            if self.waiting[task_id].done():
                continue
            if pools is not None and self.pools[inv.executor_id] not in pools:
                continue
            encoded = registry.encode(inv.to_data())
            task = TaskMessage(
                task_id=task_id, run_id=self.run_id, workflow_name=self.workflow.name,
                fingerprint=fingerprint, invocation=encoded, live=inv.live is not None,
                result_subject=self.result_subjects[task_id],
            )  # fmt: skip
            body = task.model_dump_json().encode()
            if len(body) > BLOB_THRESHOLD:
                data = json.dumps(encoded, separators=(",", ":")).encode()
                ref = await self.blobs.put(
                    f"task.{subject_token(self.run_id)}.{uuid.uuid4().hex}", data
                )
                body = (
                    task.model_copy(update={"invocation": None, "blob": ref})
                    .model_dump_json()
                    .encode()
                )
            subject = subjects.task(
                self.pools[inv.executor_id], self.run_id, self.superstep, inv.executor_id
            )
            msg_id = f"{task_id}:{uuid.uuid4().hex[:8]}" if fresh_ids else task_id
            headers = {"Nats-Msg-Id": msg_id}
            if self.trace_headers:
                headers.update(self.trace_headers)
            publishes.append(js.publish(subject, body, headers=headers))
        if publishes:
            await asyncio.gather(*publishes)

    async def wait(self) -> list[InvocationResult]:
        js = self.js
        pending = {f for f in self.waiting.values() if not f.done()}
        while pending:
            done, pending = await asyncio.wait(
                pending | {self.failure}, timeout=_POLL_S, return_when=asyncio.FIRST_COMPLETED
            )
            if self.failure.done():
                raise self.failure.result()
            pending.discard(self.failure)
            if done:
                self.last_progress = time.monotonic()
                continue
            missing = [t for t, f in self.waiting.items() if not f.done()]
            await asyncio.gather(*(self._read_stored(js, task_id) for task_id in missing))
            await self._scan_advisories(js)
            if self.failure.done():
                raise self.failure.result()
            pending = {f for f in self.waiting.values() if not f.done()}
            if pending and time.monotonic() - self.last_progress > self.runtime.worker_wait_s:
                await self._check_workers(js)
        return [await self._decode(inv) for inv in self.invocations]

    # -- callbacks and helpers ------------------------------------------------------------------

    def _accept(self, data: bytes) -> None:
        try:
            message = TaskResultMessage.model_validate_json(data)
        except ValueError:
            _log.warning("runtime_bad_result", run=self.run_id)
            return
        future = self.waiting.get(message.task_id)
        if future is None or future.done():
            return  # another superstep's, or a duplicate (first result wins)
        if message.status == "incompatible":
            inv = self.by_task[message.task_id]
            self._fail(
                WorkflowExecutionError(
                    f"executor {inv.executor_id!r} in superstep {self.superstep} cannot run on "
                    f"worker {message.worker_id}: {message.error}",
                    executor_id=inv.executor_id,
                    superstep=self.superstep,
                )
            )
            return
        future.set_result(message)

    async def _on_result(self, msg: Msg) -> None:
        self._accept(msg.data)

    async def _read_stored(self, js: JetStreamContext, task_id: str) -> None:
        if self.waiting[task_id].done():
            return
        try:
            stored = await js.get_last_msg(RESULTS_STREAM, self.result_subjects[task_id])
        except NotFoundError:
            return
        except Exception as exc:  # noqa: BLE001 - the server is away: the next poll retries
            _log.debug("runtime_poll_failed", error=repr(exc))
            return
        if stored.data:
            self._accept(stored.data)

    async def _on_advisory(self, msg: Msg) -> None:
        await self._poisoned(msg.data)

    async def _scan_advisories(self, js: JetStreamContext) -> None:
        """Advisories stored while nobody listened (this coordinator was down): read once."""
        cursors = self.runtime._advisories_read  # pyright: ignore[reportPrivateUsage]
        for pool in set(self.pools.values()):
            subject = _advisory_subject(pool, self.runtime.subjects)
            key = (pool, self.run_id)
            while True:
                try:
                    stored = await js.get_msg(  # pyright: ignore[reportUnknownMemberType]
                        ADVISORIES_STREAM, seq=cursors.get(key, 0) + 1, next=True, subject=subject
                    )
                except NotFoundError:
                    break
                except Exception as exc:  # noqa: BLE001 - the server is away: next poll
                    _log.debug("runtime_advisories_unreadable", error=repr(exc))
                    return
                cursors[key] = stored.seq or cursors.get(key, 0) + 1
                if len(cursors) > 4096:  # bounded like _Recent: a forgotten run rescans once
                    del cursors[next(iter(cursors))]
                await self._poisoned(stored.data or b"")

    async def _poisoned(self, data: bytes) -> None:
        """A max-deliveries advisory: fail the run if it names one of this superstep's tasks."""
        try:
            advisory = json.loads(data)
            sequence = int(advisory["stream_seq"])
            deliveries = int(advisory.get("deliveries", 0))
        except (ValueError, KeyError, TypeError):
            return
        js = self.js
        try:
            stored = await js.get_msg(TASKS_STREAM, sequence)
            task = TaskMessage.model_validate_json(stored.data or b"")
        except Exception:  # noqa: BLE001 - gone already, or not a task of ours
            return
        inv = self.by_task.get(task.task_id)
        if inv is None or self.waiting[task.task_id].done():
            return
        with contextlib.suppress(Exception):
            await js.delete_msg(TASKS_STREAM, sequence)
        max_deliver = self.runtime.settings.max_deliver
        self._fail(
            WorkflowExecutionError(
                f"executor {inv.executor_id!r} in superstep {self.superstep} crashed or hung "
                f"its worker {deliveries or max_deliver} times (max_deliver={max_deliver}); "
                f"task {task.task_id} was removed from the queue",
                executor_id=inv.executor_id,
                superstep=self.superstep,
            )
        )

    async def _on_live(self, msg: Msg) -> None:
        try:
            data = json.loads(msg.data)
            executor_id = data["executor_id"]
            event = self.workflow.type_registry.decode(data["event"])
        except Exception:  # noqa: BLE001 - best effort: a broken update is dropped
            return
        for inv in self.invocations:
            if inv.executor_id == executor_id and inv.live is not None:
                inv.live(event)
                return

    def _fail(self, error: BaseException) -> None:
        if not self.failure.done():
            self.failure.set_result(error)

    async def _check_workers(self, js: JetStreamContext) -> None:
        """No progress for ``worker_wait_s``: no worker on a pool is an error; idle workers
        with nothing queued or in flight mean our tasks are gone (purged by a cancelled
        coordinator, whose message ids still dedupe a re-publish): publish them afresh."""
        lost: list[str] = []
        for pool in sorted(set(self.pools.values())):
            try:
                info = await js.consumer_info(
                    TASKS_STREAM, consumer_name(pool, self.runtime.subjects)
                )
            except Exception:  # noqa: BLE001 - the server is away: an outage is not "no worker"
                return
            if info.num_waiting or info.num_ack_pending:
                if info.num_waiting and not info.num_ack_pending and not info.num_pending:
                    lost.append(pool)
                continue
            executors = sorted(e for e, p in self.pools.items() if p == pool)
            raise NoWorkerError(
                f"no worker serves pool {pool!r} (executors {', '.join(executors)} of workflow "
                f"{self.workflow.name!r}, superstep {self.superstep}): nothing took its tasks for "
                f"{self.runtime.worker_wait_s:g} s; start one with Worker(...) or "
                f"`agentic-worker MODULE:FACTORY --nats URL`",
                executor_id=executors[0] if executors else None,
                superstep=self.superstep,
            )
        self.last_progress = time.monotonic()  # workers are there, busy or idle
        if lost:
            _log.warning("runtime_tasks_republished", run=self.run_id, pools=lost)
            await self.publish_missing(fresh_ids=True, pools=set(lost))

    async def _decode(self, inv: Invocation) -> InvocationResult:
        message = self.waiting[inv.invocation_id].result()
        encoded: Any = message.result
        if message.blob is not None:
            encoded = json.loads(await self.blobs.get(message.blob))
        return InvocationResult.from_data(self.workflow.type_registry.decode(encoded))
