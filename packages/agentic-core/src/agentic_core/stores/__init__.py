"""Checkpoint and state stores: the data model, in-memory versions and portable back-ends.

The lowercase names are for the authors of other back-ends, so every one behaves alike:
the checkpoint-store rules (``select_checkpoints``, the filter and order of every ``list``;
``latest_listed_checkpoint``; ``checkpoints_beyond``, what ``cleanup_keep_last`` deletes;
``check_keep_last``; ``dump_checkpoint_json``/``_dict``, which name
the checkpoint that is not JSON-able; ``describe_validation_error``, a corrupt document in one
line), the framing of stored bytes (``frame_value``/``unframe_value``, ``ForeignValueError``),
``encode_json_value`` (the JSON-ability check of every ``StateStore``), the subject, payload and
header rules of every ``MessageBus`` (``check_subject``, ``subject_matches``,
``encode_bus_payload``, ``check_headers``, and ``QueuedSubscription``, the receiving end of a
subscription), ``checkpoint_order`` (the
order every ``CheckpointStore`` lists in), and the checks and filter parser every ``VectorStore``
applies (``check_distance``, ``check_vector``, ``check_vector_points``, ``parse_vector_filter``
into ``VectorCondition``s).
"""

from agentic_core.protocols._checkpoint import (
    CHECKPOINT_SCHEMA_VERSION,
    Checkpoint,
    CheckpointMetadata,
)
from agentic_core.stores._bus_rules import (
    check_headers,
    check_subject,
    encode_bus_payload,
    subject_matches,
)
from agentic_core.stores._checkpoint_rules import (
    check_keep_last,
    checkpoint_order,
    checkpoints_beyond,
    describe_validation_error,
    dump_checkpoint_dict,
    dump_checkpoint_json,
    latest_listed_checkpoint,
    select_checkpoints,
)
from agentic_core.stores._file_checkpoint import FileCheckpointStore
from agentic_core.stores._framing import (
    ForeignValueError,
    frame_value,
    unframe_value,
)
from agentic_core.stores._hashing_embedder import HashingEmbedder
from agentic_core.stores._json_value import encode_json_value
from agentic_core.stores._memory_bus import InMemoryBus, InMemorySubscription
from agentic_core.stores._memory_checkpoint import InMemoryCheckpointStore
from agentic_core.stores._memory_state import InMemoryStateStore
from agentic_core.stores._memory_vector import InMemoryVectorStore
from agentic_core.stores._state_checkpoint import StateStoreCheckpointStore
from agentic_core.stores._subscription_queue import QueuedSubscription
from agentic_core.stores._vector_filter import VectorCondition, parse_vector_filter
from agentic_core.stores._vector_rules import check_distance, check_vector, check_vector_points

__all__ = [
    "CHECKPOINT_SCHEMA_VERSION",
    "Checkpoint",
    "CheckpointMetadata",
    "FileCheckpointStore",
    "ForeignValueError",
    "HashingEmbedder",
    "InMemoryBus",
    "InMemoryCheckpointStore",
    "InMemoryStateStore",
    "InMemorySubscription",
    "InMemoryVectorStore",
    "QueuedSubscription",
    "StateStoreCheckpointStore",
    "VectorCondition",
    "check_distance",
    "check_headers",
    "check_keep_last",
    "check_subject",
    "check_vector",
    "check_vector_points",
    "checkpoint_order",
    "checkpoints_beyond",
    "describe_validation_error",
    "dump_checkpoint_dict",
    "dump_checkpoint_json",
    "encode_bus_payload",
    "encode_json_value",
    "frame_value",
    "latest_listed_checkpoint",
    "parse_vector_filter",
    "select_checkpoints",
    "subject_matches",
    "unframe_value",
]
