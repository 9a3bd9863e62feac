"""The ASGI responses that answer a chat completion by running the served agent.

Each holds one of the bounded run slots for as long as its run goes, bounds the run by the
timeout, and listens for its client: a client gone before the answer cancels the run it started
(nothing else), logged once. A run that waits for a person (a tool approval, a workflow's
``request_info``) cannot be answered here: it ends with an error saying so, never a hang.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncGenerator, Awaitable, Generator
from typing import Any, Generic, TypeVar, cast

import structlog
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from agentic_core import AgenticError, AgentResponse, ChatMessage, WorkflowAgent
from agentic_orchestrator._openai._models import RunSlots, ServedModel
from agentic_orchestrator._openai._wire import (
    ChatCompletionRequest,
    EndpointError,
    chunk,
    completion,
    error_body,
    new_completion_id,
    now,
)

__all__ = ["CompletionResponse", "error_response"]

_log = structlog.get_logger("agentic_orchestrator.openai")
_T = TypeVar("_T")
_ERROR_SEND_S = 5.0
"""How long the error event of a stream may take to reach a slow client."""


def error_response(error: EndpointError) -> Response:
    body = json.dumps(error_body(error.message, type=error.type, code=error.code)).encode()
    return Response(body, status_code=error.status, media_type="application/json")


class CompletionResponse(Response):
    """Runs ``model``'s agent on ``messages`` when sent, answering as one ``chat.completion``
    or, for ``stream: true``, as ``chat.completion.chunk`` server-sent events."""

    def __init__(
        self,
        model: ServedModel,
        request: ChatCompletionRequest,
        messages: list[ChatMessage],
        *,
        slots: RunSlots,
        timeout_s: float,
    ) -> None:
        super().__init__()
        self.model = model
        self.request = request
        self.messages = messages
        self.slots = slots
        self.timeout_s = timeout_s
        self.completion_id = new_completion_id()
        self.created = now()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            self.slots.take()
        except EndpointError as refused:
            await error_response(refused)(scope, receive, send)
            return
        try:
            await self._run_while_connected(receive, send)
        finally:
            self.slots.give_back()

    async def _run_while_connected(self, receive: Receive, send: Send) -> None:
        answer = self._stream(send) if self.request.stream else self._answer(send)
        run = asyncio.ensure_future(answer)
        gone = asyncio.ensure_future(_disconnect(receive))
        try:
            await asyncio.wait({run, gone}, return_when=asyncio.FIRST_COMPLETED)
            if not run.done():
                _log.info(
                    "openai.client_disconnected",
                    model=self.model.name,
                    completion_id=self.completion_id,
                    detail="the run this request started is cancelled",
                )
        finally:
            for task in (run, gone):
                task.cancel()
            for task in (run, gone):
                with contextlib.suppress(asyncio.CancelledError):
                    await task

    # -- one answer ------------------------------------------------------------------------------

    async def _answer(self, send: Send) -> None:
        try:
            async with asyncio.timeout(self.timeout_s):
                response = await self.model.agent.run(self.messages)
            self._check_answerable(response)
        except EndpointError as error:
            await _send_json(send, error.status, _error_of(error))
            return
        except Exception as exc:  # noqa: BLE001 - answered as an error, logged
            error = self._failure(exc)
            await _send_json(send, error.status, _error_of(error))
            return
        body = completion(
            self.completion_id, self.model.name, response.text, response.usage, self.created
        )
        await _send_json(send, 200, body)

    # -- a stream of chunks ----------------------------------------------------------------------

    async def _stream(self, send: Send) -> None:
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [
                    (b"content-type", b"text/event-stream; charset=utf-8"),
                    (b"cache-control", b"no-cache"),
                    (b"x-accel-buffering", b"no"),
                ],
            }
        )
        events = _Events(send)
        failure: EndpointError | None = None
        try:
            async with asyncio.timeout(self.timeout_s):
                await self._send_chunks(events)
        except EndpointError as error:
            failure = error
        except Exception as exc:  # noqa: BLE001 - answered as an error event, logged
            failure = self._failure(exc)
        if failure is None:
            with contextlib.suppress(OSError):  # the client left: the listener saw it
                await events.flush(more_body=False)
            return
        events.add(_error_of(failure))
        with contextlib.suppress(TimeoutError, OSError):
            async with asyncio.timeout(_ERROR_SEND_S):
                await events.flush(more_body=False)

    async def _send_chunks(self, events: _Events) -> None:
        """Write the chunks as the run gives them; the tail (finish, usage, ``[DONE]``) is
        left in ``events`` for the closing write."""
        usage_too = self.request.include_usage

        def event(**fields: Any) -> dict[str, Any]:
            return chunk(
                self.completion_id,
                self.model.name,
                self.created,
                include_usage=usage_too,
                **fields,
            )

        events.add(event(delta={"role": "assistant", "content": ""}))
        final: AgentResponse | None = None
        updates = aiter(self.model.agent.run_stream(self.messages))
        try:
            while True:
                try:
                    update = await events.flushing_if_blocked(anext(updates))
                except StopAsyncIteration:
                    break
                if update.done:
                    final = update.response
                elif update.text and not self.model.is_workflow:
                    events.add(event(delta={"content": update.text}))
        finally:
            if isinstance(updates, AsyncGenerator):  # closed now, not by the garbage collector
                await cast("AsyncGenerator[Any, None]", updates).aclose()
        if final is None:
            raise EndpointError(
                500, "the agent's stream ended without its answer", type="server_error", code=None
            )
        self._check_answerable(final)
        if self.model.is_workflow and final.text:
            # A workflow's inner agents speak in turns; its answer is the reply alone.
            events.add(event(delta={"content": final.text}))
        events.add(event(finish_reason="stop"))
        if usage_too:
            events.add(event(usage=final.usage))
        events.add_raw(b"data: [DONE]\n\n")

    # -- what cannot be answered -----------------------------------------------------------------

    def _check_answerable(self, response: AgentResponse) -> None:
        """Raise ``EndpointError`` 409 when the run waits for a person's answer."""
        approvals = [request.tool_name for request in response.user_input_requests]
        requests = [
            call
            for message in response.messages
            for call in message.function_calls
            if self.model.is_workflow and call.name == WorkflowAgent.REQUEST_INFO_FUNCTION_NAME
        ]
        if not approvals and not requests:
            return
        what = (
            f"approval of tool call(s) {', '.join(map(repr, approvals))}"
            if approvals
            else f"{len(requests)} answer(s) to its request_info"
        )
        _log.info("openai.run_needs_input", model=self.model.name, waiting=what)
        raise EndpointError(
            409,
            f"model {self.model.name!r} waits for a person ({what}), which this endpoint "
            "cannot take: serve it over A2A or the run viewer, or let it run without approvals",
            code="input_required",
        )

    def _failure(self, exc: Exception) -> EndpointError:
        if isinstance(exc, TimeoutError):
            _log.warning("openai.run_timed_out", model=self.model.name, timeout_s=self.timeout_s)
            return EndpointError(
                504,
                f"model {self.model.name!r} did not answer within {self.timeout_s:g} s",
                type="server_error",
                code="timeout",
            )
        if isinstance(exc, AgenticError):
            message = f"{type(exc).__name__}: {exc}"
            _log.warning("openai.run_failed", model=self.model.name, error=message)
            return EndpointError(
                500, f"model {self.model.name!r} failed: {message}", type="server_error", code=None
            )
        _log.exception("openai.run_failed", model=self.model.name)
        return EndpointError(
            500, "internal error: see the server's log", type="server_error", code=None
        )


