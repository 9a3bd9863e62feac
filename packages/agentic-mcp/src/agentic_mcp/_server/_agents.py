"""An agent as a tool: a message in, the reply out, the conversation kept per MCP session.

A session is what the transport calls one: the ``Mcp-Session-Id`` of a streamable-HTTP
session, or the process's one stdio connection. A request that belongs to no session (the
2026-07-28 era's single-exchange HTTP requests) starts a new thread each call.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import anyio
from mcp import types as mcp_types

from agentic_core import Agent, AgentThread
from agentic_mcp._server._results import tool_error, tool_text

__all__ = ["SessionThreads", "run_agent"]

DEFAULT_MAX_THREADS = 1000


class SessionThreads:
    """The thread of each (session, agent), the least recently used dropped past a bound."""

    def __init__(self, max_threads: int = DEFAULT_MAX_THREADS) -> None:
        self._threads: OrderedDict[tuple[str, str], tuple[AgentThread, anyio.Lock]] = OrderedDict()
        self._max = max_threads

    def get(self, session: str | None, tool: str, agent: Agent) -> tuple[AgentThread, anyio.Lock]:
        """The session's thread with this agent (new when there is no session)."""
        if session is None:
            return agent.get_new_thread(), anyio.Lock()
        key = (session, tool)
        found = self._threads.get(key)
        if found is not None:
            self._threads.move_to_end(key)
            return found
        created = (agent.get_new_thread(mcp_session=session), anyio.Lock())
        self._threads[key] = created
        while len(self._threads) > self._max:
            self._threads.popitem(last=False)
        return created

    def __len__(self) -> int:
        return len(self._threads)


async def run_agent(
    agent: Agent, message: str, thread: AgentThread, lock: anyio.Lock
) -> mcp_types.CallToolResult:
    """One turn of ``agent`` on ``thread`` (turns of one session run one after another)."""
    async with lock:
        response = await agent.run(message, thread=thread)
    waiting: list[Any] = list(getattr(response, "user_input_requests", None) or [])
    if waiting:
        return tool_error(
            f"the agent {agent.name!r} waits for an answer (e.g. a tool approval) that cannot "
            "be given over MCP; serve it without approvals to use it as a tool"
        )
    return tool_text(response.text)
