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
from agentic_core.protocols._tool_approval import ToolApprovalRequest

if TYPE_CHECKING:
    from agentic_core.graph._workflow import Workflow
    from agentic_core.protocols._checkpoint import CheckpointStore

REQUEST_INFO_FUNCTION_NAME = "request_info"
"""The name of the function call a paused workflow agent answers with, one per request."""
_PAUSED = "workflow_agent_paused"
"""Thread metadata key: the paused run this thread waits on (run, checkpoint, request ids, and
the request ids of its tool approvals by call id)."""

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

    Human in the loop, as with ``ChatAgent``: a run that pauses on ``request_info`` lists, in
    ``AgentResponse.user_input_requests``, the ``ToolApprovalRequest`` of every tool call an
    agent inside the workflow waits to have approved (the same objects a ``ChatAgent`` returns),
    and ``run(responses={request_id: answer}, thread=thread)`` resumes the workflow with the
    answers. A tool approval is answered by its ``request_id`` (the call id, as with
    ``ChatAgent``) or by the workflow's request id; any other request by the workflow's request
    id. Answers a caller leaves out keep their requests pending (the next response lists them
    again). So one loop serves an agent and a workflow-as-agent alike::

        while response.user_input_requests:
            answers = {r.request_id: r.approve() for r in response.user_input_requests}
            response = await agent.run(responses=answers, thread=thread)

    Every pending request, of any type, also answers as Microsoft Agent Framework's
    ``WorkflowAgent`` does: one ``FunctionCallContent`` per request in the response's messages
    (name ``"request_info"``, ``call_id`` = the workflow's request id, ``arguments`` = the request
    data as JSON: a model's fields, a dict as is, anything else as ``{"data": value}``). That is
    where requests other than tool approvals show (MAF lists only approvals in
    ``user_input_requests`` too, and that field holds ``ToolApprovalRequest`` objects only):
    answer them with ``responses={call.call_id: answer}``, or as before with a
    ``FunctionResultContent`` for that call id in the next run's messages
    (``ChatMessage.tool(call_id, answer)``). Either way the thread records each answer as the
    call's result (answers given as ``responses``, once the workflow took them, lead the
    response's messages too, as the results of answered calls lead a ``ChatAgent``'s). The
    thread remembers the paused run in its metadata (``AgentThread.serialize`` keeps it), so
    with a checkpoint store (``checkpoint_store=`` or the workflow's own) the answer may come
    from another process and a new ``Workflow`` object; without a thread, answers to a run
    paused in this process are found by the workflow's request ids.
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
        self,
        messages: AgentInput = None,
        *,
        thread: AgentThread | None = None,
        responses: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> AgentResponse:
        """Run the workflow on the conversation (or resume it with answers) and answer with
        its outputs, plus a ``request_info`` function call per request it waits on and its
        tool approvals in ``user_input_requests``.

        ``responses`` answers pending requests, by request id (a tool approval's call id too),
        and resumes the paused run the thread waits on.
        """
        del kwargs
        thread = thread or self.get_new_thread()
        answers, paused, recorded = await self._take_input(messages, thread, responses)
        conversation = await thread.list_messages()
        if answers:
            result = await self.workflow.run(**self._resume_keywords(answers, paused))
        else:
            result = await self.workflow.run(conversation)
        produced, usage = _outputs_to_messages(result.outputs, self.name, conversation, self.reply)
        return await self._reply(
            thread,
            [*recorded, *produced],
            usage,
            result.pending_requests,
            result.last_checkpoint_id,
        )

    async def run_stream(
        self,
        messages: AgentInput = None,
        *,
        thread: AgentThread | None = None,
        responses: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[AgentResponseUpdate]:
        """Stream the agents' updates inside the workflow, then ``done`` with the response
        (``user_input_requests`` included); ``responses`` answers pending requests, as in
        ``run``."""
        del kwargs
        thread = thread or self.get_new_thread()
        answers, paused, recorded = await self._take_input(messages, thread, responses)
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
            thread, [*recorded, *produced], usage, list(requests.values()), checkpoint_id
        )
        yield AgentResponseUpdate(author_name=self.name, done=True, response=response)

    # -- human in the loop ----------------------------------------------------------------------

    async def _take_input(
        self, messages: AgentInput, thread: AgentThread, responses: Mapping[str, Any] | None
    ) -> tuple[dict[str, Any], dict[str, Any] | None, list[ChatMessage]]:
        """Add the input to the thread; return the answers to pending requests it and
        ``responses`` carry (by the workflow's request ids), the paused run the thread waits
        on, and ``responses`` as call results for the thread (recorded once the workflow took
        them: a refused answer leaves no result behind)."""
        new = to_messages(messages)
        paused: dict[str, Any] | None = thread.metadata.get(_PAUSED)
        given = {} if responses is None else self._by_request_id(responses, paused)
        if new:
            await thread.add_messages(new)
        answers = {r.call_id: r.result for m in new for r in m.function_results}
        if paused is not None:
            waiting = set(paused.get("request_ids", []))
            answers = {k: v for k, v in answers.items() if k in waiting}
        # else no thread state: maybe a run paused in this process
        answers.update(given)
        recorded = [
            ChatMessage.tool(request_id, _result(value)) for request_id, value in given.items()
        ]
        return answers, paused, recorded

    def _by_request_id(
        self, responses: Mapping[str, Any], paused: Mapping[str, Any] | None
    ) -> dict[str, Any]:
        """``responses`` keyed by the workflow's request ids (a tool approval's call id is
        looked up in what the thread remembers of the paused run)."""
        if not responses:
            raise AgentError(f"workflow agent {self.name!r}: run(responses=...) holds no answer")
        if paused is None:
            return dict(responses)  # the workflow knows the requests of runs paused here
        waiting: list[str] = list(paused.get("request_ids", []))
        by_call: dict[str, list[str]] = paused.get("approval_calls", {})
        answers: dict[str, Any] = {}
        for key, answer in responses.items():
            matches = [key] if key in waiting else by_call.get(key, [])
            if len(matches) != 1:
                raise AgentError(self._unknown_answer(key, matches, waiting, by_call))
            if matches[0] in answers:
                raise AgentError(
                    f"workflow agent {self.name!r}: two answers to request {matches[0]!r} "
                    "(by its request id and by its tool call id)"
                )
            answers[matches[0]] = answer
        return answers

    def _unknown_answer(
        self, key: str, matches: list[str], waiting: list[str], by_call: Mapping[str, list[str]]
    ) -> str:
        if matches:
            return (
                f"workflow agent {self.name!r}: tool call id {key!r} names {len(matches)} "
                f"pending approvals; answer them by request id ({', '.join(map(repr, matches))})"
            )
        return (
            f"workflow agent {self.name!r}: no pending request {key!r} (waiting: request ids "
            f"{', '.join(map(repr, waiting)) or 'none'}; tool call ids "
            f"{', '.join(map(repr, by_call)) or 'none'})"
        )

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
            by_call: dict[str, list[str]] = {}
            for request in pending:
                if isinstance(request.data, ToolApprovalRequest):
                    by_call.setdefault(request.data.call_id, []).append(request.request_id)
            thread.metadata[_PAUSED] = {
                "run_id": pending[0].run_id,
                "checkpoint_id": checkpoint_id,
                "request_ids": [request.request_id for request in pending],
                "approval_calls": by_call,
            }
        else:
            thread.metadata.pop(_PAUSED, None)
        await thread.add_messages(produced)
        return AgentResponse(
            messages=produced,
            text=_last_text(produced),
            usage=usage,
            agent_id=self.id,
            user_input_requests=[
                request.data for request in pending if isinstance(request.data, ToolApprovalRequest)
            ],
        )


def _arguments(data: Any) -> dict[str, Any]:
    """A request's data as function-call arguments (a JSON object)."""
    if isinstance(data, BaseModel):
        return data.model_dump(mode="json")
    value = to_jsonable_python(data, fallback=str)
    if isinstance(value, dict):
        return value  # pyright: ignore[reportUnknownVariableType]
    return {"data": value}


def _result(answer: Any) -> Any:
    """An answer as the result the thread records for its ``request_info`` call."""
    if isinstance(answer, BaseModel):
        return answer.model_dump(mode="json")
    return to_jsonable_python(answer, fallback=str)


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
