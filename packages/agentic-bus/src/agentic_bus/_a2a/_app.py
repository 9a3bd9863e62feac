"""``A2AApp``, the ASGI app ``serve_a2a`` returns, and the small ASGI layers around the SDK's
routes: the run-slot check (429) and the log line of a client gone mid-answer."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any, cast

import structlog
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.types import AgentCard

from agentic_bus._a2a._card import base_url
from agentic_bus._a2a._errors import A2AServeError
from agentic_bus._a2a._executor import RunSlots
from agentic_core import ServerGuard, serve_asgi

__all__ = ["A2AApp", "Busy"]

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
            await self.handler.aclose()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.guard(scope, receive, send)
            return
        token = base_url.set(_base_of(scope))
        try:
            watched = _Watched(scope, receive, send)
            await self.guard(scope, watched.receive, watched.send)
        finally:
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
