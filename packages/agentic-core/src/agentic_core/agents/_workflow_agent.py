"""WorkflowAgent: a whole workflow behind the Agent interface, human-in-the-loop included."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any, Literal, TypeGuard, cast

from pydantic import BaseModel
from pydantic_core import to_jsonable_python

from agentic_core._errors import AgentError
from agentic_core.agents._agent_executor import AgentExecutorResponse
from agentic_core.graph._typing import can_accept
from agentic_core.protocols._agent import (
    AgentInput,
    AgentResponse,
    AgentResponseUpdate,
    to_messages,
)
from agentic_core.protocols._events import (
    AgentRunUpdateEvent,
    RequestInfoEvent,
    WorkflowCompletedEvent,
    WorkflowFailedEvent,
    WorkflowOutputEvent,
    WorkflowRunState,
)
from agentic_core.protocols._messages import (
    ChatMessage,
    FunctionCallContent,
    Role,
    UsageDetails,
)
from agentic_core.protocols._thread import AgentThread

if TYPE_CHECKING:
    from agentic_core.graph._workflow import Workflow
    from agentic_core.protocols._checkpoint import CheckpointStore

REQUEST_INFO_FUNCTION_NAME = "request_info"
"""The name of the function call a paused workflow agent answers with, one per request."""
_PAUSED = "workflow_agent_paused"
"""Thread metadata key: the paused run this thread waits on (run, checkpoint, request ids)."""

WorkflowAgentReply = Literal["last_agent", "new_messages"]
"""What a ``list[ChatMessage]`` output answers with: the last agent's turn, or every message
the run added after the input conversation."""


class WorkflowAgent:
    """An agent whose answer is a workflow run: the conversation goes in, outputs come back.

    The start executor receives the thread's whole conversation as ``list[ChatMessage]``.
    Outputs become the response's messages: an ``AgentResponse`` or ``AgentExecutorResponse``
    gives its messages, a ``ChatMessage`` itself, a str an assistant message, anything else an
    assistant message holding its JSON.

    A ``list[ChatMessage]`` output (the conversation the orchestration patterns yield) answers,
    as MAF's patterns-as-agents do, with the last agent's messages: the messages after the
    input conversation, then of those the last agent's turn (the last assistant message and
    the messages just before it from the same author, its tool results included). So
    ``SequentialBuilder(participants=[a1, a2]).build().as_agent()`` answers with ``a2``'s reply,
    never the prompt again. ``reply="new_messages"`` answers with every message the run added
    after the input instead (a concurrent run: every participant's answer).

    Human in the loop: a run that pauses on ``request_info`` answers with one
    ``FunctionCallContent`` per pending request (name ``"request_info"``, ``call_id`` = the
    request id, ``arguments`` = the request data as JSON: a model's fields, a dict as is,
    anything else as ``{"data": value}``). The caller's next run on the same thread carrying a
    ``FunctionResultContent`` for that call id (``ChatMessage.tool(call_id, answer)``) resumes
    the workflow with that answer. The thread remembers the paused run in its metadata
    (``AgentThread.serialize`` keeps it), so with a checkpoint store (``checkpoint_store=`` or
    the workflow's own) the answer may come from another process; without a thread, answers to
    a run paused in this process are found by their call ids.
    """

    REQUEST_INFO_FUNCTION_NAME = REQUEST_INFO_FUNCTION_NAME
    """The function name of the calls a paused workflow answers with (as in MAF)."""

    def __init__(
        self,
        workflow: Workflow,
        *,
        name: str | None = None,
        id: str | None = None,  # noqa: A002 - the API's name
        checkpoint_store: CheckpointStore | None = None,
        reply: WorkflowAgentReply = "last_agent",
    ) -> None:
        start = workflow.get_executor(workflow.start_executor_id)
        if not any(can_accept(s.message_type, list[ChatMessage]) for s in start.handlers):
            raise AgentError(
                f"workflow {workflow.name!r} cannot run as an agent: its start executor "
                f"'{start.id}' has no handler for list[ChatMessage]"
            )
        self.workflow = workflow
        self.name = name or workflow.name
        self.id = id or f"{self.name}-{uuid.uuid4().hex[:8]}"
        self.checkpoint_store = checkpoint_store or workflow.checkpoint_store
        self.reply: WorkflowAgentReply = reply

    def get_new_thread(self, **metadata: Any) -> AgentThread:
        """A fresh conversation."""
        return AgentThread(metadata=metadata)

    async def run(
        self, messages: AgentInput = None, *, thread: AgentThread | None = None, **kwargs: Any
    ) -> AgentResponse:
        """Run the workflow on the conversation (or resume it with answers) and answer with
        its outputs, plus a ``request_info`` function call per request it waits on."""
        del kwargs
        thread = thread or self.get_new_thread()
        answers, paused = await self._take_input(messages, thread)
        conversation = await thread.list_messages()
        if answers:
            result = await self.workflow.run(**self._resume_keywords(answers, paused))
        else:
            result = await self.workflow.run(conversation)
        produced, usage = _outputs_to_messages(result.outputs, self.name, conversation, self.reply)
        return await self._reply(
            thread, produced, usage, result.pending_requests, result.last_checkpoint_id
        )

    async def run_stream(
        self, messages: AgentInput = None, *, thread: AgentThread | None = None, **kwargs: Any
    ) -> AsyncIterator[AgentResponseUpdate]:
        """Stream the agents' updates inside the workflow, then ``done`` with the response."""
        del kwargs
        thread = thread or self.get_new_thread()
        answers, paused = await self._take_input(messages, thread)
        conversation = await thread.list_messages()
        if answers:
            events = self.workflow.run_stream(**self._resume_keywords(answers, paused))
        else:
            events = self.workflow.run_stream(conversation)
        outputs: list[Any] = []
        requests: dict[str, RequestInfoEvent] = {}
        async for event in events:
            if isinstance(event, AgentRunUpdateEvent) and isinstance(
                event.update, AgentResponseUpdate
            ):
                if not event.update.done:
                    yield event.update
            elif isinstance(event, WorkflowOutputEvent):
                outputs.append(event.data)
            elif isinstance(event, RequestInfoEvent):
                requests[event.request_id] = event
            elif isinstance(event, WorkflowFailedEvent):
                raise AgentError(f"workflow agent {self.name!r} failed: {event.error}")
            elif (
                isinstance(event, WorkflowCompletedEvent)
                and event.status is not WorkflowRunState.IDLE_WITH_PENDING_REQUESTS
            ):
                requests.clear()  # every request was answered in this call
        produced, usage = _outputs_to_messages(outputs, self.name, conversation, self.reply)
        checkpoint_id = await self._latest_checkpoint(requests)
        response = await self._reply(
            thread, produced, usage, list(requests.values()), checkpoint_id
        )
        yield AgentResponseUpdate(author_name=self.name, done=True, response=response)

    # -- human in the loop ----------------------------------------------------------------------

    async def _take_input(
        self, messages: AgentInput, thread: AgentThread
    ) -> tuple[dict[str, Any], dict[str, Any] | None]:
        """Add the input to the thread; return the answers it carries to pending requests."""
        new = to_messages(messages)
        if new:
            await thread.add_messages(new)
        paused: dict[str, Any] | None = thread.metadata.get(_PAUSED)
        results = {r.call_id: r.result for m in new for r in m.function_results}
        if paused is not None:
            waiting = set(paused.get("request_ids", []))
            return {k: v for k, v in results.items() if k in waiting}, paused
        return results, None  # no thread state: maybe a run paused in this process

    def _resume_keywords(
        self, answers: Mapping[str, Any], paused: Mapping[str, Any] | None
    ) -> dict[str, Any]:
        checkpoint_id = paused.get("checkpoint_id") if paused else None
        if checkpoint_id is not None and self.checkpoint_store is not None:
            return {
                "checkpoint_id": checkpoint_id,
                "checkpoint_store": self.checkpoint_store,
                "responses": dict(answers),
            }
        return {"responses": dict(answers)}

    async def _latest_checkpoint(self, requests: Mapping[str, RequestInfoEvent]) -> str | None:
        """The checkpoint a streamed run paused at (a stream does not return a result)."""
        if not requests or self.checkpoint_store is None:
            return None
        latest = await self.checkpoint_store.latest(next(iter(requests.values())).run_id)
        return None if latest is None else latest.id

    async def _reply(
        self,
        thread: AgentThread,
        produced: list[ChatMessage],
        usage: UsageDetails,
        pending: list[RequestInfoEvent],
        checkpoint_id: str | None,
    ) -> AgentResponse:
        if pending:
            calls = [
                FunctionCallContent(
                    call_id=request.request_id,
                    name=REQUEST_INFO_FUNCTION_NAME,
                    arguments=_arguments(request.data),
                )
                for request in pending
            ]
            produced = [*produced, ChatMessage.assistant(contents=calls, author_name=self.name)]
            thread.metadata[_PAUSED] = {
                "run_id": pending[0].run_id,
                "checkpoint_id": checkpoint_id,
                "request_ids": [request.request_id for request in pending],
            }
        else:
            thread.metadata.pop(_PAUSED, None)
        await thread.add_messages(produced)
        return AgentResponse(
            messages=produced, text=_last_text(produced), usage=usage, agent_id=self.id
        )


def _arguments(data: Any) -> dict[str, Any]:
    """A request's data as function-call arguments (a JSON object)."""
    if isinstance(data, BaseModel):
        return data.model_dump(mode="json")
    value = to_jsonable_python(data, fallback=str)
    if isinstance(value, dict):
        return value  # pyright: ignore[reportUnknownVariableType]
    return {"data": value}


def _outputs_to_messages(
    outputs: list[Any], name: str, conversation: list[ChatMessage], reply: WorkflowAgentReply
) -> tuple[list[ChatMessage], UsageDetails]:
    """The run's outputs as the agent's reply (``conversation``: what the run was given)."""
    messages: list[ChatMessage] = []
    usage = UsageDetails()
    for raw in outputs:
        output = raw.agent_response if isinstance(raw, AgentExecutorResponse) else raw
        if isinstance(output, AgentResponse):
            messages.extend(output.messages)
            usage = usage + output.usage
        elif isinstance(output, ChatMessage):
            messages.append(output)
        elif isinstance(output, str):
            messages.append(ChatMessage.assistant(output, author_name=name))
        elif _is_conversation(output):
            added = _after_input(output, conversation)
            messages.extend(added if reply == "new_messages" else _last_agent_turn(added))
        else:
            text = json.dumps(to_jsonable_python(output, fallback=str))
            messages.append(ChatMessage.assistant(text, author_name=name))
    return messages, usage


def _is_conversation(output: object) -> TypeGuard[list[ChatMessage]]:
    return isinstance(output, list) and all(
        isinstance(item, ChatMessage) for item in cast("list[object]", output)
    )


def _after_input(output: list[ChatMessage], given: list[ChatMessage]) -> list[ChatMessage]:
    """``output`` without the part it repeats of the conversation the run was given."""
    shared = 0
    for produced, sent in zip(output, given, strict=False):
        if produced != sent:
            break
        shared += 1
    return output[shared:]


def _last_agent_turn(messages: list[ChatMessage]) -> list[ChatMessage]:
    """The last assistant message and what its author said just before it (tool results too).

    Messages with no assistant among them are returned as they are.
    """
    last = next(
        (i for i in range(len(messages) - 1, -1, -1) if messages[i].role is Role.ASSISTANT), None
    )
    if last is None:
        return messages
    author = messages[last].author_name
    first = last
    while first > 0:
        before = messages[first - 1]
        if before.role is not Role.TOOL and (
            before.role is not Role.ASSISTANT or before.author_name != author
        ):
            break
        first -= 1
    return messages[first : last + 1]


def _last_text(messages: list[ChatMessage]) -> str:
    return next((m.text for m in reversed(messages) if m.role is Role.ASSISTANT), "")
