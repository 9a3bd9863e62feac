"""ServerGuard: the ASGI middleware in front of every HTTP server of agentic.

A server on 127.0.0.1 is not private: any web page open in the user's browser can send it
requests, and by DNS rebinding (its own name made to resolve to 127.0.0.1) read the answers as
if they were its own. The guard turns that away with checks on headers alone, before the app
runs: the ``Host`` must be a name the server answers for (DNS rebinding keeps the attacker's
name), a browser's ``Origin`` must be the server's own, writes must be JSON (which a page of
another site cannot send without a CORS preflight, never granted), request bodies are bounded,
and a server reachable from other machines requires a bearer token.

Pure ASGI (no web framework), so every package can put it in front of its app.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import ipaddress
import json
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import Any, ClassVar
from urllib.parse import urlsplit

import structlog

from agentic_core._errors import AgentCoreError

__all__ = ["ServerGuard", "ServerGuardError", "is_loopback_host"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

_LOOPBACK_NAMES = frozenset({"localhost"})
_BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})
_READ_METHODS = frozenset({"GET", "HEAD"})
_REALM = 'realm="agentic"'

_log = structlog.get_logger("agentic_core.server")


class ServerGuardError(AgentCoreError, ValueError):
    """A guarded server is set up unsafely (bound to another machine's reach without a token)
    or wrongly (an empty token, an allowed host that is not a host name)."""


class _RefusalError(Exception):
    """An answer the guard gives instead of the app: status, message, extra headers."""

    def __init__(
        self, status: int, message: str, headers: Iterable[tuple[bytes, bytes]] = ()
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = list(headers)


def is_loopback_host(host: str) -> bool:
    """Whether ``host`` (a name or an address, IPv6 with or without brackets) is this machine
    only: ``localhost``, 127.0.0.0/8, ``::1``."""
    name = host.strip().strip("[]").rstrip(".").lower()
    if name in _LOOPBACK_NAMES:
        return True
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped.is_loopback
    return address.is_loopback


class ServerGuard:
    """ASGI middleware refusing what a server on this machine must not answer.

    Every HTTP server of agentic wraps its app in it (``ServerGuard(app, ...)``), in this
    order of checks, each answered with a small JSON body ``{"error": "..."}``:

    - ``Host``: loopback names (``localhost``, ``127.0.0.1``, ``[::1]``, any 127.x address), the
      address the connection reached (the bound one), and ``allowed_hosts`` (names served on
      purpose, e.g. behind a proxy; ``*.example.com`` matches subdomains, ``*`` any host), on any
      port (a forwarded or proxied port changes it). Anything else: 421, before the app runs.
      That defeats DNS rebinding, where a page's own name resolves to 127.0.0.1.
    - A server reached on an address that is not loopback answers only with a ``token``: 403
      otherwise (``check_bind`` refuses such an address before serving).
    - ``Origin`` (sent by browsers): it must be the server's own origin, the scheme-less
      ``host[:port]`` the request was sent to (a host already checked above); any other,
      ``null`` included, is a 403, for reads as for writes.
    - ``token``: every request must carry ``Authorization: Bearer <token>`` (compared in constant
      time; 401 otherwise). With ``browser_login``, HTTP Basic credentials whose password is the
      token are accepted too and asked for, so a person's browser can log in. A GET or HEAD of
      one of ``public_paths`` (exact paths, e.g. an A2A agent card) needs no token; it still
      passes every other check.
    - ``require_json``: a POST, PUT or PATCH must be ``application/json`` (415): another site's
      page can send a form or ``text/plain`` without asking, never JSON.
    - Bodies over ``max_body_bytes`` (1 MiB by default; None: unbounded): 413, from
      ``Content-Length`` before reading, or as soon as a streamed body goes past it.

    The token never appears in ``repr``, logs or answers. Lifespan messages pass through.

    Example:
        ```python
        guarded = ServerGuard(app, allowed_hosts=["runs.example.com"], token=secret)
        guarded.check_bind("0.0.0.0")  # before serving: raises when no token is set
        uvicorn.run(guarded, host="0.0.0.0", port=8765)
        ```
    """

    DEFAULT_MAX_BODY_BYTES: ClassVar[int] = 1024 * 1024
    """The largest request body read by default (1 MiB)."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        allowed_hosts: Iterable[str] = (),
        token: str | None = None,
        max_body_bytes: int | None = DEFAULT_MAX_BODY_BYTES,
        require_json: bool = True,
        browser_login: bool = False,
        public_paths: Iterable[str] = (),
    ) -> None:
        if token is not None and not token.strip():
            raise ServerGuardError("the token is empty: give a secret (or None for no token)")
        if max_body_bytes is not None and max_body_bytes < 1:
            raise ServerGuardError(f"max_body_bytes must be at least 1, got {max_body_bytes}")
        self.app = app
        self.allowed_hosts: tuple[str, ...] = tuple(_host_pattern(h) for h in allowed_hosts)
        self.max_body_bytes = max_body_bytes
        self.require_json = require_json
        self.browser_login = browser_login
        self.public_paths: frozenset[str] = frozenset(_public_path(p) for p in public_paths)
        self._token = None if token is None else token.encode()

    @property
    def token_required(self) -> bool:
        """Whether requests must carry the token."""
        return self._token is not None

    def __repr__(self) -> str:
        token = "set" if self._token is not None else "none"
        return (
            f"ServerGuard(allowed_hosts={list(self.allowed_hosts)}, token={token}, "
            f"max_body_bytes={self.max_body_bytes})"
        )

    def check_bind(self, host: str, *, option: str = "token=...") -> None:
        """Raise ``ServerGuardError`` when serving on ``host`` would let other machines in
        without a token; ``option`` names how this server is given one."""
        if self._token is None and not is_loopback_host(host):
            raise ServerGuardError(
                f"serving on {host!r} lets other machines reach this server: set a token "
                f"({option}; clients send 'Authorization: Bearer <token>') or serve on "
                "127.0.0.1"
            )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind not in ("http", "websocket"):
            await self.app(scope, receive, send)  # lifespan: nothing to guard
            return
        headers = _headers(scope)
        try:
            self._check_headers(scope, headers)
            if kind == "http":
                receive = await self._bounded_body(headers, receive)
        except _RefusalError as refusal:
            _log.info(
                "server.request_refused",
                status=refusal.status,
                reason=refusal.message,
                method=scope.get("method"),
                path=scope.get("path"),
            )
            if kind == "websocket":
                await send({"type": "websocket.close", "code": 1008})  # before accept: a 403
            else:
                await _answer(send, refusal)
            return
        await self.app(scope, receive, send)

    # -- the checks ------------------------------------------------------------------------------

    def _check_headers(self, scope: Scope, headers: dict[bytes, bytes]) -> None:
        host = headers.get(b"host", b"").decode("latin-1")
        server_host = _server_host(scope)
        if not self._serves(host, server_host):
            shown = host[:100] or "(none)"
            raise _RefusalError(
                421, f"this server does not answer for host {shown!r}: add it to its allowed hosts"
            )
        if self._token is None and server_host is not None and not is_loopback_host(server_host):
            raise _RefusalError(
                403, "this server is reachable from other machines and has no token"
            )
        # Before the token: another site's page gets no login challenge to show its user.
        origin = headers.get(b"origin")
        if origin is not None and not _same_origin(origin.decode("latin-1"), host):
            shown = origin.decode("latin-1")[:100]
            raise _RefusalError(403, f"cross-origin request from {shown} refused")
        method = str(scope.get("method", "GET")).upper()
        if (
            self._token is not None
            and not self._is_public(method, scope)
            and not self._authorized(headers.get(b"authorization"))
        ):
            scheme = "Basic" if self.browser_login else "Bearer"
            raise _RefusalError(
                401,
                "missing or wrong token: send 'Authorization: Bearer <token>'",
                [(b"www-authenticate", f"{scheme} {_REALM}".encode())],
            )
        if self.require_json and method in _BODY_METHODS:
            media_type = headers.get(b"content-type", b"").decode("latin-1")
            media_type = media_type.split(";")[0].strip().lower()
            if not _is_json(media_type):
                raise _RefusalError(
                    415,
                    "send JSON (Content-Type: application/json), not "
                    f"{media_type[:100] or 'no content type'}",
                )
        self._check_length(headers.get(b"content-length"))

    def _serves(self, host_header: str, server_host: str | None) -> bool:
        name = _host_name(host_header)
        if name is None:
            return False
        if is_loopback_host(name) or "*" in self.allowed_hosts:
            return True
        if server_host is not None and name == server_host.strip("[]").lower():
            return True  # the address the connection reached: a bound address is served
        return any(
            name == allowed or (allowed.startswith("*.") and name.endswith(allowed[1:]))
            for allowed in self.allowed_hosts
        )

    def _is_public(self, method: str, scope: Scope) -> bool:
        """A read of a path served without the token (never a write, never a websocket)."""
        return (
            scope["type"] == "http"
            and method in _READ_METHODS
            and str(scope.get("path", "")) in self.public_paths
        )

    def _authorized(self, authorization: bytes | None) -> bool:
        expected = self._token
        if expected is None:
            return True
        if authorization is None:
            return False
        scheme, _, credentials = authorization.strip().partition(b" ")
        scheme, credentials = scheme.lower(), credentials.strip()
        if scheme == b"bearer":
            return hmac.compare_digest(credentials, expected)
        if scheme == b"basic" and self.browser_login:
            try:
                decoded = base64.b64decode(credentials, validate=True)
            except (binascii.Error, ValueError):
                return False
            _, _, password = decoded.partition(b":")  # any user name: the token is the secret
            return hmac.compare_digest(password, expected)
        return False

    def _check_length(self, declared: bytes | None) -> None:
        if declared is None or self.max_body_bytes is None:
            return
        try:
            length = int(declared)
        except ValueError:
            raise _RefusalError(400, "Content-Length is not a number") from None
        if length > self.max_body_bytes:
            raise _RefusalError(413, self._too_large(), [(b"connection", b"close")])

    async def _bounded_body(self, headers: dict[bytes, bytes], receive: Receive) -> Receive:
        """Read the body up to the limit (never past it), then hand the app a ``receive``
        replaying it; a request without a body is passed through untouched."""
        limit = self.max_body_bytes
        has_body = headers.get(b"content-length", b"0") != b"0" or b"transfer-encoding" in headers
        if limit is None or not has_body:
            return receive
        read: list[Message] = []
        size = 0
        while True:
            message = await receive()
            read.append(message)
            if message["type"] != "http.request":
                break  # a disconnect: the app sees it
            size += len(message.get("body", b""))
            if size > limit:
                raise _RefusalError(413, self._too_large(), [(b"connection", b"close")])
            if not message.get("more_body", False):
                break

        async def replay() -> Message:
            return read.pop(0) if read else await receive()

        return replay

    def _too_large(self) -> str:
        return f"the request body is larger than this server accepts ({self.max_body_bytes} bytes)"


