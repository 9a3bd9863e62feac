"""PausedRuns: the runs of one workflow that wait for answers in this process, bounded.

``Workflow.send_responses`` finds a paused run by a request id. A run checkpointed to a store
is kept as its checkpoint id only (``send_responses`` reloads it); a run without a store must be
kept whole. Either way at most ``max_runs`` runs are kept, none longer than ``max_age_s``: a
service whose users never answer does not grow without bound. A dropped run leaves a small
tombstone per request, so answering it later says what happened instead of "unknown id".
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from agentic_core._errors import WorkflowRequestError
from agentic_core.graph._run_state import RunState
from agentic_core.protocols._checkpoint import CheckpointStore

MAX_RUNS = 1000
"""Paused runs kept per workflow; the oldest is dropped first."""
MAX_AGE_S = 3600.0
"""How long a paused run is kept in memory."""
_TOMBSTONES_PER_RUN = 8


@dataclass(slots=True)
class PausedRun:
    """One paused run: the whole run (no store), or its checkpoint id and store."""

    run_id: str
    request_ids: tuple[str, ...]
    paused_at: float
    kept: RunState | tuple[str, CheckpointStore]
    store: CheckpointStore | None

    @property
    def checkpoint_id(self) -> str | None:
        """The run's last checkpoint, when it had a store."""
        return self.kept[0] if isinstance(self.kept, tuple) else self.kept.last_checkpoint_id


@dataclass(frozen=True, slots=True)
class _Dropped:
    run_id: str
    reason: str
    checkpoint_id: str | None


class PausedRuns:
    """Paused runs by request id, at most ``max_runs`` of them, none older than ``max_age_s``."""

    def __init__(
        self,
        *,
        max_runs: int | None = None,
        max_age_s: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._max_runs = MAX_RUNS if max_runs is None else max_runs
        self._max_age_s = MAX_AGE_S if max_age_s is None else max_age_s
        self._clock = clock
        self._runs: OrderedDict[str, PausedRun] = OrderedDict()  # run id -> entry, oldest first
        self._by_request: dict[str, str] = {}  # request id -> run id
        self._dropped: OrderedDict[str, _Dropped] = OrderedDict()  # request id -> tombstone

    def __len__(self) -> int:
        return len(self._runs)

    def add(self, run: RunState, store: CheckpointStore | None) -> None:
        """Keep ``run`` (paused on its pending requests) until answered, dropped or expired."""
        self.forget(run.run_id)
        request_ids = tuple(run.pending_requests)
        if not request_ids:
            return
        checkpoint_id = run.last_checkpoint_id
        self._runs[run.run_id] = PausedRun(
            run_id=run.run_id,
            request_ids=request_ids,
            paused_at=self._clock(),
            kept=run if store is None or checkpoint_id is None else (checkpoint_id, store),
            store=store,
        )
        for request_id in request_ids:
            self._by_request[request_id] = run.run_id
            self._dropped.pop(request_id, None)
        self._expire()

    def take(self, request_ids: Iterable[str]) -> PausedRun:
        """Remove and return the one paused run all ``request_ids`` belong to.

        Raises ``WorkflowRequestError``: an id nobody waits for, an id of a run dropped from
        memory (with how to resume it), or ids of different runs.
        """
        self._expire()
        ids = list(request_ids)
        unknown = [rid for rid in ids if rid not in self._by_request]
        if unknown:
            raise WorkflowRequestError(self._unknown_message(unknown))
        run_ids = {self._by_request[rid] for rid in ids}
        if len(run_ids) != 1:
            raise WorkflowRequestError("the responses answer requests of different runs")
        entry = self._runs[run_ids.pop()]
        run_id = entry.run_id
        self.forget(run_id)
        return entry

    def forget(self, run_id: str) -> None:
        """Stop keeping the run ``run_id`` (it was answered, or paused again)."""
        entry = self._runs.pop(run_id, None)
        if entry is not None:
            for request_id in entry.request_ids:
                self._by_request.pop(request_id, None)

    def _expire(self) -> None:
        now = self._clock()
        while self._runs:
            oldest = next(iter(self._runs.values()))
            if len(self._runs) > self._max_runs:
                self._drop(oldest, f"more than {self._max_runs} runs were paused at once")
            elif now - oldest.paused_at > self._max_age_s:
                self._drop(oldest, f"it waited longer than {self._max_age_s:g} s")
            else:
                break

    def _drop(self, entry: PausedRun, reason: str) -> None:
        self.forget(entry.run_id)
        for request_id in entry.request_ids:
            self._dropped[request_id] = _Dropped(entry.run_id, reason, entry.checkpoint_id)
        while len(self._dropped) > self._max_runs * _TOMBSTONES_PER_RUN:
            self._dropped.popitem(last=False)

    def _unknown_message(self, unknown: list[str]) -> str:
        for request_id in unknown:
            dropped = self._dropped.get(request_id)
            if dropped is None:
                continue
            if dropped.checkpoint_id is None:
                how = (
                    "no checkpoint store was set, so it cannot be resumed (build the workflow "
                    "with with_checkpointing(...) to keep paused runs resumable)"
                )
            else:
                how = (
                    f"resume it from its checkpoint with run(checkpoint_id="
                    f"{dropped.checkpoint_id!r}, responses=...)"
                )
            return (
                f"request {request_id!r} belonged to run {dropped.run_id}, which was dropped "
                f"from this process's paused runs because {dropped.reason}; {how}"
            )
        return (
            f"unknown request id(s) {', '.join(map(repr, unknown))}: no run paused in this "
            "process waits for them (across processes, use run(checkpoint_id=..., "
            "responses=...))"
        )
