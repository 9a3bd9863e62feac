"""Concurrent pattern: three experts answer at once; an aggregator merges what came back.

One expert's model is down: its failure reaches the aggregator as an error result and the
others' answers still make the output (partial results). Offline, with function models.
Run: ``uv run python examples/patterns/concurrent_experts.py``.
"""

from __future__ import annotations

import asyncio

from agentic_core import ChatAgent, ChatMessage, ChatOptions
from agentic_core.testing import FunctionChatClient
from agentic_orchestrator import ConcurrentBuilder, ParticipantResult


def expert(name: str, view: str) -> ChatAgent:
    def reply(messages: list[ChatMessage], options: ChatOptions | None) -> str:
        return f"{view} ({messages[-1].text})"

    return ChatAgent(FunctionChatClient(reply), name=name)


def unreachable(messages: list[ChatMessage], options: ChatOptions | None) -> str:
    raise ConnectionError("the legal team's model endpoint is down")


async def report(results: list[ParticipantResult]) -> str:
    lines = [f"- {r.executor_id}: {r.text}" for r in results if r.ok]
    lines += [f"- {r.executor_id}: unavailable ({r.error_type})" for r in results if not r.ok]
    return "\n".join(lines)


async def main() -> None:
    workflow = (
        ConcurrentBuilder()
        .participants(
            [
                expert("research", "Demand for cheap e-bikes grows 10% a year"),
                expert("marketing", "Lead with the price"),
                ChatAgent(FunctionChatClient(unreachable), name="legal"),
            ]
        )
        .with_aggregator(report)
        .build()
    )
    result = await workflow.run("launching a budget e-bike")
    print(result.outputs[0])


if __name__ == "__main__":
    asyncio.run(main())
