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
from collections.abc import AsyncGenerator
from typing import Any, cast

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
        try:
            async with asyncio.timeout(self.timeout_s):
                await self._send_chunks(send)
        except EndpointError as error:
            await self._send_error_event(send, error)
        except Exception as exc:  # noqa: BLE001 - answered as an error event, logged
            await self._send_error_event(send, self._failure(exc))
        with contextlib.suppress(OSError):  # the client left: the listener saw it
            await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _send_chunks(self, send: Send) -> None:
        usage_too = self.request.include_usage

        def event(**fields: Any) -> dict[str, Any]:
            return chunk(
                self.completion_id,
                self.model.name,
                self.created,
                include_usage=usage_too,
                **fields,
            )

        await _send_event(send, event(delta={"role": "assistant", "content": ""}))
        final: AgentResponse | None = None
        updates = self.model.agent.run_stream(self.messages)
        try:
            async for update in updates:
                if update.done:
                    final = update.response
                elif update.text and not self.model.is_workflow:
                    await _send_event(send, event(delta={"content": update.text}))
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
            await _send_event(send, event(delta={"content": final.text}))
        await _send_event(send, event(finish_reason="stop"))
        if usage_too:
            await _send_event(send, event(usage=final.usage))
        await send({"type": "http.response.body", "body": b"data: [DONE]\n\n", "more_body": True})

    async def _send_error_event(self, send: Send, error: EndpointError) -> None:
        with contextlib.suppress(TimeoutError, OSError):
            async with asyncio.timeout(_ERROR_SEND_S):
                await _send_event(send, _error_of(error))

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


async def _send_event(send: Send, data: dict[str, Any]) -> None:
    payload = b"data: " + json.dumps(data, separators=(",", ":")).encode() + b"\n\n"
    await send({"type": "http.response.body", "body": payload, "more_body": True})


async def _disconnect(receive: Receive) -> None:
    """Return when the client disconnects (the request body was read already)."""
    while (await receive())["type"] != "http.disconnect":
        pass
