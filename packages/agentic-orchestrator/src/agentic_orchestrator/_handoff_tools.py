"""``transfer_to_<name>`` tools for a ChatAgent, and a stop after the model uses one."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence

from agentic_core import (
    AgentResponse,
    ChatAgent,
    ChatClient,
    ChatMessage,
    ChatOptions,
    ChatResponse,
    ChatResponseUpdate,
    FinishReason,
    FunctionCallContent,
    Role,
    Tool,
    tool,
)

_PREFIX = "transfer_to_"


def transfer_tool_name(target: str) -> str:
    """``transfer_to_<target>``, with anything a tool name may not hold replaced by ``_``."""
    return _PREFIX + re.sub(r"[^A-Za-z0-9_-]", "_", target)


def transfer_back_tool_name(target: str) -> str:
    """``transfer_back_to_<target>``: the name LangGraph-supervisor records a worker's return by."""
    return "transfer_back_to_" + re.sub(r"[^A-Za-z0-9_-]", "_", target)


def transfer_tools(targets: Mapping[str, str]) -> dict[str, Tool]:
    """``{tool name: tool}`` handing the conversation to each target (name -> description)."""
    tools: dict[str, Tool] = {}
    for target, description in targets.items():
        name = transfer_tool_name(target)
        tools[name] = tool(
            _transfer(target),
            name=name,
            description=f"Hand the conversation over to {target}: {description}",
            # A handoff is the pattern's own move, never an action a person must approve, even
            # under ChatAgent(tool_approval_mode="always_require").
            approval_mode="never_require",
        )
    return tools


def _transfer(target: str) -> Callable[[], Awaitable[str]]:
    result = f"Transferred to {target}."

    # A coroutine function: the agent awaits it in its own task, where a plain function would
    # be sent to a worker thread (``asyncio.to_thread``), a thread hop per handoff for a
    # constant string.
    async def transfer() -> str:
        return result

    return transfer


def requested_transfer(response: AgentResponse, tools: Mapping[str, str]) -> str | None:
    """The target of the first transfer tool the model called in ``response`` (tool -> target)."""
    for message in response.messages:
        for content in message.contents:
            if isinstance(content, FunctionCallContent) and content.name in tools:
                return tools[content.name]
    return None


class _StopAfterTransfer:
    """A ChatClient wrapper: once a transfer tool has answered, the turn ends without a call.

    A ChatAgent calls the model again after every tool result; after a handoff that call would
    cost tokens and time for a reply nobody reads. This wrapper answers it at once with an
    empty assistant message instead.
    """

    def __init__(self, inner: ChatClient, transfer_names: Sequence[str]) -> None:
        self.inner = inner
        self.provider = inner.provider
        self.model = inner.model
        self._names = frozenset(transfer_names)

    def _transferred(self, messages: Sequence[ChatMessage]) -> bool:
        if not messages or messages[-1].role is not Role.TOOL:
            return False
        for message in reversed(messages):
            if message.role is Role.ASSISTANT:
                return any(call.name in self._names for call in message.function_calls)
        return False

    async def generate(
        self, messages: Sequence[ChatMessage], options: ChatOptions | None = None
    ) -> ChatResponse:
        if self._transferred(messages):
            return ChatResponse(
                message=ChatMessage(role=Role.ASSISTANT),
                finish_reason=FinishReason.STOP,
                model=self.model,
            )
        return await self.inner.generate(messages, options)

    async def generate_stream(
        self, messages: Sequence[ChatMessage], options: ChatOptions | None = None
    ) -> AsyncIterator[ChatResponseUpdate]:
        if self._transferred(messages):
            yield ChatResponseUpdate(finish_reason=FinishReason.STOP)
            return
        async for update in self.inner.generate_stream(messages, options):
            yield update

    async def health_check(self) -> bool:
        return await self.inner.health_check()


def with_transfer_tools(agent: ChatAgent, tools: Mapping[str, Tool]) -> ChatAgent:
    """A copy of ``agent`` that also has ``tools`` and ends its turn once one is called."""
    # The options name the tools the model is offered, as the agent would on each run: options
    # without tools make a ChatAgent copy its options to add them, on every turn.
    options = agent.options
    offered = [*(options.tools or agent.tools), *tools.values()]
    options = options.model_copy(update={"tools": offered})
    return ChatAgent(
        _StopAfterTransfer(agent.chat_client, list(tools)),
        agent.instructions,
        name=agent.name,
        id=agent.id,
        description=agent.description,
        tools=[*agent.tools, *tools.values()],
        memory_provider=agent.memory_provider,
        chat_reducer=agent.chat_reducer,
        message_store_factory=agent.message_store_factory,
        max_tool_iterations=max(agent.max_tool_iterations, 1),
        options=options,
        tool_timeout_s=agent.tool_timeout_s,
    )
