# pyright: reportMissingImports=false, reportMissingModuleSource=false
# (the peer comes from the optional `bench` dependency group: `uv run --group bench ...`)
"""A scripted chat client for Microsoft Agent Framework: the peer of agentic_core's
``testing.ScriptedChatClient`` in benches/agents.py.

Written against MAF's public chat-client API (agent-framework-core 1.23): a ``BaseChatClient``
subclass implements ``_inner_get_response(*, messages, stream, options, **kwargs)`` and returns
an awaitable ``ChatResponse`` when not streaming. In MAF the tool loop is not in the agent but in
a client layer, ``FunctionInvocationLayer`` (without it ``Agent`` warns that the client "does
not support function invoking" and never runs a tool); MAF's shipped clients compose
``FunctionInvocationLayer, ChatMiddlewareLayer, ChatTelemetryLayer, Raw<Provider>Client``.

Like agentic_core's, the client records each request (a copy of the messages list, and the
options) and answers with fresh objects built from the script, so no reply is shared.
"""

from __future__ import annotations

from collections.abc import Awaitable, Mapping, Sequence
from typing import Any

from _agent_scenario import ScriptStep, ToolCall
from agent_framework import (
    BaseChatClient,
    ChatMiddlewareLayer,
    ChatResponse,
    Content,
    FunctionInvocationLayer,
    Message,
)
from agent_framework.observability import ChatTelemetryLayer


class RawScriptedChatClient(BaseChatClient[Any]):
    """The scripted model alone: what ``get_response`` answers, with no tool loop around it."""

    OTEL_PROVIDER_NAME = "scripted"

    def __init__(self, *, script: Sequence[ScriptStep], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.script: tuple[ScriptStep, ...] = tuple(script)
        self.calls: list[tuple[list[Message], dict[str, Any]]] = []

    def _inner_get_response(
        self,
        *,
        messages: Sequence[Message],
        stream: bool,
        options: Mapping[str, Any],
        **kwargs: Any,
    ) -> Awaitable[ChatResponse]:
        if stream:
            raise NotImplementedError("benches/agents.py runs MAF agents without streaming")
        # Recorded at call time, as agentic_core's ScriptedChatClient does.
        self.calls.append((list(messages), dict(options)))
        return self._respond(len(self.calls) - 1)

    async def _respond(self, call_number: int) -> ChatResponse:
        if call_number >= len(self.script):
            raise RuntimeError(
                f"RawScriptedChatClient ran out of replies: {len(self.script)} scripted, "
                f"{call_number + 1} calls made"
            )
        step = self.script[call_number]
        if isinstance(step, ToolCall):
            call = Content.from_function_call(
                step.call_id, step.name, arguments=dict(step.arguments)
            )
            return ChatResponse(
                messages=[Message("assistant", [call])],
                finish_reason="tool_calls",
                model="scripted",
            )
        return ChatResponse(
            messages=[Message("assistant", [Content.from_text(step)])],
            finish_reason="stop",
            model="scripted",
        )


class ScriptedChatClient(FunctionInvocationLayer[Any], RawScriptedChatClient):
    """The scripted model with MAF's tool loop: the smallest stack with which an Agent calls
    tools (the composition MAF's own tests use for a function-invoking mock client)."""


class FullStackScriptedChatClient(
    FunctionInvocationLayer[Any],
    ChatMiddlewareLayer[Any],
    ChatTelemetryLayer[Any],
    RawScriptedChatClient,
):
    """The scripted model with every layer MAF's shipped clients compose (tool loop, chat
    middleware, telemetry), in their order."""
