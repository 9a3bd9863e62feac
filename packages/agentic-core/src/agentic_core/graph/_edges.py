"""Edges as data (what the builder records) and their routing behaviour (what the runner calls)."""

from __future__ import annotations

import dataclasses
import inspect
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any

import structlog

from agentic_core._errors import RoutingError

if TYPE_CHECKING:
    from agentic_core.graph._executor import Executor

_log = structlog.get_logger(__name__)

Condition = Callable[[Any], bool | Awaitable[bool]]
Selection = Callable[[Any, int], Sequence[int]]
ExecutorRef = "Executor | str"


class EdgeKind(StrEnum):
    """The five edge types, and the collect edge of dynamic maps."""

    DIRECT = "direct"
    CONDITIONAL = "conditional"
    SWITCH = "switch"
    FAN_OUT = "fan_out"
    FAN_IN = "fan_in"
    COLLECT = "collect"


_PLAIN_KINDS = frozenset({EdgeKind.FAN_IN, EdgeKind.FAN_OUT, EdgeKind.COLLECT})


class Case:
    """A switch-case branch: the first case whose ``condition`` holds sends to ``target``."""

    __slots__ = ("condition", "target")

    def __init__(self, condition: Condition, target: Executor | str) -> None:
        self.condition = condition
        self.target = target


class Default:
    """The switch-case branch taken when no ``Case`` holds."""

    __slots__ = ("target",)

    def __init__(self, target: Executor | str) -> None:
        self.target = target


@dataclass(frozen=True, slots=True)
class Edge:
    """One edge group as recorded by the builder (ids only)."""

    kind: EdgeKind
    sources: tuple[str, ...]
    targets: tuple[str, ...]
    conditions: tuple[Condition | None, ...] = ()  # per target (direct/switch); None: always
    selection: Selection | None = None
    description: str | None = None
    index: int = 0  # position in the builder: makes ``key`` unique
    key: str = ""  # stable, unique name (fan-in buffers are stored under it); set by the builder

    def with_position(self, index: int) -> Edge:
        """This edge at builder position ``index``, with its unique ``key``."""
        key = f"{index}:{self.kind.value}:{'|'.join(self.sources)}->{'|'.join(self.targets)}"
        return dataclasses.replace(self, index=index, key=key)


Deliver = Callable[[str, Any], None]


def _verdict(condition: Condition, message: Any, edge: Edge, target: str) -> Any:
    """What ``condition`` says of ``message``: a bool, or an awaitable of one (see ``_holds``)."""
    try:
        return condition(message)
    except Exception as exc:
        raise _condition_error(exc, edge, target) from exc


async def _holds(verdict: Any, edge: Edge, target: str) -> bool:
    """An asynchronous condition's verdict, awaited (the synchronous ones never get here)."""
    try:
        if inspect.isawaitable(verdict):
            verdict = await verdict
    except Exception as exc:
        raise _condition_error(exc, edge, target) from exc
    return bool(verdict)


def _condition_error(exc: Exception, edge: Edge, target: str) -> RoutingError:
    return RoutingError(
        f"the condition of edge {edge.sources[0]} -> {target} raised {type(exc).__name__}: {exc}",
        source_id=edge.sources[0],
    )


class FanInBuffer:
    """Per-run buffer of one fan-in edge: a queue per source and a count of non-empty queues."""

    __slots__ = ("edge", "filled", "queues")

    def __init__(self, edge: Edge) -> None:
        self.edge = edge
        self.queues: dict[str, deque[Any]] = {source: deque() for source in edge.sources}
        self.filled = 0

    def add(self, source: str, message: Any) -> list[Any] | None:
        """Buffer ``message``; return the delivery list once every source has sent."""
        queue = self.queues[source]
        if not queue:
            self.filled += 1
        queue.append(message)
        if self.filled < len(self.queues):
            return None
        batch = [q.popleft() for q in self.queues.values()]
        self.filled = sum(1 for q in self.queues.values() if q)
        return batch

    def missing(self) -> list[str] | None:
        """Sources not heard from, when the buffer holds something; else None."""
        if self.filled == 0:
            return None
        return [source for source, queue in self.queues.items() if not queue]


