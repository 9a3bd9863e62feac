"""The agent-server process of the distributed-trace test.

``python distributed_trace_agent.py NATS_URL AGENT_ID`` (with ``AGENTIC_TRACE_FILE`` set) serves
``distributed_trace_graph.echo_agent``; prints ``READY`` once it serves, then runs until
SIGTERM.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from distributed_trace_graph import PROVIDER, echo_agent

from agentic_bus import NatsBus
from agentic_bus._agent_server import serve_agent


async def main(url: str, agent_id: str) -> None:
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    async with await NatsBus.connect(url) as bus, await serve_agent(echo_agent(agent_id), bus):
        print("READY", flush=True)
        await stop.wait()
    if PROVIDER is not None:
        PROVIDER.shutdown()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
