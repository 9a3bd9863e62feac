"""A workflow as a tool: its start message from the arguments, a progress notification per
superstep (when the client asked for progress), its outputs as the result, and its requests
answered by elicitation, each answer resuming the run."""

from __future__ import annotations

import secrets
from collections import OrderedDict
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from mcp import types as mcp_types
from mcp.server.context import ServerRequestContext

from agentic_core import (
    RequestInfoEvent,
    SuperstepCompletedEvent,
    SuperstepStartedEvent,
    Workflow,
    WorkflowEvent,
    WorkflowFailedEvent,
    WorkflowOutputEvent,
)
from agentic_mcp._server._elicit import (
    can_ask_in_result,
    can_elicit,
    elicit_answer,
    elicit_request,
    parse_elicited,
    question_text,
)
from agentic_mcp._server._results import tool_error, workflow_result
from agentic_mcp._server._targets import ServedTarget

__all__ = ["PausedCall", "PausedCalls", "run_workflow"]

DEFAULT_MAX_PAUSED = 1000
"""How many calls may wait for their retry at once; the oldest is forgotten past it."""


class _Leg:
    """What one stretch of a run (start or resume, up to its end or pause) produced."""

    def __init__(self) -> None:
        self.outputs: list[Any] = []
        self.pending: dict[str, RequestInfoEvent] = {}
        self.failed: str | None = None


@dataclass
class PausedCall:
    """A call answered with ``InputRequiredResult``: what its retry needs to resume the run."""

    tool: str
    pending: list[RequestInfoEvent]
    outputs: list[Any]
    steps: int


class PausedCalls:
    """Paused calls by their ``request_state``: a random token, answered once, the oldest
    forgotten past a bound (the run itself waits in the workflow's paused runs)."""

    def __init__(self, max_paused: int = DEFAULT_MAX_PAUSED) -> None:
        self._calls: OrderedDict[str, PausedCall] = OrderedDict()
        self._max = max_paused

    def add(self, call: PausedCall) -> str:
        token = secrets.token_urlsafe(24)
        self._calls[token] = call
        while len(self._calls) > self._max:
            self._calls.popitem(last=False)
        return token

    def take(self, token: str) -> PausedCall | None:
        return self._calls.pop(token, None)


async def run_workflow(
    served: ServedTarget,
    params: mcp_types.CallToolRequestParams,
    ctx: ServerRequestContext[Any, Any],
    paused_calls: PausedCalls,
) -> mcp_types.CallToolResult | mcp_types.InputRequiredResult:
    """Run ``served``'s workflow to its end, asking the client whenever it waits: mid-call
    (handshake eras), or by ``InputRequiredResult`` and the call's retry (2026-07-28)."""
    workflow: Workflow = served.target
    if params.request_state is not None:
        paused = paused_calls.take(params.request_state)
        if paused is None or paused.tool != served.name:
            return tool_error(
                f"the request_state sent to {served.name!r} is unknown or already answered: "
                "call the tool again without it"
            )
        responses: dict[str, Any] = {}
        for request in paused.pending:
            answer = parse_elicited(request, (params.input_responses or {}).get(request.request_id))
            if answer.refused is not None:
                return tool_error(f"the workflow {served.name!r} stopped: {answer.refused}")
            responses[request.request_id] = answer.value
        outputs, steps = paused.outputs, paused.steps
        stream = workflow.run_stream(responses=responses)
    else:
        try:
            message = served.workflow_input(params.arguments or {})
        except ValueError as exc:
            return tool_error(str(exc))
        outputs, steps = [], 0
        stream = workflow.run_stream(message)
    while True:
        leg = _Leg()
        steps = await _drive(stream, leg, ctx, steps)
        outputs.extend(leg.outputs)
        if leg.failed is not None:
            return tool_error(f"the workflow {served.name!r} failed: {leg.failed}")
        if not leg.pending:
            return workflow_result(outputs)
        pending = list(leg.pending.values())
        if can_ask_in_result(ctx):
            token = paused_calls.add(PausedCall(served.name, pending, outputs, steps))
            return mcp_types.InputRequiredResult(
                input_requests={r.request_id: elicit_request(served.name, r) for r in pending},
                request_state=token,
            )
        if not can_elicit(ctx):
            return tool_error(_cannot_answer(served.name, pending))
        responses = {}
        for request in pending:
            answer = await elicit_answer(ctx, served.name, request)
            if answer.refused is not None:
                return tool_error(f"the workflow {served.name!r} stopped: {answer.refused}")
            responses[request.request_id] = answer.value
        stream = workflow.run_stream(responses=responses)


async def _drive(
    stream: AsyncIterator[WorkflowEvent],
    leg: _Leg,
    ctx: ServerRequestContext[Any, Any],
    steps: int,
) -> int:
    """Consume one stretch of the run; report each superstep; returns the supersteps so far."""
    running: list[str] = []
    async for event in stream:
        if isinstance(event, SuperstepStartedEvent):
            running = event.executor_ids
        elif isinstance(event, SuperstepCompletedEvent):
            steps += 1
            await ctx.session.report_progress(
                steps, None, f"superstep {event.superstep} done: {', '.join(running)}"
            )
        elif isinstance(event, WorkflowOutputEvent):
            leg.outputs.append(event.data)
        elif isinstance(event, RequestInfoEvent):
            leg.pending[event.request_id] = event
        elif isinstance(event, WorkflowFailedEvent):
            leg.failed = event.error
    return steps


def _cannot_answer(tool: str, pending: list[RequestInfoEvent]) -> str:
    asks = "; ".join(question_text(tool, request) for request in pending)
    return (
        f"the workflow {tool!r} waits for an answer ({asks}). It can be answered over MCP only "
        "by a client that supports elicitation (form mode) on a connection that carries "
        "server requests, or that retries the call with the answers (protocol 2026-07-28): "
        "declare the elicitation capability and call the tool again"
    )
