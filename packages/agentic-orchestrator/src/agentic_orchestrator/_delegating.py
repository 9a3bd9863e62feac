"""DelegatingAgent: an agent whose ``delegate_task`` tool runs named sub-agents in parallel."""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import structlog

from agentic_core import (
    Agent,
    AgentResponse,
    AgentResponseUpdate,
    AgentThread,
    ChatAgent,
    ChatClient,
    ChatMessage,
    Tool,
)
from agentic_orchestrator._agent_spec import AgentSpec, load_agent_specs
from agentic_orchestrator._errors import DelegationError, OrchestrationConfigError
from agentic_orchestrator._participants import description_of, named_participants

_log = structlog.get_logger(__name__)

DELEGATE_TOOL = "delegate_task"

# Set while a delegated sub-agent runs: a delegate_task call then is a nested delegation.
_delegating: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "agentic_delegating", default=None
)

_INSTRUCTIONS = """You lead a team. Do not do the work yourself: call the delegate_task tool to
give tasks to these sub-agents (several at once when they are independent), then answer the
user from their results.

Sub-agents:
{team}"""


class _DelegateTool:
    """The ``delegate_task`` tool: ``{"tasks": [{"agent": name, "task": text}, ...]}``."""

    name = DELEGATE_TOOL

    def __init__(
        self,
        owner: str,
        agents: Mapping[str, Agent],
        timeout_s: float,
        max_parallel: int | None,
    ) -> None:
        self.owner = owner
        self.agents = dict(agents)
        self.timeout_s = timeout_s
        self.max_parallel = max_parallel
        team = ", ".join(self.agents)
        self.description = (
            f"Run tasks on sub-agents ({team}) in parallel; returns each one's answer or error."
        )
        self.parameters: dict[str, Any] = {
            "type": "object",
            "properties": {
                "tasks": {
                    "type": "array",
                    "minItems": 1,
                    "items": {
                        "type": "object",
                        "properties": {
                            "agent": {"type": "string", "enum": list(self.agents)},
                            "task": {"type": "string"},
                        },
                        "required": ["agent", "task"],
                    },
                }
            },
            "required": ["tasks"],
        }

    async def invoke(self, arguments: Mapping[str, Any]) -> list[dict[str, Any]]:
        """Run every task at once; answers in request order (a failure is an error entry)."""
        outer = _delegating.get()
        if outer is not None:
            raise DelegationError(
                f"{outer!r} is a sub-agent and cannot delegate: the hierarchy is flat"
            )
        tasks = _tasks(arguments)
        unknown = sorted({agent for agent, _ in tasks if agent not in self.agents})
        if unknown:
            raise DelegationError(
                f"no sub-agent named {', '.join(map(repr, unknown))} (sub-agents: "
                f"{', '.join(self.agents)})"
            )
        gate = asyncio.Semaphore(self.max_parallel or len(tasks))
        return list(await asyncio.gather(*(self._one(agent, task, gate) for agent, task in tasks)))

    async def _one(self, name: str, task: str, gate: asyncio.Semaphore) -> dict[str, Any]:
        agent = self.agents[name]
        token = _delegating.set(name)
        try:
            async with gate, asyncio.timeout(self.timeout_s):
                response = await agent.run(task, thread=agent.get_new_thread())
        except TimeoutError:
            error = f"timed out after {self.timeout_s} s"
        except Exception as exc:  # noqa: BLE001 - one sub-agent's failure is its entry
            error = f"{type(exc).__name__}: {exc}"
        else:
            return {"agent": name, "task": task, "ok": True, "answer": response.text}
        finally:
            _delegating.reset(token)
        _log.warning("delegation_failed", owner=self.owner, agent=name, error=error)
        return {"agent": name, "task": task, "ok": False, "error": error}


def _tasks(arguments: Mapping[str, Any]) -> list[tuple[str, str]]:
    raw = arguments.get("tasks")
    if not isinstance(raw, list) or not raw:
        raise DelegationError("delegate_task needs 'tasks': a non-empty list")
    tasks: list[tuple[str, str]] = []
    for item in raw:  # pyright: ignore[reportUnknownVariableType]
        if not isinstance(item, dict):
            raise DelegationError("each task must be an object {agent, task}")
        agent, task = item.get("agent"), item.get("task")  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
        if not isinstance(agent, str) or not isinstance(task, str) or not task.strip():
            raise DelegationError("each task needs a string 'agent' and a non-empty 'task'")
        tasks.append((agent, task))
    return tasks


