"""The rules of tool approval an agent applies: which calls wait, where a paused turn stands in a
conversation, how answers are read, what the model sees of a rejection.

Pure functions over messages and tools; ``ChatAgent`` does the I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from agentic_core._errors import AgentError
from agentic_core.protocols._messages import ChatMessage, FunctionCallContent, Role
from agentic_core.protocols._tool import Tool
from agentic_core.protocols._tool_approval import (
    ToolApprovalMode,
    ToolApprovalRequest,
    ToolApprovalResponse,
)

APPROVAL_MODES: tuple[ToolApprovalMode, ...] = ("always_require", "never_require")


def checked_mode(mode: ToolApprovalMode, owner: str) -> ToolApprovalMode:
    """``mode`` if it is an approval mode (callers without type checking pass anything), else
    ``ValueError`` naming ``owner``."""
    if mode not in APPROVAL_MODES:
        raise ValueError(
            f"{owner}: tool_approval_mode must be 'always_require' or 'never_require', got {mode!r}"
        )
    return mode


def requires_approval(tool: Tool | None, default: ToolApprovalMode) -> bool:
    """Whether a call of ``tool`` waits: the tool's own ``approval_mode`` wins over the
    agent's ``default``. An unknown tool never waits (its call is an error result)."""
    if tool is None:
        return False
    own: object = getattr(tool, "approval_mode", None)
    return (own if own in APPROVAL_MODES else default) == "always_require"


def approval_request(call: FunctionCallContent, agent_name: str) -> ToolApprovalRequest:
    """The request a waiting call becomes."""
    return ToolApprovalRequest(
        call_id=call.call_id,
        tool_name=call.name,
        arguments=dict(call.arguments),
        agent_name=agent_name,
    )


@dataclass(frozen=True, slots=True)
class WaitingCalls:
    """The last assistant message with tool calls, and those of its calls without a result."""

    index: int
    """Where the message stands in the conversation."""
    calls: list[FunctionCallContent]
    """Its calls that no later message answers, in the model's order."""
    answered_up_to: int
    """The index after the message and the tool results that follow it: where results go."""


def waiting_calls(messages: Sequence[ChatMessage]) -> WaitingCalls | None:
    """The unanswered calls of the conversation's last assistant message with tool calls."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.role is not Role.ASSISTANT or not message.function_calls:
            continue
        later = messages[index + 1 :]
        answered = {r.call_id for m in later for r in m.function_results}
        calls = [c for c in message.function_calls if c.call_id not in answered]
        if not calls:
            return None
        end = index + 1
        while end < len(messages) and messages[end].role is Role.TOOL:
            end += 1
        return WaitingCalls(index, calls, end)
    return None


def read_answers(
    responses: Mapping[str, ToolApprovalResponse | Mapping[str, Any]], agent_name: str
) -> dict[str, ToolApprovalResponse]:
    """Answers by call id; a mapping (an answer as JSON) is validated into a response."""
    answers: dict[str, ToolApprovalResponse] = {}
    for call_id, answer in responses.items():
        if isinstance(answer, ToolApprovalResponse):
            answers[call_id] = answer
            continue
        try:
            answers[call_id] = ToolApprovalResponse.model_validate(answer)
        except ValidationError as exc:
            raise AgentError(
                f"agent {agent_name!r}: the answer to tool call {call_id!r} is not a "
                f"ToolApprovalResponse: {exc.errors(include_url=False)[0]['msg']}"
            ) from exc
    return answers


def check_answers(
    waiting: WaitingCalls,
    answers: Mapping[str, ToolApprovalResponse],
    needs_answer: set[str],
    agent_name: str,
) -> None:
    """Every call needing approval is answered, and every answer names a waiting call."""
    known = {c.call_id for c in waiting.calls}
    unknown = sorted(set(answers) - known)
    if unknown:
        raise AgentError(
            f"agent {agent_name!r}: no tool call {', '.join(map(repr, unknown))} waits for "
            f"approval (waiting: {', '.join(map(repr, sorted(needs_answer))) or 'none'})"
        )
    missing = sorted(needs_answer - set(answers))
    if missing:
        raise AgentError(
            f"agent {agent_name!r}: answer every tool call waiting for approval; "
            f"missing {', '.join(map(repr, missing))}"
        )


def answered_call(call: FunctionCallContent, answer: ToolApprovalResponse) -> FunctionCallContent:
    """The call as it will run: with the edited arguments when the answer has some."""
    if answer.arguments is None:
        return call
    return call.model_copy(update={"arguments": dict(answer.arguments)})


def with_edited_calls(
    message: ChatMessage, edited: Mapping[str, FunctionCallContent]
) -> ChatMessage:
    """``message`` whose calls carry the arguments they ran with (same message id)."""
    contents = [
        edited.get(c.call_id, c) if isinstance(c, FunctionCallContent) else c
        for c in message.contents
    ]
    return message.model_copy(update={"contents": contents})


def rejection_result(call: FunctionCallContent, answer: ToolApprovalResponse) -> ChatMessage:
    """What the model reads of a rejected call: an error result saying so, and why."""
    text = f"Error: the user rejected this call of tool {call.name!r}"
    if answer.reason:
        text += f": {answer.reason}"
    return ChatMessage.tool(call.call_id, text, is_error=True)


def unanswered_error(agent_name: str, calls: Sequence[FunctionCallContent]) -> AgentError:
    """New input on a conversation whose tool calls still wait for approval."""
    ids = ", ".join(repr(c.call_id) for c in calls)
    return AgentError(
        f"agent {agent_name!r}: tool call(s) {ids} wait for approval; answer them first with "
        "run(responses={call_id: ToolApprovalResponse}, thread=thread)"
    )
