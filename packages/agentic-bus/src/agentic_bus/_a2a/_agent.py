"""A2AAgent: a core ``Agent`` whose answers come from a remote A2A agent (``a2a-sdk`` client)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncGenerator, AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any, NoReturn, Self, cast

try:
    from a2a.types import AgentCard, Message, Part, Role, SendMessageRequest, StreamResponse
except ImportError as _missing:  # pragma: no cover - the [a2a] extra is not installed
    raise ImportError("A2AAgent needs the a2a-sdk: pip install 'agentic-bus[a2a]'") from _missing

from agentic_bus._a2a._client_events import Answer, AnswerFold, state_name
from agentic_bus._a2a._client_link import A2ALink
from agentic_bus._a2a._client_parts import (
    AnswerValue,
    RequestKind,
    answer_parts,
    message_parts,
    pending_requests,
)
from agentic_bus._a2a._client_threads import Pending, PendingRequests
from agentic_bus._a2a._errors import A2AError, A2ATaskError, A2ATimeoutError
from agentic_bus._a2a._parts import contents_of, data_of
from agentic_core import (
    AgentError,
    AgentResponse,
    AgentResponseUpdate,
    AgentThread,
    ChatMessage,
    Content,
    TextContent,
    Tool,
    ToolApprovalRequest,
    to_messages,
    tool,
)
from agentic_core import (
    Role as ChatRole,
)

__all__ = ["A2AAgent"]


@dataclass
class _Send:
    """One message on its way: the A2A request and the agentic messages it carries."""

    request: SendMessageRequest
    sent: list[ChatMessage]


class A2AAgent:
    """A core ``Agent`` standing in for a remote A2A agent, on the official ``a2a-sdk`` client.

    ``url_or_card`` is the agent's base URL (its card is read from
    ``/.well-known/agent-card.json`` on first use; a URL ending in ``.json`` is the card's own)
    or an ``a2a.types.AgentCard``. ``run`` sends one A2A message (``SendMessage``) and returns
    the answer; ``run_stream`` sends it streaming (``SendStreamingMessage``) and yields the text
    as the remote agent produces it, the last update (``done=True``) carrying the response.
    ``headers`` (``{"Authorization": "Bearer ..."}``) go with every request and never appear in
    a repr, an error or a log line. ``timeout_s`` bounds ``run``'s whole answer and the wait for
    each update of ``run_stream`` (``A2ATimeoutError``, which is also a ``TimeoutError``).

    Threads: a thread's first run starts an A2A context; the thread keeps its ``contextId`` (in
    ``thread.metadata``, so it survives ``serialize()`` and a workflow checkpoint) and later runs
    on it continue that remote conversation. The thread also keeps a local transcript of what
    was sent and answered. A new thread is a new context.

    Text and data: text contents are sent as text parts, ``run(..., data={...})`` adds a data
    part; the answer's data parts become ``AgentResponse.value`` (one: its value; several:
    their list) and appear as JSON text in the reply message.

    A remote task in ``input-required`` answers with ``user_input_requests`` (core
    ``ToolApprovalRequest``s, as ``ChatAgent``'s tool approvals): a plain question is one
    request (``tool_name="input_required"``, ``arguments["question"]``, ``request_id`` the task
    id); an agent served by ``serve_a2a`` asks its own ``ToolApprovalRequest``s, a served
    workflow one request per ``request_info``. ``run(responses={request_id: answer},
    thread=thread)`` sends the answers on the same task (same ``taskId`` and ``contextId``) and
    returns what follows; an answer is text, a ``ChatMessage`` or a ``ToolApprovalResponse``
    (``request.edit({"answer": "..."})`` answers a question). In a workflow the agent executor
    turns each request into a ``request_info`` and resumes the same way. A plain message on a
    thread whose task waits is its answer too. A task that ends ``failed``, ``rejected``,
    ``canceled`` or ``auth-required``, or a protocol error (an unknown task), raises
    ``A2ATaskError``; a server that cannot be reached or does not speak A2A raises
    ``A2AConnectionError``. ``aclose()`` (or ``async with``) closes the HTTP client.

    Example:
        ```python
        async with A2AAgent("http://127.0.0.1:8000", name="weather") as remote:
            print((await remote.run("Weather in Paris?")).text)
            assistant = ChatAgent(client, tools=[remote.as_tool()])
        ```
    """

    def __init__(
        self,
        url_or_card: str | AgentCard,
        *,
        name: str | None = None,
        headers: Mapping[str, str] | None = None,
        timeout_s: float = 120.0,
    ) -> None:
        if not timeout_s > 0:
            raise ValueError(f"timeout_s must be positive, got {timeout_s!r}")
        given = cast("object", url_or_card)  # callers without type checking pass anything
        if not isinstance(given, str | AgentCard):
            raise TypeError(
                f"url_or_card must be a URL or an a2a AgentCard, got {type(given).__name__}"
            )
        if isinstance(url_or_card, str) and not url_or_card.startswith(("http://", "https://")):
            raise ValueError("url_or_card must be an http:// or https:// URL")
        card_name = url_or_card.name if isinstance(url_or_card, AgentCard) else ""
        self._name = name or card_name or "a2a_agent"
        self.id = f"{self._name}-{uuid.uuid4().hex[:8]}"
        self._link = A2ALink(url_or_card, headers or {}, timeout_s, self._name)
        self._pending = PendingRequests(self._link.where)

    def __repr__(self) -> str:
        return (
            f"A2AAgent(name={self.name!r}, url={self._link.shown_url!r}, "
            f"timeout_s={self.timeout_s:g})"
        )

    @property
    def name(self) -> str:
        """The agent's name: given, else the card's (when a card is given), else ``a2a_agent``."""
        return self._name

    @property
    def description(self) -> str:
        """The card's description once the card is known (given, or read by ``get_card()``)."""
        card = self._link.card
        return (card.description if card is not None else "") or (
            f"The remote A2A agent {self.name!r}."
        )

    @property
    def timeout_s(self) -> float:
        """How long ``run`` waits for an answer, and ``run_stream`` for each update."""
        return self._link.timeout_s

    @property
    def url(self) -> str:
        """Where the agent is (credentials masked)."""
        return self._link.shown_url

    async def get_card(self) -> AgentCard:
        """The remote agent's card (read on first use, then kept)."""
        await self._link.ready()
        card = self._link.card
        if card is None:  # pragma: no cover - ready() resolves it or raises
            raise AgentError(f"{self._where()}: no agent card")
        return card

    def get_new_thread(self, **metadata: Any) -> AgentThread:
        """A new conversation: its first run starts a new A2A context."""
        return AgentThread(metadata=metadata)

    def as_tool(self, *, name: str | None = None, description: str | None = None) -> Tool:
        """This agent as a tool another agent's model can call with a ``task`` (text); the
        result is the remote answer's text. Each call is a new A2A context."""

        async def ask(task: str) -> str:
            """Send ``task`` to the remote agent and return its answer."""
            return (await self.run(task)).text

        return tool(ask, name=name or self.name, description=description or self.description)

    async def aclose(self) -> None:
        """Close the HTTP connections (idempotent); the agent cannot run afterwards."""
        await self._link.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    # -- runs -----------------------------------------------------------------------------------

    async def run(
        self,
        messages: str | ChatMessage | Sequence[ChatMessage] | None = None,
        *,
        thread: AgentThread | None = None,
        responses: Mapping[str, AnswerValue] | None = None,
        data: Any = None,
        **kwargs: Any,
    ) -> AgentResponse:
        """Send ``messages`` (a str is a user message; ``data`` adds a data part) in ``thread``,
        or answer its pending request with ``responses``; the remote agent's answer."""
        _no_extra(kwargs, "run")
        send = self._prepare(messages, thread, responses, data)
        fold = AnswerFold(self._where())
        try:
            async with asyncio.timeout(self.timeout_s):
                async for event in self._link.send(send.request, stream=False):
                    fold.add(event)
        except A2ATaskError:
            self._pending.forget(thread)  # the task is over (or unknown): nothing waits
            raise
        except TimeoutError:
            await self._give_up(fold, thread)
        response, _ = await self._settle(fold, send, thread)
        return response

    async def run_stream(
        self,
        messages: str | ChatMessage | Sequence[ChatMessage] | None = None,
        *,
        thread: AgentThread | None = None,
        responses: Mapping[str, AnswerValue] | None = None,
        data: Any = None,
        **kwargs: Any,
    ) -> AsyncGenerator[AgentResponseUpdate, None]:
        """As ``run``, streaming: the answer's text as it arrives, then ``done=True`` with the
        response. Stopping early asks the server to cancel the task."""
        _no_extra(kwargs, "run_stream")
        send = self._prepare(messages, thread, responses, data)
        fold = AnswerFold(self._where())
        events = self._link.send(send.request, stream=True)
        try:
            while (event := await self._next(events, fold, thread)) is not None:
                text = fold.add(event)
                if text:
                    yield AgentResponseUpdate(text=text, author_name=self.name)
        except A2ATaskError:
            self._pending.forget(thread)  # the task is over (or unknown): nothing waits
            raise
        finally:
            await events.aclose()
            if not fold.ended and fold.task_id:
                await self._link.cancel(fold.task_id)
        response, unsent = await self._settle(fold, send, thread)
        if unsent:  # text that came with the task's last status, not streamed before
            yield AgentResponseUpdate(text=unsent, author_name=self.name)
        yield AgentResponseUpdate(author_name=self.name, done=True, response=response)

    # -- helpers --------------------------------------------------------------------------------

    def _where(self) -> str:
        return self._link.where

    async def _next(
        self,
        events: AsyncIterator[StreamResponse],
        fold: AnswerFold,
        thread: AgentThread | None,
    ) -> StreamResponse | None:
        """The next event of a stream (None at its end), waiting at most ``timeout_s``."""
        try:
            async with asyncio.timeout(self.timeout_s):
                return await anext(events)
        except StopAsyncIteration:
            return None
        except A2AError:
            raise
        except TimeoutError:
            await self._give_up(fold, thread)

    def _prepare(
        self,
        messages: str | ChatMessage | Sequence[ChatMessage] | None,
        thread: AgentThread | None,
        responses: Mapping[str, AnswerValue] | None,
        data: Any,
    ) -> _Send:
        """The A2A message to send: answers to the waiting task first, then the new input.

        A plain message on a thread whose task waits for input goes to that task (A2A's way of
        answering); ``responses`` must name requests that wait."""
        new_input = to_messages(messages)
        context_id = self._pending.context_of(thread)
        waiting = self._pending.waiting(thread)
        parts: list[Part] = []
        sent: list[ChatMessage] = []
        if responses:
            waiting = self._pending.answered(responses, thread)
            parts.extend(answer_parts(responses, waiting.requests))
            spoken = "".join(p.text for p in parts if p.HasField("text"))
            sent.append(ChatMessage.user(spoken or f"(answered {', '.join(responses)})"))
        parts.extend(message_parts(new_input, data))
        sent.extend(new_input)
        if not parts:
            raise AgentError(f"{self._where()}: nothing to send (no text, data or answer)")
        message = Message(
            role=Role.ROLE_USER,
            message_id=uuid.uuid4().hex,
            context_id=context_id or (waiting.context_id if waiting else ""),
            task_id=waiting.task_id if waiting else "",
            parts=parts,
        )
        return _Send(SendMessageRequest(message=message), sent)

    async def _give_up(self, fold: AnswerFold, thread: AgentThread | None) -> NoReturn:
        """The answer took too long: cancel the remote task (best effort) and raise."""
        if fold.task_id and not fold.ended:
            await self._link.cancel(fold.task_id)
        self._pending.forget(thread)
        raise A2ATimeoutError(
            f"{self._where()} did not answer within {self.timeout_s:g} s "
            "(raise A2AAgent's timeout_s for longer tasks)",
            state=state_name(fold.state),
            task_id=fold.task_id,
        ) from None

    async def _settle(
        self, fold: AnswerFold, send: _Send, thread: AgentThread | None
    ) -> tuple[AgentResponse, str]:
        """The response to the caller; the thread learns the context, the pending task and
        the exchange."""
        try:
            answer = fold.finish()
        except A2ATaskError:
            self._pending.forget(thread)
            raise
        reply = self._reply(answer)
        asked: list[tuple[ToolApprovalRequest, RequestKind]] = []
        waiting: Pending | None = None
        if answer.input_required and answer.task_id:
            asked = pending_requests(answer.asked, answer.task_id, self.name)
            requests: dict[str, RequestKind] = {request.call_id: kind for request, kind in asked}
            waiting = Pending(answer.task_id, answer.context_id or "", requests)
        self._pending.settle(thread, answer.context_id, waiting)
        if thread is not None:
            await thread.add_messages([*send.sent, reply])
        data = data_of(answer.others)
        response = AgentResponse(
            messages=[reply],
            text=answer.text or reply.text,
            agent_id=self.id,
            value=(data[0] if len(data) == 1 else data) if data else None,
            user_input_requests=[request for request, _ in asked],
        )
        return response, answer.unsent_text

    def _reply(self, answer: Answer) -> ChatMessage:
        """The answer as one assistant message: its text, then its other parts' contents."""
        contents: list[Content] = [TextContent(text=answer.text)] if answer.text else []
        contents.extend(contents_of(answer.others))
        return ChatMessage(role=ChatRole.ASSISTANT, contents=contents, author_name=self.name)


def _no_extra(kwargs: Mapping[str, Any], method: str) -> None:
    if kwargs:
        raise TypeError(
            f"A2AAgent.{method}() got unexpected keyword arguments {sorted(kwargs)}: an A2A "
            "message carries text and data only (the remote agent owns its options)"
        )
