"""ServerGuard over raw ASGI: the hosts it serves, browsers' origins, JSON writes, bounded
bodies and bearer tokens; every refusal a small JSON answer given before the app runs."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, MutableMapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

from agentic_core import ServerGuard, ServerGuardError

TOKEN = "s3cret-token-for-tests"  # noqa: S105 - a fake secret
LOOPBACK = ("127.0.0.1", 8765)


@dataclass
class Exchange:
    """What one request through the guard gave: the answer, and what the app saw."""

    status: int = 0
    headers: dict[str, str] = field(default_factory=dict[str, str])
    body: bytes = b""
    app_called: bool = False
    app_body: bytes = b""
    receive_calls: int = 0
    sent: list[MutableMapping[str, Any]] = field(default_factory=list[MutableMapping[str, Any]])

    @property
    def error(self) -> str:
        return json.loads(self.body)["error"]


async def request(
    guard_options: dict[str, Any] | None = None,
    *,
    method: str = "GET",
    host: str | None = "127.0.0.1:8765",
    headers: Iterable[tuple[str, str]] = (),
    chunks: Sequence[bytes] = (),
    server: tuple[str, int | None] | None = LOOPBACK,
    kind: str = "http",
    path: str = "/api/runs",
) -> Exchange:
    """Send one request to ``ServerGuard(app, **guard_options)``; the app reads the whole body
    and answers 200."""
    exchange = Exchange()

    async def app(scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
        exchange.app_called = True
        if scope["type"] == "http":
            while True:
                message = await receive()
                exchange.app_body += message.get("body", b"")
                if not message.get("more_body", False):
                    break
            await send({"type": "http.response.start", "status": 200, "headers": []})
            await send({"type": "http.response.body", "body": b"{}"})

    incoming = [
        {"type": "http.request", "body": chunk, "more_body": index < len(chunks) - 1}
        for index, chunk in enumerate(chunks)
    ] or [{"type": "http.request", "body": b"", "more_body": False}]

    async def receive() -> MutableMapping[str, Any]:
        exchange.receive_calls += 1
        return incoming.pop(0) if incoming else {"type": "http.disconnect"}

    async def send(message: MutableMapping[str, Any]) -> None:
        exchange.sent.append(message)
        if message["type"] == "http.response.start":
            exchange.status = message["status"]
            exchange.headers = {k.decode(): v.decode() for k, v in message["headers"]}
        elif message["type"] == "http.response.body":
            exchange.body += message.get("body", b"")

    raw = [(name.lower().encode(), value.encode()) for name, value in headers]
    if host is not None:
        raw.insert(0, (b"host", host.encode()))
    scope: dict[str, Any] = {
        "type": kind,
        "method": method,
        "path": path,
        "headers": raw,
        "server": server,
        "client": ("127.0.0.1", 50000),
        "scheme": "http",
    }
    await ServerGuard(app, **(guard_options or {}))(scope, receive, send)
    return exchange


def assert_refused(exchange: Exchange, status: int) -> None:
    assert exchange.status == status
    assert exchange.headers["content-type"] == "application/json"
    assert int(exchange.headers["content-length"]) == len(exchange.body) < 300
    assert exchange.error
    assert not exchange.app_called


# -- hosts ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "host",
    ["127.0.0.1:8765", "127.0.0.1", "localhost:9000", "LOCALHOST", "[::1]:8765", "127.0.0.5"],
)
async def test_loopback_hosts_are_served_on_any_port(host: str) -> None:
    exchange = await request(host=host)

    assert exchange.status == 200
    assert exchange.app_called


@pytest.mark.parametrize(
    "host", ["evil.example:8765", "evil.example", "localhost.evil.example", "127.0.0.1.nip.io", ""]
)
async def test_other_hosts_are_refused_before_the_app_runs(host: str) -> None:
    exchange = await request(host=host)

    assert_refused(exchange, 421)
    assert "allowed hosts" in exchange.error


async def test_a_request_without_a_host_header_is_refused() -> None:
    assert_refused(await request(host=None), 421)


async def test_dns_rebinding_is_refused_even_when_origin_matches_host() -> None:
    # The rebound page's own origin: Origin and Host both name the attacker, on our port.
    exchange = await request(
        method="POST",
        host="evil.example:8765",
        headers=[("origin", "http://evil.example:8765"), ("content-type", "application/json")],
        chunks=[b"{}"],
    )

    assert_refused(exchange, 421)


async def test_allowed_hosts_adds_names_and_subdomain_patterns() -> None:
    options = {"allowed_hosts": ["Runs.Example.com", "*.internal.example"]}

    named = await request(options, host="runs.example.com:443")
    sub = await request(options, host="viewer.internal.example")
    other = await request(options, host="example.com")

    assert named.status == 200
    assert sub.status == 200
    assert_refused(other, 421)


async def test_the_address_the_connection_reached_is_served() -> None:
    exchange = await request(
        {"token": TOKEN},
        host="192.168.1.5:8765",
        server=("192.168.1.5", 8765),
        headers=[("authorization", f"Bearer {TOKEN}")],
    )

    assert exchange.status == 200


@pytest.mark.parametrize("entry", ["http://example.com", "example.com:80", "", "a b", "user@host"])
def test_an_allowed_host_that_is_not_a_host_name_is_an_error(entry: str) -> None:
    with pytest.raises(ServerGuardError, match="not a host name"):
        ServerGuard(_never, allowed_hosts=[entry])


# -- origins -------------------------------------------------------------------------------------


async def test_a_post_from_the_servers_own_origin_passes() -> None:
    exchange = await request(
        method="POST",
        headers=[("origin", "http://127.0.0.1:8765"), ("content-type", "application/json")],
        chunks=[b'{"a": 1}'],
    )

    assert exchange.status == 200
    assert exchange.app_body == b'{"a": 1}'


@pytest.mark.parametrize(
    "origin",
    [
        "https://evil.example",
        "http://127.0.0.1:9999",  # another server of this machine: another origin
        "http://localhost:8765",  # another name: another origin
        "null",
        "file://",
    ],
)
@pytest.mark.parametrize("method", ["GET", "POST"])
async def test_other_origins_are_refused_for_reads_and_writes(origin: str, method: str) -> None:
    exchange = await request(
        method=method,
        headers=[("origin", origin), ("content-type", "application/json")],
        chunks=[b"{}"],
    )

    assert_refused(exchange, 403)
    assert "cross-origin" in exchange.error


async def test_a_post_without_origin_passes_a_client_that_is_no_browser() -> None:
    exchange = await request(
        method="POST", headers=[("content-type", "application/json")], chunks=[b"{}"]
    )

    assert exchange.status == 200


# -- JSON writes ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "content_type", ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data", ""]
)
async def test_writes_must_be_json(content_type: str) -> None:
    headers = [("content-type", content_type)] if content_type else []

    exchange = await request(method="POST", headers=headers, chunks=[b"{}"])

    assert_refused(exchange, 415)
    assert "application/json" in exchange.error


async def test_json_with_parameters_and_json_suffix_types_are_json() -> None:
    plain = await request(
        method="PUT", headers=[("content-type", "application/json; charset=utf-8")]
    )
    suffixed = await request(method="PATCH", headers=[("content-type", "application/merge+json")])

    assert (plain.status, suffixed.status) == (200, 200)


async def test_require_json_can_be_turned_off() -> None:
    exchange = await request(
        {"require_json": False}, method="POST", headers=[("content-type", "text/plain")]
    )

    assert exchange.status == 200


# -- bodies --------------------------------------------------------------------------------------


async def test_a_declared_length_over_the_limit_is_refused_without_reading() -> None:
    exchange = await request(
        {"max_body_bytes": 10},
        method="POST",
        headers=[("content-type", "application/json"), ("content-length", "11")],
        chunks=[b"x" * 11],
    )

    assert_refused(exchange, 413)
    assert exchange.receive_calls == 0
    assert exchange.headers["connection"] == "close"
    assert "10 bytes" in exchange.error


async def test_a_streamed_body_is_cut_as_soon_as_it_passes_the_limit() -> None:
    chunks = [b"x" * 6] * 100  # chunked: no Content-Length to trust

    exchange = await request(
        {"max_body_bytes": 10},
        method="POST",
        headers=[("content-type", "application/json"), ("transfer-encoding", "chunked")],
        chunks=chunks,
    )

    assert_refused(exchange, 413)
    assert exchange.receive_calls == 2  # 12 bytes read of 600: the rest never is


async def test_a_body_within_the_limit_reaches_the_app_whole() -> None:
    exchange = await request(
        {"max_body_bytes": 10},
        method="POST",
        headers=[("content-type", "application/json"), ("transfer-encoding", "chunked")],
        chunks=[b"12345", b"67890"],
    )

    assert exchange.status == 200
    assert exchange.app_body == b"1234567890"


async def test_the_default_limit_is_one_mebibyte() -> None:
    at_limit = await request(
        method="POST",
        headers=[("content-type", "application/json"), ("content-length", str(1024 * 1024))],
        chunks=[b"x" * (1024 * 1024)],
    )
    over = await request(
        method="POST",
        headers=[("content-type", "application/json"), ("content-length", str(1024 * 1024 + 1))],
    )

    assert ServerGuard.DEFAULT_MAX_BODY_BYTES == 1024 * 1024
    assert at_limit.status == 200
    assert_refused(over, 413)


async def test_a_content_length_that_is_no_number_is_a_400() -> None:
    exchange = await request(
        method="POST", headers=[("content-type", "application/json"), ("content-length", "lots")]
    )

    assert_refused(exchange, 400)


def test_a_limit_below_one_byte_is_an_error() -> None:
    with pytest.raises(ServerGuardError, match="max_body_bytes"):
        ServerGuard(_never, max_body_bytes=0)


# -- tokens --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "authorization", [None, "Bearer wrong", f"Bearer {TOKEN}x", f"Token {TOKEN}", "Bearer"]
)
async def test_without_the_right_bearer_token_the_answer_is_401(authorization: str | None) -> None:
    headers = [] if authorization is None else [("authorization", authorization)]

    exchange = await request({"token": TOKEN}, headers=headers)

    assert_refused(exchange, 401)
    assert exchange.headers["www-authenticate"] == 'Bearer realm="agentic"'
    assert TOKEN not in exchange.body.decode()


async def test_another_origin_is_refused_before_any_login_is_asked_for() -> None:
    exchange = await request(
        {"token": TOKEN, "browser_login": True}, headers=[("origin", "https://evil.example")]
    )

    assert_refused(exchange, 403)
    assert "www-authenticate" not in exchange.headers


async def test_the_right_bearer_token_passes() -> None:
    exchange = await request({"token": TOKEN}, headers=[("authorization", f"bearer  {TOKEN}")])

    assert exchange.status == 200


async def test_browser_login_accepts_basic_credentials_with_the_token_as_password() -> None:
    good = base64.b64encode(f"anyone:{TOKEN}".encode()).decode()
    bad = base64.b64encode(b"anyone:guess").decode()
    options = {"token": TOKEN, "browser_login": True}

    logged_in = await request(options, headers=[("authorization", f"Basic {good}")])
    wrong = await request(options, headers=[("authorization", f"Basic {bad}")])
    garbled = await request(options, headers=[("authorization", "Basic %%%")])
    without_login = await request({"token": TOKEN}, headers=[("authorization", f"Basic {good}")])

    assert logged_in.status == 200
    assert_refused(wrong, 401)
    assert wrong.headers["www-authenticate"] == 'Basic realm="agentic"'  # the browser asks
    assert_refused(garbled, 401)
    assert_refused(without_login, 401)


CARD = "/.well-known/agent-card.json"


async def test_a_get_of_a_public_path_needs_no_token() -> None:
    options = {"token": TOKEN, "public_paths": [CARD]}

    card = await request(options, path=CARD)
    head = await request(options, method="HEAD", path=CARD)

    assert card.status == 200
    assert head.status == 200


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", CARD),  # a write of a public path
        ("GET", "/"),  # another path
        ("GET", CARD + "/x"),  # exact paths only
        ("GET", "/.well-known/agent-card.JSON"),
    ],
)
async def test_everything_else_still_needs_the_token(method: str, path: str) -> None:
    headers = [("content-type", "application/json")]

    exchange = await request(
        {"token": TOKEN, "public_paths": [CARD]}, method=method, path=path, headers=headers
    )

    assert_refused(exchange, 401)


async def test_a_public_path_still_passes_the_host_and_origin_checks() -> None:
    options = {"token": TOKEN, "public_paths": [CARD]}

    foreign = await request(options, path=CARD, host="evil.example")
    cross_origin = await request(options, path=CARD, headers=[("origin", "https://evil.example")])

    assert_refused(foreign, 421)
    assert_refused(cross_origin, 403)


@pytest.mark.parametrize("path", ["agent-card.json", "/cards/*", "/card?x=1", ""])
def test_a_public_path_that_is_not_an_exact_path_is_an_error(path: str) -> None:
    with pytest.raises(ServerGuardError, match="not an exact path"):
        ServerGuard(_never, public_paths=[path])


async def test_a_server_reached_from_another_machine_without_a_token_refuses() -> None:
    exchange = await request(host="10.0.0.5:8765", server=("10.0.0.5", 8765))

    assert_refused(exchange, 403)
    assert "no token" in exchange.error


def test_the_token_is_never_shown() -> None:
    guard = ServerGuard(_never, token=TOKEN)

    assert TOKEN not in repr(guard)
    assert "token=set" in repr(guard)
    assert guard.token_required


@pytest.mark.parametrize("token", ["", "   "])
def test_an_empty_token_is_an_error(token: str) -> None:
    with pytest.raises(ServerGuardError, match="empty"):
        ServerGuard(_never, token=token)


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.5", "viewer.example.com"])  # noqa: S104
def test_binding_beyond_loopback_without_a_token_is_refused_naming_the_option(host: str) -> None:
    guard = ServerGuard(_never)

    with pytest.raises(ServerGuardError, match=r"\$AGENTIC_TEST_TOKEN") as raised:
        guard.check_bind(host, option="$AGENTIC_TEST_TOKEN")
    assert "127.0.0.1" in str(raised.value)


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "::1", "[::1]", "127.0.0.2"])
def test_binding_to_loopback_needs_no_token(host: str) -> None:
    ServerGuard(_never).check_bind(host)


def test_binding_beyond_loopback_with_a_token_is_allowed() -> None:
    ServerGuard(_never, token=TOKEN).check_bind("0.0.0.0")  # noqa: S104


# -- other ASGI traffic --------------------------------------------------------------------------


async def test_a_refused_websocket_is_closed_before_it_is_accepted() -> None:
    exchange = await request(kind="websocket", host="evil.example")

    assert [m["type"] for m in exchange.sent] == ["websocket.close"]
    assert exchange.sent[0]["code"] == 1008
    assert not exchange.app_called


async def test_lifespan_messages_pass_through() -> None:
    seen: list[str] = []

    async def app(scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
        seen.append(scope["type"])

    await ServerGuard(app)({"type": "lifespan"}, _never_receive, _never_send)

    assert seen == ["lifespan"]


async def _never(scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
    raise AssertionError("the app must not run")


async def _never_receive() -> MutableMapping[str, Any]:
    raise AssertionError("nothing to receive")


async def _never_send(message: MutableMapping[str, Any]) -> None:
    raise AssertionError("nothing to send")
