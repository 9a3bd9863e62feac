"""Group chat: a writer and a critic take turns until the critic approves.

The manager here is ``round_robin_selector``; swap in ``with_orchestrator_agent(agent)`` to let
a model pick each speaker. Offline, with function models.
Run: ``uv run python examples/patterns/group_chat_writer_critic.py``.
"""

from __future__ import annotations

import asyncio

from agentic_core import ChatAgent, ChatMessage, ChatOptions
from agentic_core.testing import FunctionChatClient
from agentic_orchestrator import GroupChatBuilder, keyword_termination, round_robin_selector


def writer_model(messages: list[ChatMessage], options: ChatOptions | None) -> str:
    drafts = sum(1 for m in messages if m.author_name == "writer")
    return ["Cheap bike.", "A bike for every budget.", "Go further for less."][min(drafts, 2)]


def critic_model(messages: list[ChatMessage], options: ChatOptions | None) -> str:
    draft = messages[-1].text
    return "APPROVED" if "further" in draft else f"'{draft}' is flat; make it move."


async def main() -> None:
    workflow = (
        GroupChatBuilder()
        .participants(
            [
                ChatAgent(FunctionChatClient(writer_model), name="writer"),
                ChatAgent(FunctionChatClient(critic_model), name="critic"),
            ]
        )
        .with_orchestrator_func(round_robin_selector)
        .with_termination_condition(keyword_termination("APPROVED"))
        .with_max_iterations(10)
        .build()
    )
    result = await workflow.run("Write a slogan for a budget e-bike.")
    for message in result.outputs[0]:
        print(f"{message.author_name or message.role.value:>7}: {message.text}")


if __name__ == "__main__":
    asyncio.run(main())
