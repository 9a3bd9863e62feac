"""agentic-core.

Graph workflow engine, agent layer and protocols for agentic multi-agent systems.

Public names load lazily, on first use: ``import agentic_core`` stays cheap, and a program
pays only for the parts it touches.
"""

import typing as _typing

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

# Public name -> the module that defines it (imported on first access).
_LAZY: dict[str, str] = {
    "AgentCoreError": "agentic_core._errors",
    "AgentRunUpdateEvent": "agentic_core.graph",
    "Case": "agentic_core.graph",
    "Checkpoint": "agentic_core.stores",
    "CheckpointError": "agentic_core._errors",
    "CheckpointMetadata": "agentic_core.stores",
    "CheckpointStore": "agentic_core.protocols",
    "Default": "agentic_core.graph",
    "Executor": "agentic_core.graph",
    "ExecutorCompletedEvent": "agentic_core.graph",
    "ExecutorError": "agentic_core._errors",
    "ExecutorErrorInfo": "agentic_core.graph",
    "ExecutorFailedEvent": "agentic_core.graph",
    "ExecutorInvokedEvent": "agentic_core.graph",
    "ExecutorKind": "agentic_core.graph",
    "FanInIncompleteEvent": "agentic_core.graph",
    "FileCheckpointStore": "agentic_core.stores",
    "FunctionExecutor": "agentic_core.graph",
    "GraphValidationError": "agentic_core._errors",
    "InMemoryCheckpointStore": "agentic_core.stores",
    "InMemoryStateStore": "agentic_core.stores",
    "IncompatibleCheckpointError": "agentic_core._errors",
    "Invocation": "agentic_core.graph",
    "InvocationResult": "agentic_core.graph",
    "LocalRuntime": "agentic_core.graph",
    "MaxSuperstepsExceededError": "agentic_core._errors",
    "RequestInfoEvent": "agentic_core.graph",
    "RetryPolicy": "agentic_core.graph",
    "Runtime": "agentic_core.graph",
    "SerializationError": "agentic_core._errors",
    "SerializingRuntime": "agentic_core.graph",
    "StateStore": "agentic_core.protocols",
    "StateStoreCheckpointStore": "agentic_core.stores",
    "SubWorkflowExecutor": "agentic_core.graph",
    "SuperstepCompletedEvent": "agentic_core.graph",
    "SuperstepStartedEvent": "agentic_core.graph",
    "Workflow": "agentic_core.graph",
    "WorkflowBuilder": "agentic_core.graph",
    "WorkflowCompletedEvent": "agentic_core.graph",
    "WorkflowContext": "agentic_core.graph",
    "WorkflowEvent": "agentic_core.graph",
    "WorkflowExecutionError": "agentic_core._errors",
    "WorkflowFailedEvent": "agentic_core.graph",
    "WorkflowOutputEvent": "agentic_core.graph",
    "WorkflowRequestError": "agentic_core._errors",
    "WorkflowRunResult": "agentic_core.graph",
    "WorkflowRunState": "agentic_core.graph",
    "WorkflowStartedEvent": "agentic_core.graph",
    "configure_logging": "agentic_core._logging",
    "executor": "agentic_core.graph",
    "handler": "agentic_core.graph",
    "response_handler": "agentic_core.graph",
}

if _typing.TYPE_CHECKING:
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

    __version__: str
else:

    def __getattr__(name: str) -> object:
        module_name = _LAZY.get(name)
        if module_name is not None:
            import importlib

            value = getattr(importlib.import_module(module_name), name)
        elif name == "__version__":
            # importlib.metadata costs ~30 ms to import: read the version only when asked.
            from importlib.metadata import version

            value = version("agentic-core")
        else:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        globals()[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*globals(), *__all__})
