"""Sequential pattern: a writer drafts, a custom executor counts words, an editor polishes.

Each agent sees the whole conversation so far; the output is the full conversation. Offline:
the "models" are functions over the conversation they are shown (``FunctionChatClient``); give
the agents an ``OpenAIChatClient`` (agentic-llm) to run it for real.
Run: ``uv run python examples/patterns/sequential_writer_editor.py``.
"""

from __future__ import annotations

import asyncio

from agentic_core import ChatAgent, ChatMessage, ChatOptions, Executor, WorkflowContext, handler
from agentic_core.testing import FunctionChatClient
from agentic_orchestrator import SequentialBuilder


def writer_model(messages: list[ChatMessage], options: ChatOptions | None) -> str:
    return f"Tagline for '{messages[-1].text}': Ride more, pay less."


def editor_model(messages: list[ChatMessage], options: ChatOptions | None) -> str:
    draft = next(m.text for m in reversed(messages) if m.author_name == "writer")
    return draft.split(": ", 1)[1].replace("Ride more", "Ride further")


class WordCount(Executor):
    """A custom step between agents: adds a note the editor reads."""

    @handler
    async def count(
        self, conversation: list[ChatMessage], ctx: WorkflowContext[list[ChatMessage]]
    ) -> None:
        words = len(conversation[-1].text.split())
        await ctx.send_message([*conversation, ChatMessage.user(f"(the draft has {words} words)")])


async def main() -> None:
    writer = ChatAgent(FunctionChatClient(writer_model), "Write taglines.", name="writer")
    editor = ChatAgent(FunctionChatClient(editor_model), "Polish taglines.", name="editor")
    workflow = SequentialBuilder().participants([writer, WordCount("word_count"), editor]).build()
    result = await workflow.run("a budget e-bike")
    for message in result.outputs[0]:
        print(f"{message.author_name or message.role.value:>8}: {message.text}")


if __name__ == "__main__":
    asyncio.run(main())
