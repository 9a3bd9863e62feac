"""An agent with tools, offline: a scripted model asks for two tools, then answers.

Run: `uv run python examples/agent_with_tools.py`. `ScriptedChatClient` stands in for a real
model (swap in any `agentic_llm` client to go live); the tools, the loop and the thread are real.
"""

from __future__ import annotations

import asyncio
from typing import Annotated

from pydantic import BaseModel, Field

from agentic_core import ChatAgent, ChatMessage, FunctionCallContent, tool
from agentic_core.testing import ScriptedChatClient


@tool
def get_weather(city: Annotated[str, "City name, e.g. 'Oslo'"]) -> dict[str, object]:
    """Current weather for a city."""
    readings = {"Oslo": -3.5, "Lisbon": 18.0}
    return {"city": city, "celsius": readings.get(city, 10.0)}


@tool
async def convert(celsius: float, unit: Annotated[str, Field(pattern="^(F|K)$")] = "F") -> float:
    """Convert a Celsius temperature to Fahrenheit (F) or Kelvin (K)."""
    await asyncio.sleep(0)
    return round(celsius * 9 / 5 + 32, 1) if unit == "F" else round(celsius + 273.15, 2)


class Report(BaseModel):
    city: str
    fahrenheit: float


def scripted_model() -> ScriptedChatClient:
    """What a model would reply: two tool calls in one reply, then a structured answer."""
    return ScriptedChatClient(
        [
            ChatMessage.assistant(
                contents=[
                    FunctionCallContent(
                        call_id="1", name="get_weather", arguments={"city": "Oslo"}
                    ),
                    FunctionCallContent(call_id="2", name="convert", arguments={"celsius": -3.5}),
                ]
            ),
            '{"city": "Oslo", "fahrenheit": 25.7}',
        ]
    )


async def main() -> None:
    agent = ChatAgent(
        scripted_model(),
        "You are a weather assistant. Use the tools.",
        name="weather",
        tools=[get_weather, convert],
    )
    thread = agent.get_new_thread(user_id="ada")
    response = await agent.run(
        "How warm is Oslo in Fahrenheit?", thread=thread, response_format=Report
    )
    for message in await thread.list_messages():
        parts = [message.text] if message.text else []
        parts += [f"call {c.name}({c.arguments})" for c in message.function_calls]
        parts += [f"result {r.result}" for r in message.function_results]
        print(f"{message.role.value:>9}: {'; '.join(parts)}")
    print(f"parsed value: {response.value!r}")
    print(f"tool schema of convert: {convert.parameters}")


if __name__ == "__main__":
    asyncio.run(main())
