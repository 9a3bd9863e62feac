"""Checkpoint and state stores: the data model, in-memory versions and portable back-ends."""

from agentic_core.protocols._checkpoint import (
    CHECKPOINT_SCHEMA_VERSION,
    Checkpoint,
    CheckpointMetadata,
)
from agentic_core.stores._file_checkpoint import FileCheckpointStore
from agentic_core.stores._memory_checkpoint import InMemoryCheckpointStore
from agentic_core.stores._memory_state import InMemoryStateStore
from agentic_core.stores._state_checkpoint import StateStoreCheckpointStore

__all__ = [
    "CHECKPOINT_SCHEMA_VERSION",
    "Checkpoint",
    "CheckpointMetadata",
    "FileCheckpointStore",
    "InMemoryCheckpointStore",
    "InMemoryStateStore",
    "StateStoreCheckpointStore",
]
