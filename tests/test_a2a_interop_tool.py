"""A2A across processes: a ChatAgent with a weather tool, served by ``serve_a2a`` in another
process, is called by an agentic ChatAgent through an ``A2AAgent`` tool, and takes part in a
``SequentialBuilder`` pattern. No LLM: the models are scripted (``agentic_core.testing``)."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest

from agentic_bus import A2AAgent
from agentic_core import ChatAgent, ChatMessage, ChatOptions, FunctionCallContent
from agentic_core.testing import FunctionChatClient
from agentic_orchestrator import SequentialBuilder
from tests.fixtures.servers import free_port, stop_process

pytestmark = pytest.mark.slow

SERVER = Path(__file__).parents[1] / "packages/agentic-bus/tests/a2a_reference_server.py"


@pytest.fixture(scope="module")
def weather_url() -> Iterator[str]:
    """The base URL of the weather ChatAgent, served over A2A by another process."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    process = subprocess.Popen(
        [sys.executable, str(SERVER), str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 30
        while True:  # a bounded wait until the child serves its card
            if process.poll() is not None:
                assert process.stderr is not None
                pytest.fail(f"the A2A server process exited: {process.stderr.read()[-4000:]!r}")
            try:
                if httpx.get(f"{url}/.well-known/agent-card.json").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "the A2A server process did not start in 30 s"
            time.sleep(0.05)
        yield url
    finally:
        stop_process(process, timeout_s=5)
        if process.stderr is not None:
            process.stderr.close()


@pytest.fixture
async def weather(weather_url: str) -> AsyncIterator[A2AAgent]:
    async with A2AAgent(weather_url, timeout_s=20) as agent:
        yield agent


def reporting_model(messages: list[ChatMessage], options: ChatOptions | None) -> ChatMessage | str:
    """Asks the weather tool once, then answers with what the tool returned."""
    del options
    results = [r.result for m in messages for r in m.function_results]
    if results:
        return f"The weather agent says: {results[-1]}"
    call = FunctionCallContent(call_id="c1", name="weather", arguments={"task": "Paris?"})
    return ChatMessage.assistant(contents=[call])


async def test_a_remote_a2a_agent_as_a_chat_agent_tool(weather: A2AAgent) -> None:
    assert weather.name == "a2a_agent"  # no name given: the card is read on first use
    card = await weather.get_card()
    assert card.name == "weather"
    host = ChatAgent(
        FunctionChatClient(reporting_model),
        "Answer with your tools.",
        name="assistant",
        tools=[weather.as_tool(name="weather")],
    )
    response = await host.run("What is the weather in Paris?")
    assert response.text == "The weather agent says: Paris: sunny and 22 C."


async def test_a_remote_a2a_agent_in_a_sequential_pattern(weather_url: str) -> None:
    planner = ChatAgent(FunctionChatClient(lambda m, o: "Ask about Paris."), name="planner")
    async with A2AAgent(weather_url, name="weather", timeout_s=20) as weather:
        workflow = SequentialBuilder().participants([planner, weather]).build()
        result = await workflow.run("Plan a trip.")
    [conversation] = result.outputs
    assert [(m.role, m.author_name, m.text) for m in conversation] == [
        ("user", None, "Plan a trip."),
        ("assistant", "planner", "Ask about Paris."),
        ("assistant", "weather", "Paris: sunny and 22 C."),
    ]