def _error_of(error: EndpointError) -> dict[str, Any]:
    return error_body(error.message, type=error.type, code=error.code)


async def _send_json(send: Send, status: int, body: dict[str, Any]) -> None:
    data = json.dumps(body).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(data)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": data})


class _Events:
    """The server-sent events of one stream, written in as few body writes as keep them
    timely: events are held until the run would wait (``flushing_if_blocked``) or the stream
    ends, then written at once. The bytes are the same; only the writes are fewer."""

    def __init__(self, send: Send) -> None:
        self._send = send
        self.held: list[bytes] = []

    def add(self, data: dict[str, Any]) -> None:
        self.held.append(b"data: " + json.dumps(data, separators=(",", ":")).encode() + b"\n\n")

    def add_raw(self, event: bytes) -> None:
        self.held.append(event)

    async def flush(self, *, more_body: bool = True) -> None:
        body = b"".join(self.held)
        self.held.clear()
        if body or not more_body:
            await self._send({"type": "http.response.body", "body": body, "more_body": more_body})

    def flushing_if_blocked(self, step: Awaitable[_T]) -> Awaitable[_T]:
        """``step`` awaited in this task; the held events are written first when it cannot
        finish at once (so a client sees what is ready while the run works on)."""
        return _FlushingIfBlocked(step, self)


class _FlushingIfBlocked(Generic[_T]):
    """Awaits ``step`` in the awaiting task (its context variables as they are) and, should
    it suspend, writes the held events before suspending with it."""

    def __init__(self, step: Awaitable[_T], events: _Events) -> None:
        self._step = step
        self._events = events

    def __await__(self) -> Generator[Any, Any, _T]:
        inner = self._step.__await__()
        try:
            waiting = inner.send(None)
        except StopIteration as done:
            return cast("_T", done.value)
        if self._events.held:
            try:
                yield from self._events.flush().__await__()
            except BaseException as exc:  # noqa: BLE001 - cancelled while writing: the step hears it
                try:
                    waiting = inner.throw(exc)
                except StopIteration as done:
                    return cast("_T", done.value)
        while True:
            try:
                sent = yield waiting
            except GeneratorExit:
                inner.close()
                raise
            except BaseException as exc:  # noqa: BLE001 - passed on to the step
                try:
                    waiting = inner.throw(exc)
                except StopIteration as done:
                    return cast("_T", done.value)
            else:
                try:
                    waiting = inner.send(sent)
                except StopIteration as done:
                    return cast("_T", done.value)


async def _disconnect(receive: Receive) -> None:
    """Return when the client disconnects (the request body was read already)."""
    while (await receive())["type"] != "http.disconnect":
        pass
