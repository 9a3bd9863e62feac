"""What a task is and what doing it gave: the payloads agents and the orchestrator exchange.

These are the roadmap-v1 types (``TaskPayload``, ``ResultPayload``, ``ResultMetrics``) as
pydantic models: they cross process boundaries (NATS, checkpoints) as JSON. A result's files
are core's :class:`agentic_core.Artifact` (what a sandboxed program wrote to ``out/``).
"""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agentic_core import Artifact


class ExecutionMode(StrEnum):
    """When a :class:`TaskAgent` runs the code its model wrote.

    ``ALWAYS`` runs it; ``NEVER`` never does; ``AUTO`` follows the model's ``[EXECUTE]`` /
    ``[NO_EXECUTE]`` marker (no marker: not run); ``TASK`` (the default) decides from the task's
    action: run/test/build/... run, review/explain/... do not, anything else does not (least
    privilege).
    """

    ALWAYS = "always"
    NEVER = "never"
    AUTO = "auto"
    TASK = "task"


class ResultStatus(StrEnum):
    """How a task (or an orchestrator workflow) ended."""

    SUCCESS = "success"
    PARTIAL = "partial"
    FAILURE = "failure"


class TaskPayload(BaseModel):
    """A task for an agent: an action verb, its specification, inputs and constraints."""

    model_config = ConfigDict(extra="forbid")

    action: str
    """What to do, a verb first: ``"generate"``, ``"run tests"``, ``"review"``."""
    spec: Any = Field(default_factory=dict[str, Any])
    """The specification: free text or any JSON value."""
    inputs: dict[str, Any] | None = None
    """Data the task works on (an orchestrator fills it from earlier steps' results)."""
    constraints: list[str] = Field(default_factory=list[str])

    def to_prompt(self) -> str:
        """The task as a prompt: action, specification, inputs and constraints, in sections."""
        spec = self.spec if isinstance(self.spec, str) else json.dumps(self.spec, indent=2)
        parts = [f"## Action: {self.action}", f"## Specification:\n{spec}"]
        if self.inputs:
            parts.append(f"## Inputs:\n{json.dumps(self.inputs, indent=2, default=str)}")
        if self.constraints:
            parts.append("## Constraints:\n- " + "\n- ".join(self.constraints))
        return "\n\n".join(parts)


class ResultMetrics(BaseModel):
    """What one task cost."""

    execution_time_s: float = 0.0
    tokens_used: int | None = None


class ResultPayload(BaseModel):
    """What an agent made of a task: status, data, files, metrics and the error when it failed."""

    status: ResultStatus
    data: Any = None
    """For a TaskAgent: ``{"output", "code", "language", "executed"}`` (and ``"stderr"``,
    ``"exit_code"`` once executed)."""
    artifacts: list[Artifact] = Field(default_factory=list[Artifact])
    metrics: ResultMetrics = Field(default_factory=ResultMetrics)
    error: str | None = None

    @property
    def ok(self) -> bool:
        """The task succeeded."""
        return self.status is ResultStatus.SUCCESS
