"""Child of test_memory_across_processes.py: one turn of a ChatAgent whose threads live in Redis
and whose long-term memory lives in Qdrant (local mode on disk), then the process exits.

Usage: ``python memory_across_processes_child.py REDIS_URL PREFIX QDRANT_DIR THREAD_ID TEXT``

It prints one JSON line: the reply, and how many messages the thread holds afterwards.
"""

import asyncio
import json
import sys

from agentic_core import (
    AgentThread,
    ChatAgent,
    ChatMessage,
    ChatOptions,
    HashingEmbedder,
    StateStoreMessageStore,
)
from agentic_core.testing import FunctionChatClient
from agentic_storage import QdrantVectorStore, RedisStateStore, VectorMemoryProvider


def reply(messages: list[ChatMessage], options: ChatOptions | None) -> str:
    """A model that answers from the memories it was given, else says it does not know."""
    notes = [m.text for m in messages if m.text.startswith("Relevant memories:")]
    return notes[0] if notes else "I don't know yet."


async def main(url: str, prefix: str, qdrant_dir: str, thread_id: str, text: str) -> None:
    async with (
        RedisStateStore(url, prefix=prefix) as state,
        QdrantVectorStore(qdrant_dir) as vectors,
    ):
        memory = VectorMemoryProvider(vectors, HashingEmbedder())
        # A stable agent id: memories are kept per agent id and user.
        agent = ChatAgent(
            FunctionChatClient(reply), "You are helpful.", id="helper", memory_provider=memory
        )
        thread = AgentThread(
            id=thread_id,
            message_store=StateStoreMessageStore(state, thread_id),
            metadata={"user_id": "ada"},
        )
        response = await agent.run(text, thread=thread)
        count = len(await thread.list_messages())
    print(json.dumps({"reply": response.text, "messages": count}), flush=True)


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:6]))