# -- parsing -------------------------------------------------------------------------------------


def _headers(scope: Scope) -> dict[bytes, bytes]:
    """The request's headers by lower-case name (the first of repeated ones)."""
    found: dict[bytes, bytes] = {}
    for name, value in scope.get("headers", ()):
        found.setdefault(bytes(name).lower(), bytes(value))
    return found


def _server_host(scope: Scope) -> str | None:
    """The address the connection reached (None: unknown, or a Unix socket's path)."""
    server = scope.get("server")
    if not server:
        return None
    host = str(server[0])
    return None if host.startswith("/") else host


def _split_host(netloc: str) -> tuple[str, str] | None:
    """``(name, port)`` of ``host[:port]`` (port "" when absent), lower case; None if malformed."""
    netloc = netloc.strip().lower()
    if netloc.startswith("["):
        name, bracket, rest = netloc[1:].partition("]")
        if not bracket or (rest and not rest.startswith(":")):
            return None
        port = rest[1:]
    else:
        name, _, port = netloc.partition(":")
    name = name.rstrip(".")
    if not name or (port and not port.isdigit()):
        return None
    return name, port


def _host_name(host_header: str) -> str | None:
    parts = _split_host(host_header)
    return None if parts is None else parts[0]


def _same_origin(origin: str, host_header: str) -> bool:
    """Whether a browser's ``Origin`` names the ``host[:port]`` the request was sent to."""
    parts = urlsplit(origin.strip())
    if parts.scheme not in ("http", "https") or parts.path not in ("", "/"):
        return False
    mine, theirs = _split_host(host_header), _split_host(parts.netloc)
    return mine is not None and mine == theirs


