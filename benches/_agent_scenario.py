# pyright: reportMissingImports=false, reportMissingModuleSource=false
# (the peer comes from the optional `bench` dependency group: `uv run --group bench ...`)
"""The scenario of benches/agents.py, shared by its timed cases and its fresh-process probes.

Kept light on purpose (only ``typing`` and the standard library at import time; each framework is
imported inside the function that uses it): the memory probe measures the RSS of a fresh process
that imports one framework and runs one agent, and must not carry the benchmark harness.

The scenario: a conversation of ``TURNS`` turns on one thread; each turn the scripted model asks
for the ``lookup`` tool with ``{"key": turn}``, the tool returns ``"value-<turn>"``, and the model
answers ``"answer <turn>"``.
"""

from __future__ import annotations

import gc
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from agentic_core import ChatMessage

TURNS = 10
INSTRUCTIONS = "You look keys up with the lookup tool and answer with what it returns."


class ToolCall(NamedTuple):
    """A scripted model reply asking for one tool call."""

    call_id: str
    name: str
    arguments: dict[str, Any]


ScriptStep = str | ToolCall  # a final text reply, or a reply with one tool call
Transcript = list[tuple[str, list[Any]]]  # per agent.run: the final text, the tool results


def question(turn: int) -> str:
    return f"question {turn}"


def script(turns: int) -> list[ScriptStep]:
    """The model's replies for ``turns`` turns: a tool call, then the final text, each turn."""
    steps: list[ScriptStep] = []
    for turn in range(turns):
        steps.append(ToolCall(f"call-{turn}", "lookup", {"key": turn}))
        steps.append(f"answer {turn}")
    return steps


def expected_transcript(turns: int) -> Transcript:
    return [(f"answer {turn}", [f"value-{turn}"]) for turn in range(turns)]


def expected_model_texts(turns: int) -> list[str]:
    """The text of each scripted reply, in order ("" for a reply that only calls a tool)."""
    return [step if isinstance(step, str) else "" for step in script(turns)]


# The tools are trivial: the benchmark measures the agent, not the tool.


async def lookup(key: int) -> str:
    """Look a key up."""
    return f"value-{key}"


def lookup_sync(key: int) -> str:
    """Look a key up."""
    return f"value-{key}"


def describe(key: str) -> str:
    """Describe a key."""
    return f"about {key}"


# --------------------------------------------------------------------------------------------
# agentic_core


def agentic_script(turns: int) -> list[str | ChatMessage]:
    """``script(turns)`` as ``ScriptedChatClient`` replies."""
    from agentic_core import ChatMessage, FunctionCallContent

    replies: list[str | ChatMessage] = []
    for step in script(turns):
        if isinstance(step, str):
            replies.append(step)
        else:
            call = FunctionCallContent(
                call_id=step.call_id, name=step.name, arguments=dict(step.arguments)
            )
            replies.append(ChatMessage.assistant(contents=[call]))
    return replies


def agentic_transcript(responses: list[Any]) -> Transcript:
    """What each ``ChatAgent.run`` answered: its text and its tool results."""
    return [(r.text, [c.result for m in r.messages for c in m.function_results]) for r in responses]


# --------------------------------------------------------------------------------------------
# Microsoft Agent Framework (the scripted client is in _maf_client.py)


def maf_transcript(responses: list[Any]) -> Transcript:
    """What each MAF ``Agent.run`` answered: its text and its tool results."""
    return [
        (
            r.text,
            [c.result for m in r.messages for c in m.contents if c.type == "function_result"],
        )
        for r in responses
    ]


# --------------------------------------------------------------------------------------------
# the fresh-process memory probe


def status_kib() -> dict[str, int]:
    """VmRSS (resident now) and VmHWM (peak resident) of this process, in KiB."""
    fields: dict[str, str] = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        key, _, value = line.partition(":")
        fields[key] = value
    return {key: int(fields[key].split()[0]) for key in ("VmRSS", "VmHWM")}


NewAgent = Callable[[int], object]


def _agentic_factory(shared_tools: bool) -> tuple[NewAgent, Callable[[], Awaitable[None]]]:
    from agentic_core import ChatAgent, tool
    from agentic_core.testing import ScriptedChatClient

    client = ScriptedChatClient(agentic_script(1))
    tools: list[Any] = [tool(lookup), tool(describe)] if shared_tools else [lookup, describe]

    def new_agent(i: int) -> object:
        return ChatAgent(client, INSTRUCTIONS, name=f"agent-{i}", tools=tools)

    async def run_one() -> None:
        agent = ChatAgent(client, INSTRUCTIONS, name="bench", tools=tools)
        response = await agent.run(question(0), thread=agent.get_new_thread())
        if agentic_transcript([response]) != expected_transcript(1):
            raise SystemExit(f"agentic_core probe: unexpected response {response!r}")

    return new_agent, run_one


def _maf_factory(shared_tools: bool) -> tuple[NewAgent, Callable[[], Awaitable[None]]]:
    from _maf_client import ScriptedChatClient
    from agent_framework import Agent, tool

    client = ScriptedChatClient(script=script(1))
    tools: list[Any] = [tool(lookup), tool(describe)] if shared_tools else [lookup, describe]

    def new_agent(i: int) -> object:
        return Agent(client, INSTRUCTIONS, name=f"agent-{i}", tools=tools)

    async def run_one() -> None:
        agent = Agent(client, INSTRUCTIONS, name="bench", tools=tools)
        response = await agent.run(question(0), session=agent.create_session())
        if maf_transcript([response]) != expected_transcript(1):
            raise SystemExit(f"agent_framework probe: unexpected response {response!r}")

    return new_agent, run_one


async def memory_probe(subject: str, agents: int) -> dict[str, float]:
    """RSS after one agent ran (KiB) and marginal RSS per idle agent (bytes) for ``subject``.

    ``subject``: ``floor`` (asyncio + pydantic + structlog imported, nothing run),
    ``agentic_core`` / ``agent_framework`` (two tools built once, shared by every agent, as with
    ``@tool``-decorated functions), or either with ``:plain`` (plain functions: each agent turns
    them into tools itself).
    """
    if subject == "floor":
        import pydantic  # noqa: F401
        import structlog  # noqa: F401

        gc.collect()
        status = status_kib()
        return {"rss_kib": status["VmRSS"], "hwm_kib": status["VmHWM"], "agent_bytes": 0.0}
    impl, _, variant = subject.partition(":")
    factory = {"agentic_core": _agentic_factory, "agent_framework": _maf_factory}[impl]
    new_agent, run_one = factory(variant != "plain")
    await run_one()  # imports everything an agent run needs, warms the lazy caches
    gc.collect()
    before = status_kib()
    alive = [new_agent(i) for i in range(agents)]
    gc.collect()
    after = status_kib()
    del alive
    return {
        "rss_kib": before["VmRSS"],
        "hwm_kib": before["VmHWM"],
        "agent_bytes": (after["VmRSS"] - before["VmRSS"]) * 1024 / agents,
    }
