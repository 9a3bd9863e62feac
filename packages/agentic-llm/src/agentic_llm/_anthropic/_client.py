"""AnthropicChatClient: Claude models behind the Anthropic Messages API (``POST /v1/messages``)."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Sequence
from contextlib import aclosing
from typing import cast

from agentic_core import ChatMessage, ChatOptions, ChatResponse, ChatResponseUpdate
from agentic_llm._anthropic._mapping import StreamParser, build_messages_request, parse_message
from agentic_llm._base import HTTPChatClient
from agentic_llm._errors import AuthenticationError, LLMError, ProviderError, RateLimitError
from agentic_llm._http import HTTPClient, HTTPStream, RetryPolicy, SSEEvent
from agentic_llm._secret import Secret

ANTHROPIC_BASE_URL = "https://api.anthropic.com"
API_KEY_VARIABLE = "ANTHROPIC_API_KEY"
MESSAGES_PATH = "v1/messages"

# The HTTP status each error type has outside a stream (https://docs.anthropic.com/en/api/errors):
# an `error` event mid-stream is raised as the error that status maps to after the retries.
_ERROR_STATUS = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "billing_error": 402,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "timeout_error": 504,
    "overloaded_error": 529,
}


class AnthropicChatClient(HTTPChatClient):
    """A Claude model behind the Anthropic Messages API (``POST {base_url}/v1/messages``).

    The key comes from ``api_key`` or, for Anthropic itself (no ``base_url``), from the
    ``ANTHROPIC_API_KEY`` environment variable; it is sent as the ``x-api-key`` header with
    ``anthropic-version``. ``base_url`` is the API root without ``/v1`` (a proxy or gateway);
    there the environment variable is not read, so a key never reaches another server unasked.

    ``max_tokens`` (required by the API) is the default reply budget; ``ChatOptions.max_tokens``
    overrides it per call. ``response_format`` is answered through a forced tool whose input
    schema is the model's JSON schema (see ``agentic_llm._anthropic._mapping``).

    Example::

        async with AnthropicChatClient("claude-haiku-4-5") as client:
            response = await client.generate([ChatMessage.user("Hello!")])
            print(response.text, response.usage.total_tokens)
    """

    provider = "anthropic"

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout_s: float = 60.0,
        max_retries: int = 3,
        max_tokens: int = 4096,
        anthropic_version: str = "2023-06-01",
    ) -> None:
        if max_tokens < 1:
            raise ValueError(f"max_tokens must be >= 1, got {max_tokens}")
        key = api_key if api_key is not None else _key_from_environment(base_url)
        http = HTTPClient(
            provider=self.provider,
            base_url=(base_url or ANTHROPIC_BASE_URL).rstrip("/"),
            timeout_s=timeout_s,
            retry=RetryPolicy(max_retries=max_retries),
            headers={"anthropic-version": anthropic_version},
            secret_headers={"x-api-key": Secret(key)} if key else {},
            auth_hint=(
                f"check the key in {API_KEY_VARIABLE} or the api_key argument"
                if key
                else "no API key was sent: pass api_key="
            ),
        )
        super().__init__(model, http)
        self.max_tokens = max_tokens
        self.anthropic_version = anthropic_version

    async def generate(
        self, messages: Sequence[ChatMessage], options: ChatOptions | None = None
    ) -> ChatResponse:
        """One complete reply; ``response.value`` holds the parsed ``response_format`` if valid."""
        body = build_messages_request(
            self.model, messages, options, max_tokens=self.max_tokens, stream=False
        )
        payload = await self._http.request_json("POST", MESSAGES_PATH, json_body=body)
        response = parse_message(
            payload,
            label=self._http.label,
            provider=self.provider,
            response_format=options.response_format if options else None,
        )
        if not response.model:
            response.model = body["model"]
        return response

    async def generate_stream(
        self, messages: Sequence[ChatMessage], options: ChatOptions | None = None
    ) -> AsyncIterator[ChatResponseUpdate]:
        """The reply as it is produced: text pieces, tool-call fragments by content-block
        ``index``, then usage and the finish reason with ``message_stop``. A stream that ends
        before ``message_stop`` raises ProviderError; an ``error`` event raises the error its
        type maps to (``overloaded_error``: ProviderError with status 529)."""
        body = build_messages_request(
            self.model, messages, options, max_tokens=self.max_tokens, stream=True
        )
        parser = StreamParser(response_format=options.response_format if options else None)
        async with (
            self._http.stream("POST", MESSAGES_PATH, json_body=body) as stream,
            aclosing(stream.sse_events()) as sse_events,
        ):
            events = 0
            async for event in sse_events:
                events += 1
                payload = self._event_json(stream, event)
                if "type" not in payload:  # the SSE event name says it just as well
                    payload["type"] = event.event
                if payload["type"] == "error":
                    raise self._stream_error(payload, event.data)
                update = parser.feed(payload)
                if update is not None:
                    yield update
                if parser.done:
                    return
            raise stream.cut_off("the terminal message_stop event", events=events)

    async def health_check(self) -> bool:
        """Whether ``GET {base_url}/v1/models`` answers (one try; False with the reason logged)."""
        return await self._probe("GET", "v1/models?limit=1")

    def _event_json(self, stream: HTTPStream, event: SSEEvent) -> dict[str, object]:
        payload = stream.decode_json(event.data)
        if not isinstance(payload, dict):
            raise ProviderError(
                self._http.redact(
                    f"{self._http.label} sent a malformed stream event (not a JSON object): "
                    f"{event.data[:200]!r}; the answer is incomplete"
                ),
                provider=self.provider,
                body=self._http.redact(event.data[:4000]),
            )
        return cast("dict[str, object]", payload)

    def _stream_error(self, payload: dict[str, object], data: str) -> LLMError:
        error = payload.get("error")
        fields = cast("dict[str, object]", error) if isinstance(error, dict) else {}
        kind = str(fields.get("type") or "error")
        message = self._http.redact(
            f"{self._http.label} reported an error mid-stream ({kind}): "
            f"{fields.get('message') or data[:200]}; the answer is incomplete"
        )
        status = _ERROR_STATUS.get(kind)
        body = self._http.redact(data[:4000])
        if kind == "rate_limit_error":
            return RateLimitError(message, provider=self.provider, status=status, body=body)
        return ProviderError(message, provider=self.provider, status=status, body=body)


def _key_from_environment(base_url: str | None) -> str | None:
    if base_url is not None:
        return None  # gateways and compatible servers: no key unless one is passed
    key = os.environ.get(API_KEY_VARIABLE, "").strip()
    if not key:
        raise AuthenticationError(
            f"no Anthropic API key: set the {API_KEY_VARIABLE} environment variable or pass "
            "api_key=",
            provider="anthropic",
        )
    return key
