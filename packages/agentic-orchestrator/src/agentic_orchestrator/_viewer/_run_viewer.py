"""RunViewer: the runs of a process and of checkpoint stores, served as a small web app."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Mapping, Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import structlog
from pydantic import TypeAdapter, ValidationError

from agentic_core import (
    Checkpoint,
    CheckpointStore,
    RunDriver,
    Runtime,
    ServerGuard,
    ServerGuardError,
    Workflow,
    WorkflowEvent,
    redact_url,
    registry,
)
from agentic_orchestrator._run_summary import TERMINAL_STATUSES, RunSummary
from agentic_orchestrator._viewer._errors import (
    AnswerRejectedError,
    CannotResumeError,
    RunNotFoundError,
    SourceError,
    ViewerError,
)
from agentic_orchestrator._viewer._extra import require_viewer_extra
from agentic_orchestrator._viewer._hub import RunHub
from agentic_orchestrator._viewer._record import AnswerableRequest, RunRecord
from agentic_orchestrator._viewer._sources import CheckpointSource, open_source
from agentic_orchestrator._viewer._views import RunList, RunView, WorkflowInfo, WorkflowList

if TYPE_CHECKING:
    from starlette.applications import Starlette
    from starlette.types import Receive, Scope, Send

__all__ = ["RunViewer", "StoreSpec"]

_log = structlog.get_logger("agentic_orchestrator.viewer")

StoreSpec = CheckpointStore | str | Path
"""A checkpoint store, a directory of checkpoints, or a ``redis://`` / ``nats://`` URL."""

_POLL_S = 2.0
"""How often the stream of a stored run (not followed live) looks at its store again."""

_RUN_ID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,199}")
"""What a run id can be (the engine's are hex): never a path, whatever store is asked."""


