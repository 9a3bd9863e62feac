"""The agent layer: chat agents with tools, threads, memory, reducers, agents in workflows."""

from agentic_core.agents._agent import ChatAgent
from agentic_core.agents._agent_executor import AgentExecutor, AgentExecutorResponse
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
from agentic_core.agents._memory_types import Memory, MemoryCategory, MemoryContext, MemoryProvider
from agentic_core.agents._messages import (
    ChatMessage,
    Content,
    FunctionCallContent,
    FunctionResultContent,
    Role,
    TextContent,
    UsageDetails,
)
from agentic_core.agents._reducer_types import ChatReducer
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
from agentic_core.agents._tool_protocol import Tool
from agentic_core.agents._tools import FunctionTool, tool
from agentic_core.agents._workflow_agent import WorkflowAgent

__all__ = [
    "Agent",
    "AgentExecutor",
    "AgentExecutorResponse",
    "AgentResponse",
    "AgentResponseUpdate",
    "AgentThread",
    "BaseChatClient",
    "ChatAgent",
    "ChatClient",
    "ChatMessage",
    "ChatMessageStore",
    "ChatOptions",
    "ChatReducer",
    "ChatResponse",
    "ChatResponseUpdate",
    "Content",
    "ContinuationToken",
    "FinishReason",
    "FunctionCallContent",
    "FunctionResultContent",
    "FunctionTool",
    "InMemoryChatMessageStore",
    "InMemoryMemoryProvider",
    "Memory",
    "MemoryCategory",
    "MemoryContext",
    "MemoryProvider",
    "MessageCountingReducer",
    "NoOpMemoryProvider",
    "NoOpReducer",
    "Role",
    "SlidingWindowReducer",
    "StateStoreMemoryProvider",
    "StateStoreMessageStore",
    "SummarizingReducer",
    "TextContent",
    "TokenCountingReducer",
    "Tool",
    "ToolCallDelta",
    "UsageDetails",
    "WorkflowAgent",
    "tool",
]
