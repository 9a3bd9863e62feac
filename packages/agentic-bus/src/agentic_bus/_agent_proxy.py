"""ProxyAgent: a core ``Agent`` whose runs happen wherever ``serve_agent`` serves its id."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ValidationError
from pydantic_core import PydanticSerializationError, to_jsonable_python

from agentic_bus._agent_wire import (
    AgentRunRequest,
    CancelRequest,
    DoneFrame,
    ErrorReply,
    RemoteAgentError,
    RemoteChatOptions,
    RunReply,
    StreamAccepted,
    StreamFrame,
    ThreadReply,
    ThreadRequest,
    UpdateFrame,
    parse_reply,
    parse_stream_frame,
)
from agentic_bus._subjects import Subjects
from agentic_core import (
    AgentError,
    AgentResponse,
    AgentResponseUpdate,
    AgentThread,
    BusClosedError,
    BusError,
    BusTimeoutError,
    ChatMessage,
    ChatOptions,
    MessageBus,
    NoRespondersError,
    Subscription,
    inject_trace_context,
    to_messages,
)
from agentic_core.stores import describe_validation_error

__all__ = ["ProxyAgent", "RemoteThreadStore"]

_Reply = TypeVar("_Reply", RunReply, StreamAccepted, ThreadReply)
_LOCAL_ONLY = {
    "response_format": "a class cannot cross the bus: set response_format in the served "
    "agent's ChatOptions (the response's value then arrives as JSON data)",
    "background": "background runs stay with the process that started them: call run() "
    "and let it wait, or run_stream()",
    "continuation_token": "background runs stay with the process that started them: call "
    "run() and let it wait, or run_stream()",
}


@dataclass(frozen=True, slots=True)
class _AgentLink:
    """How to reach one served agent: its id, the bus, the subject names, the timeout."""

    agent_id: str
    bus: MessageBus
    names: Subjects
    timeout_s: float = field(compare=False)

    def subject(self, kind: str) -> str:
        return self.names.agent(self.agent_id, kind)

    async def call(self, kind: str, request: BaseModel, expected: type[_Reply]) -> _Reply:
        """Send ``request`` on the ``kind`` subject; the reply, or the error it reports."""
        subject = self.subject(kind)
        trace_headers: dict[str, str] = {}
        inject_trace_context(trace_headers)  # the served run joins the caller's trace
        try:
            message = await self.bus.request(
                subject,
                request.model_dump_json().encode(),
                timeout_s=self.timeout_s,
                headers=trace_headers or None,
            )
        except NoRespondersError as exc:
            raise NoRespondersError(
                f"no server answers for remote agent {self.agent_id!r} (nobody subscribes to "
                f"{subject!r}): start one with serve_agent(agent, bus) on the same bus, or "
                "check the agent id"
            ) from exc
        except BusTimeoutError as exc:
            raise BusTimeoutError(
                f"remote agent {self.agent_id!r} did not answer a {kind} request within "
                f"{self.timeout_s:g} s (raise ProxyAgent's timeout_s for longer runs)"
            ) from exc
        try:
            reply = parse_reply(message.data)
        except ValidationError as exc:
            raise AgentError(
                f"remote agent {self.agent_id!r} answered a {kind} request with something "
                f"that is not an agent-protocol reply: {describe_validation_error(exc)}"
            ) from exc
        if isinstance(reply, ErrorReply):
            raise RemoteAgentError(self.agent_id, reply.error.type, reply.error.message)
        if not isinstance(reply, expected):
            raise AgentError(
                f"remote agent {self.agent_id!r} answered a {kind} request with a "
                f"{reply.kind!r} reply"
            )
        return reply

    async def cancel(self, request_id: str) -> None:
        """Tell the servers to stop ``request_id`` (best effort: the bus may be gone)."""
        with contextlib.suppress(BusError):
            await self.bus.publish(
                self.subject("cancel"), CancelRequest(request_id=request_id).model_dump_json()
            )


class RemoteThreadStore:
    """The ``ChatMessageStore`` of a ``ProxyAgent`` thread: the messages live with the server.

    Nothing is kept here: each call asks the agent's server over the bus, under the thread's
    current ``id``. ``add_messages`` skips messages the served history already holds (same
    ``message_id``), so adding a conversation back (a workflow restoring a checkpoint) is safe.

    Example:
        ```python
        agent = ProxyAgent("researcher", bus)
        thread = agent.get_new_thread(user_id="ada")
        await agent.run("Find the 2017 transformer paper.", thread=thread)
        history = await thread.list_messages()  # read from the server's thread store
        assert isinstance(thread.message_store, RemoteThreadStore)
        assert history[0].text == "Find the 2017 transformer paper."
        ```
    """

    def __init__(self, link: _AgentLink, thread: AgentThread) -> None:
        self._link = link
        self._thread = thread

    def __repr__(self) -> str:
        return f"RemoteThreadStore(agent={self._link.agent_id!r}, thread={self.thread_id!r})"

    @property
    def thread_id(self) -> str:
        """The id of the served thread (the id of the ``AgentThread`` this store belongs to)."""
        return self._thread.id

    def belongs_to(self, link: _AgentLink) -> bool:
        """Whether this store talks to the agent behind ``link``."""
        return self._link == link

    async def list_messages(self) -> list[ChatMessage]:
        """The served conversation, oldest first."""
        reply = await self._call("list", ())
        return reply.messages

    async def add_messages(self, messages: Sequence[ChatMessage]) -> None:
        """Append ``messages`` to the served history (those it holds already are skipped)."""
        if messages:
            await self._call("add", messages)

    async def replace_messages(self, messages: Sequence[ChatMessage]) -> None:
        """Make ``messages`` the whole served history."""
        await self._call("replace", messages)

    def serialize(self) -> dict[str, Any]:
        """Where the messages live (the agent's server keeps them)."""
        return {"type": "remote_agent", "agent_id": self._link.agent_id, "key": self.thread_id}

    async def _call(
        self, op: Literal["list", "add", "replace"], messages: Sequence[ChatMessage]
    ) -> ThreadReply:
        request = ThreadRequest(
            agent_id=self._link.agent_id, thread_id=self.thread_id, op=op, messages=list(messages)
        )
        return await self._link.call("thread", request, ThreadReply)


class ProxyAgent:
    """A core ``Agent`` standing in for the agent ``serve_agent`` serves as ``agent_id``.

    ``run`` sends a request to ``agentic.agent.{agent_id}.run`` and waits up to ``timeout_s``;
    ``run_stream`` yields the remote updates in order as they come (waiting at most
    ``timeout_s`` for each). The agent's errors come back as ``RemoteAgentError`` (remote type
    and message); no server raises ``NoRespondersError`` naming the agent. Threads from
    ``get_new_thread()`` live on the server side (the thread's ``id`` is the key its servers
    keep the history under), so a conversation continues on any server sharing the thread
    store. A thread made elsewhere works too: its history is sent along and it gets the new
    messages back. Keywords must be JSON data; ``ChatOptions`` cross without tools or
    ``response_format`` (those belong to the served agent), and the response's ``value``
    arrives as JSON data.

    Example:
        ```python
        bus = await NatsBus.connect("nats://127.0.0.1:4222")
        writer = ProxyAgent("writer", bus, timeout_s=60)
        thread = writer.get_new_thread()
        draft = await writer.run("Write a haiku about rivers.", thread=thread)
        async for update in writer.run_stream("Now one about the sea.", thread=thread):
            print(update.text, end="")
        workflow = WorkflowBuilder().set_start_executor(AgentExecutor(writer)).build()
        ```
    """

    def __init__(
        self,
        agent_id: str,
        bus: MessageBus,
        *,
        name: str | None = None,
        timeout_s: float = 120.0,
        subjects: Subjects | None = None,
    ) -> None:
        if not agent_id:
            raise ValueError("agent_id must not be empty")
        if not timeout_s > 0:
            raise ValueError(f"timeout_s must be positive, got {timeout_s!r}")
        self._link = _AgentLink(agent_id, bus, subjects or Subjects(), timeout_s)
        self._name = name or agent_id

    def __repr__(self) -> str:
        return f"ProxyAgent({self.id!r}, name={self.name!r}, timeout_s={self.timeout_s:g})"

    @property
    def id(self) -> str:
        """The id of the remote agent (what ``serve_agent`` serves it as)."""
        return self._link.agent_id

    @property
    def name(self) -> str:
        """The display name (the agent id unless given)."""
        return self._name

    @property
    def timeout_s(self) -> float:
        """How long ``run`` waits for the answer, and ``run_stream`` for each update."""
        return self._link.timeout_s

    def get_new_thread(self, **metadata: Any) -> AgentThread:
        """A new conversation kept by the agent's servers (``metadata`` travels with each run)."""
        thread = AgentThread(metadata=metadata)
        thread.message_store = RemoteThreadStore(self._link, thread)
        return thread

    async def run(
        self,
        messages: str | ChatMessage | Sequence[ChatMessage] | None = None,
        *,
        thread: AgentThread | None = None,
        **kwargs: Any,
    ) -> AgentResponse:
        """Run the remote agent on ``messages`` (a str is a user message) in ``thread``."""
        request = await self._request(messages, thread, kwargs)
        try:
            reply = await self._link.call("run", request, RunReply)
        except (asyncio.CancelledError, BusTimeoutError):
            await self._link.cancel(request.request_id)
            raise
        await self._settle(thread, request, reply.response, reply.thread_metadata)
        return reply.response

    async def run_stream(
        self,
        messages: str | ChatMessage | Sequence[ChatMessage] | None = None,
        *,
        thread: AgentThread | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[AgentResponseUpdate]:
        """The remote agent's updates, in order; the last has ``done=True`` when the agent's
        does (a ``ChatAgent``'s carries the whole ``response``). Stopping early cancels the
        remote run."""
        inbox_subject = f"_INBOX.{uuid.uuid4().hex}"
        request = await self._request(messages, thread, kwargs, reply_to=inbox_subject)
        inbox = await self._link.bus.subscribe(inbox_subject)
        finished = False
        try:
            await self._link.call("stream", request, StreamAccepted)
            final: AgentResponse | None = None
            expected = 0
            while True:
                frame = await self._next_frame(inbox, request.request_id)
                if frame.seq != expected:
                    raise AgentError(
                        f"remote agent {self.id!r}: stream frames {expected} to {frame.seq - 1} "
                        "were lost (the subscriber fell behind or the connection dropped)"
                    )
                expected += 1
                if isinstance(frame, UpdateFrame):
                    if frame.update.response is not None:
                        final = frame.update.response
                    yield frame.update
                    continue
                finished = True
                if isinstance(frame, DoneFrame):
                    await self._settle(thread, request, final, frame.thread_metadata)
                    return
                raise RemoteAgentError(self.id, frame.error.type, frame.error.message)
        finally:
            if not finished:
                await self._link.cancel(request.request_id)
            with contextlib.suppress(BusError):
                await inbox.unsubscribe()

    # -- helpers --------------------------------------------------------------------------------

    async def _request(
        self,
        messages: str | ChatMessage | Sequence[ChatMessage] | None,
        thread: AgentThread | None,
        kwargs: dict[str, Any],
        *,
        reply_to: str | None = None,
    ) -> AgentRunRequest:
        options = _remote_options(kwargs.pop("options", None))
        for keyword, why in _LOCAL_ONLY.items():
            if kwargs.get(keyword) not in (None, False):
                raise AgentError(f"ProxyAgent {self.id!r}: {keyword}= is not supported: {why}")
            kwargs.pop(keyword, None)
        thread_id: str | None = None
        history: list[ChatMessage] | None = None
        metadata: dict[str, Any] = {}
        if thread is not None:
            thread_id = thread.id
            metadata = _jsonable_dict(thread.metadata, "the thread's metadata", self.id)
            store = thread.message_store
            if not (isinstance(store, RemoteThreadStore) and store.belongs_to(self._link)):
                history = await thread.list_messages()  # a thread kept here: send it along
        return AgentRunRequest(
            agent_id=self.id,
            messages=to_messages(messages),
            thread_id=thread_id,
            thread_metadata=metadata,
            history=history,
            options=options,
            kwargs=_jsonable_dict(kwargs, "keyword", self.id),
            reply_to=reply_to,
        )

    async def _settle(
        self,
        thread: AgentThread | None,
        request: AgentRunRequest,
        response: AgentResponse | None,
        metadata: dict[str, Any] | None,
    ) -> None:
        """Bring the caller's thread up to date after a run."""
        if thread is None:
            return
        if metadata is not None:
            thread.metadata.clear()
            thread.metadata.update(metadata)
        if request.history is not None and response is not None:
            await thread.add_messages([*request.messages, *response.messages])

    async def _next_frame(self, inbox: Subscription, request_id: str) -> StreamFrame:
        try:
            async with asyncio.timeout(self.timeout_s):
                message = await anext(inbox)
        except TimeoutError:
            raise BusTimeoutError(
                f"remote agent {self.id!r} sent nothing for {self.timeout_s:g} s while "
                f"streaming (request {request_id})"
            ) from None
        except StopAsyncIteration:
            raise BusClosedError(
                f"the bus was closed while remote agent {self.id!r} was streaming"
            ) from None
        try:
            return parse_stream_frame(message.data)
        except ValidationError as exc:
            raise AgentError(
                f"remote agent {self.id!r} sent a stream frame outside the agent protocol: "
                f"{describe_validation_error(exc)}"
            ) from exc


def _remote_options(options: object) -> RemoteChatOptions | None:
    if options is None:
        return None
    if not isinstance(options, ChatOptions):
        raise TypeError(f"options must be ChatOptions, got {type(options).__name__}")
    if options.tools:
        raise AgentError(
            "ChatOptions.tools cannot cross the bus: give the tools to the served agent"
        )
    if options.response_format is not None:
        raise AgentError(
            f"ProxyAgent: response_format= is not supported: {_LOCAL_ONLY['response_format']}"
        )
    given = {
        name: getattr(options, name)
        for name in options.model_fields_set
        if name not in ("tools", "response_format")
    }
    return RemoteChatOptions.model_validate(given)


def _jsonable_dict(values: Mapping[str, Any], what: str, agent_id: str) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in values.items():
        try:
            result[key] = to_jsonable_python(value)
        except (PydanticSerializationError, TypeError, ValueError) as exc:
            raise AgentError(
                f"ProxyAgent {agent_id!r}: {what} {key!r} ({type(value).__name__}) cannot be "
                f"sent as JSON: pass JSON data ({exc})"
            ) from exc
    return result
