"""What every pattern builder shares: checkpointing of the workflow it builds."""

from __future__ import annotations

from typing import Self

from agentic_core import CheckpointStore, Workflow, WorkflowBuilder


class PatternBuilder:
    """Base of the pattern builders: ``with_checkpointing`` and the last step of ``build``."""

    _checkpoint_store: CheckpointStore | None = None

    def with_checkpointing(self, store: CheckpointStore) -> Self:
        """Save a checkpoint after every superstep into ``store``."""
        self._checkpoint_store = store
        return self

    def _finish(self, builder: WorkflowBuilder) -> Workflow:
        if self._checkpoint_store is not None:
            builder.with_checkpointing(self._checkpoint_store)
        return builder.build()
