from agentic_bus._a2a._agent import A2AAgent as A2AAgent
from agentic_bus._a2a._errors import A2AConnectionError as A2AConnectionError
from agentic_bus._a2a._errors import A2AError as A2AError
from agentic_bus._a2a._errors import A2AServeError as A2AServeError
from agentic_bus._a2a._errors import A2ATaskError as A2ATaskError
from agentic_bus._a2a._errors import A2ATimeoutError as A2ATimeoutError
from agentic_bus._a2a._serve import A2AApp as A2AApp
from agentic_bus._a2a._serve import serve_a2a as serve_a2a
from agentic_bus._agent_proxy import ProxyAgent as ProxyAgent
from agentic_bus._agent_proxy import RemoteThreadStore as RemoteThreadStore
from agentic_bus._agent_server import AgentServer as AgentServer
from agentic_bus._agent_server import serve_agent as serve_agent
from agentic_bus._agent_wire import RemoteAgentError as RemoteAgentError
from agentic_bus._bus import NatsBus as NatsBus
from agentic_bus._bus import NatsSubscription as NatsSubscription
from agentic_bus._connect import connect_nats as connect_nats
from agentic_bus._errors import CoordinatorFencedError as CoordinatorFencedError
from agentic_bus._errors import NatsConnectionError as NatsConnectionError
from agentic_bus._errors import NoWorkerError as NoWorkerError
from agentic_bus._errors import PayloadTooLargeError as PayloadTooLargeError
from agentic_bus._events._replay import replay_events as replay_events
from agentic_bus._events._sink import NatsEventSink as NatsEventSink
from agentic_bus._kv._checkpoints import NatsCheckpointStore as NatsCheckpointStore
from agentic_bus._kv._checkpoints import RunHead as RunHead
from agentic_bus._kv._state import NatsKVStateStore as NatsKVStateStore
from agentic_bus._pool import PoolSettings as PoolSettings
from agentic_bus._requests import PendingRequest as PendingRequest
from agentic_bus._requests import answer_request as answer_request
from agentic_bus._runtime import NatsRuntime as NatsRuntime
from agentic_bus._subjects import Subjects as Subjects
from agentic_bus._subjects import subject_token as subject_token
from agentic_bus._worker import Worker as Worker

__version__: str
__all__: list[str]
