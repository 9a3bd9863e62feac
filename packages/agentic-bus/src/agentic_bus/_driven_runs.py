"""What a ``NatsRuntime`` keeps about the runs it drives (``run``, ``resume``, ``run_stream``).

The keywords of a driven run (``RunOptions``, with ``check_durability``: the one mode it keeps),
whether the current run is driven (``FENCED``:
its supersteps are claimed and logged), each superstep's outputs until its checkpoint commits
(``OutputStash``), the most recent run ids (``RecentRuns``, bounded), and the fencing error the
engine wraps (``fenced_cause``).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from agentic_bus._errors import CoordinatorFencedError
from agentic_core import CheckpointError, CheckpointStore, Durability

__all__ = [
    "FENCED",
    "OutputStash",
    "RecentRuns",
    "RunOptions",
    "check_durability",
    "fenced_cause",
]


def check_durability(durability: object) -> None:
    """Refuse a ``durability=`` other than ``"sync"`` (None: the default, ``"sync"``).

    A driven run commits each superstep to NATS KV, fenced, before the next one starts, so that
    any process can resume it from its last commit: that is ``"sync"``, and the only mode kept.
    """
    if durability is not None and durability != "sync":
        raise ValueError(
            f"durability={durability!r}: a NatsRuntime commits every superstep to NATS KV before "
            "the next one starts (fenced, so any process can resume the run), so it supports "
            "only durability='sync' (the default); drop durability= or pass 'sync'"
        )


class RecentRuns:
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


@dataclass(frozen=True, slots=True, kw_only=True)
class RunOptions:
    """``workflow.run``'s keywords (``runtime`` aside) for a run this runtime drives."""

    checkpoint_id: str | None = None
    checkpoint_store: CheckpointStore | None = None
    responses: Mapping[str, Any] | None = None
    max_supersteps: int | None = None
    fork: bool = False
    update_state: Mapping[str, Any] | None = None
    durability: Durability | None = None
    """Only ``"sync"`` (or None): see ``check_durability``."""

    def engine_kwargs(self) -> dict[str, Any]:
        """The keywords for the engine (the store is the runtime's own, passed apart)."""
        return {
            "checkpoint_id": self.checkpoint_id,
            "responses": self.responses,
            "max_supersteps": self.max_supersteps,
            "fork": self.fork,
            "update_state": self.update_state,
            "durability": self.durability,
        }


FENCED: ContextVar[bool] = ContextVar("agentic_bus_fenced", default=False)
"""Set while ``NatsRuntime.run``/``resume`` drive a run: its supersteps are claimed and logged."""


class OutputStash:
    """One superstep's outputs, by (executor id, map index) in first-execution order."""

    __slots__ = ("outputs", "superstep")

    def __init__(self, superstep: int) -> None:
        self.superstep = superstep
        self.outputs: dict[tuple[str, int | None], list[Any]] = {}


def fenced_cause(exc: CheckpointError) -> BaseException:
    """The ``CoordinatorFencedError`` the engine wrapped in a ``CheckpointError``, else ``exc``."""
    cause = exc.__cause__
    return cause if isinstance(cause, CoordinatorFencedError) else exc
