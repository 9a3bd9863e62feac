"""Handoff: a triage agent transfers the customer to the right specialist.

Ported from Microsoft Agent Framework's ``handoff_simple.py`` sample: each agent gets
``transfer_to_<name>`` tools; the refund agent uses its own tool, then answers, which ends the
run. Offline: the models are scripted (``ScriptedChatClient``).
Run: ``uv run python examples/patterns/handoff_customer_support.py``.
"""

from __future__ import annotations

import asyncio

from agentic_core import ChatAgent, ChatMessage, FunctionCallContent, Role, tool
from agentic_core.testing import ScriptedChatClient
from agentic_orchestrator import HandoffBuilder


@tool
def process_refund(order_number: str) -> str:
    """Process a refund for an order."""
    return f"Refund processed successfully for order {order_number}."


def call(name: str, **arguments: str) -> ChatMessage:
    content = FunctionCallContent(call_id=f"call_{name}", name=name, arguments=arguments)
    return ChatMessage(role=Role.ASSISTANT, contents=[content])


async def main() -> None:
    triage = ChatAgent(
        ScriptedChatClient([call("transfer_to_refund_agent")]),
        "Route customer issues to the right specialist.",
        name="triage_agent",
    )
    refund = ChatAgent(
        ScriptedChatClient(
            [call("process_refund", order_number="1234"), "Your refund for 1234 is on its way."]
        ),
        "You process refund requests.",
        name="refund_agent",
        tools=[process_refund],
    )
    orders = ChatAgent(ScriptedChatClient([]), "You handle shipping.", name="order_agent")
    workflow = HandoffBuilder(participants=[triage, refund, orders]).build()
    result = await workflow.run("Order 1234 arrived damaged. I want a refund.")
    for message in result.outputs[0]:
        print(f"{message.author_name or message.role.value:>12}: {message.text}")


if __name__ == "__main__":
    asyncio.run(main())
