# pyright: strict
"""Agents and workflows the MCP-server tests serve, and a stdio server of them.

``python served_targets.py`` serves ``build_targets()`` over stdio with ``serve_mcp``; the
tests load this file by path for the same targets in-process (streamable HTTP).

- ``echo``: a ChatAgent whose model answers ``turn <n>: <message>`` where n counts the user
  messages it was sent, so a continued thread shows ``turn 2``.
- ``steps``: three executors in a line (three supersteps); its output is the upper-cased
  message with ``!`` appended by each step.
- ``order``: starts from an ``Order`` model (``item``, ``quantity``); outputs a ``Receipt``.
- ``approve``: asks for a ``bool`` (``request_info``) and outputs ``approved: <topic>`` or
  ``rejected: <topic>``.
"""

from __future__ import annotations

import asyncio
from typing import Never

from pydantic import BaseModel

from agentic_core import (
    ChatAgent,
    ChatMessage,
    ChatOptions,
    Executor,
    Workflow,
    WorkflowBuilder,
    WorkflowContext,
    executor,
    handler,
    response_handler,
)
from agentic_core.testing import FunctionChatClient


class Order(BaseModel):
    item: str
    quantity: int


class Receipt(BaseModel):
    item: str
    quantity: int
    total_cents: int


def echo_agent() -> ChatAgent:
    def reply(messages: list[ChatMessage], options: ChatOptions | None) -> str:
        del options
        users = [m for m in messages if m.role == "user"]
        return f"turn {len(users)}: {users[-1].text}"

    return ChatAgent(FunctionChatClient(reply), name="echo", description="Echoes, counting turns.")


def steps_workflow() -> Workflow:
    @executor(id="shout")
    async def shout(text: str, ctx: WorkflowContext[str]) -> None:
        await ctx.send_message(text.upper())

    @executor(id="bang")
    async def bang(text: str, ctx: WorkflowContext[str]) -> None:
        await ctx.send_message(text + "!")

    @executor(id="finish")
    async def finish(text: str, ctx: WorkflowContext[Never, str]) -> None:
        await ctx.yield_output(text + "!")

    return (
        WorkflowBuilder("steps")
        .set_start_executor(shout)
        .add_edge(shout, bang)
        .add_edge(bang, finish)
        .build()
    )


def order_workflow() -> Workflow:
    @executor(id="price")
    async def price(order: Order, ctx: WorkflowContext[Never, Receipt]) -> None:
        receipt = Receipt(
            item=order.item, quantity=order.quantity, total_cents=250 * order.quantity
        )
        await ctx.yield_output(receipt)

    return WorkflowBuilder("order").set_start_executor(price).build()


class Approver(Executor):
    @handler
    async def ask(self, topic: str, ctx: WorkflowContext) -> None:
        await ctx.request_info(f"may I publish {topic!r}?", bool)

    @response_handler
    async def answered(
        self, request: str, approved: bool, ctx: WorkflowContext[Never, str]
    ) -> None:
        topic = request.split("'")[1]
        await ctx.yield_output(f"{'approved' if approved else 'rejected'}: {topic}")


def approve_workflow() -> Workflow:
    return WorkflowBuilder("approve").set_start_executor(Approver("approver")).build()


def build_targets() -> list[ChatAgent | Workflow]:
    return [echo_agent(), steps_workflow(), order_workflow(), approve_workflow()]


if __name__ == "__main__":
    from agentic_mcp import serve_mcp

    asyncio.run(serve_mcp(build_targets(), name="served-targets", transport="stdio"))
