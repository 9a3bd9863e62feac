"""From a checked run configuration to a core ``Workflow``: models, tools, agents, the pattern.

The patterns are this package's builders (``SequentialBuilder`` ...); models come through the
registry (``_models``) and MCP tools through the ``agentic.tool_sources`` entry point, opened by
the caller (they need a connection kept for the whole run).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from agentic_core import (
    AgentExecutor,
    ChatAgent,
    ChatClient,
    ObjectReferenceError,
    Tool,
    Workflow,
    WorkflowBuilder,
    load_object,
)
from agentic_orchestrator._cli._config import (
    ConcurrentPattern,
    DelegatingPattern,
    GroupChatPattern,
    HandoffPattern,
    LoadedConfig,
    MagenticPattern,
    Path_,
    RunAgentSpec,
    SequentialPattern,
)
from agentic_orchestrator._cli._errors import ConfigError, UsageError
from agentic_orchestrator._cli._models import choose_model, resolve_model
from agentic_orchestrator._concurrent import ConcurrentBuilder
from agentic_orchestrator._delegating import DelegatingAgent
from agentic_orchestrator._errors import OrchestratorError
from agentic_orchestrator._group_chat import GroupChatBuilder
from agentic_orchestrator._handoff import HandoffBuilder
from agentic_orchestrator._magentic import MagenticBuilder
from agentic_orchestrator._selectors import llm_selector, round_robin_selector, smart_selector
from agentic_orchestrator._sequential import SequentialBuilder
from agentic_orchestrator._terminations import keyword_termination

__all__ = ["ModelPool", "build_agents", "build_workflow"]

ToolLike = Tool | Callable[..., Any]


class ModelPool:
    """One client per distinct model of a run (a local model loads once, whoever names it).

    ``override`` (``--model``) answers for every agent; otherwise a ``[models]`` name or a spec,
    and agents naming no model get the one :func:`choose_model` picks.
    """

    def __init__(
        self,
        loaded: LoadedConfig,
        *,
        override: str | None = None,
        environ: Mapping[str, str] = os.environ,
    ) -> None:
        self._loaded = loaded
        self._override = override
        self._environ = environ
        self._clients: dict[str, tuple[str, ChatClient]] = {}

    @property
    def labels(self) -> list[str]:
        """The models in use, as human labels (no keys)."""
        return sorted({label for label, _ in self._clients.values()})

    @property
    def clients(self) -> list[ChatClient]:
        """The distinct clients made so far."""
        return [client for _, client in self._clients.values()]

    def client(self, reference: str | None, path: Path_) -> ChatClient:
        """The client for a config's model reference found at ``path``."""
        key = self._override or reference or ""
        if key not in self._clients:
            try:
                if self._override or reference is None:
                    made = choose_model(self._override, environ=self._environ)
                else:
                    spec = self._loaded.config.models.get(reference, reference)
                    made = resolve_model(spec, environ=self._environ)
            except UsageError as exc:
                if self._override:
                    raise UsageError(f"--model {self._override}: {exc}") from None
                raise self._loaded.error(path, str(exc)) from None
            self._clients[key] = made
        return self._clients[key][1]


def build_workflow(
    loaded: LoadedConfig,
    models: ModelPool,
    mcp_tools: Mapping[str, Sequence[Tool]] | None = None,
) -> Workflow:
    """The configured pattern as a ``Workflow`` (``ConfigError`` names the culprit's key)."""
    config = loaded.config
    indexed = {agent.name: (index, agent) for index, agent in enumerate(config.agents)}
    agents = {
        name: _agent(loaded, index, agent, models, mcp_tools or {})
        for name, (index, agent) in indexed.items()
    }
    pattern = config.pattern
    team = [agents[name] for name in config.participants()]
    try:
        if isinstance(pattern, SequentialPattern):
            return SequentialBuilder(participants=team, name=config.name).build()
        if isinstance(pattern, ConcurrentPattern):
            return ConcurrentBuilder(participants=team, name=config.name).build()
        if isinstance(pattern, GroupChatPattern):
            return _group_chat(pattern, team, models, config.name)
        if isinstance(pattern, HandoffPattern):
            builder = HandoffBuilder(
                participants=team, name=config.name, max_handoffs=pattern.max_handoffs
            )
            if pattern.start is not None:
                builder.with_start_agent(pattern.start)
            for source, targets in pattern.routes.items():
                builder.add_handoff(source, targets)
            return builder.build()
        if isinstance(pattern, MagenticPattern):
            manager = models.client(pattern.manager_model, ("pattern", "manager_model"))
            return MagenticBuilder(
                participants=team,
                manager=manager,
                max_rounds=pattern.max_rounds,
                max_stalls=pattern.max_stalls,
                max_resets=pattern.max_resets,
                name=config.name,
            ).build()
        return _delegating(loaded, pattern, team, models, mcp_tools or {})
    except (OrchestratorError, ValueError) as exc:
        if isinstance(exc, ConfigError):
            raise
        raise loaded.error(("pattern",), str(exc)) from None


