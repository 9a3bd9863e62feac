"""HTTPClient: the one HTTP path of every provider: retries, error mapping, streams, secrets.

A provider client owns one ``HTTPClient`` and speaks only its own JSON: it never sees an httpx
exception or an error status, only ``LLMError``s with the provider's message in them. The
``HTTPClient`` keeps one ``httpx.AsyncClient`` (a connection pool, reused by every call) per
running event loop: a connection belongs to the loop that opened it, and scripts, notebooks and
test suites use one chat client from several ``asyncio.run`` calls in turn, or from loops in
several threads at once. A pool is closed on its own loop as that loop shuts down.
"""

from __future__ import annotations

import asyncio
import itertools
import threading
from collections.abc import AsyncGenerator, Mapping
from contextlib import aclosing, asynccontextmanager
from dataclasses import dataclass
from typing import Any

import httpx
import structlog

from agentic_llm._errors import (
    LLMConnectionError,
    LLMError,
    LLMTimeoutError,
    ProviderError,
)
from agentic_llm._http._errors import (
    error_from_response,
    is_quota_exhausted,
    provider_error_message,
)
from agentic_llm._http._retry import (
    RetryPolicy,
    is_retryable_status,
    parse_retry_after,
    parse_retry_info,
)
from agentic_llm._http._streams import SSEEvent, decode_json_event, iter_sse_events, split_lines
from agentic_llm._secret import Secret

_log = structlog.get_logger(__name__)

_sleep = asyncio.sleep
"""The backoff wait (a module attribute so tests can record waits instead of sleeping)."""

# Failures where the request surely or most likely never reached the model: safe to send again.
# A read or write error is what a kept-alive connection the server closed meanwhile gives
# (reset by peer); like the providers' own SDKs, we send again on a fresh connection.
# A read timeout is not retried: the model may be busy generating, and a retry costs as much.
_RETRYABLE_TRANSPORT = (
    httpx.ConnectError,
    httpx.ConnectTimeout,
    httpx.PoolTimeout,
    httpx.RemoteProtocolError,
    httpx.ReadError,
    httpx.WriteError,
)

_TIMEOUT_PHASES: tuple[tuple[type[httpx.TimeoutException], str], ...] = (
    (httpx.ConnectTimeout, "connecting"),
    (httpx.ReadTimeout, "waiting for the answer"),
    (httpx.WriteTimeout, "sending the request"),
    (httpx.PoolTimeout, "waiting for a free connection"),
)


def display_url(url: str) -> str:
    """``url`` fit for messages and logs: no user info, no query string (keys hide there)."""
    parsed = httpx.URL(url)
    return f"{parsed.scheme}://{parsed.netloc.decode('ascii')}{parsed.path}".rstrip("/")


class HTTPStream:
    """An open streamed response with a 2xx status; read it once with one of the readers
    (wrap the reader in ``contextlib.aclosing`` so it is closed with the block).

    Transport failures while reading become ``LLMTimeoutError`` (no data for ``timeout_s``) or
    ``ProviderError`` (the connection dropped: the stream was cut off mid-way).
    """

    def __init__(self, response: httpx.Response, *, client: HTTPClient) -> None:
        self._response = response
        self._client = client
        # One byte iterator for the whole body: readers stop at their terminal event, and
        # ``drain`` reads what is left from the same iterator so the connection can be reused.
        self._bytes = response.aiter_bytes()

    @property
    def headers(self) -> httpx.Headers:
        """The response headers."""
        return self._response.headers

    async def lines(self) -> AsyncGenerator[str]:
        """The body's text lines."""
        client = self._client
        try:
            async for line in split_lines(self._bytes):
                yield line
        except httpx.TimeoutException as exc:
            raise LLMTimeoutError(
                f"{client.label} stopped sending its stream: no data for {client.timeout_s:g} s; "
                "the answer is incomplete",
                provider=client.provider,
            ) from exc
        except httpx.TransportError as exc:
            raise ProviderError(
                client.redact(
                    f"{client.label} stream was cut off mid-way ({type(exc).__name__}: {exc}); "
                    "the answer is incomplete"
                ),
                provider=client.provider,
            ) from exc

    def sse_events(self) -> AsyncGenerator[SSEEvent]:
        """The body as Server-Sent Events."""
        return iter_sse_events(self.lines())

    async def ndjson(self) -> AsyncGenerator[Any]:
        """The body as newline-delimited JSON values (blank lines skipped)."""
        async with aclosing(self.lines()) as lines:
            async for line in lines:
                if line.strip():
                    yield self.decode_json(line)

    async def drain(self, *, max_bytes: int = 65_536, timeout_s: float = 1.0) -> bool:
        """Read what is left of the body (bounded), so httpx can reuse the connection.

        Providers send a little after their terminal event (a final newline, the chunked
        encoding's end); leaving it unread makes httpx drop the connection, and the next
        request would pay a new TCP and TLS handshake. Returns whether the body ended.
        """
        left = max_bytes
        try:
            async with asyncio.timeout(timeout_s):
                async for chunk in self._bytes:
                    left -= len(chunk)
                    if left < 0:
                        return False
        except (TimeoutError, httpx.HTTPError):
            return False
        return True

    def decode_json(self, text: str) -> Any:
        """One event's JSON, or a ProviderError (redacted) saying the event is malformed."""
        try:
            return decode_json_event(text, provider=self._client.provider, label=self._client.label)
        except ProviderError as exc:
            raise ProviderError(
                self._client.redact(str(exc)),
                provider=exc.provider,
                status=self._response.status_code,
                body=self._client.redact(exc.body),
            ) from exc.__cause__

    def cut_off(self, missing: str, *, events: int) -> ProviderError:
        """The error for a stream that ended without its terminal event ``missing``."""
        return ProviderError(
            f"{self._client.label} stream ended after {events} event(s) without {missing}: "
            "it was cut off mid-way and the answer is incomplete",
            provider=self._client.provider,
            status=self._response.status_code,
        )


