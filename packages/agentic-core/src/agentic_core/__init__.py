"""agentic-core.

Graph workflow engine, agent layer and protocols for agentic multi-agent systems.

Public names load lazily, on first use: ``import agentic_core`` stays cheap, and a program
pays only for the parts it touches.
"""

import typing as _typing

__all__ = [
    "Agent",
    "AgentCoreError",
    "AgentError",
    "AgentExecutor",
    "AgentExecutorResponse",
    "AgentResponse",
    "AgentResponseUpdate",
    "AgentRunUpdateEvent",
    "AgentThread",
    "Artifact",
    "BaseChatClient",
    "Case",
    "ChatAgent",
    "ChatClient",
    "ChatMessage",
    "ChatMessageStore",
    "ChatOptions",
    "ChatReducer",
    "ChatResponse",
    "ChatResponseUpdate",
    "Checkpoint",
    "CheckpointError",
    "CheckpointMetadata",
    "CheckpointStore",
    "Content",
    "ContinuationToken",
    "Default",
    "ExecutionResult",
    "Executor",
    "ExecutorCompletedEvent",
    "ExecutorError",
    "ExecutorErrorInfo",
    "ExecutorFailedEvent",
    "ExecutorInvokedEvent",
    "ExecutorKind",
    "FanInIncompleteEvent",
    "FileCheckpointStore",
    "FinishReason",
    "FunctionCallContent",
    "FunctionExecutor",
    "FunctionResultContent",
    "FunctionTool",
    "GraphValidationError",
    "InMemoryChatMessageStore",
    "InMemoryCheckpointStore",
    "InMemoryMemoryProvider",
    "InMemoryStateStore",
    "IncompatibleCheckpointError",
    "InteractiveSandbox",
    "Invocation",
    "InvocationResult",
    "LocalRuntime",
    "MaxSuperstepsExceededError",
    "Memory",
    "MemoryCategory",
    "MemoryContext",
    "MemoryProvider",
    "MessageCountingReducer",
    "NoOpMemoryProvider",
    "NoOpReducer",
    "RequestInfoEvent",
    "RetryPolicy",
    "Role",
    "Runtime",
    "Sandbox",
    "SandboxProcess",
    "SerializationError",
    "SerializingRuntime",
    "SlidingWindowReducer",
    "StateStore",
    "StateStoreCheckpointStore",
    "StateStoreMemoryProvider",
    "StateStoreMessageStore",
    "SubWorkflowExecutor",
    "SummarizingReducer",
    "SuperstepCompletedEvent",
    "SuperstepStartedEvent",
    "TextContent",
    "TokenCountingReducer",
    "Tool",
    "ToolCallDelta",
    "ToolError",
    "UsageDetails",
    "Workflow",
    "WorkflowAgent",
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
    "tool",
]

