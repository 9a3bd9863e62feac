"""AgentExecutor: an agent as a node of a workflow graph, with one conversation per run."""

from __future__ import annotations

import functools
from typing import Any

from pydantic import BaseModel, Field, TypeAdapter

from agentic_core._memo import BoundedMemo
from agentic_core.graph._context import WorkflowContext
from agentic_core.graph._executor import Executor, ExecutorKind, handler, response_handler
from agentic_core.protocols._agent import Agent, AgentResponse, to_messages
from agentic_core.protocols._events import AgentRunUpdateEvent
from agentic_core.protocols._messages import ChatMessage, Role
from agentic_core.protocols._thread import AgentThread
from agentic_core.protocols._tool_approval import ToolApprovalRequest, ToolApprovalResponse


class AgentExecutorResponse(BaseModel):
    """What an AgentExecutor sends on: its agent's response and the conversation so far."""

    executor_id: str
    agent_response: AgentResponse
    full_conversation: list[ChatMessage] = Field(default_factory=list[ChatMessage])


AgentExecutorInput = str | ChatMessage | list[ChatMessage] | AgentExecutorResponse


@functools.cache
def _messages() -> TypeAdapter[list[ChatMessage]]:
    """Reads and writes a list of messages as JSON (built on first use: imports stay cheap)."""
    return TypeAdapter(list[ChatMessage])