def _is_json(media_type: str) -> bool:
    return media_type == "application/json" or (
        media_type.startswith("application/") and media_type.endswith("+json")
    )


def _host_pattern(entry: str) -> str:
    """An ``allowed_hosts`` entry, checked and normalized: a name, ``*.suffix`` or ``*``."""
    name = entry.strip().lower().strip("[]").rstrip(".")
    if name == "*" or (name.startswith("*.") and len(name) > 2):
        return name
    try:
        ipaddress.ip_address(name)
    except ValueError:
        if not name or any(c in name for c in ":/@ *"):
            raise ServerGuardError(
                f"allowed host {entry!r} is not a host name: give names like 'runs.example.com' "
                "or '*.example.com' (no scheme, no port)"
            ) from None
    return name


def _public_path(path: str) -> str:
    """A ``public_paths`` entry, checked: an absolute path without query or wildcard."""
    if not path.startswith("/") or any(c in path for c in "?#*"):
        raise ServerGuardError(
            f"public path {path!r} is not an exact path: give paths like "
            "'/.well-known/agent-card.json' (a leading '/', no query, no wildcard)"
        )
    return path


async def _answer(send: Send, refusal: _RefusalError) -> None:
    body = json.dumps({"error": refusal.message}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": refusal.status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                *refusal.headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