# Public name -> the module that defines it (imported on first access).
_LAZY: dict[str, str] = {
    "Agent": "agentic_core.agents._responses",
    "AgentCoreError": "agentic_core._errors",
    "AgentError": "agentic_core._errors",
    "AgentExecutor": "agentic_core.agents._agent_executor",
    "AgentExecutorResponse": "agentic_core.agents._agent_executor",
    "AgentResponse": "agentic_core.agents._responses",
    "AgentResponseUpdate": "agentic_core.agents._responses",
    "AgentRunUpdateEvent": "agentic_core.graph._events",
    "AgentThread": "agentic_core.agents._thread",
    "Artifact": "agentic_core._sandbox",
    "BaseChatClient": "agentic_core.agents._chat",
    "Case": "agentic_core.graph._edges",
    "ChatAgent": "agentic_core.agents._agent",
    "ChatClient": "agentic_core.agents._chat",
    "ChatMessage": "agentic_core.agents._messages",
    "ChatMessageStore": "agentic_core.agents._thread",
    "ChatOptions": "agentic_core.agents._chat",
    "ChatReducer": "agentic_core.agents._reducer_types",
    "ChatResponse": "agentic_core.agents._chat",
    "ChatResponseUpdate": "agentic_core.agents._chat",
    "Checkpoint": "agentic_core.stores._checkpoint_model",
    "CheckpointError": "agentic_core._errors",
    "CheckpointMetadata": "agentic_core.stores._checkpoint_model",
    "CheckpointStore": "agentic_core.protocols",
    "Content": "agentic_core.agents._messages",
    "ContinuationToken": "agentic_core.agents._responses",
    "Default": "agentic_core.graph._edges",
    "ExecutionResult": "agentic_core._sandbox",
    "Executor": "agentic_core.graph._executor",
    "ExecutorCompletedEvent": "agentic_core.graph._events",
    "ExecutorError": "agentic_core._errors",
    "ExecutorErrorInfo": "agentic_core.graph._invocation",
    "ExecutorFailedEvent": "agentic_core.graph._events",
    "ExecutorInvokedEvent": "agentic_core.graph._events",
    "ExecutorKind": "agentic_core.graph._executor",
    "FanInIncompleteEvent": "agentic_core.graph._events",
    "FileCheckpointStore": "agentic_core.stores._file_checkpoint",
    "FinishReason": "agentic_core.agents._chat",
    "FunctionCallContent": "agentic_core.agents._messages",
    "FunctionExecutor": "agentic_core.graph._executor",
    "FunctionResultContent": "agentic_core.agents._messages",
    "FunctionTool": "agentic_core.agents._tools",
    "GraphValidationError": "agentic_core._errors",
    "InMemoryChatMessageStore": "agentic_core.agents._thread",
    "InMemoryCheckpointStore": "agentic_core.stores._memory_checkpoint",
    "InMemoryMemoryProvider": "agentic_core.agents._memory",
    "InMemoryStateStore": "agentic_core.stores._memory_state",
    "IncompatibleCheckpointError": "agentic_core._errors",
    "InteractiveSandbox": "agentic_core._sandbox",
    "Invocation": "agentic_core.graph._invocation",
    "InvocationResult": "agentic_core.graph._invocation",
    "LocalRuntime": "agentic_core.graph._runtime",
    "MaxSuperstepsExceededError": "agentic_core._errors",
    "Memory": "agentic_core.agents._memory_types",
    "MemoryCategory": "agentic_core.agents._memory_types",
    "MemoryContext": "agentic_core.agents._memory_types",
    "MemoryProvider": "agentic_core.agents._memory_types",
    "MessageCountingReducer": "agentic_core.agents._reducers",
    "NoOpMemoryProvider": "agentic_core.agents._memory",
    "NoOpReducer": "agentic_core.agents._reducers",
    "RequestInfoEvent": "agentic_core.graph._events",
    "RetryPolicy": "agentic_core.graph._executor",
    "Role": "agentic_core.agents._messages",
    "Runtime": "agentic_core.graph._runtime",
    "Sandbox": "agentic_core._sandbox",
    "SandboxProcess": "agentic_core._sandbox",
    "SerializationError": "agentic_core._errors",
    "SerializingRuntime": "agentic_core.graph._runtime",
    "SlidingWindowReducer": "agentic_core.agents._reducers",
    "StateStore": "agentic_core.protocols",
    "StateStoreCheckpointStore": "agentic_core.stores._state_checkpoint",
    "StateStoreMemoryProvider": "agentic_core.agents._memory",
    "StateStoreMessageStore": "agentic_core.agents._thread",
    "SubWorkflowExecutor": "agentic_core.graph._subworkflow",
    "SummarizingReducer": "agentic_core.agents._reducers",
    "SuperstepCompletedEvent": "agentic_core.graph._events",
    "SuperstepStartedEvent": "agentic_core.graph._events",
    "TextContent": "agentic_core.agents._messages",
    "TokenCountingReducer": "agentic_core.agents._reducers",
    "Tool": "agentic_core.agents._tool_protocol",
    "ToolCallDelta": "agentic_core.agents._chat",
    "ToolError": "agentic_core._errors",
    "UsageDetails": "agentic_core.agents._messages",
    "Workflow": "agentic_core.graph._workflow",
    "WorkflowAgent": "agentic_core.agents._workflow_agent",
    "WorkflowBuilder": "agentic_core.graph._builder",
    "WorkflowCompletedEvent": "agentic_core.graph._events",
    "WorkflowContext": "agentic_core.graph._context",
    "WorkflowEvent": "agentic_core.graph._events",
    "WorkflowExecutionError": "agentic_core._errors",
    "WorkflowFailedEvent": "agentic_core.graph._events",
    "WorkflowOutputEvent": "agentic_core.graph._events",
    "WorkflowRequestError": "agentic_core._errors",
    "WorkflowRunResult": "agentic_core.graph._workflow",
    "WorkflowRunState": "agentic_core.graph._events",
    "WorkflowStartedEvent": "agentic_core.graph._events",
    "configure_logging": "agentic_core._logging",
    "executor": "agentic_core.graph._executor",
    "handler": "agentic_core.graph._executor",
    "response_handler": "agentic_core.graph._executor",
    "tool": "agentic_core.agents._tools",
}

