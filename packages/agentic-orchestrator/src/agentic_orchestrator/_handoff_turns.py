"""One agent of a handoff mesh and what passes between agents: turns, requests, turn rules."""

from __future__ import annotations

import inspect
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, Field

from agentic_core import (
    Agent,
    AgentResponse,
    ChatMessage,
    FunctionCallContent,
    Role,
    TextContent,
    ToolApprovalRequest,
    ToolApprovalResponse,
    WorkflowContext,
    handler,
    response_handler,
)
from agentic_orchestrator._errors import OrchestratorError
from agentic_orchestrator._group_chat_state import GroupChatState, TerminationCondition
from agentic_orchestrator._handoff_tools import (
    requested_transfer,
    transfer_back_tool_name,
)
from agentic_orchestrator._participants import (
    AgentTurnExecutor,
    kept_turn,
)

__all__ = [
    "AUTONOMOUS_MODE_PROMPT",
    "AUTONOMOUS_TURN_LIMIT",
    "Autonomy",
    "DecideHandoff",
    "HandoffAgentExecutor",
    "HandoffTurn",
    "HandoffUserRequest",
    "HistoryMode",
    "TurnRules",
    "handoff_back_messages",
]

AUTONOMOUS_MODE_PROMPT = "User did not respond. Continue assisting autonomously."
"""What an agent in autonomous mode is told when it answered without handing off (MAF's)."""
AUTONOMOUS_TURN_LIMIT = 50
"""Autonomous turns an agent may take in a row when ``turn_limits`` names no limit (MAF's)."""

HistoryMode = Literal["spoken", "full_history", "last_message"]
"""What of an agent's turn joins the shared conversation: its spoken messages, all of it
(tool calls and results too), or only its last message (LangGraph-supervisor's workers)."""

DecideHandoff = Callable[[str, AgentResponse], str | Awaitable[str | None] | None]
"""``decide(agent_name, response) -> target name | None`` (sync or async)."""


class HandoffTurn(BaseModel):
    """The conversation as it passes from one agent to the next."""

    conversation: list[ChatMessage] = Field(default_factory=list[ChatMessage])
    path: list[str] = Field(default_factory=list[str])
    """The agents that have held the conversation, in order."""


class HandoffUserRequest(BaseModel):
    """What a handoff workflow asks the user (``request_info``) when an agent answered.

    Answer with a str: the user's next message, back to the same agent; an empty str ends the
    run (its output is then the conversation).
    """

    agent: str
    """The agent that answered and waits for the user."""
    text: str
    """Its answer."""
    conversation: list[ChatMessage] = Field(default_factory=list[ChatMessage])
    path: list[str] = Field(default_factory=list[str])


@dataclass(frozen=True)
class TurnRules:
    """How one agent of the mesh ends its turns (fixed at build time)."""

    interactive: bool
    termination: TerminationCondition | None
    max_handoffs: int
    history: HistoryMode = "spoken"
    autonomous_turns: int = 0
    autonomous_prompt: str = AUTONOMOUS_MODE_PROMPT
    return_to: str | None = None
    """The agent that gets the turn back whenever this one answers without handing off."""


@dataclass(frozen=True)
class Autonomy:
    """``with_autonomous_mode``'s settings; ``agents`` None: every agent."""

    agents: tuple[str, ...] | None
    prompts: dict[str, str]
    turn_limits: dict[str, int]

    def turns_and_prompt(self, name: str) -> tuple[int, str]:
        if self.agents is not None and name not in self.agents:
            return 0, AUTONOMOUS_MODE_PROMPT
        return (
            self.turn_limits.get(name, AUTONOMOUS_TURN_LIMIT),
            self.prompts.get(name, AUTONOMOUS_MODE_PROMPT),
        )


