"""HTTPClient: the one HTTP path of every provider: retries, error mapping, streams, secrets.

A provider client owns one ``HTTPClient`` (so one ``httpx.AsyncClient`` and its connection
pool, reused by every call) and speaks only its own JSON: it never sees an httpx exception or
an error status, only ``LLMError``s with the provider's message in them.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncGenerator, Mapping
from contextlib import aclosing, asynccontextmanager
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
from agentic_llm._http._retry import RetryPolicy, is_retryable_status, parse_retry_after
from agentic_llm._http._streams import SSEEvent, decode_json_event, iter_sse_events, split_lines
from agentic_llm._secret import Secret

_log = structlog.get_logger(__name__)

_sleep = asyncio.sleep
"""The backoff wait (a module attribute so tests can record waits instead of sleeping)."""

# Failures where the request surely or most likely never reached the model: safe to send again.
# A read timeout is not retried: the model may be busy generating, and a retry costs as much.
_RETRYABLE_TRANSPORT = (
    httpx.ConnectError,
    httpx.ConnectTimeout,
    httpx.PoolTimeout,
    httpx.RemoteProtocolError,
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
        self._client = httpx.AsyncClient(
            base_url=self.base_url + "/",
            headers={"user-agent": "agentic-llm", **(headers or {})},
            timeout=httpx.Timeout(timeout_s),
        )

    def __repr__(self) -> str:
        return f"HTTPClient(provider={self.provider!r}, base_url={display_url(self.base_url)!r})"

    @property
    def is_closed(self) -> bool:
        """Whether ``aclose`` was called."""
        return self._client.is_closed

    async def aclose(self) -> None:
        """Close the connection pool (idempotent)."""
        await self._client.aclose()

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
        if self._client.is_closed:
            raise LLMError(
                f"the {self.label} client is closed: create a new one", provider=self.provider
            )
        retries = self.retry.max_retries if max_retries is None else max_retries
        headers = {name: secret.reveal() for name, secret in self._secret_headers.items()}
        for attempt in itertools.count():
            request = self._client.build_request(
                method, path, json=json_body, params=params, headers=headers
            )
            try:
                response = await self._client.send(request, stream=stream)
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
            error = await self._status_error(response, retry_after)
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

    async def _status_error(
        self, response: httpx.Response, retry_after_s: float | None
    ) -> LLMError:
        try:
            await response.aread()
            text = response.text
        except httpx.HTTPError:  # the error body itself could not be read: the status still says
            text = ""
        finally:
            await response.aclose()
        return error_from_response(
            provider=self.provider,
            label=self.label,
            status=response.status_code,
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
