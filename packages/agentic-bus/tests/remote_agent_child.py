"""A process serving one echo agent over NATS, for the cross-process remote-agent test.

``python remote_agent_child.py NATS_URL AGENT_ID`` serves a ChatAgent whose replies name this
process's pid and count the thread's earlier messages (threads in NATS KV, the default); prints
``READY`` once it serves, then runs until killed.
"""

from __future__ import annotations

import asyncio
import os
import sys

from agentic_bus import NatsBus
from agentic_bus._agent_server import serve_agent
from agentic_core import ChatAgent, ChatMessage, ChatOptions
from agentic_core.testing import FunctionChatClient


def echo(messages: list[ChatMessage], options: ChatOptions | None) -> str:
    return f"pid {os.getpid()} heard {messages[-1].text!r} after {len(messages) - 1} messages"


async def main(url: str, agent_id: str) -> None:
    agent = ChatAgent(FunctionChatClient(echo), id=agent_id, name="echo")
    async with await NatsBus.connect(url) as bus, await serve_agent(agent, bus):
        print("READY", flush=True)
        await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
