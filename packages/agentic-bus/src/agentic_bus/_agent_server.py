"""serve_agent: any core ``Agent`` answering ``ProxyAgent``s over a ``MessageBus``.

The server subscribes, as one member of a queue group, to ``agentic.agent.{id}.run``,
``.stream`` and ``.thread`` (so several processes can serve one agent id), and to ``.cancel``
outside the group (a cancel must reach whichever member runs the request). Served threads keep
their history in a ``StateStore`` through core's ``StateStoreMessageStore`` (over NATS, the KV
bucket ``agentic_threads`` by default: ``_served_threads``), so a conversation continues across
calls, restarts, and processes that share the store. A request's headers may
carry a ``ProxyAgent``'s trace context; the served call runs under it (one trace, with telemetry).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal, Self, TypeVar

import structlog
from pydantic import BaseModel, ValidationError

from agentic_bus._agent_wire import (
    AGENT_PROTOCOL_VERSION,
    MALFORMED_REQUEST,
    SERVER_CLOSED,
    UNSUPPORTED_VERSION,
    AgentRunRequest,
    CancelRequest,
    DoneFrame,
    ErrorFrame,
    ErrorReply,
    RemoteErrorInfo,
    RunReply,
    StreamAccepted,
    ThreadReply,
    ThreadRequest,
    UpdateFrame,
    error_info,
)
from agentic_bus._served_threads import ServedThreads, served_thread_store
from agentic_bus._subjects import Subjects
from agentic_core import (
    Agent,
    AgentResponseUpdate,
    AgentThread,
    BusError,
    BusMessage,
    ChatOptions,
    InvalidSubjectError,
    MessageBus,
    StateStore,
    Subscription,
    trace_context,
)
from agentic_core.stores import check_subject, describe_validation_error

__all__ = ["AgentServer", "serve_agent"]

_log = structlog.get_logger("agentic_bus")
_Request = TypeVar("_Request", AgentRunRequest, ThreadRequest)
_Handler = Callable[[BusMessage], Awaitable[None]]


async def serve_agent(
    agent: Agent,
    bus: MessageBus,
    *,
    queue: str | None = "agents",
    thread_store: StateStore | Literal["memory"] | None = None,
    subjects: Subjects | None = None,
    max_concurrency: int = 16,
    thread_ttl_s: float | None = None,
) -> AgentServer:
    """Serve ``agent`` on ``agentic.agent.{agent.id}.*`` until the returned server is closed.

    ``ProxyAgent(agent.id, bus)`` in any process on the same bus then calls it. Every server
    started with the same ``queue`` (the default ``"agents"``) shares the requests for one agent
    id; ``queue=None`` makes each server answer every request. Threads a caller names keep their
    history in ``thread_store``: on a ``NatsBus`` by default a ``NatsKVStateStore`` in the KV
    bucket ``agentic_threads`` on the bus's connection, so a conversation survives the server's
    restart and continues on any server of the agent (another bucket, or ``replicas=3``: pass
    ``NatsKVStateStore(bus, bucket=..., replicas=...)``); on core's ``InMemoryBus``, memory.
    ``thread_store="memory"`` keeps them in this process only, with a warning: a restart
    forgets them. The server logs where its threads are (``agent_server_started``).

    At most ``max_concurrency`` requests run at once; the rest wait on the bus. An agent's
    error goes back to its caller as a ``RemoteAgentError``; the server goes on serving.

    Example:
        ```python
        bus = await NatsBus.connect("nats://127.0.0.1:4222")
        agent = ChatAgent(client, "You answer in French.", id="translator")
        async with await serve_agent(agent, bus) as server:
            proxy = ProxyAgent("translator", bus)  # usually in another process
            print((await proxy.run("Good morning")).text)
            print(server.served)  # 1
        ```
    """
    if max_concurrency < 1:
        raise ValueError(f"max_concurrency must be at least 1, got {max_concurrency}")
    server = AgentServer(
        agent,
        bus,
        queue=queue,
        thread_store=await served_thread_store(bus, thread_store, agent.id),
        subjects=subjects or Subjects(),
        max_concurrency=max_concurrency,
        thread_ttl_s=thread_ttl_s,
    )
    await server.start()
    return server


class AgentServer:
    """One agent served on a bus (made by ``serve_agent``); ``close()`` stops it.

    ``served`` counts the runs answered, ``failed`` those the agent raised on, ``rejected``
    the malformed requests; ``active`` is the number of requests running now.

    Example:
        ```python
        server = await serve_agent(agent, bus, max_concurrency=4)
        try:
            ...  # ProxyAgent(agent.id, bus) calls reach it
        finally:
            await server.close()  # in-flight runs get up to 10 s to finish
        print(server.served, server.failed, server.rejected)
        ```
    """

    def __init__(
        self,
        agent: Agent,
        bus: MessageBus,
        *,
        queue: str | None,
        thread_store: StateStore,
        subjects: Subjects,
        max_concurrency: int,
        thread_ttl_s: float | None,
    ) -> None:
        self._agent = agent
        self._agent_id = agent.id
        self._bus = bus
        self._queue = queue
        self._names = subjects
        self._thread_store = thread_store
        self._threads = ServedThreads(thread_store, self._agent_id, thread_ttl_s)
        self._slots = asyncio.Semaphore(max_concurrency)
        self._subscriptions: list[Subscription] = []
        self._loops: list[asyncio.Task[None]] = []
        self._inflight: set[asyncio.Task[None]] = set()
        self._running: dict[str, asyncio.Task[Any]] = {}
        self._cancelled_by_caller: set[str] = set()
        self._started = False
        self._closed = False
        self.served = 0
        """Runs and streams answered."""
        self.failed = 0
        """Runs, streams and thread requests the agent (or the thread store) failed."""
        self.rejected = 0
        """Requests that could not be read (malformed, wrong agent, newer protocol)."""

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"{self.active} active"
        return f"AgentServer({self._agent_id!r}, {state}, served={self.served})"

    @property
    def agent_id(self) -> str:
        """The id of the agent served."""
        return self._agent_id

    @property
    def subjects(self) -> tuple[str, ...]:
        """The subjects listened on: ``run``, ``stream``, ``thread`` and ``cancel``."""
        return tuple(self._names.agent(self._agent_id, k) for k in _KINDS)

    @property
    def thread_store(self) -> StateStore:
        """Where the served threads' histories and metadata are kept."""
        return self._thread_store

    @property
    def active(self) -> int:
        """Requests being answered now."""
        return len(self._inflight)

    @property
    def is_serving(self) -> bool:
        """True between ``start()`` and ``close()``."""
        return self._started and not self._closed

    async def start(self) -> None:
        """Subscribe and begin answering (``serve_agent`` calls it)."""
        if self._started:
            return
        self._started = True
        routes: dict[str, _Handler] = {
            "run": self._answer_run,
            "stream": self._answer_stream,
            "thread": self._answer_thread,
        }
        try:
            for kind, handler in routes.items():
                subject = self._names.agent(self._agent_id, kind)
                subscription = await self._bus.subscribe(subject, queue=self._queue)
                self._subscriptions.append(subscription)
                self._loops.append(asyncio.create_task(self._serve(subscription, handler)))
            cancels = await self._bus.subscribe(self._names.agent(self._agent_id, "cancel"))
            self._subscriptions.append(cancels)
            self._loops.append(asyncio.create_task(self._listen_for_cancels(cancels)))
        except BaseException:
            await self.close(grace_s=0)
            raise
        _log.info(
            "agent_server_started",
            agent_id=self._agent_id,
            queue=self._queue,
            subject=self._names.agent_all(self._agent_id),
            threads=repr(self._thread_store),
        )

    async def close(self, *, grace_s: float = 10.0) -> None:
        """Stop taking requests; let those in flight finish for ``grace_s``, then cancel them
        (their callers get an ``AgentServerClosed`` error). Idempotent."""
        if self._closed:
            return
        self._closed = True
        for subscription in self._subscriptions:
            with contextlib.suppress(BusError):  # a closed bus took the subscription with it
                await subscription.unsubscribe()
        for loop in self._loops:
            loop.cancel()
        await asyncio.gather(*self._loops, return_exceptions=True)
        if self._inflight:
            _, pending = await asyncio.wait(set(self._inflight), timeout=max(grace_s, 0.0))
            for task in pending:
                task.cancel()
            if pending:
                await asyncio.wait(pending)
        _log.info(
            "agent_server_closed",
            agent_id=self._agent_id,
            served=self.served,
            failed=self.failed,
            rejected=self.rejected,
        )

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    # -- the loops ------------------------------------------------------------------------------

    async def _serve(self, subscription: Subscription, handler: _Handler) -> None:
        async for message in subscription:
            await self._slots.acquire()
            task = asyncio.create_task(self._guarded(handler, message))
            self._inflight.add(task)
            task.add_done_callback(self._finished)
        if not self._closed:
            _log.warning(
                "agent_server_subscription_ended",
                agent_id=self._agent_id,
                subject=subscription.subject,
            )

    def _finished(self, task: asyncio.Task[None]) -> None:
        self._inflight.discard(task)
        self._slots.release()

    async def _guarded(self, handler: _Handler, message: BusMessage) -> None:
        try:
            # A ProxyAgent's trace context (in the headers): the served run is part of its trace.
            with trace_context(message.headers):
                await handler(message)
        except Exception:  # noqa: BLE001 - the last net: one request must never stop the server
            _log.exception(
                "agent_request_crashed", agent_id=self._agent_id, subject=message.subject
            )

    async def _listen_for_cancels(self, subscription: Subscription) -> None:
        async for message in subscription:
            try:
                request_id = CancelRequest.model_validate_json(message.data).request_id
            except ValidationError:
                _log.debug("agent_cancel_malformed", agent_id=self._agent_id)
                continue
            task = self._running.get(request_id)
            if task is not None:
                self._cancelled_by_caller.add(request_id)
                task.cancel()

    # -- the handlers ---------------------------------------------------------------------------

    async def _answer_run(self, message: BusMessage) -> None:
        request = await self._decode(message, AgentRunRequest)
        if request is None:
            return
        async with self._tracked(request.request_id, message) as tracked:
            try:
                async with self._threads.open(request) as thread:
                    response = await self._agent.run(
                        request.messages, thread=thread, **_run_kwargs(request)
                    )
            except Exception as exc:  # noqa: BLE001 - the caller gets it as RemoteAgentError
                self._count_failure("run", request.request_id, exc)
                await self._reply(message, ErrorReply(error=error_info(exc)))
                return
            tracked.done = True
            self.served += 1
            metadata = None if thread is None else dict(thread.metadata)
            await self._reply(message, RunReply(response=response, thread_metadata=metadata))

    async def _answer_stream(self, message: BusMessage) -> None:
        request = await self._decode(message, AgentRunRequest)
        if request is None:
            return
        inbox = request.reply_to
        if inbox is None or not _is_concrete_subject(inbox):
            await self._reject(
                message, MALFORMED_REQUEST, f"reply_to: a stream request needs one, got {inbox!r}"
            )
            return
        await self._reply(message, StreamAccepted(request_id=request.request_id))
        async with self._tracked(request.request_id, message, inbox=inbox) as tracked:
            final: DoneFrame | ErrorFrame
            try:
                async with self._threads.open(request) as thread:
                    await self._stream_updates(request, thread, inbox, tracked)
                metadata = None if thread is None else dict(thread.metadata)
                final = DoneFrame(seq=tracked.seq, thread_metadata=metadata)
                self.served += 1
            except Exception as exc:  # noqa: BLE001 - the caller gets it as RemoteAgentError
                self._count_failure("stream", request.request_id, exc)
                final = ErrorFrame(seq=tracked.seq, error=error_info(exc))
            tracked.done = True
            await self._send_frame(inbox, final)

    async def _stream_updates(
        self, request: AgentRunRequest, thread: AgentThread | None, inbox: str, tracked: _Tracked
    ) -> None:
        """Publish each update of the agent's stream to ``inbox``, counting them in ``tracked``."""
        stream = self._agent.run_stream(request.messages, thread=thread, **_run_kwargs(request))
        try:
            async for update in stream:
                await self._publish(inbox, UpdateFrame(seq=tracked.seq, update=update))
                tracked.seq += 1
        finally:
            await _close_stream(stream)

    async def _answer_thread(self, message: BusMessage) -> None:
        request = await self._decode(message, ThreadRequest)
        if request is None:
            return
        try:
            messages = await self._threads.apply(request)
        except Exception as exc:  # noqa: BLE001 - the caller gets it as RemoteAgentError
            self._count_failure(f"thread {request.op}", None, exc)
            await self._reply(message, ErrorReply(error=error_info(exc)))
            return
        await self._reply(message, ThreadReply(messages=messages))

    # -- helpers --------------------------------------------------------------------------------

    async def _decode(self, message: BusMessage, model: type[_Request]) -> _Request | None:
        """The request in ``message``, or None once the sender was told what was wrong."""
        kind = message.subject.rsplit(".", 1)[-1]
        try:
            request = model.model_validate_json(message.data)
        except ValidationError as exc:
            detail = describe_validation_error(exc)
            await self._reject(message, MALFORMED_REQUEST, f"malformed {kind} request: {detail}")
            return None
        if request.version > AGENT_PROTOCOL_VERSION:
            await self._reject(
                message,
                UNSUPPORTED_VERSION,
                f"protocol version {request.version} is newer than this server's "
                f"{AGENT_PROTOCOL_VERSION}: upgrade agentic-bus where agent "
                f"{self._agent_id!r} is served",
            )
            return None
        if request.agent_id != self._agent_id:
            await self._reject(
                message,
                MALFORMED_REQUEST,
                f"agent_id: the request is for agent {request.agent_id!r}, "
                f"this server serves {self._agent_id!r}",
            )
            return None
        return request

    async def _reject(self, message: BusMessage, error_type: str, detail: str) -> None:
        self.rejected += 1
        _log.warning(
            "agent_request_rejected",
            agent_id=self._agent_id,
            subject=message.subject,
            reason=detail[:500],
        )
        await self._reply(
            message, ErrorReply(error=RemoteErrorInfo(type=error_type, message=detail))
        )

    def _count_failure(self, what: str, request_id: str | None, exc: Exception) -> None:
        self.failed += 1
        _log.warning(
            "agent_request_failed",
            agent_id=self._agent_id,
            request=what,
            request_id=request_id,
            error_type=type(exc).__name__,
            error=str(exc)[:500],
        )

    @contextlib.asynccontextmanager
    async def _tracked(
        self, request_id: str, message: BusMessage, *, inbox: str | None = None
    ) -> AsyncGenerator[_Tracked, None]:
        """Register the running request for cancels; end it quietly when its caller cancels,
        with an ``AgentServerClosed`` error when the server shuts down."""
        tracked = _Tracked()
        task = asyncio.current_task()
        if task is not None:
            self._running[request_id] = task
        try:
            yield tracked
        except asyncio.CancelledError:
            if request_id in self._cancelled_by_caller:
                _log.info("agent_request_cancelled", agent_id=self._agent_id, request_id=request_id)
                return  # the caller gave up: nobody to answer
            if self._closed and not tracked.done:
                closed = RemoteErrorInfo(
                    type=SERVER_CLOSED, message=f"the server of agent {self._agent_id!r} shut down"
                )
                if inbox is None:
                    await self._reply(message, ErrorReply(error=closed))
                else:
                    await self._send_frame(inbox, ErrorFrame(seq=tracked.seq, error=closed))
            raise
        finally:
            self._running.pop(request_id, None)
            self._cancelled_by_caller.discard(request_id)

    async def _publish(self, subject: str, payload: BaseModel) -> None:
        await self._bus.publish(subject, payload.model_dump_json().encode())

    async def _reply(self, message: BusMessage, reply: BaseModel) -> None:
        """Answer ``message`` (if it asked for an answer); a reply that cannot be sent (too
        large, not JSON) becomes an error reply saying so."""
        if message.reply is None:
            return
        try:
            await self._publish(message.reply, reply)
        except Exception as exc:  # noqa: BLE001 - reported to the caller below, and logged
            _log.warning(
                "agent_reply_failed",
                agent_id=self._agent_id,
                error_type=type(exc).__name__,
                error=str(exc)[:500],
            )
            if not isinstance(reply, ErrorReply):
                await self._reply(message, ErrorReply(error=error_info(exc)))

    async def _send_frame(self, inbox: str, frame: DoneFrame | ErrorFrame) -> None:
        try:
            await self._publish(inbox, frame)
        except Exception as exc:  # noqa: BLE001 - the caller is gone or the bus closed: logged
            _log.warning(
                "agent_stream_end_lost",
                agent_id=self._agent_id,
                error_type=type(exc).__name__,
                error=str(exc)[:500],
            )
            if isinstance(frame, DoneFrame):
                failed = ErrorFrame(seq=frame.seq, error=error_info(exc))
                with contextlib.suppress(Exception):  # the failure above is logged already
                    await self._publish(inbox, failed)


_KINDS = ("run", "stream", "thread", "cancel")


@dataclass(slots=True)
class _Tracked:
    seq: int = 0
    """Stream frames sent so far."""
    done: bool = False
    """The answer is complete (a shutdown now must not send an error after it)."""


def _run_kwargs(request: AgentRunRequest) -> dict[str, Any]:
    kwargs = dict(request.kwargs)
    if request.options is not None:
        given = request.options.model_dump(exclude_unset=True)
        kwargs["options"] = ChatOptions.model_validate(given)
    return kwargs


def _is_concrete_subject(subject: str) -> bool:
    try:
        check_subject(subject, wildcards=False)
    except InvalidSubjectError:
        return False
    return True


async def _close_stream(stream: AsyncIterator[AgentResponseUpdate]) -> None:
    """Close an agent's stream generator we stopped reading (runs its cleanup now)."""
    close = getattr(stream, "aclose", None)
    if close is not None:
        await close()