class DelegatingAgent:
    """An orchestrator agent (heartbit): it plans, delegates to named sub-agents, answers.

    Its model gets a ``delegate_task`` tool that runs several sub-agents in parallel (each on
    a fresh thread, each under ``delegation_timeout_s``) and returns their answers in order; a
    sub-agent that fails or times out is an error entry, the others' answers are kept. The
    hierarchy is flat: a sub-agent that can delegate is refused at construction
    (``DelegationError``), and a delegation attempted from inside a sub-agent fails as an error
    result. It is a core ``Agent`` (``run``, ``run_stream``, ``get_new_thread``)::

        lead = DelegatingAgent(chat_client, [researcher, writer])
        answer = await lead.run("Write a brief on solid-state batteries")
    """

    def __init__(
        self,
        chat_client: ChatClient,
        sub_agents: Sequence[Agent],
        *,
        instructions: str | None = None,
        name: str = "orchestrator",
        id: str | None = None,  # noqa: A002
        description: str | None = None,
        tools: Sequence[Tool | Callable[..., Any]] = (),
        delegation_timeout_s: float = 120.0,
        max_parallel: int | None = None,
        max_tool_iterations: int = 10,
    ) -> None:
        if delegation_timeout_s <= 0:
            raise OrchestrationConfigError("DelegatingAgent: delegation_timeout_s must be > 0")
        named = named_participants(sub_agents, "DelegatingAgent")
        agents: dict[str, Agent] = {}
        for sub_name, agent in named.items():
            if not isinstance(agent, Agent):
                raise OrchestrationConfigError(
                    f"DelegatingAgent: sub-agent {sub_name!r} is not an Agent"
                )
            if isinstance(agent, DelegatingAgent) or any(
                getattr(t, "name", None) == DELEGATE_TOOL for t in getattr(agent, "tools", ())
            ):
                raise DelegationError(
                    f"sub-agent {sub_name!r} can delegate itself; the hierarchy is flat "
                    "(sub-agents cannot delegate)"
                )
            agents[sub_name] = agent
        self.sub_agents = agents
        self.delegate_tool: Tool = _DelegateTool(name, agents, delegation_timeout_s, max_parallel)
        team = "\n".join(f"- {n}: {description_of(a)}" for n, a in agents.items())
        prompt = _INSTRUCTIONS.format(team=team)
        self._agent = ChatAgent(
            chat_client,
            f"{instructions}\n\n{prompt}" if instructions else prompt,
            name=name,
            id=id,
            description=description,
            tools=[*tools, self.delegate_tool],
            max_tool_iterations=max_tool_iterations,
        )

    def __repr__(self) -> str:
        return f"DelegatingAgent(name={self.name!r}, sub_agents={list(self.sub_agents)})"

    @classmethod
    def from_toml(
        cls,
        source: str | Path,
        chat_client: ChatClient,
        *,
        sub_agent_client: ChatClient | None = None,
        client_factory: Callable[[AgentSpec], ChatClient] | None = None,
        tools: Mapping[str, Tool | Callable[..., Any]] | None = None,
        **kwargs: Any,
    ) -> DelegatingAgent:
        """A DelegatingAgent over the sub-agents of a TOML file (``[[agents]]`` AgentSpecs).

        Each sub-agent's model comes from ``sub_agent_client``, else ``client_factory(spec)``,
        else its spec's ``model``; ``chat_client`` is the lead's.
        """
        specs = load_agent_specs(source)
        subs = [
            spec.build(chat_client=sub_agent_client, client_factory=client_factory, tools=tools)
            for spec in specs
        ]
        return cls(chat_client, subs, **kwargs)

    @property
    def id(self) -> str:
        """The lead agent's id."""
        return self._agent.id

    @property
    def name(self) -> str:
        """The lead agent's name."""
        return self._agent.name

    @property
    def description(self) -> str | None:
        """The lead agent's description."""
        return self._agent.description

    @property
    def tools(self) -> list[Tool]:
        """The lead's tools, ``delegate_task`` included."""
        return list(self._agent.tools)

    def get_new_thread(self, **metadata: Any) -> AgentThread:
        """A fresh conversation with the lead."""
        return self._agent.get_new_thread(**metadata)

    async def run(
        self,
        messages: str | ChatMessage | Sequence[ChatMessage] | None = None,
        *,
        thread: AgentThread | None = None,
        **kwargs: Any,
    ) -> AgentResponse:
        """Answer, delegating as the model decides (ChatAgent.run's keywords apply)."""
        return await self._agent.run(messages, thread=thread, **kwargs)

    def run_stream(
        self,
        messages: str | ChatMessage | Sequence[ChatMessage] | None = None,
        *,
        thread: AgentThread | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[AgentResponseUpdate]:
        """Stream the lead's answer."""
        return self._agent.run_stream(messages, thread=thread, **kwargs)
