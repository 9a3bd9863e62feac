"""WorkflowBuilder: records executors and the five edge types, then builds an immutable Workflow."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Self

from agentic_core._errors import GraphValidationError
from agentic_core.graph._edges import Case, Condition, Default, Edge, EdgeKind, Selection
from agentic_core.graph._executor import Executor

if TYPE_CHECKING:
    from agentic_core.graph._workflow import Workflow
    from agentic_core.protocols._checkpoint import CheckpointStore

ExecutorRef = Executor | str


class WorkflowBuilder:
    """Build a graph: executors joined by direct, conditional, switch, fan-out, fan-in edges.

    Example::

        workflow = (
            WorkflowBuilder("review")
            .set_start_executor(writer)
            .add_edge(writer, reviewer)
            .add_conditional_edge(reviewer, writer, lambda verdict: not verdict.approved)
            .build()
        )

    Executors passed as objects are added on first mention; ids (strings) must name executors
    added some other way. ``build()`` validates everything and raises ``GraphValidationError``.
    """

    def __init__(self, name: str | None = None, *, max_supersteps: int = 100) -> None:
        self._name = name
        self._max_supersteps = max_supersteps
        self._executors: dict[str, Executor] = {}
        self._duplicates: list[str] = []
        self._edges: list[Edge] = []
        self._start: str | None = None
        self._checkpoint_store: CheckpointStore | None = None

    def _ref(self, ref: ExecutorRef) -> str:
        if isinstance(ref, Executor):
            known = self._executors.get(ref.id)
            if known is None:
                self._executors[ref.id] = ref
            elif known is not ref:
                self._duplicates.append(ref.id)
            return ref.id
        if not isinstance(ref, str) or not ref:  # pyright: ignore[reportUnnecessaryIsInstance]
            raise GraphValidationError(
                f"an executor reference must be an Executor or id, not {ref!r}"
            )
        return ref

    def _add(self, edge: Edge) -> None:
        self._edges.append(edge.with_position(len(self._edges)))

    def set_start_executor(self, executor: ExecutorRef) -> Self:
        """The executor that receives the run's input message in superstep 0."""
        self._start = self._ref(executor)
        return self

    def add_executor(self, executor: Executor) -> Self:
        """Add an executor without an edge (e.g. to refer to it by id later)."""
        self._ref(executor)
        return self

    def add_edge(
        self,
        source: ExecutorRef,
        target: ExecutorRef,
        *,
        condition: Condition | None = None,
        description: str | None = None,
    ) -> Self:
        """Direct edge: what ``source`` sends goes to ``target`` (if ``condition`` holds)."""
        kind = EdgeKind.DIRECT if condition is None else EdgeKind.CONDITIONAL
        self._add(
            Edge(kind, (self._ref(source),), (self._ref(target),), (condition,), None, description)
        )
        return self

    def add_conditional_edge(
        self,
        source: ExecutorRef,
        target: ExecutorRef,
        condition: Condition,
        description: str | None = None,
    ) -> Self:
        """Conditional edge: a message goes to ``target`` when ``condition(message)`` holds.

        ``condition`` may be sync or async.
        """
        return self.add_edge(source, target, condition=condition, description=description)

    def add_switch_edge(self, source: ExecutorRef, cases: Sequence[Case | Default]) -> Self:
        """Switch-case edge: the first ``Case`` that holds wins, else the ``Default``.

        With no match and no default the message is dropped (logged at debug level).
        """
        source_id = self._ref(source)
        targets: list[str] = []
        conditions: list[Condition | None] = []
        defaults = [c for c in cases if isinstance(c, Default)]
        if len(defaults) > 1:
            raise GraphValidationError(f"switch edge from '{source_id}' has more than one Default")
        if defaults and not isinstance(cases[-1], Default):
            raise GraphValidationError(f"switch edge from '{source_id}': Default must come last")
        for case in cases:
            if isinstance(case, Case):
                conditions.append(case.condition)
            elif isinstance(case, Default):  # pyright: ignore[reportUnnecessaryIsInstance]
                conditions.append(None)
            else:
                raise GraphValidationError(
                    f"switch edge from '{source_id}' takes Case and Default, not {case!r}"
                )
            targets.append(self._ref(case.target))
        if not targets:
            raise GraphValidationError(f"switch edge from '{source_id}' has no cases")
        self._add(Edge(EdgeKind.SWITCH, (source_id,), tuple(targets), tuple(conditions)))
        return self

    def add_fan_out_edge(
        self,
        source: ExecutorRef,
        targets: Sequence[ExecutorRef],
        *,
        selection: Selection | None = None,
    ) -> Self:
        """Fan-out edge: a message goes to every target, or to those ``selection`` picks.

        ``selection(message, n_targets)`` returns the indices of the targets to activate.
        """
        source_id = self._ref(source)
        target_ids = tuple(self._ref(t) for t in targets)
        if not target_ids:
            raise GraphValidationError(f"fan-out edge from '{source_id}' has no targets")
        self._add(Edge(EdgeKind.FAN_OUT, (source_id,), target_ids, (), selection))
        return self

    def add_fan_in_edge(self, sources: Sequence[ExecutorRef], target: ExecutorRef) -> Self:
        """Fan-in edge: ``target`` gets one list, in ``sources`` order, once every source sent."""
        source_ids = tuple(self._ref(s) for s in sources)
        if not source_ids:
            raise GraphValidationError(f"fan-in edge into '{self._ref(target)}' has no sources")
        if len(set(source_ids)) != len(source_ids):
            raise GraphValidationError(
                f"fan-in edge into '{self._ref(target)}' names a source twice: {list(source_ids)}"
            )
        self._add(Edge(EdgeKind.FAN_IN, source_ids, (self._ref(target),)))
        return self

    def add_collect_edge(self, source: ExecutorRef, target: ExecutorRef) -> Self:
        """Collect edge: ``target`` gets one list of every message ``source`` sent in a superstep.

        The reduce side of a dynamic map: when ``source`` handles several messages in one
        superstep as concurrent invocations (LangGraph's ``Send``), everything those invocations
        send along this edge reaches ``target`` together in the next superstep, as one list in
        delivery order. A superstep in which ``source`` sent nothing delivers nothing.
        """
        source_id = self._ref(source)
        self._add(Edge(EdgeKind.COLLECT, (source_id,), (self._ref(target),)))
        return self

    def with_checkpointing(self, store: CheckpointStore) -> Self:
        """Save a checkpoint to ``store`` at every superstep barrier."""
        self._checkpoint_store = store
        return self

    def with_max_supersteps(self, n: int) -> Self:
        """Fail a run with ``MaxSuperstepsExceededError`` after ``n`` supersteps."""
        self._max_supersteps = n
        return self

    def build(self) -> Workflow:
        """Validate the graph and compile it into an immutable ``Workflow``."""
        from agentic_core.graph._validation import validate_graph
        from agentic_core.graph._workflow import Workflow

        if self._max_supersteps < 1:
            raise GraphValidationError(
                f"max_supersteps must be at least 1, got {self._max_supersteps}"
            )
        start = validate_graph(self._start, self._executors, self._edges, self._duplicates)
        return Workflow(
            name=self._name or start,
            executors=dict(self._executors),
            edges=tuple(self._edges),
            start_executor_id=start,
            max_supersteps=self._max_supersteps,
            checkpoint_store=self._checkpoint_store,
        )
