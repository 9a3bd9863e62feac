"""Tool approval: the request a tool call needing a human's approval becomes, and its answer.

A tool (``tool(..., approval_mode="always_require")``) or an agent
(``ChatAgent(..., tool_approval_mode="always_require")``) may ask that a call waits for a
person. The call does not run: the agent answers with a ``ToolApprovalRequest`` per call (in
``AgentResponse.user_input_requests``; in a workflow, as the agent executor's
``request_info``), and a ``ToolApprovalResponse`` approves it, rejects it with a reason the
model reads as the tool's result, or approves it with edited arguments.

Reprs never show argument values (a call may carry a password or a token): only their names.
"""

from __future__ import annotations

from typing import Any, Literal, Self

from pydantic import BaseModel, Field, model_validator

ToolApprovalMode = Literal["always_require", "never_require"]
"""Whether a tool's calls wait for a person's approval (Microsoft Agent Framework's names)."""


def _argument_names(arguments: dict[str, Any] | None) -> str | None:
    if arguments is None:
        return None
    return "{" + ", ".join(f"{name!r}: ..." for name in arguments) + "}"


class ToolApprovalRequest(BaseModel):
    """A tool call waiting for approval: which call, which tool, with which arguments.

    Answer it with ``request.approve()``, ``request.reject("why")`` or
    ``request.edit({...})`` (each a ``ToolApprovalResponse``). With ``ChatAgent.run`` the
    answer goes back as ``run(responses={request.call_id: answer}, thread=thread)``; in a
    workflow as ``workflow.run(responses={request_id: answer}, ...)`` for the request id of
    the ``RequestInfoEvent`` that carries it.
    """

    call_id: str
    """The model's id of the call (``FunctionCallContent.call_id``); the key of the answer."""
    tool_name: str
    """The tool the model wants to call."""
    arguments: dict[str, Any] = Field(default_factory=dict[str, Any])
    """The arguments the model chose, as it sent them."""
    agent_name: str | None = None
    """The agent whose model made the call."""

    @property
    def request_id(self) -> str:
        """The id an agent's ``run(responses=...)`` answers it by: the call id."""
        return self.call_id

    def approve(self) -> ToolApprovalResponse:
        """Let the call run as the model made it."""
        return ToolApprovalResponse.approve()

    def reject(self, reason: str | None = None) -> ToolApprovalResponse:
        """Refuse the call; the model reads ``reason`` as the tool's (error) result."""
        return ToolApprovalResponse.reject(reason)

    def edit(self, arguments: dict[str, Any]) -> ToolApprovalResponse:
        """Let the call run with ``arguments`` instead of the model's."""
        return ToolApprovalResponse.edit(arguments)

    def __repr_args__(self) -> Any:
        for name, value in super().__repr_args__():
            yield name, _argument_names(value) if name == "arguments" else value


class ToolApprovalResponse(BaseModel):
    """A person's answer to a ``ToolApprovalRequest``.

    ``approved=True`` runs the call (with ``arguments`` instead of the model's when given);
    ``approved=False`` does not, and the model sees ``reason`` as the call's error result.
    As JSON: ``{"approved": true}``, ``{"approved": false, "reason": "..."}``,
    ``{"approved": true, "arguments": {...}}``.
    """

    approved: bool
    """Whether the call may run."""
    reason: str | None = None
    """Why it was rejected (or any note); shown to the model when the call is rejected."""
    arguments: dict[str, Any] | None = None
    """Edited arguments the call runs with instead of the model's (approved calls only)."""

    @model_validator(mode="after")
    def _arguments_only_when_approved(self) -> Self:
        if self.arguments is not None and not self.approved:
            raise ValueError("edited arguments need approved=True: a rejected call does not run")
        return self

    @classmethod
    def approve(cls) -> Self:
        """Let the call run as the model made it."""
        return cls(approved=True)

    @classmethod
    def reject(cls, reason: str | None = None) -> Self:
        """Refuse the call; the model reads ``reason`` as the tool's (error) result."""
        return cls(approved=False, reason=reason)

    @classmethod
    def edit(cls, arguments: dict[str, Any]) -> Self:
        """Run the call with ``arguments`` instead of the model's."""
        return cls(approved=True, arguments=dict(arguments))

    def __repr_args__(self) -> Any:
        for name, value in super().__repr_args__():
            yield name, _argument_names(value) if name == "arguments" else value