async def _close_at_shutdown(client: httpx.AsyncClient) -> AsyncGenerator[None]:
    """Suspended for the life of ``client``'s event loop: an async generator the loop still holds
    when it shuts down is closed by it (``asyncio.run`` calls ``shutdown_asyncgens``), so the
    pool's connections are closed on their own loop instead of leaking with it."""
    try:
        yield
    finally:
        await client.aclose()


@dataclass(slots=True)
class _LoopPool:
    """The connection pool of one event loop, and the generator that closes it at shutdown."""

    client: httpx.AsyncClient
    closer: AsyncGenerator[None]


class HTTPClient:
    """One provider's HTTP connection: base URL, headers, retries and error mapping.

    ``secret_headers`` (e.g. ``{"Authorization": Secret("Bearer sk-...")}``) are added to each
    request, never stored in the ``httpx.AsyncClient``'s default headers, and their values are
    masked in every error message and log line. ``auth_hint`` is appended to 401/403 messages
    (e.g. "set OPENAI_API_KEY or pass api_key=").
    """

    def __init__(
        self,
        *,
        provider: str,
        base_url: str,
        timeout_s: float,
        retry: RetryPolicy,
        headers: Mapping[str, str] | None = None,
        secret_headers: Mapping[str, Secret] | None = None,
        auth_hint: str | None = None,
    ) -> None:
        if timeout_s <= 0:
            raise ValueError(f"timeout_s must be > 0, got {timeout_s}")
        self.provider = provider
        self.base_url = base_url.rstrip("/")
        self.label = f"{provider} ({display_url(self.base_url)})"
        self.timeout_s = timeout_s
        self.retry = retry
        self.auth_hint = auth_hint
        self._secret_headers = dict(secret_headers or {})
        self._headers = {"user-agent": "agentic-llm", **(headers or {})}
        self._pools: dict[asyncio.AbstractEventLoop, _LoopPool] = {}
        self._pools_lock = threading.Lock()  # loops in several threads share this client
        self._closed = False

    def __repr__(self) -> str:
        return f"HTTPClient(provider={self.provider!r}, base_url={display_url(self.base_url)!r})"

    @property
    def is_closed(self) -> bool:
        """Whether ``aclose`` was called."""
        return self._closed

    @property
    def open_pools(self) -> int:
        """How many event loops hold a connection pool of this client now."""
        with self._pools_lock:
            self._forget_closed_loops()
            return len(self._pools)

    async def aclose(self) -> None:
        """Close the connection pools (idempotent); the client cannot be used afterwards.

        The pool of the running loop is closed here; one of a loop running in another thread is
        closed on that loop; one of a loop not running now is closed when that loop shuts down.
        """
        self._closed = True
        current = asyncio.get_running_loop()
        with self._pools_lock:
            pools = list(self._pools.items())
            self._pools.clear()
        for loop, pool in pools:
            if loop is current:
                await pool.closer.aclose()
            elif loop.is_running() and not loop.is_closed():
                asyncio.run_coroutine_threadsafe(pool.closer.aclose(), loop)

    async def _client(self) -> httpx.AsyncClient:
        """The running loop's connection pool (made on first use in that loop)."""
        loop = asyncio.get_running_loop()
        pool = self._pools.get(loop)
        if pool is not None:
            return pool.client
        with self._pools_lock:
            self._forget_closed_loops()
            pool = self._pools.get(loop)
            if pool is None:
                client = httpx.AsyncClient(
                    base_url=self.base_url + "/",
                    headers=self._headers,
                    timeout=httpx.Timeout(self.timeout_s),
                )
                pool = self._pools[loop] = _LoopPool(client, _close_at_shutdown(client))
        await anext(pool.closer)  # first iterated in this loop: the loop will close it
        return pool.client

    def _forget_closed_loops(self) -> None:
        # Their pools were closed at their shutdown (or, for a loop closed without
        # shutdown_asyncgens, have nothing left to close on): only the references remain.
        for loop in [loop for loop in self._pools if loop.is_closed()]:
            del self._pools[loop]

    def redact(self, text: str) -> str:
        """``text`` with every secret masked (secret header values and the bare keys in them)."""
        for secret in self._secret_headers.values():
            text = secret.redact(text)
            _, _, bare = secret.reveal().rpartition(" ")  # "Bearer sk-..." -> "sk-..."
            text = Secret(bare).redact(text)
        return text

    # -- requests -------------------------------------------------------------------------------

    async def request_json(
        self,
        method: str,
        path: str,
        *,
        json_body: Any = None,
        params: Mapping[str, str] | None = None,
        max_retries: int | None = None,
    ) -> Any:
        """Send a request and return its JSON body (``path`` is relative to the base URL)."""
        response = await self._send(
            method, path, json_body=json_body, params=params, stream=False, max_retries=max_retries
        )
        try:
            return response.json()
        except ValueError as exc:
            raise ProviderError(
                self.redact(
                    f"{self.label} answered {method} {path} with a body that is not JSON: "
                    f"{response.text[:200]!r}"
                ),
                provider=self.provider,
                status=response.status_code,
                body=self.redact(response.text[:4000]),
            ) from exc

    @asynccontextmanager
    async def stream(
        self,
        method: str,
        path: str,
        *,
        json_body: Any = None,
        params: Mapping[str, str] | None = None,
    ) -> AsyncGenerator[HTTPStream]:
        """Send a request and hold its streamed response open for the ``async with`` block.

        Retries happen before the first byte of a 2xx body, never after. Leaving the block for
        any reason (end, error, ``break``, cancellation) closes the response and its connection.
        """
        response = await self._send(
            method, path, json_body=json_body, params=params, stream=True, max_retries=None
        )
        try:
            stream = HTTPStream(response, client=self)
            yield stream
            await stream.drain()
        finally:
            await response.aclose()

    async def _send(
        self,
        method: str,
        path: str,
        *,
        json_body: Any,
        params: Mapping[str, str] | None,
        stream: bool,
        max_retries: int | None,
    ) -> httpx.Response:
        if self._closed:
            raise LLMError(
                f"the {self.label} client is closed: create a new one", provider=self.provider
            )
        client = await self._client()
        retries = self.retry.max_retries if max_retries is None else max_retries
        headers = {name: secret.reveal() for name, secret in self._secret_headers.items()}
        for attempt in itertools.count():
            request = client.build_request(
                method, path, json=json_body, params=params, headers=headers
            )
            try:
                response = await client.send(request, stream=stream)
            except httpx.TransportError as exc:
                error = self._transport_error(exc)
                if attempt < retries and isinstance(exc, _RETRYABLE_TRANSPORT):
                    await self._wait_before_retry(attempt, retries, path, str(error), None)
                    continue
                _log.warning(
                    "llm_request_failed", provider=self.provider, path=path, error=str(error)
                )
                raise error from exc
            if response.is_success:
                return response
            retry_after = parse_retry_after(response.headers)
            text = await self._error_body(response)
            if retry_after is None:  # Gemini says it in the body instead
                retry_after = parse_retry_info(text)
            error = self._status_error(response.status_code, text, retry_after)
            if attempt < retries and self._worth_retrying(error):
                await self._wait_before_retry(attempt, retries, path, str(error), retry_after)
                continue
            _log.warning(
                "llm_request_failed",
                provider=self.provider,
                path=path,
                status=error.status,
                error=str(error),
            )
            raise error
        raise AssertionError("unreachable")  # pragma: no cover

    @staticmethod
    def _worth_retrying(error: LLMError) -> bool:
        if error.status is None or not is_retryable_status(error.status):
            return False
        return not is_quota_exhausted(provider_error_message(error.body))

    async def _wait_before_retry(
        self, attempt: int, retries: int, path: str, reason: str, retry_after_s: float | None
    ) -> None:
        delay = self.retry.delay_s(attempt, retry_after_s)
        _log.info(
            "llm_retry",
            provider=self.provider,
            path=path,
            attempt=attempt + 1,
            of=retries,
            delay_s=round(delay, 3),
            reason=reason,
        )
        await _sleep(delay)

    @staticmethod
    async def _error_body(response: httpx.Response) -> str:
        try:
            await response.aread()
            return response.text
        except httpx.HTTPError:  # the error body itself could not be read: the status still says
            return ""
        finally:
            await response.aclose()

    def _status_error(self, status: int, text: str, retry_after_s: float | None) -> LLMError:
        return error_from_response(
            provider=self.provider,
            label=self.label,
            status=status,
            text=self.redact(text),
            retry_after_s=retry_after_s,
            auth_hint=self.auth_hint,
        )

    def _transport_error(self, exc: httpx.TransportError) -> LLMError:
        detail = self.redact(f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__)
        if isinstance(exc, httpx.TimeoutException):
            phase = next(
                (text for kind, text in _TIMEOUT_PHASES if isinstance(exc, kind)), "waiting"
            )
            return LLMTimeoutError(
                f"{self.label} timed out after {self.timeout_s:g} s {phase} ({detail})",
                provider=self.provider,
            )
        return LLMConnectionError(f"cannot reach {self.label}: {detail}", provider=self.provider)
