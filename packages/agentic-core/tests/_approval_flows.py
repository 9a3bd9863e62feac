"""The release flow the tool-approval tests drive: a ``deploy`` tool that needs approval, the
model turns asking for it, and the one-agent workflow around it.

Imported by the tests (``from ._approval_flows import ...``) and by ``tool_approval_child.py``,
which runs as a script (``from _approval_flows import ...``: its folder is on ``sys.path``).
"""

from __future__ import annotations

from typing import Any

from agentic_core import (
    AgentExecutor,
    ChatAgent,
    ChatMessage,
    CheckpointStore,
    FunctionCallContent,
    Workflow,
    WorkflowBuilder,
    tool,
)
from agentic_core.testing import FunctionChatClient, ScriptedChatClient

RAN: list[dict[str, str]] = []
"""What ``deploy`` ran with, in order (tests clear it in their ``setup_function``)."""


@tool(approval_mode="always_require")
def deploy(service: str, version: str) -> str:
    """Deploy a service (needs approval)."""
    RAN.append({"service": service, "version": version})
    return f"deployed {service} {version}"


def _call(call_id: str, service: str, version: str) -> FunctionCallContent:
    arguments = {"service": service, "version": version}
    return FunctionCallContent(call_id=call_id, name="deploy", arguments=arguments)


def deploy_call(call_id: str = "c1", version: str = "2.0") -> ChatMessage:
    """A model turn deploying service ``api`` at ``version``."""
    return ChatMessage.assistant(contents=[_call(call_id, "api", version)])


def deploy_calls(*call_ids: str) -> ChatMessage:
    """A model turn deploying service ``api-<id>`` 2.0 once per call id."""
    return ChatMessage.assistant(contents=[_call(c, f"api-{c}", "2.0") for c in call_ids])


def releaser(*replies: str | ChatMessage) -> ChatAgent:
    """The agent with the deploy tool, answering with ``replies`` in turn."""
    return ChatAgent(ScriptedChatClient(list(replies)), name="releaser", tools=[deploy])


def release_workflow(
    *replies: str | ChatMessage, store: CheckpointStore | None = None, after: str | None = None
) -> Workflow:
    """The releaser as a workflow (and, with ``after``, a notifier answering that after it)."""
    first = AgentExecutor(releaser(*replies), id="releaser", output_response=after is None)
    builder = WorkflowBuilder("release").set_start_executor(first)
    if after is not None:
        notifier = ChatAgent(ScriptedChatClient([after]), name="notifier")
        second = AgentExecutor(notifier, id="notifier", output_response=True)
        builder = builder.add_edge(first, second)
    if store is not None:
        builder = builder.with_checkpointing(store)
    return builder.build()


def reporting_model(messages: list[ChatMessage], options: Any) -> str | ChatMessage:
    """A model that asks to deploy api 2.0, then reports what the tool said."""
    del options
    results = [r for m in messages for r in m.function_results]
    if results:
        return f"tool said: {results[-1].result}"
    return deploy_call()


def reporting_release(store: CheckpointStore) -> Workflow:
    """The releaser on ``reporting_model``, checkpointed to ``store``."""
    agent = ChatAgent(FunctionChatClient(reporting_model), name="releaser", tools=[deploy])
    executor = AgentExecutor(agent, id="releaser", output_response=True)
    return WorkflowBuilder("release").set_start_executor(executor).with_checkpointing(store).build()
