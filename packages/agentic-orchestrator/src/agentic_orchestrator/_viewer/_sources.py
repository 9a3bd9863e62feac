"""Runs the viewer did not start: read from a checkpoint store (a directory, ``redis://``,
``nats://`` or any ``CheckpointStore``).

A run's view is rebuilt from its checkpoints: checkpoint *k* holds the messages waiting after
superstep *k*, so the executors they go to are those that ran in superstep *k+1* (completed if
checkpoint *k+1* exists, still pending otherwise); its pending requests come from the latest
checkpoint, decoded with the workflow's types when the viewer holds the workflow that wrote it.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
from collections.abc import Awaitable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar, cast
from urllib.parse import urlsplit

from agentic_core import (
    Checkpoint,
    CheckpointError,
    CheckpointMetadata,
    CheckpointStore,
    FileCheckpointStore,
    RequestInfoEvent,
    Workflow,
    redact_url,
    registry,
    stored_run_status,
)
from agentic_orchestrator._run_summary import (
    RunSource,
    RunSummary,
    summarize_checkpoint,
)
from agentic_orchestrator._viewer._describe import graph_parts, response_schema, short, to_json
from agentic_orchestrator._viewer._errors import SourceError, ViewerError
from agentic_orchestrator._viewer._limits import bounded
from agentic_orchestrator._viewer._record import AnswerableRequest, request_from_event
from agentic_orchestrator._viewer._views import (
    EventView,
    ExecutorStatus,
    RequestView,
    RunView,
    SuperstepView,
)

__all__ = ["CheckpointSource", "StoredRun", "open_source"]

T = TypeVar("T")

MAX_LISTED_RUNS = 200
"""Runs listed per source (the most recently updated)."""

# Answers of these plain types get a schema even when the workflow that asked is not at hand.
_PLAIN_TYPES: dict[str, type] = {"bool": bool, "str": str, "int": int, "float": float}


@dataclass(frozen=True, slots=True)
class StoredRun:
    """A run rebuilt from its checkpoints: its view, the request types, where it resumes."""

    view: RunView
    requests: dict[str, AnswerableRequest]
    workflow: Workflow | None
    latest_checkpoint_id: str


@dataclass(frozen=True, slots=True)
class CheckpointSource:
    """A checkpoint store the viewer reads runs from; ``label`` names it in errors."""

    store: CheckpointStore
    label: str
    kind: RunSource
    owned: bool = False
    """Opened here from a URL: ``close`` closes it (a store given is the caller's to close)."""

    async def close(self) -> None:
        """Close the store if this source opened it (its connections)."""
        if not self.owned:
            return
        closer: Any = getattr(self.store, "close", None)
        if closer is None:
            return
        with contextlib.suppress(Exception):  # closing a store that is away: nothing to do
            done: Any = closer()
            if inspect.isawaitable(done):
                await done

    async def summaries(self, workflows: list[Workflow]) -> list[RunSummary]:
        """The runs this store holds, as rows of the runs list."""
        metadata = await self._guard("list runs", self.store.list())
        newest: dict[str, CheckpointMetadata] = {}
        counts: dict[str, int] = {}
        for item in metadata:
            counts[item.run_id] = counts.get(item.run_id, 0) + 1
            seen = newest.get(item.run_id)
            if seen is None or (item.superstep, item.created_at) >= (
                seen.superstep,
                seen.created_at,
            ):
                newest[item.run_id] = item
        recent = sorted(newest.values(), key=lambda m: m.created_at, reverse=True)
        rows: list[RunSummary] = []
        for item in recent[:MAX_LISTED_RUNS]:
            latest = await self._guard(f"read run {item.run_id}", self.store.latest(item.run_id))
            if latest is None:
                continue  # deleted meanwhile
            rows.append(
                summarize_checkpoint(latest, source=self.kind, checkpoints=counts[item.run_id])
            )
        return rows

    async def latest(self, run_id: str) -> Checkpoint | None:
        """The latest checkpoint of ``run_id`` in this store, if it holds the run."""
        return await self._guard(f"read run {run_id}", self.store.latest(run_id))

    async def run(self, run_id: str, workflows: list[Workflow]) -> StoredRun | None:
        """Run ``run_id`` as its checkpoints tell, or None when this store does not hold it."""
        doing = f"read run {run_id}"
        metadata = await self._guard(doing, self.store.list(run_id=run_id))
        if not metadata:
            return None
        ordered = sorted(metadata, key=lambda m: (m.superstep, m.created_at))
        checkpoints: list[Checkpoint] = []
        for item in ordered:
            loaded = await self._guard(doing, self.store.load(item.id))
            if loaded is not None:
                checkpoints.append(loaded)
        if not checkpoints:
            return None
        latest = checkpoints[-1]
        workflow = next(
            (w for w in workflows if w.fingerprint() == latest.workflow_fingerprint), None
        )
        requests = _requests(latest, workflow)
        view = _view(self.kind, checkpoints, workflow, requests)
        return StoredRun(view, requests, workflow, latest.id)

    async def _guard(self, doing: str, call: Awaitable[T]) -> T:
        """Await ``call``; a failure becomes a SourceError naming this source."""
        try:
            return await call
        except asyncio.CancelledError:
            raise
        except CheckpointError as exc:
            raise SourceError(
                f"checkpoint source {self.label}: cannot {doing}: {exc}", status_code=500
            ) from exc
        except Exception as exc:
            raise SourceError(
                f"checkpoint source {self.label}: cannot {doing}: {type(exc).__name__}: {exc}"
            ) from exc


def open_source(spec: str | Path | CheckpointStore) -> CheckpointSource:
    """A source for ``spec``: a store, a directory, or a URL whose scheme an installed package
    registers under ``agentic.checkpoint_stores`` (``redis://`` agentic-storage, ``nats://``
    agentic-bus)."""
    if isinstance(spec, Path) or (isinstance(spec, str) and "://" not in spec):
        directory = Path(spec)
        if directory.exists() and not directory.is_dir():
            raise ViewerError(f"{directory} is not a directory of checkpoints")
        return CheckpointSource(FileCheckpointStore(directory), str(directory), "checkpoints")
    if isinstance(spec, str):
        scheme = spec.split("://", 1)[0].lower()
        if scheme == "file":
            return open_source(Path(urlsplit(spec).path))
        factory: Any = registry.load("agentic.checkpoint_stores", scheme)
        store = cast("CheckpointStore", factory(spec))
        kind: RunSource = "nats" if scheme == "nats" else "checkpoints"
        # The label goes into errors, the page and the log: no password, no token user.
        return CheckpointSource(store, redact_url(spec), kind, owned=True)
    if isinstance(spec, FileCheckpointStore):
        return CheckpointSource(spec, str(spec.directory), "checkpoints")
    # A store object of another package: told apart by its module, never imported here.
    kind = "nats" if type(spec).__module__.startswith("agentic_bus") else "checkpoints"
    return CheckpointSource(spec, type(spec).__name__, kind)


def _requests(latest: Checkpoint, workflow: Workflow | None) -> dict[str, AnswerableRequest]:
    found: dict[str, AnswerableRequest] = {}
    for encoded in latest.pending_requests:
        request = _decoded_request(encoded, workflow) or _raw_request(encoded)
        if request is not None:
            found[request.view.request_id] = request
    return found


def _decoded_request(
    encoded: dict[str, Any], workflow: Workflow | None
) -> AnswerableRequest | None:
    if workflow is None:
        return None
    try:
        event = workflow.type_registry.decode(encoded)
    except Exception:  # noqa: BLE001 - undecodable: shown raw instead
        return None
    return request_from_event(event) if isinstance(event, RequestInfoEvent) else None


def _raw_request(encoded: dict[str, Any]) -> AnswerableRequest | None:
    fields: Any = encoded.get("v", encoded)
    if not isinstance(fields, dict):
        return None
    values = cast("dict[str, Any]", fields)
    request_id = values.get("request_id")
    if not isinstance(request_id, str):
        return None
    data = values.get("data")
    response_type: Any = Any
    tag: Any = values.get("response_type")
    if isinstance(tag, dict):
        name = cast("dict[str, Any]", tag).get("v")
        response_type = _PLAIN_TYPES.get(name, Any) if isinstance(name, str) else Any
    plain = _plain(data)  # the encoded form without its type tags: what a person reads
    view = RequestView(
        request_id=request_id,
        source_executor_id=str(values.get("source_executor_id", "")),
        prompt=short(str(plain)),
        data=bounded(to_json(plain)),
        response_schema=response_schema(response_type) if response_type is not Any else {},
    )
    return AnswerableRequest(view, response_type)


def _plain(data: Any) -> Any:
    """Encoded data without its type tags, for a prompt line."""
    if isinstance(data, dict):
        values = cast("dict[str, Any]", data)
        if "$t" in values and "v" in values:
            return _plain(values["v"])
        return {k: _plain(v) for k, v in values.items()}
    if isinstance(data, list):
        return [_plain(v) for v in cast("list[Any]", data)]
    return data


def _view(
    kind: RunSource,
    checkpoints: list[Checkpoint],
    workflow: Workflow | None,
    requests: dict[str, AnswerableRequest],
) -> RunView:
    latest = checkpoints[-1]
    saved = {c.superstep for c in checkpoints}
    steps: dict[int, dict[str, ExecutorStatus]] = {}
    first = checkpoints[0]
    if first.superstep == 0 and first.parent_checkpoint_id is None and workflow is not None:
        steps[0] = {workflow.start_executor_id: "completed"}
    for checkpoint in checkpoints:
        ran = sorted(k for k, v in checkpoint.pending_messages.items() if v)
        if ran:
            status: ExecutorStatus = "completed" if checkpoint.superstep + 1 in saved else "pending"
            steps[checkpoint.superstep + 1] = dict.fromkeys(ran, status)
    count = max(steps) + 1 if steps else latest.superstep + 1
    supersteps = [SuperstepView(superstep=i, executors=steps.get(i, {})) for i in range(count)]
    executor_ids: list[str] = []
    mermaid: str | None = None
    node_ids: dict[str, str] = {}
    if workflow is not None:
        parts = graph_parts(workflow)
        mermaid, node_ids, executor_ids = parts.mermaid, parts.node_ids, parts.executor_ids
    for step in supersteps:
        executor_ids += [e for e in step.executors if e not in executor_ids]
    events = [
        EventView(
            seq=index,
            type="Checkpoint",
            superstep=checkpoint.superstep,
            executor_id=None,
            summary=(
                f"checkpoint {checkpoint.id} after superstep {checkpoint.superstep}: "
                f"{sum(len(v) for v in checkpoint.pending_messages.values())} messages and "
                f"{len(checkpoint.pending_requests)} requests pending"
            ),
            time=checkpoint.created_at,
        )
        for index, checkpoint in enumerate(checkpoints)
    ]
    return RunView(
        run_id=latest.run_id,
        workflow_id=latest.workflow_id,
        workflow_name=latest.workflow_name,
        status=stored_run_status(latest),
        source=kind,
        mermaid=mermaid,
        node_ids=node_ids,
        executor_ids=executor_ids,
        supersteps=supersteps,
        events=events,
        outputs=[],
        pending_requests=[r.view for r in requests.values()],
        error=None,
        can_answer=workflow is not None,
        superstep_count=count,
        updated_at=latest.created_at,
    )
