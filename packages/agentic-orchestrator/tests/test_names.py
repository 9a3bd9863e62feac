"""Renamed public names: each earlier name is kept as an alias of the very same object."""

from __future__ import annotations

import pytest

import agentic_orchestrator

RENAMED = {
    "Workflow": "DagWorkflow",
    "WorkflowResult": "DagResult",
    "passed": "code_passed",
    "failed": "code_failed",
    "is_simple": "repair_is_simple",
    "AgentConfig": "TaskAgentConfig",
}


@pytest.mark.parametrize(("earlier", "new"), sorted(RENAMED.items()))
def test_an_earlier_name_is_the_same_object_as_the_new_one(earlier: str, new: str) -> None:
    assert getattr(agentic_orchestrator, earlier) is getattr(agentic_orchestrator, new)
    assert {earlier, new} <= set(agentic_orchestrator.__all__)


def test_the_dag_workflow_no_longer_shares_core_workflows_name() -> None:
    import agentic_core

    assert agentic_orchestrator.DagWorkflow.__name__ == "DagWorkflow"
    assert agentic_orchestrator.DagWorkflow is not agentic_core.Workflow