if _typing.TYPE_CHECKING:
    from agentic_core._errors import (
        AgentCoreError,
        AgentError,
        CheckpointError,
        ExecutorError,
        GraphValidationError,
        IncompatibleCheckpointError,
        MaxSuperstepsExceededError,
        SerializationError,
        ToolError,
        WorkflowExecutionError,
        WorkflowRequestError,
    )
    from agentic_core._logging import (
        configure_logging,
    )
    from agentic_core._sandbox import (
        Artifact,
        ExecutionResult,
        InteractiveSandbox,
        Sandbox,
        SandboxProcess,
    )
    from agentic_core.agents._agent import (
        ChatAgent,
    )
    from agentic_core.agents._agent_executor import (
        AgentExecutor,
        AgentExecutorResponse,
    )
    from agentic_core.agents._chat import (
        BaseChatClient,
        ChatClient,
        ChatOptions,
        ChatResponse,
        ChatResponseUpdate,
        FinishReason,
        ToolCallDelta,
    )
    from agentic_core.agents._memory import (
        InMemoryMemoryProvider,
        NoOpMemoryProvider,
        StateStoreMemoryProvider,
    )
    from agentic_core.agents._memory_types import (
        Memory,
        MemoryCategory,
        MemoryContext,
        MemoryProvider,
    )
    from agentic_core.agents._messages import (
        ChatMessage,
        Content,
        FunctionCallContent,
        FunctionResultContent,
        Role,
        TextContent,
        UsageDetails,
    )
    from agentic_core.agents._reducer_types import (
        ChatReducer,
    )
    from agentic_core.agents._reducers import (
        MessageCountingReducer,
        NoOpReducer,
        SlidingWindowReducer,
        SummarizingReducer,
        TokenCountingReducer,
    )
    from agentic_core.agents._responses import (
        Agent,
        AgentResponse,
        AgentResponseUpdate,
        ContinuationToken,
    )
    from agentic_core.agents._thread import (
        AgentThread,
        ChatMessageStore,
        InMemoryChatMessageStore,
        StateStoreMessageStore,
    )
    from agentic_core.agents._tool_protocol import (
        Tool,
    )
    from agentic_core.agents._tools import (
        FunctionTool,
        tool,
    )
    from agentic_core.agents._workflow_agent import (
        WorkflowAgent,
    )
    from agentic_core.graph._builder import (
        WorkflowBuilder,
    )
    from agentic_core.graph._context import (
        WorkflowContext,
    )
    from agentic_core.graph._edges import (
        Case,
        Default,
    )
    from agentic_core.graph._events import (
        AgentRunUpdateEvent,
        ExecutorCompletedEvent,
        ExecutorFailedEvent,
        ExecutorInvokedEvent,
        FanInIncompleteEvent,
        RequestInfoEvent,
        SuperstepCompletedEvent,
        SuperstepStartedEvent,
        WorkflowCompletedEvent,
        WorkflowEvent,
        WorkflowFailedEvent,
        WorkflowOutputEvent,
        WorkflowRunState,
        WorkflowStartedEvent,
    )
    from agentic_core.graph._executor import (
        Executor,
        ExecutorKind,
        FunctionExecutor,
        RetryPolicy,
        executor,
        handler,
        response_handler,
    )
    from agentic_core.graph._invocation import (
        ExecutorErrorInfo,
        Invocation,
        InvocationResult,
    )
    from agentic_core.graph._runtime import (
        LocalRuntime,
        Runtime,
        SerializingRuntime,
    )
    from agentic_core.graph._subworkflow import (
        SubWorkflowExecutor,
    )
    from agentic_core.graph._workflow import (
        Workflow,
        WorkflowRunResult,
    )
    from agentic_core.protocols import (
        CheckpointStore,
        StateStore,
    )
    from agentic_core.stores._checkpoint_model import (
        Checkpoint,
        CheckpointMetadata,
    )
    from agentic_core.stores._file_checkpoint import (
        FileCheckpointStore,
    )
    from agentic_core.stores._memory_checkpoint import (
        InMemoryCheckpointStore,
    )
    from agentic_core.stores._memory_state import (
        InMemoryStateStore,
    )
    from agentic_core.stores._state_checkpoint import (
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
