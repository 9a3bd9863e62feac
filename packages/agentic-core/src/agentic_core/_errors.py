"""The exception hierarchy of agentic_core: one root, subclasses, messages that name things.

``AgenticError`` is the root of the whole workspace: every package's own root error
(``AgentCoreError`` here, ``LLMError``, ``SandboxError``, ...) subclasses it, so
``except AgenticError`` catches anything an agentic package raises on purpose.
"""

from __future__ import annotations


class AgenticError(Exception):
    """Root of every error raised by any agentic package."""


class AgentCoreError(AgenticError):
    """Root of every error raised by agentic_core."""


class GraphValidationError(AgentCoreError):
    """``WorkflowBuilder.build()`` found the graph invalid; the message names executors, types."""


class ExecutorError(AgentCoreError):
    """An executor was used wrongly: a message no handler accepts, a bad target, a bad value."""

    def __init__(self, message: str, *, executor_id: str | None = None) -> None:
        super().__init__(message)
        self.executor_id = executor_id


class SerializationError(AgentCoreError):
    """A value cannot cross a checkpoint or process boundary (not JSON-able, unregistered type)."""


class WorkflowExecutionError(AgentCoreError):
    """A run failed: an executor raised after its retries, or routing failed.

    ``executor_id`` and ``superstep`` say where; ``__cause__`` holds the original exception.
    """

    def __init__(self, message: str, *, executor_id: str | None, superstep: int) -> None:
        super().__init__(message)
        self.executor_id = executor_id
        self.superstep = superstep


class MaxSuperstepsExceededError(WorkflowExecutionError):
    """A run needed more supersteps than its ``max_supersteps`` allows."""


class SharedStateConflictError(WorkflowExecutionError):
    """Concurrent branches of a dynamic map read a shared-state key and wrote it back.

    Each branch sees the shared state of the last barrier, so a read-modify-write by several
    of them would keep one update and silently drop the others; the run fails instead, before
    the superstep's effects apply (the last checkpoint stays usable). ``key`` names the key.
    """

    def __init__(self, message: str, *, executor_id: str, superstep: int, key: str) -> None:
        super().__init__(message, executor_id=executor_id, superstep=superstep)
        self.key = key


class CheckpointError(AgentCoreError):
    """A checkpoint cannot be saved, found or read (missing, truncated, corrupt)."""


class IncompatibleCheckpointError(CheckpointError):
    """A checkpoint was written by a different graph (its fingerprint differs)."""


class StorageError(AgentCoreError):
    """A store's back-end failed or holds data that is not ours.

    An unreachable server, refused credentials, a value of another program under our keys: the
    message names the URL (password redacted), the key or the collection.
    """


class VectorStoreError(StorageError):
    """A vector store refused a request: an unknown collection, a vector of the wrong dimension,
    a collection re-created with other settings, a malformed filter or one on an unknown field."""


class BusError(AgentCoreError):
    """A message bus could not deliver: it is closed or unreachable, or a subject is malformed."""


class InvalidSubjectError(BusError, ValueError):
    """A subject is not ``token.token...`` (or a wildcard where only a concrete subject goes)."""


class NoRespondersError(BusError):
    """A request went to a subject nobody subscribes to."""


class BusTimeoutError(BusError, TimeoutError):
    """A request got no reply within its timeout."""


class BusClosedError(BusError):
    """The bus was closed: no more publishing, subscribing or requesting."""


class WorkflowRequestError(AgentCoreError):
    """Responses do not match the run's pending requests (unknown id, wrong type, no paused run)."""


class AgentError(AgentCoreError):
    """An agent could not complete a run: malformed model output, exhausted retries, bad input."""


class ToolError(AgentCoreError):
    """A tool was defined or called wrongly (bad schema, bad arguments, unknown tool)."""


class RoutingError(AgentCoreError):
    """An edge's condition or a fan-out's selection raised, or returned something unusable."""

    def __init__(self, message: str, *, source_id: str) -> None:
        super().__init__(message)
        self.source_id = source_id
