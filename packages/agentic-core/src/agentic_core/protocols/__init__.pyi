from agentic_core.protocols._agent import Agent as Agent
from agentic_core.protocols._bus import MessageBus as MessageBus
from agentic_core.protocols._bus import Subscription as Subscription
from agentic_core.protocols._chat import ChatClient as ChatClient
from agentic_core.protocols._checkpoint import CheckpointStore as CheckpointStore
from agentic_core.protocols._memory import MemoryProvider as MemoryProvider
from agentic_core.protocols._reducer import ChatReducer as ChatReducer
from agentic_core.protocols._runtime import Runtime as Runtime
from agentic_core.protocols._runtime import TypeCodec as TypeCodec
from agentic_core.protocols._runtime import WorkflowGraph as WorkflowGraph
from agentic_core.protocols._sandbox import InteractiveSandbox as InteractiveSandbox
from agentic_core.protocols._sandbox import Sandbox as Sandbox
from agentic_core.protocols._sandbox import SandboxProcess as SandboxProcess
from agentic_core.protocols._state import StateStore as StateStore
from agentic_core.protocols._thread import ChatMessageStore as ChatMessageStore
from agentic_core.protocols._tool import Tool as Tool
from agentic_core.protocols._vector import Embedder as Embedder
from agentic_core.protocols._vector import VectorStore as VectorStore

__all__: list[str]
