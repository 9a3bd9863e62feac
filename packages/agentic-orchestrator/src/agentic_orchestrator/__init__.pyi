# Earlier names stay exported as aliases ("# = NewName"): the same object as the new name.
from agentic_core import Artifact as Artifact

# --- DelegatingAgent and AgentSpec
from agentic_orchestrator._agent_spec import AgentSpec as AgentSpec
from agentic_orchestrator._agent_spec import ModelSpec as ModelSpec
from agentic_orchestrator._agent_spec import load_agent_specs as load_agent_specs

# --- code generation (and the TypeScript toolchain)
from agentic_orchestrator._codegen._arbiter import Arbiter as Arbiter
from agentic_orchestrator._codegen._arbiter import ArbiterDecisionEvent as ArbiterDecisionEvent
from agentic_orchestrator._codegen._assembler import CodeAssemblerExecutor as CodeAssemblerExecutor
from agentic_orchestrator._codegen._decomposer import CodePlan as CodePlan
from agentic_orchestrator._codegen._decomposer import Subtask as Subtask
from agentic_orchestrator._codegen._decomposer import TaskDecomposer as TaskDecomposer
from agentic_orchestrator._codegen._fingerprint import ErrorFingerprinter as ErrorFingerprinter
from agentic_orchestrator._codegen._generator import LLMGeneratorExecutor as LLMGeneratorExecutor
from agentic_orchestrator._codegen._loop import code_loop as code_loop
from agentic_orchestrator._codegen._models import CODEGEN_PARTS_KEY as CODEGEN_PARTS_KEY
from agentic_orchestrator._codegen._models import AssembledCode as AssembledCode
from agentic_orchestrator._codegen._models import CodeGenResult as CodeGenResult
from agentic_orchestrator._codegen._models import CodeTask as CodeTask
from agentic_orchestrator._codegen._models import CodeValidatedEvent as CodeValidatedEvent
from agentic_orchestrator._codegen._models import GeneratedCode as GeneratedCode
from agentic_orchestrator._codegen._models import ValidationResult as ValidationResult
from agentic_orchestrator._codegen._models import code_failed as code_failed
from agentic_orchestrator._codegen._models import code_passed as code_passed
from agentic_orchestrator._codegen._models import failed as failed  # = code_failed
from agentic_orchestrator._codegen._models import is_simple as is_simple  # = repair_is_simple
from agentic_orchestrator._codegen._models import passed as passed  # = code_passed
from agentic_orchestrator._codegen._models import repair_is_simple as repair_is_simple
from agentic_orchestrator._codegen._typescript import ToolchainError as ToolchainError
from agentic_orchestrator._codegen._typescript import install_typescript as install_typescript
from agentic_orchestrator._codegen._validators import (
    CompileValidatorExecutor as CompileValidatorExecutor,
)
from agentic_orchestrator._codegen._validators import TestValidatorExecutor as TestValidatorExecutor

# --- patterns, the DAG Orchestrator, errors, the OpenAI-compatible endpoint
from agentic_orchestrator._concurrent import ConcurrentBuilder as ConcurrentBuilder
from agentic_orchestrator._concurrent import ParticipantResult as ParticipantResult
from agentic_orchestrator._dag import DagResult as DagResult
from agentic_orchestrator._dag import DagWorkflow as DagWorkflow
from agentic_orchestrator._dag import StepResult as StepResult
from agentic_orchestrator._dag import Workflow as Workflow  # = DagWorkflow
from agentic_orchestrator._dag import WorkflowResult as WorkflowResult  # = DagResult
from agentic_orchestrator._dag import WorkflowStep as WorkflowStep
from agentic_orchestrator._delegating import DelegatingAgent as DelegatingAgent
from agentic_orchestrator._errors import CodeGenerationError as CodeGenerationError
from agentic_orchestrator._errors import CodePlanError as CodePlanError
from agentic_orchestrator._errors import DelegationError as DelegationError
from agentic_orchestrator._errors import DependencyCycleError as DependencyCycleError
from agentic_orchestrator._errors import OrchestrationConfigError as OrchestrationConfigError
from agentic_orchestrator._errors import OrchestratorError as OrchestratorError
from agentic_orchestrator._errors import SpeakerSelectionError as SpeakerSelectionError
from agentic_orchestrator._group_chat import GroupChatBuilder as GroupChatBuilder
from agentic_orchestrator._group_chat_state import GroupChatState as GroupChatState
from agentic_orchestrator._handoff import HandoffBuilder as HandoffBuilder
from agentic_orchestrator._handoff import handoff as handoff
from agentic_orchestrator._handoff_turns import HandoffUserRequest as HandoffUserRequest
from agentic_orchestrator._magentic import MagenticBuilder as MagenticBuilder
from agentic_orchestrator._magentic_review import (
    MagenticPlanReviewRequest as MagenticPlanReviewRequest,
)
from agentic_orchestrator._magentic_review import (
    MagenticPlanReviewResponse as MagenticPlanReviewResponse,
)
from agentic_orchestrator._magentic_review import MagenticProgressLedger as MagenticProgressLedger
from agentic_orchestrator._openai._app import create_openai_app as create_openai_app
from agentic_orchestrator._openai._serve import serve_openai as serve_openai
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
from agentic_orchestrator._supervisor import create_supervisor as create_supervisor

# --- TaskAgent
from agentic_orchestrator._task_agent import AgentConfig as AgentConfig  # = TaskAgentConfig
from agentic_orchestrator._task_agent import AgentMetrics as AgentMetrics
from agentic_orchestrator._task_agent import AgentState as AgentState
from agentic_orchestrator._task_agent import AgentStatus as AgentStatus
from agentic_orchestrator._task_agent import TaskAgent as TaskAgent
from agentic_orchestrator._task_agent import TaskAgentConfig as TaskAgentConfig
from agentic_orchestrator._terminations import any_termination as any_termination
from agentic_orchestrator._terminations import keyword_termination as keyword_termination
from agentic_orchestrator._terminations import max_messages_termination as max_messages_termination
from agentic_orchestrator._terminations import max_rounds_termination as max_rounds_termination

# --- the run viewer (agentic viewer; web server in the extra agentic-orchestrator[viewer])
from agentic_orchestrator._viewer._errors import ViewerError as ViewerError
from agentic_orchestrator._viewer._run_viewer import RunViewer as RunViewer

__version__: str
__all__: list[str]
