"""agentic-core.

Graph workflow engine, agent layer and protocols for agentic multi-agent systems.
"""

import typing as _typing

from agentic_core._errors import (
    AgentCoreError,
    CheckpointError,
    ExecutorError,
    GraphValidationError,
    IncompatibleCheckpointError,
    MaxSuperstepsExceededError,
    SerializationError,
    WorkflowExecutionError,
    WorkflowRequestError,
)
from agentic_core._logging import configure_logging
from agentic_core.graph import (
    AgentRunUpdateEvent,
    Case,
    Default,
    Executor,
    ExecutorCompletedEvent,
    ExecutorErrorInfo,
    ExecutorFailedEvent,
    ExecutorInvokedEvent,
    ExecutorKind,
    FanInIncompleteEvent,
    FunctionExecutor,
    Invocation,
    InvocationResult,
    LocalRuntime,
    RequestInfoEvent,
    RetryPolicy,
    Runtime,
    SerializingRuntime,
    SubWorkflowExecutor,
    SuperstepCompletedEvent,
    SuperstepStartedEvent,
    Workflow,
    WorkflowBuilder,
    WorkflowCompletedEvent,
    WorkflowContext,
    WorkflowEvent,
    WorkflowFailedEvent,
    WorkflowOutputEvent,
    WorkflowRunResult,
    WorkflowRunState,
    WorkflowStartedEvent,
    executor,
    handler,
    response_handler,
)
from agentic_core.protocols import CheckpointStore, StateStore
from agentic_core.stores import (
    Checkpoint,
    CheckpointMetadata,
    FileCheckpointStore,
    InMemoryCheckpointStore,
    InMemoryStateStore,
    StateStoreCheckpointStore,
)

__all__ = [
    "AgentCoreError",
    "AgentRunUpdateEvent",
    "Case",
    "Checkpoint",
    "CheckpointError",
    "CheckpointMetadata",
    "CheckpointStore",
    "Default",
    "Executor",
    "ExecutorCompletedEvent",
    "ExecutorError",
    "ExecutorErrorInfo",
    "ExecutorFailedEvent",
    "ExecutorInvokedEvent",
    "ExecutorKind",
    "FanInIncompleteEvent",
    "FileCheckpointStore",
    "FunctionExecutor",
    "GraphValidationError",
    "InMemoryCheckpointStore",
    "InMemoryStateStore",
    "IncompatibleCheckpointError",
    "Invocation",
    "InvocationResult",
    "LocalRuntime",
    "MaxSuperstepsExceededError",
    "RequestInfoEvent",
    "RetryPolicy",
    "Runtime",
    "SerializationError",
    "SerializingRuntime",
    "StateStore",
    "StateStoreCheckpointStore",
    "SubWorkflowExecutor",
    "SuperstepCompletedEvent",
    "SuperstepStartedEvent",
    "Workflow",
    "WorkflowBuilder",
    "WorkflowCompletedEvent",
    "WorkflowContext",
    "WorkflowEvent",
    "WorkflowExecutionError",
    "WorkflowFailedEvent",
    "WorkflowOutputEvent",
    "WorkflowRequestError",
    "WorkflowRunResult",
    "WorkflowRunState",
    "WorkflowStartedEvent",
    "__version__",
    "configure_logging",
    "executor",
    "handler",
    "response_handler",
]

if _typing.TYPE_CHECKING:
    __version__: str
else:

    def __getattr__(name: str) -> str:
        # The version is read from the installed metadata on first use: importing
        # importlib.metadata costs ~30 ms, which `import agentic_core` should not pay.
        if name == "__version__":
            from importlib.metadata import version

            globals()["__version__"] = value = version("agentic-core")
            return value
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