async def route_message(
    edges: Sequence[Edge],
    source: str,
    message: Any,
    target_id: str | None,
    deliver: Deliver,
    fan_in: Callable[[Edge], FanInBuffer],
    collect: Callable[[Edge], list[Any]],
) -> None:
    """Send ``message`` from ``source`` along its outgoing ``edges``, in the order added.

    A collect edge only gathers: the caller delivers each collect edge's list once every
    message of the superstep has been routed.
    """
    for edge in edges:
        kind = edge.kind
        if kind is EdgeKind.DIRECT or kind is EdgeKind.CONDITIONAL:
            target = edge.targets[0]
            if target_id is not None and target != target_id:
                continue
            condition = edge.conditions[0]
            if condition is not None:
                verdict = _verdict(condition, message, edge, target)
                if type(verdict) is not bool:  # the common, synchronous case is a bool
                    verdict = await _holds(verdict, edge, target)
                if not verdict:
                    continue
            deliver(target, message)
        elif kind is EdgeKind.SWITCH:
            for condition, target in zip(edge.conditions, edge.targets, strict=True):
                if condition is not None:
                    verdict = _verdict(condition, message, edge, target)
                    if type(verdict) is not bool:
                        verdict = await _holds(verdict, edge, target)
                    if not verdict:
                        continue
                if target_id is None or target == target_id:
                    deliver(target, message)
                break
            else:
                _log.debug("switch_no_match", source=source, message_type=type(message).__name__)
        else:
            route_plain(edge, source, message, target_id, deliver, fan_in, collect)


def is_plain(edge: Edge) -> bool:
    """Whether ``edge`` routes without a condition (``route_plain`` can take it, no await)."""
    return edge.kind in _PLAIN_KINDS or (
        edge.kind is EdgeKind.DIRECT and all(c is None for c in edge.conditions)
    )


def route_plain(
    edge: Edge,
    source: str,
    message: Any,
    target_id: str | None,
    deliver: Deliver,
    fan_in: Callable[[Edge], FanInBuffer],
    collect: Callable[[Edge], list[Any]],
) -> None:
    """``route_message`` along one edge without a condition (see ``is_plain``)."""
    kind = edge.kind
    if kind is EdgeKind.FAN_IN:
        target = edge.targets[0]
        if target_id is None or target == target_id:
            batch = fan_in(edge).add(source, message)
            if batch is not None:
                deliver(target, batch)
    elif kind is EdgeKind.FAN_OUT:
        for index in _select(edge, message):
            target = edge.targets[index]
            if target_id is None or target == target_id:
                deliver(target, message)
    elif kind is EdgeKind.DIRECT:
        target = edge.targets[0]
        if target_id is None or target == target_id:
            deliver(target, message)
    elif target_id is None or edge.targets[0] == target_id:  # COLLECT
        collect(edge).append(message)


def _select(edge: Edge, message: Any) -> Sequence[int]:
    n = len(edge.targets)
    if edge.selection is None:
        return range(n)
    try:
        chosen = list(edge.selection(message, n))
    except Exception as exc:
        raise RoutingError(
            f"the selection of fan-out edge {edge.sources[0]} -> [{', '.join(edge.targets)}] "
            f"raised {type(exc).__name__}: {exc}",
            source_id=edge.sources[0],
        ) from exc
    for index in chosen:
        if not isinstance(index, int) or not 0 <= index < n:  # pyright: ignore[reportUnnecessaryIsInstance]
            raise RoutingError(
                f"the selection of fan-out edge {edge.sources[0]} returned {index!r}, "
                f"not an index in 0..{n - 1}",
                source_id=edge.sources[0],
            )
    return chosen
