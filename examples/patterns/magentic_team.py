"""Magentic: a manager plans, directs a researcher and a coder round by round, then answers.

Offline: the manager's model is a function that writes a fact sheet, a plan, one progress
ledger per round (JSON) and the final answer. With a real model, pass any ChatClient or Agent
as ``manager=``. Run: ``uv run python examples/patterns/magentic_team.py``.
"""

from __future__ import annotations

import asyncio
import json

from agentic_core import ChatAgent, ChatMessage, ChatOptions
from agentic_core.testing import FunctionChatClient
from agentic_orchestrator import MagenticBuilder


def ledger(done: bool, speaker: str, instruction: str) -> str:
    return json.dumps(
        {
            "is_request_satisfied": {"reason": "", "answer": done},
            "is_in_loop": {"reason": "", "answer": False},
            "is_progress_being_made": {"reason": "", "answer": True},
            "next_speaker": {"reason": "", "answer": speaker},
            "instruction_or_question": {"reason": "", "answer": instruction},
        }
    )


def manager_model(messages: list[ChatMessage], options: ChatOptions | None) -> str:
    prompt = messages[-1].text
    if "fact sheet" in prompt:
        return "1. GIVEN OR VERIFIED FACTS\n- the list is [3, 1, 2]"
    if "bullet-point plan" in prompt:
        return "- researcher: name a sorting algorithm\n- coder: apply it"
    if "final answer" in prompt:
        return "Sorted with insertion sort: [1, 2, 3]."
    if "[coder]" in prompt:
        return ledger(True, "coder", "")
    if "[researcher]" in prompt:
        return ledger(False, "coder", "Sort [3, 1, 2] with insertion sort.")
    return ledger(False, "researcher", "Which algorithm suits a tiny list?")


def worker(name: str, answer: str) -> ChatAgent:
    return ChatAgent(FunctionChatClient(lambda messages, options: answer), name=name)


async def main() -> None:
    workflow = MagenticBuilder(
        participants=[
            worker("researcher", "Insertion sort: simplest for tiny lists."),
            worker("coder", "[1, 2, 3]"),
        ],
        manager=FunctionChatClient(manager_model),
    ).build()
    result = await workflow.run("Sort the list [3, 1, 2] and say how.")
    print(result.outputs[0].text)


if __name__ == "__main__":
    asyncio.run(main())