class AgentExecutor(Executor):
    """Runs ``agent`` on each message it receives and sends an ``AgentExecutorResponse`` on.

    The executor keeps one ``AgentThread`` per run: reached again later in the same run (a
    loop, a human's feedback), the agent sees its earlier turns. The thread is executor state,
    saved in every checkpoint and restored on resume; each new run starts a fresh one.

    A str becomes a user message. An ``AgentExecutorResponse`` from a previous agent brings the
    conversation so far: the messages the thread does not hold yet (by ``message_id``) join it,
    so a chain of AgentExecutors is one conversation and a loop back adds only what is new.
    While the run is streamed (``run_stream``) the agent streams too and each update surfaces
    at once as an ``AgentRunUpdateEvent``. ``output_response=True`` also yields the
    ``AgentResponse`` as a workflow output.

    Tool approval: when the agent's turn stops on tool calls waiting for approval
    (``AgentResponse.user_input_requests``), each becomes a ``request_info`` of this executor
    (data: the ``ToolApprovalRequest``; answer: a ``ToolApprovalResponse``), so the run pauses
    and the pending calls live in the checkpoint. Once every call of the turn is answered the
    agent resumes it (``run(responses=...)``) and only then sends its response on.
    """

    streams_live = True

    def __init__(
        self,
        agent: Agent,
        *,
        id: str | None = None,  # noqa: A002
        output_response: bool = False,
    ) -> None:
        super().__init__(id or agent.name, kind=ExecutorKind.WORKER)
        self.agent = agent
        self.output_response = output_response
        self._thread_state: dict[str, Any] | None = None

    def snapshot_state(self) -> Any:
        """This run's conversation: the thread's id, metadata and messages (a JSON string)."""
        return self._thread_state

    def restore_state(self, state: Any) -> None:
        """Take the run's conversation (None: the run has not reached this agent yet)."""
        self._thread_state = state

    @handler
    async def run_agent(
        self,
        message: AgentExecutorInput,
        ctx: WorkflowContext[AgentExecutorResponse, AgentResponse],
    ) -> None:
        """Run the agent on what ``message`` adds to this run's conversation."""
        thread = await self._thread()
        known = {m.message_id for m in await thread.list_messages()}
        new_input = [m for m in _conversation(message) if m.message_id not in known]
        response = await self._run(new_input, thread, ctx, None)
        await self._finish_turn(response, thread, ctx)

    @response_handler
    async def answer_tool_approval(
        self,
        request: ToolApprovalRequest,
        response: ToolApprovalResponse,
        ctx: WorkflowContext[AgentExecutorResponse, AgentResponse],
    ) -> None:
        """Keep the answer; once every waiting call of the turn has one, resume the turn."""
        state = dict(self._thread_state or {})
        approvals: dict[str, Any] = dict(state.get(_APPROVALS) or {"waiting": [], "answers": {}})
        answers = {**approvals["answers"], request.call_id: response.model_dump(mode="json")}
        state[_APPROVALS] = {"waiting": approvals["waiting"], "answers": answers}
        self._thread_state = state
        if any(call_id not in answers for call_id in approvals["waiting"]):
            return
        thread = await self._thread()
        agent_response = await self._run([], thread, ctx, answers)
        await self._finish_turn(agent_response, thread, ctx)

    async def _run(
        self,
        new_input: list[ChatMessage],
        thread: AgentThread,
        ctx: WorkflowContext[AgentExecutorResponse, AgentResponse],
        answers: dict[str, Any] | None,
    ) -> AgentResponse:
        keywords: dict[str, Any] = {} if answers is None else {"responses": answers}
        if ctx.is_streaming:
            return await self._run_streaming(new_input, thread, ctx, keywords)
        return await self.agent.run(new_input, thread=thread, **keywords)

    async def _finish_turn(
        self,
        response: AgentResponse,
        thread: AgentThread,
        ctx: WorkflowContext[AgentExecutorResponse, AgentResponse],
    ) -> None:
        """Save the conversation; ask for approvals, or send the response on."""
        conversation = await thread.list_messages()
        self._thread_state = _thread_data(thread, conversation)
        if response.user_input_requests:
            waiting = [request.call_id for request in response.user_input_requests]
            self._thread_state[_APPROVALS] = {"waiting": waiting, "answers": {}}
            for request in response.user_input_requests:
                await ctx.request_info(request, ToolApprovalResponse)
            return
        await ctx.send_message(
            AgentExecutorResponse(
                executor_id=self.id, agent_response=response, full_conversation=conversation
            )
        )
        if self.output_response:
            await ctx.yield_output(response)

    async def _thread(self) -> AgentThread:
        """This run's thread: a new one from the agent, holding the run's messages so far."""
        state = self._thread_state
        if state is None:
            return self.agent.get_new_thread()
        thread = self.agent.get_new_thread(**state.get("metadata", {}))
        thread.id = state["id"]
        saved = state.get("messages", [])
        # A list of message objects: a checkpoint written before the string form.
        messages = (
            list(_parsed_messages(saved))
            if isinstance(saved, str)
            else [ChatMessage.model_validate(m) for m in saved]
        )
        if messages:
            await thread.add_messages(messages)
        return thread

    async def _run_streaming(
        self,
        new_input: list[ChatMessage],
        thread: AgentThread,
        ctx: WorkflowContext[AgentExecutorResponse, AgentResponse],
        keywords: dict[str, Any],
    ) -> AgentResponse:
        before = len(await thread.list_messages()) + len(new_input)
        final: AgentResponse | None = None
        async for update in self.agent.run_stream(new_input, thread=thread, **keywords):
            await ctx.add_event(AgentRunUpdateEvent(executor_id=self.id, update=update))
            if update.done and update.response is not None:
                final = update.response
        if final is not None:
            return final
        # An agent whose last update carries no response: rebuild it from the thread.
        produced = (await thread.list_messages())[before:]
        return AgentResponse(
            messages=produced,
            text=next((m.text for m in reversed(produced) if m.role is Role.ASSISTANT), ""),
            agent_id=self.agent.id,
        )


_APPROVALS = "tool_approvals"
"""Executor state key: the call ids of the turn waiting for approval, and the answers so far."""

# Thread states this process wrote lately, by their JSON: an agent reached again in a run
# restores the string its last turn saved, and gets the messages back without parsing them.
# Messages are shared between restores and never changed in place.
_RECENT: BoundedMemo[str, tuple[ChatMessage, ...]] = BoundedMemo(256)


def _parsed_messages(saved: str) -> tuple[ChatMessage, ...]:
    messages = _RECENT.get(saved)
    if messages is None:
        messages = tuple(_messages().validate_json(saved))
    return messages


def _thread_data(thread: AgentThread, messages: list[ChatMessage]) -> dict[str, Any]:
    # The messages as one JSON string: the engine copies executor state at every superstep,
    # and a string costs nothing to copy, where nested data costs a walk of every message.
    saved = _messages().dump_json(messages).decode()
    _RECENT.remember(saved, tuple(messages))
    return {"id": thread.id, "metadata": dict(thread.metadata), "messages": saved}


def _conversation(message: Any) -> list[ChatMessage]:
    if isinstance(message, AgentExecutorResponse):
        return list(message.full_conversation)
    return to_messages(message)