def _group_chat(
    pattern: GroupChatPattern, team: list[ChatAgent], models: ModelPool, name: str
) -> Workflow:
    builder = GroupChatBuilder(participants=team, name=name).with_max_iterations(pattern.max_rounds)
    if pattern.selector == "llm":
        client = models.client(pattern.selector_model, ("pattern", "selector_model"))
        builder.with_orchestrator_func(llm_selector(client))
    else:
        selector = round_robin_selector if pattern.selector == "round-robin" else smart_selector
        builder.with_orchestrator_func(selector)
    if pattern.termination_keyword:
        builder.with_termination_condition(keyword_termination(pattern.termination_keyword))
    return builder.build()


def _delegating(
    loaded: LoadedConfig,
    pattern: DelegatingPattern,
    team: list[ChatAgent],
    models: ModelPool,
    mcp_tools: Mapping[str, Sequence[Tool]],
) -> Workflow:
    index, lead = next((i, a) for i, a in enumerate(loaded.config.agents) if a.name == pattern.lead)
    lead_agent = DelegatingAgent(
        models.client(lead.model, ("agents", index, "model")),
        team,
        instructions=lead.instructions or None,
        name=lead.name,
        description=lead.description,
        tools=_tools(loaded, index, lead, mcp_tools),
        delegation_timeout_s=pattern.delegation_timeout_s,
        max_parallel=pattern.max_parallel,
        max_tool_iterations=lead.max_tool_iterations,
    )
    node = AgentExecutor(lead_agent, id=lead.name, output_response=True)
    return WorkflowBuilder(loaded.config.name).set_start_executor(node).build()


def _agent(
    loaded: LoadedConfig,
    index: int,
    agent: RunAgentSpec,
    models: ModelPool,
    mcp_tools: Mapping[str, Sequence[Tool]],
) -> ChatAgent:
    client = models.client(agent.model, ("agents", index, "model"))
    try:
        return ChatAgent(
            client,
            agent.instructions or None,
            name=agent.name,
            description=agent.description,
            tools=_tools(loaded, index, agent, mcp_tools),
            max_tool_iterations=agent.max_tool_iterations,
        )
    except ConfigError:
        raise
    except Exception as exc:  # noqa: BLE001 - a tool the agent cannot take: say which agent
        raise loaded.error(("agents", index, "tools"), f"{type(exc).__name__}: {exc}") from None


def _tools(
    loaded: LoadedConfig, index: int, agent: RunAgentSpec, mcp_tools: Mapping[str, Sequence[Tool]]
) -> list[ToolLike]:
    tools: list[ToolLike] = []
    for position, spec in enumerate(agent.tools):
        path: Path_ = ("agents", index, "tools", position)
        kind, _, reference = spec.partition(":")
        if kind == "mcp":
            tools.extend(mcp_tools.get(reference, ()))
            continue
        try:
            found = load_object(reference, what="tool")
        except ObjectReferenceError as exc:
            raise loaded.error(path, str(exc)) from None
        if not isinstance(found, Tool) and not callable(found):
            raise loaded.error(path, f"{spec} is neither a Tool nor a function")
        tools.append(found)
    return tools


def build_agents(
    loaded: LoadedConfig,
    models: ModelPool,
    mcp_tools: Mapping[str, Sequence[Tool]] | None = None,
) -> dict[str, ChatAgent]:
    """Each ``[[agents]]`` table as a ``ChatAgent`` of its own, outside any pattern (its model,
    instructions and tools): what ``agentic serve`` serves beside the pattern's workflow."""
    return {
        agent.name: _agent(loaded, index, agent, models, mcp_tools or {})
        for index, agent in enumerate(loaded.config.agents)
    }
