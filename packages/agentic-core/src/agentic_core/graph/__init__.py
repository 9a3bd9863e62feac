"""The graph engine: executors, edges, the superstep runner, runtimes, events."""

from agentic_core.graph._builder import WorkflowBuilder
from agentic_core.graph._context import WorkflowContext
from agentic_core.graph._edges import Case, Default, Edge, EdgeKind
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
from agentic_core.graph._invocation import ExecutorErrorInfo, Invocation, InvocationResult
from agentic_core.graph._runtime import LocalRuntime, Runtime, SerializingRuntime
from agentic_core.graph._serialization import TypeRegistry
from agentic_core.graph._subworkflow import SubWorkflowExecutor
from agentic_core.graph._workflow import Workflow, WorkflowRunResult

__all__ = [
    "AgentRunUpdateEvent",
    "Case",
    "Default",
    "Edge",
    "EdgeKind",
    "Executor",
    "ExecutorCompletedEvent",
    "ExecutorErrorInfo",
    "ExecutorFailedEvent",
    "ExecutorInvokedEvent",
    "ExecutorKind",
    "FanInIncompleteEvent",
    "FunctionExecutor",
    "Invocation",
    "InvocationResult",
    "LocalRuntime",
    "RequestInfoEvent",
    "RetryPolicy",
    "Runtime",
    "SerializingRuntime",
    "SubWorkflowExecutor",
    "SuperstepCompletedEvent",
    "SuperstepStartedEvent",
    "TypeRegistry",
    "Workflow",
    "WorkflowBuilder",
    "WorkflowCompletedEvent",
    "WorkflowContext",
    "WorkflowEvent",
    "WorkflowFailedEvent",
    "WorkflowOutputEvent",
    "WorkflowRunResult",
    "WorkflowRunState",
    "WorkflowStartedEvent",
    "executor",
    "handler",
    "response_handler",
]
