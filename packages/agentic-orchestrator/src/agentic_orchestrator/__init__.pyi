from agentic_core import Artifact as Artifact

# --- DelegatingAgent and AgentSpec
from agentic_orchestrator._agent_spec import AgentSpec as AgentSpec
from agentic_orchestrator._agent_spec import ModelSpec as ModelSpec
from agentic_orchestrator._agent_spec import load_agent_specs as load_agent_specs

# --- patterns
from agentic_orchestrator._concurrent import ConcurrentBuilder as ConcurrentBuilder
from agentic_orchestrator._concurrent import ParticipantResult as ParticipantResult

# --- Orchestrator (DAG)
from agentic_orchestrator._dag import StepResult as StepResult
from agentic_orchestrator._dag import Workflow as Workflow
from agentic_orchestrator._dag import WorkflowResult as WorkflowResult
from agentic_orchestrator._dag import WorkflowStep as WorkflowStep
from agentic_orchestrator._delegating import DelegatingAgent as DelegatingAgent
from agentic_orchestrator._errors import DelegationError as DelegationError
from agentic_orchestrator._errors import DependencyCycleError as DependencyCycleError
from agentic_orchestrator._errors import OrchestrationConfigError as OrchestrationConfigError
from agentic_orchestrator._errors import OrchestratorError as OrchestratorError
from agentic_orchestrator._errors import SpeakerSelectionError as SpeakerSelectionError
from agentic_orchestrator._group_chat import GroupChatBuilder as GroupChatBuilder
from agentic_orchestrator._group_chat_state import GroupChatState as GroupChatState
from agentic_orchestrator._handoff import HandoffBuilder as HandoffBuilder
from agentic_orchestrator._handoff import HandoffUserRequest as HandoffUserRequest
from agentic_orchestrator._handoff import handoff as handoff
from agentic_orchestrator._magentic import MagenticBuilder as MagenticBuilder
from agentic_orchestrator._orchestrator import AgentRef as AgentRef
from agentic_orchestrator._orchestrator import Orchestrator as Orchestrator
from agentic_orchestrator._payloads import ExecutionMode as ExecutionMode
from agentic_orchestrator._payloads import ResultMetrics as ResultMetrics
from agentic_orchestrator._payloads import ResultPayload as ResultPayload
from agentic_orchestrator._payloads import ResultStatus as ResultStatus
from agentic_orchestrator._payloads import TaskPayload as TaskPayload
from agentic_orchestrator._selectors import llm_selector as llm_selector
from agentic_orchestrator._selectors import no_repeat_selector as no_repeat_selector
from agentic_orchestrator._selectors import round_robin_selector as round_robin_selector
from agentic_orchestrator._selectors import smart_selector as smart_selector
from agentic_orchestrator._sequential import SequentialBuilder as SequentialBuilder

# --- TaskAgent
from agentic_orchestrator._task_agent import AgentConfig as AgentConfig
from agentic_orchestrator._task_agent import AgentMetrics as AgentMetrics
from agentic_orchestrator._task_agent import AgentState as AgentState
from agentic_orchestrator._task_agent import AgentStatus as AgentStatus
from agentic_orchestrator._task_agent import TaskAgent as TaskAgent
from agentic_orchestrator._terminations import any_termination as any_termination
from agentic_orchestrator._terminations import keyword_termination as keyword_termination
from agentic_orchestrator._terminations import max_messages_termination as max_messages_termination
from agentic_orchestrator._terminations import max_rounds_termination as max_rounds_termination

__version__: str
__all__: list[str]