class HandoffAgentExecutor(AgentTurnExecutor):
    """One agent of the mesh: answers, then hands off, asks the user, or ends the run.

    A turn waiting for tool approval pauses the mesh (see ``AgentTurnExecutor``); answered,
    the turn goes on to its handoff, the user's turn or the end as if it had not paused."""

    def __init__(
        self,
        name: str,
        agent: Agent,
        tools_to_targets: dict[str, str],
        targets: Sequence[str],
        decide: DecideHandoff | None,
        rules: TurnRules,
        participants: dict[str, str],
    ) -> None:
        super().__init__(name, agent)
        self.tools_to_targets = tools_to_targets
        self.targets = tuple(targets)
        self.decide = decide
        self.rules = rules
        self.participants = participants

    @handler
    async def take_turn(
        self, turn: HandoffTurn, ctx: WorkflowContext[HandoffTurn, list[ChatMessage]]
    ) -> None:
        """Answer the conversation; then pass it on or finish."""
        await self._answer(turn.conversation, turn.path, ctx)

    @response_handler
    async def on_user_reply(
        self,
        request: HandoffUserRequest,
        reply: str,
        ctx: WorkflowContext[HandoffTurn, list[ChatMessage]],
    ) -> None:
        """The user's next message goes back to this agent; an empty reply ends the run.

        A reply that meets the termination condition ends the run before the agent is called.
        """
        if not reply.strip():
            await ctx.yield_output(list(request.conversation))
            return
        conversation = [*request.conversation, ChatMessage.user(reply)]
        await self._answer(conversation, request.path, ctx)

    @response_handler
    async def on_tool_approval(
        self,
        request: ToolApprovalRequest,
        answer: ToolApprovalResponse,
        ctx: WorkflowContext[HandoffTurn, list[ChatMessage]],
    ) -> None:
        """A person's answer to a waiting tool call; the whole turn answered, it goes on."""
        resumed = await self.answer_approval(request, answer, ctx)
        if resumed is None:
            return
        response, paused = resumed
        await self._answer(
            paused.conversation,
            list(paused.extra["path"]),
            ctx,
            autonomous=int(paused.extra["autonomous"]),
            answered=response,
        )

    async def _answer(
        self,
        conversation: list[ChatMessage],
        path: list[str],
        ctx: WorkflowContext[HandoffTurn, list[ChatMessage]],
        *,
        autonomous: int = 0,
        answered: AgentResponse | None = None,
    ) -> None:
        """Answer (again, in autonomous mode) until a handoff, the user's turn or the end.

        The termination condition is checked before every model call and after every answer.
        ``answered``: the turn that waited for tool approval, finished (it is not asked again).
        """
        rules = self.rules
        while True:
            response = answered
            answered = None
            if response is None:
                if await self._terminated(conversation, path):
                    break
                response = await self.run_turn(
                    conversation,
                    ctx,
                    conversation=conversation,
                    extra={"path": path, "autonomous": autonomous},
                )
                if response is None:
                    return  # the turn waits for tool approval
            conversation = [*conversation, *self._kept(response.messages)]
            target = await self._target(response)
            if target is not None:
                if target == rules.return_to and rules.history != "spoken":
                    conversation = [*conversation, *handoff_back_messages(self.id, target)]
                await self._hand_off(target, conversation, path, ctx)
                return
            if await self._terminated(conversation, path):
                break
            if autonomous < rules.autonomous_turns:
                autonomous += 1
                conversation = [*conversation, ChatMessage.user(rules.autonomous_prompt)]
                continue
            if rules.interactive:
                await ctx.request_info(
                    HandoffUserRequest(
                        agent=self.id, text=response.text, conversation=conversation, path=path
                    ),
                    str,
                )
                return
            break
        await ctx.yield_output(conversation)

    def _kept(self, messages: Sequence[ChatMessage]) -> list[ChatMessage]:
        """What of this agent's turn joins the shared conversation."""
        history = self.rules.history
        if history == "last_message":
            kept = kept_turn(messages, self.id, full_history=True)
            return kept[-1:]
        return kept_turn(messages, self.id, full_history=history == "full_history")

    async def _hand_off(
        self,
        target: str,
        conversation: list[ChatMessage],
        path: list[str],
        ctx: WorkflowContext[HandoffTurn, list[ChatMessage]],
    ) -> None:
        max_handoffs = self.rules.max_handoffs
        if len(path) - 1 >= max_handoffs:
            raise OrchestratorError(
                f"handoff limit of {max_handoffs} reached: "
                f"{' -> '.join([*path, target])}; raise it with with_max_handoffs(n) or "
                "make the agents answer"
            )
        await ctx.send_message(
            HandoffTurn(conversation=conversation, path=[*path, target]), target_id=target
        )

    async def _target(self, response: AgentResponse) -> str | None:
        target = requested_transfer(response, self.tools_to_targets)
        if target is None and self.decide is not None:
            decided = self.decide(self.id, response)
            if inspect.isawaitable(decided):
                decided = await decided
            target = decided
        if target is None:
            target = self.rules.return_to
        if target is not None and target not in self.targets:
            raise OrchestratorError(
                f"agent {self.id!r} may not hand off to {target!r} (its targets: "
                f"{', '.join(self.targets) or 'none'})"
            )
        return target

    async def _terminated(self, conversation: list[ChatMessage], path: list[str]) -> bool:
        termination = self.rules.termination
        if termination is None:
            return False
        state = GroupChatState(
            conversation=tuple(conversation),
            participants=self.participants,
            current_round=len(path) - 1,
            history=tuple(path),
        )
        verdict = termination(state)
        if inspect.isawaitable(verdict):
            verdict = await verdict
        return bool(verdict)


def handoff_back_messages(agent: str, target: str) -> list[ChatMessage]:
    """LangGraph-supervisor's record of a worker giving the turn back: a call and its result."""
    call_id = f"back_{uuid.uuid4().hex[:12]}"
    return [
        ChatMessage(
            role=Role.ASSISTANT,
            contents=[
                TextContent(text=f"Transferring back to {target}"),
                FunctionCallContent(
                    call_id=call_id, name=transfer_back_tool_name(target), arguments={}
                ),
            ],
            author_name=agent,
        ),
        ChatMessage.tool(call_id, f"Successfully transferred back to {target}"),
    ]