class RunViewer:
    """A live web view of workflow runs: graph, supersteps, events, outputs, pending requests.

    Runs come from three places: those started here (``start``), those a program drives and
    hands over (``watch``), and those in checkpoint stores (a directory, ``redis://``,
    ``nats://``; answering their requests resumes them from their latest checkpoint). With
    ``nats_url``, a run of a NATS store is followed live from the ``AGENTIC_EVENTS`` stream.

    Example:
        ```python
        viewer = RunViewer([workflow], checkpoint_store="./checkpoints")
        run_id = await viewer.start("hello")
        await viewer.serve(port=8765)  # http://127.0.0.1:8765/runs/<run_id>
        ```

    The app is guarded (``ServerGuard``): it answers only for loopback names, the address it
    is bound to and ``allowed_hosts`` (so a web page cannot reach it by DNS rebinding), refuses
    other sites' origins and non-JSON writes, bounds request bodies, and with ``token`` requires
    ``Authorization: Bearer <token>`` (a browser logs in with any user name and the token as
    password). Serving beyond loopback requires a token.

    Args:
        workflows: the workflows whose runs it can start and resume (and draw).
        checkpoint_store: where runs are read from; runs started here are saved to the first.
        runtime: the runtime runs started or resumed here use (default: in this process).
        nats_url: follow runs live from NATS events (needs agentic-bus).
        allowed_hosts: host names it answers for besides loopback ones (behind a proxy, or
            served to other machines): ``runs.example.com``, ``*.example.com``.
        token: the secret every request must carry (None: none, loopback only).
        max_body_bytes: the largest request body read (1 MiB by default): 413 beyond.
    """

    def __init__(
        self,
        workflows: Sequence[Workflow] = (),
        *,
        checkpoint_store: StoreSpec | Sequence[StoreSpec] | None = None,
        runtime: Runtime | None = None,
        nats_url: str | None = None,
        allowed_hosts: Sequence[str] = (),
        token: str | None = None,
        max_body_bytes: int = ServerGuard.DEFAULT_MAX_BODY_BYTES,
    ) -> None:
        self.workflows: list[Workflow] = list(workflows)
        names = [w.name for w in self.workflows]
        if len(set(names)) != len(names):
            raise ViewerError(f"two workflows share a name ({', '.join(names)}): name them apart")
        if checkpoint_store is None:
            specs: list[StoreSpec] = []
        elif isinstance(checkpoint_store, str | Path) or not isinstance(checkpoint_store, Sequence):
            specs = [checkpoint_store]
        else:
            specs = list(checkpoint_store)
        self.sources: list[CheckpointSource] = [open_source(spec) for spec in specs]
        self.runtime = runtime
        self.nats_url = nats_url
        self.hub = RunHub()
        self._locks: dict[str, asyncio.Lock] = {}
        self._closed = False
        try:
            # Made now, so a bad option fails here; the web app inside is made on first request.
            self._guard = ServerGuard(
                self._asgi,
                allowed_hosts=allowed_hosts,
                token=token,
                max_body_bytes=max_body_bytes,
                browser_login=True,  # the pages are read in a browser, which cannot add headers
            )
        except ServerGuardError as exc:
            raise ViewerError(str(exc)) from None

    # -- the web app -----------------------------------------------------------------------------

    @property
    def app(self) -> ServerGuard:
        """The ASGI app: pages, JSON API and event streams of this viewer, guarded."""
        require_viewer_extra()
        return self._guard

    @cached_property
    def _starlette(self) -> Starlette:
        from agentic_orchestrator._viewer._app import create_app

        return create_app(self)

    async def _asgi(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self._starlette(scope, receive, send)

    async def serve(self, host: str = "127.0.0.1", port: int = 8765) -> None:
        """Serve the app with uvicorn until cancelled (Ctrl-C); a host other than loopback
        needs the viewer's ``token`` (the viewer can start and resume runs): ``ViewerError``."""
        app = self.app
        try:
            app.check_bind(host, option="RunViewer(token=...)")
        except ServerGuardError as exc:
            raise ViewerError(str(exc)) from None
        from agentic_orchestrator._viewer._serve import serve_app

        try:
            await serve_app(app, host=host, port=port)
        finally:
            await self.aclose()

    async def aclose(self) -> None:
        """Stop following runs (runs started here are cancelled; checkpoints stay) and close
        the stores opened from URLs; open event streams end."""
        self._closed = True
        await self.hub.close()
        for record in self.hub.records():
            record.changed()  # wakes the streams waiting on it: they see the viewer closed
        for source in self.sources:
            await source.close()

    # -- runs in this process --------------------------------------------------------------------

    def workflow(self, name: str | None = None) -> Workflow:
        """The workflow named ``name`` (or id); the only one when ``name`` is None."""
        if name is None:
            if len(self.workflows) == 1:
                return self.workflows[0]
            known = ", ".join(w.name for w in self.workflows) or "none"
            raise ViewerError(f"name the workflow to run (the viewer holds: {known})")
        for workflow in self.workflows:
            if name in (workflow.name, workflow.id):
                return workflow
        known = ", ".join(w.name for w in self.workflows) or "none"
        raise RunNotFoundError(f"no workflow named {name!r} (the viewer holds: {known})")

    def workflow_list(self) -> WorkflowList:
        """The workflows the viewer holds."""
        return WorkflowList(
            workflows=[
                WorkflowInfo(name=w.name, id=w.id, start_executor_id=w.start_executor_id)
                for w in self.workflows
            ]
        )

    async def start(self, message: Any, *, workflow: Workflow | str | None = None) -> str:
        """Start a run of ``workflow`` (the only one held, by default) on ``message`` and
        follow it; returns its run id. It is saved to the first checkpoint store, if any."""
        chosen = workflow if isinstance(workflow, Workflow) else self.workflow(workflow)
        store = self.sources[0].store if self.sources else None
        stream = chosen.run_stream(
            start_message(chosen, message),
            checkpoint_store=self._store_beside_runtime(store),
            runtime=self.runtime,
        )
        try:
            return await self.hub.track(stream, workflow=chosen, source="live", resumable=True)
        except ViewerError:
            raise
        except Exception as exc:
            raise ViewerError(
                f"run of {chosen.name!r} cannot start: {type(exc).__name__}: {exc}"
            ) from exc

    def watch(
        self, workflow: Workflow | None, stream: AsyncIterator[WorkflowEvent]
    ) -> asyncio.Future[str]:
        """Follow a run a program drives itself: pass ``workflow.run_stream(...)`` unstarted.

        The viewer consumes the stream (the run goes on as it reads it); the returned future
        gives the run id once the run starts. With ``workflow``, its graph is drawn and its
        pending requests can be answered from the page.
        """
        return self.hub.track(stream, workflow=workflow, source="live", resumable=True)

    # -- reading runs ----------------------------------------------------------------------------

    async def list_runs(self) -> RunList:
        """Every run known here, newest first; a source that fails is named in ``errors``."""
        rows: dict[str, RunSummary] = {}
        errors: list[str] = []
        for source in self.sources:
            try:
                for row in await source.summaries(self.workflows):
                    rows.setdefault(row.run_id, row)
            except SourceError as exc:
                _log.warning("viewer.source_failed", source=source.label, error=str(exc))
                errors.append(str(exc))
        for record in self.hub.records():  # what this process saw is fresher than a store
            rows[record.run_id] = record.view().summary()
        ordered = sorted(rows.values(), key=lambda r: r.updated_at, reverse=True)
        return RunList(runs=ordered, errors=errors)

    async def get_run(self, run_id: str) -> RunView:
        """The run ``run_id`` as it stands (``RunNotFoundError`` when no one knows it)."""
        _check_run_id(run_id)
        record = self.hub.get(run_id)
        if record is not None:
            return record.view()
        found = await self._stored(run_id)
        if found is None:
            raise RunNotFoundError(f"no run {run_id!r} here or in the checkpoint stores")
        source, stored_view, requests, workflow = found
        if self.nats_url is not None and source.kind == "nats":
            return self._follow(run_id, stored_view, requests, workflow).view()
        return stored_view

    async def snapshots(self, run_id: str) -> AsyncIterator[RunView]:
        """The run's view now and after every change, until it completes or fails."""
        _check_run_id(run_id)
        last: str | None = None
        while not self._closed:
            record = self.hub.get(run_id)
            if record is None:
                view = await self.get_run(run_id)  # may start following it
                record = self.hub.get(run_id)
            else:
                view = record.view()
            version = -1
            if record is not None:
                version, view = record.version, record.view()
            data = view.model_dump_json()
            if data != last:
                last = data
                yield view
            if view.status in TERMINAL_STATUSES and (record is None or not record.driving):
                return
            if record is not None:
                await record.wait_for_change(version)
            else:
                await asyncio.sleep(_POLL_S)

    async def _stored(
        self, run_id: str
    ) -> tuple[CheckpointSource, RunView, dict[str, AnswerableRequest], Workflow | None] | None:
        failure: SourceError | None = None
        for source in self.sources:
            try:
                stored = await source.run(run_id, self.workflows)
            except SourceError as exc:
                failure = failure or exc
                continue
            if stored is not None:
                return source, stored.view, stored.requests, stored.workflow
        if failure is not None:
            raise failure
        return None

    def _follow(
        self,
        run_id: str,
        view: RunView,
        requests: dict[str, AnswerableRequest],
        workflow: Workflow | None,
    ) -> RunRecord:
        """Follow a NATS-held run live from its stored events, from the start."""
        record = self.hub.record(
            run_id,
            source="nats",
            workflow=workflow,
            workflow_id=view.workflow_id,
            workflow_name=view.workflow_name,
        )
        record.seed(view)
        record.requests.update(requests)
        record.resumable = workflow is not None  # resumed from the store that holds it
        replay: Any = registry.load("agentic.event_sources", "nats")
        url = self.nats_url or ""
        stream: AsyncIterator[WorkflowEvent] = replay(url, run_id, workflow=workflow, follow=True)
        self.hub.track(
            stream,
            workflow=workflow,
            source="nats",
            run_id=run_id,
            resumable=workflow is not None,
            broken_source=f"event source {redact_url(url)}",
        )
        return record

    # -- answering requests ----------------------------------------------------------------------

    async def answer(self, run_id: str, responses: Mapping[str, Any]) -> None:
        """Answer pending requests of ``run_id`` and resume it (followed here, same run id).

        Each value is validated against its request's response type first
        (``AnswerRejectedError`` names the request and what is wrong). A run in a checkpoint
        store resumes from its latest checkpoint; one paused in this process, where it waits.
        """
        _check_run_id(run_id)
        if not responses:
            raise AnswerRejectedError("no responses: give {request_id: answer}")
        lock = self._locks.setdefault(run_id, asyncio.Lock())
        async with lock:
            record = self.hub.get(run_id)
            if record is not None and record.driving:
                raise CannotResumeError(f"run {run_id} is running: answer once it waits")
            held = await self._held(run_id, live=record is not None)
            if record is None:
                found = await self._stored(run_id)
                if found is None:
                    raise RunNotFoundError(f"no run {run_id!r} here or in the checkpoint stores")
                source, view, requests, workflow = found
                record = self.hub.record(
                    run_id,
                    source=source.kind,
                    workflow=workflow,
                    workflow_id=view.workflow_id,
                    workflow_name=view.workflow_name,
                )
                record.seed(view)
                record.requests.update(requests)
            workflow = record.workflow
            if workflow is None:
                raise CannotResumeError(
                    f"run {run_id} was written by workflow {record.workflow_name!r}, which the "
                    "viewer does not hold: start it with that workflow (--workflow)"
                )
            validated = _validated(run_id, record.requests, responses)
            if held is not None:
                source, checkpoint = held
                stream = workflow.run_stream(
                    responses=validated,
                    checkpoint_id=checkpoint.id,
                    checkpoint_store=self._store_beside_runtime(source.store),
                    runtime=self.runtime,
                )
            else:
                stream = workflow.run_stream(responses=validated, runtime=self.runtime)
            record.resumable = True
            started = self.hub.track(
                stream, workflow=workflow, source=record.source, run_id=None, resumable=True
            )
            try:
                await started
            except Exception as exc:
                raise CannotResumeError(
                    f"run {run_id} cannot resume: {type(exc).__name__}: {exc}"
                ) from exc
            record.answered(list(validated))

    def _store_beside_runtime(self, store: CheckpointStore | None) -> CheckpointStore | None:
        """``store``, unless the runtime drives durable runs: those keep their checkpoints in
        the runtime's own store (NATS KV for ``NatsRuntime``), which refuses a second one."""
        return None if isinstance(self.runtime, RunDriver) else store

    async def _held(self, run_id: str, *, live: bool) -> tuple[CheckpointSource, Checkpoint] | None:
        """The store holding ``run_id`` and its latest checkpoint (None: held by none)."""
        for source in self.sources:
            try:
                latest = await source.latest(run_id)
            except SourceError:
                if live:
                    continue  # still paused in this process: resumable without the store
                raise
            if latest is not None:
                return source, latest
        return None


def _check_run_id(run_id: str) -> None:
    if not _RUN_ID.fullmatch(run_id):
        raise ViewerError(
            f"{run_id[:100]!r} is not a run id (1-200 letters, digits, '_', '-' or '.')"
        )


def start_message(workflow: Workflow, message: Any) -> Any:
    """``message`` as a type the start executor takes: JSON from a page becomes the pydantic
    model (or other type) its handlers declare; ``AnswerRejectedError`` when none fits."""
    handlers = workflow.executors[workflow.start_executor_id].handlers
    # The engine's own test of each handler's annotation (Any, unions, list[T], models...).
    if not handlers or any(spec.accepts(message) for spec in handlers):
        return message
    problems: list[str] = []
    for accepted_type in (spec.message_type for spec in handlers):
        try:
            return TypeAdapter(accepted_type).validate_python(message)
        except ValidationError as exc:
            problems.append(
                f"{getattr(accepted_type, '__name__', accepted_type)}: {exc.errors()[0]['msg']}"
            )
        except Exception as exc:  # noqa: BLE001 - a type pydantic cannot build: try the next
            problems.append(f"{accepted_type}: {exc}")
    raise AnswerRejectedError(
        f"the message does not fit the start executor {workflow.start_executor_id!r} of "
        f"{workflow.name!r} ({'; '.join(problems)})"
    )


def _validated(
    run_id: str, requests: Mapping[str, AnswerableRequest], responses: Mapping[str, Any]
) -> dict[str, Any]:
    validated: dict[str, Any] = {}
    for request_id, value in responses.items():
        pending = requests.get(request_id)
        if pending is None:
            raise RunNotFoundError(f"run {run_id} has no pending request {request_id!r}")
        try:
            validated[request_id] = TypeAdapter(pending.response_type).validate_python(value)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in error['loc']) or 'value'}: {error['msg']}"
                for error in exc.errors()
            )
            raise AnswerRejectedError(
                f"answer to request {request_id} (from {pending.view.source_executor_id}) "
                f"is not valid: {problems}"
            ) from None
        except Exception as exc:  # noqa: BLE001 - a type pydantic cannot check: named, refused
            raise AnswerRejectedError(
                f"answer to request {request_id} cannot be checked: {type(exc).__name__}: {exc}"
            ) from None
    return validated
