"""``A2AApp``, the ASGI app ``serve_a2a`` returns, and the small ASGI layers around the SDK's
routes: the run-slot check (429) and the log line of a client gone mid-answer.

Also the switch that spares served requests the ``a2a-sdk``'s own spans when nobody records
them (``skip_idle_sdk_spans``): the SDK wraps its server classes' methods in OpenTelemetry spans
at import (``a2a.utils.telemetry.trace_class``), about 60 per message, and with no SDK tracer
provider installed each is a non-recording span that still costs context switches and calls.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import json
from collections.abc import Awaitable, Callable, MutableMapping
from contextvars import ContextVar
from types import CodeType, FunctionType, ModuleType
from typing import Any, cast

import structlog
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.types import AgentCard

from agentic_bus._a2a._card import base_url
from agentic_bus._a2a._errors import A2AServeError
from agentic_bus._a2a._executor import RunSlots
from agentic_core import ServerGuard, serve_asgi, tracing_enabled

__all__ = ["A2AApp", "Busy", "skip_idle_sdk_spans"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

_log = structlog.get_logger("agentic_bus.a2a")


class A2AApp:
    """The A2A server of one target: an ASGI app (the guarded Starlette app of the SDK's
    routes), ``check_bind(host)`` and ``run(host, port)``.

    ``card`` is the agent card it serves; ``guard`` the ``ServerGuard`` in front.
    """

    def __init__(
        self, guard: ServerGuard, handler: DefaultRequestHandler, card: AgentCard, name: str
    ) -> None:
        self.guard = guard
        self.handler = handler
        self.card = card
        self.name = name

    def __repr__(self) -> str:
        return f"A2AApp(target={self.name!r}, guard={self.guard!r})"

    def check_bind(self, host: str) -> None:
        """Raise ``ServerGuardError`` when serving on ``host`` would need a token it has not."""
        self.guard.check_bind(host, option="serve_a2a(token=...)")

    async def run(self, host: str = "127.0.0.1", port: int = 9999) -> None:
        """Serve on ``host``:``port`` with uvicorn until cancelled (Ctrl-C); a host beyond
        loopback needs a token (``ServerGuardError``). Running tasks are stopped on the way
        out; tasks waiting for input stay in the state store for the next server."""
        if not 0 <= port <= 65535:
            raise A2AServeError(f"port must be 0..65535, got {port}")
        self.check_bind(host)
        try:
            await serve_asgi(self, host=host, port=port)
        finally:
            await self.aclose()

    async def aclose(self) -> None:
        """Stop the tasks running here (tasks waiting for input stay in the state store for
        the next server). ``run`` and the app's lifespan call it; call it yourself when
        another ASGI server runs the app without its lifespan. Safe to call more than once."""
        await self.handler.aclose()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.guard(scope, receive, send)
            return
        token = base_url.set(_base_of(scope))
        untraced = _sdk_untraced.set(not tracing_enabled())
        try:
            watched = _Watched(scope, receive, send)
            await self.guard(scope, watched.receive, watched.send)
        finally:
            _sdk_untraced.reset(untraced)
            base_url.reset(token)


class _Watched:
    """``receive``/``send`` of one request, logging once when the client leaves before its
    answer is complete (a dropped stream: the task goes on, and can be resubscribed)."""

    def __init__(self, scope: Scope, receive: Receive, send: Send) -> None:
        self._scope = scope
        self._receive = receive
        self._send = send
        self._started = False
        self._done = False
        self._logged = False

    async def receive(self) -> Message:
        message = await self._receive()
        gone = message["type"] == "http.disconnect" and self._started and not self._done
        if gone and not self._logged:
            self._logged = True
            _log.info("a2a.client_disconnected", path=self._scope.get("path"))
        return message

    async def send(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            self._started = True
        elif message["type"] == "http.response.body" and not message.get("more_body", False):
            self._done = True
        await self._send(message)


class Busy:
    """Refuses a new message (429, a JSON-RPC error body) while every run slot is taken;
    reads, cancels and resubscribes still pass. The guard has bounded the body already."""

    _STARTS = frozenset({"SendMessage", "SendStreamingMessage", "message/send", "message/stream"})

    def __init__(self, app: Any, slots: RunSlots) -> None:
        self.app = app
        self.slots = slots

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST" or not self.slots.full:
            await self.app(scope, receive, send)
            return
        chunks: list[Message] = []
        body = b""
        while True:
            message = await receive()
            chunks.append(message)
            if message["type"] != "http.request":
                break
            body += message.get("body", b"")
            if not message.get("more_body", False):
                break
        method, request_id = _rpc_method(body)
        if method not in self._STARTS:

            async def replay() -> Message:
                return chunks.pop(0) if chunks else await receive()

            await self.app(scope, replay, send)
            return
        limit = self.slots.limit
        error = {"code": -32000, "message": f"this server runs at most {limit} tasks at once"}
        payload = json.dumps({"jsonrpc": "2.0", "id": request_id, "error": error}).encode()
        _log.info("a2a.busy", limit=limit)
        await send(
            {
                "type": "http.response.start",
                "status": 429,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(payload)).encode()),
                    (b"retry-after", b"1"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": payload})


def _rpc_method(body: bytes) -> tuple[str | None, Any]:
    try:
        data: Any = json.loads(body)
    except ValueError:
        return None, None
    if not isinstance(data, dict):
        return None, None
    payload = cast("dict[str, Any]", data)
    method = payload.get("method")
    return (method if isinstance(method, str) else None), payload.get("id")


def _base_of(scope: Scope) -> str | None:
    """``scheme://host`` of the request (its ``Host`` header; the guard refuses foreign ones
    before the card is built)."""
    for name, value in scope.get("headers", ()):
        if bytes(name).lower() == b"host":
            return f"{scope.get('scheme', 'http')}://{bytes(value).decode('latin-1')}"
    return None


# -- the SDK's spans, only when recorded --------------------------------------------------------

_sdk_untraced: ContextVar[bool] = ContextVar("agentic_bus_a2a_sdk_untraced", default=False)
"""True in a request ``A2AApp`` serves while no SDK tracer provider is installed (and in the
tasks the request starts: the SDK's queues and the run copy its context)."""

_SDK_TRACED = (
    ("a2a.server.request_handlers.default_request_handler_v2", "DefaultRequestHandlerV2"),
    ("a2a.server.routes.jsonrpc_dispatcher", "JsonRpcDispatcher"),
    ("a2a.server.events.event_queue_v2", "EventQueueSource"),
    ("a2a.server.tasks.task_manager", "append_artifact_to_task"),
)
"""The SDK's traced classes and functions a served message goes through (module, name)."""


def skip_idle_sdk_spans() -> None:
    """Make the ``a2a-sdk``'s traced server methods skip their span inside a request served by
    an ``A2AApp`` while no OpenTelemetry SDK tracer provider is installed.

    Each method the SDK wrapped (``trace_function``) is replaced by a switch calling either the
    SDK's traced method, as before, or the method it wraps. Outside ``A2AApp`` requests (other
    code using the SDK in this process) and whenever a provider is installed, the traced method
    runs: the spans are the SDK's, unchanged. Idempotent; a newer SDK whose wrappers differ is
    left as it is (its spans stay).
    """
    wrappers = _sdk_wrapper_codes()
    if not wrappers:
        return
    for module_name, name in _SDK_TRACED:
        module = _module(module_name)
        found: object = getattr(module, name, None)
        owner: object = found if isinstance(found, type) else module
        members = dict(vars(found)) if isinstance(found, type) else {name: found}
        for member, value in members.items():
            if isinstance(value, FunctionType) and value.__code__ in wrappers:
                setattr(owner, member, _switch(value))


def _module(name: str) -> ModuleType | None:
    try:
        return importlib.import_module(name)
    except ImportError:  # pragma: no cover - another SDK layout: its spans stay
        return None


def _sdk_wrapper_codes() -> frozenset[CodeType]:
    """The code of ``trace_function``'s async and sync wrappers (what a traced method runs)."""
    trace: object = getattr(_module("a2a.utils.telemetry"), "trace_function", None)
    if not callable(trace):  # pragma: no cover - an SDK without its tracing helpers
        return frozenset()

    async def probe_async() -> None:  # pragma: no cover - never called
        return None

    def probe() -> None:  # pragma: no cover - never called
        return None

    codes: set[CodeType] = set()
    for probe_fn in (probe_async, probe):
        wrapped = trace(probe_fn)
        if isinstance(wrapped, FunctionType) and getattr(wrapped, "__wrapped__", None) is probe_fn:
            codes.add(wrapped.__code__)
    return frozenset(codes)


def _switch(traced: FunctionType) -> Callable[..., Any]:
    """``traced`` (an SDK wrapper), or the function it wraps when the span would go nowhere.
    As async as ``traced`` is (Starlette and the SDK look)."""
    plain: Callable[..., Any] = traced.__dict__["__wrapped__"]

    if inspect.iscoroutinefunction(traced):

        @functools.wraps(plain)
        async def switch_async(*args: Any, **kwargs: Any) -> Any:
            if _sdk_untraced.get():
                return await plain(*args, **kwargs)
            return await traced(*args, **kwargs)

        return switch_async

    @functools.wraps(plain)
    def switch(*args: Any, **kwargs: Any) -> Any:
        if _sdk_untraced.get():
            return plain(*args, **kwargs)
        return traced(*args, **kwargs)

    return switch
