"""The exception hierarchy of agentic_orchestrator.

::

    OrchestratorError             root: anything a pattern, the orchestrator or an agent here raises
    ├── OrchestrationConfigError  a builder, a step list or an agent spec is wrong (build time;
    │                             also a ValueError); the message names the culprit
    │   └── DependencyCycleError  the orchestrator's steps depend on each other in a circle
    ├── SpeakerSelectionError     a selector or manager agent named no participant it may name
    ├── DelegationError           a delegation cannot run (unknown sub-agent, nested delegation)
    └── CodeGenerationError       a code-generation executor got what it cannot work with
        └── CodePlanError         the model gave no valid plan of subtasks, after retries
"""

from __future__ import annotations

from agentic_core import AgenticError


class OrchestratorError(AgenticError):
    """Root of every error raised by agentic_orchestrator."""


class OrchestrationConfigError(OrchestratorError, ValueError):
    """A pattern, orchestrator workflow or agent spec is wrong; raised at build time."""


class DependencyCycleError(OrchestrationConfigError):
    """Steps of an orchestrator workflow depend on each other in a circle (the message names it)."""


class SpeakerSelectionError(OrchestratorError):
    """A selector or manager agent named a speaker that is not a participant, after retries."""


class DelegationError(OrchestratorError):
    """A delegation cannot run: an unknown sub-agent, or a sub-agent trying to delegate again."""


class CodeGenerationError(OrchestratorError):
    """A code-generation executor got what it cannot work with (e.g. a repair with no task)."""


class CodePlanError(CodeGenerationError):
    """The model gave no valid ``CodePlan`` after the decomposer's retries (says what was wrong)."""
