"""OllamaChatClient: a model served by Ollama, over its native ``/api/chat`` endpoint."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import aclosing

import httpx

from agentic_core import ChatMessage, ChatOptions, ChatResponse, ChatResponseUpdate
from agentic_llm._base import HTTPChatClient
from agentic_llm._errors import ProviderError
from agentic_llm._http import HTTPClient, RetryPolicy, provider_error_message
from agentic_llm._json import parse_structured_value
from agentic_llm._ollama._mapping import (
    OllamaResponseReader,
    build_chat_request,
)
from agentic_llm._secret import Secret

HOST_VARIABLE = "OLLAMA_HOST"
DEFAULT_HOST = "http://127.0.0.1:11434"
_DEFAULT_PORT = 11434


class OllamaChatClient(HTTPChatClient):
    """A model served by Ollama (``POST {host}/api/chat``), streamed as NDJSON.

    The server is ``host``, else the ``OLLAMA_HOST`` environment variable, else
    ``http://127.0.0.1:11434``. A host without a scheme (``"127.0.0.1:11434"``, ``"gpu-box"``)
    means ``http://`` and, without a port, Ollama's port 11434 (as Ollama's own clients read it).

    Ollama needs no key. ``headers`` are sent with every request for a proxy in front of it
    (``{"Authorization": "Bearer ..."}``); they are treated as secrets: kept out of reprs and
    masked in errors and logs.

    Example::

        async with OllamaChatClient("llama3.2") as client:
            response = await client.generate([ChatMessage.user("Hello!")])
            print(response.text, response.usage.total_tokens)
    """

    provider = "ollama"

    def __init__(
        self,
        model: str,
        *,
        host: str | None = None,
        timeout_s: float = 120.0,
        max_retries: int = 2,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        chosen = host or os.environ.get(HOST_VARIABLE, "").strip() or DEFAULT_HOST
        http = HTTPClient(
            provider=self.provider,
            base_url=normalize_host(chosen),
            timeout_s=timeout_s,
            retry=RetryPolicy(max_retries=max_retries),
            secret_headers={name: Secret(value) for name, value in (headers or {}).items()},
            auth_hint=(
                "check the credentials passed with headers="
                if headers
                else "Ollama itself needs none: a proxy in front of it does; pass headers="
            ),
        )
        super().__init__(model, http)

    @property
    def host(self) -> str:
        """The Ollama server's URL (same as ``base_url``)."""
        return self.base_url

    async def generate(
        self, messages: Sequence[ChatMessage], options: ChatOptions | None = None
    ) -> ChatResponse:
        """One complete reply; ``response.value`` holds the parsed ``response_format`` if valid."""
        body = build_chat_request(self.model, messages, options, stream=False)
        payload = await self._http.request_json("POST", "api/chat", json_body=body)
        if isinstance(payload, dict) and "error" in payload:
            raise self._error_in_body(json.dumps(payload), "answered with an error")
        reader = OllamaResponseReader()
        update = reader.read(payload)
        if not reader.done or update is None:
            text = json.dumps(payload)
            raise ProviderError(
                self._http.redact(
                    f'{self._http.label} answered /api/chat without "done": true: {text[:300]}'
                ),
                provider=self.provider,
                body=self._http.redact(text[:4000]),
            )
        response = ChatResponse.from_updates([update], model=reader.model or body["model"])
        if options is not None and options.response_format is not None:
            response.value = parse_structured_value(response.text, options.response_format)
        return response

    async def generate_stream(
        self, messages: Sequence[ChatMessage], options: ChatOptions | None = None
    ) -> AsyncIterator[ChatResponseUpdate]:
        """The reply as it is produced: text pieces and whole tool calls (Ollama sends each call
        complete), the last update with usage and finish reason. A stream that ends without its
        ``"done": true`` line raises ProviderError rather than return a partial answer."""
        body = build_chat_request(self.model, messages, options, stream=True)
        reader = OllamaResponseReader()
        async with (
            self._http.stream("POST", "api/chat", json_body=body) as stream,
            aclosing(stream.ndjson()) as chunks,
        ):
            events = 0
            async for chunk in chunks:
                events += 1
                if isinstance(chunk, dict) and "error" in chunk:
                    raise self._error_in_body(json.dumps(chunk), "reported an error mid-stream")
                update = reader.read(chunk)
                if update is not None:
                    yield update
                if reader.done:
                    return
            raise stream.cut_off('a final line with "done": true', events=events)

    async def health_check(self) -> bool:
        """Whether ``GET {host}/api/tags`` (the local models) answers (one try; False with the
        reason logged)."""
        return await self._probe("GET", "api/tags")

    def _error_in_body(self, data: str, what: str) -> ProviderError:
        details = provider_error_message(data)
        return ProviderError(
            self._http.redact(f"{self._http.label} {what}: {details.message}"),
            provider=self.provider,
            body=self._http.redact(data[:4000]),
        )


def normalize_host(host: str) -> str:
    """An ``OLLAMA_HOST``-style value as a base URL.

    ``"127.0.0.1:11434"`` -> ``http://127.0.0.1:11434``; ``"gpu-box"`` -> ``http://gpu-box:11434``;
    ``":8080"`` -> ``http://127.0.0.1:8080``; a URL with a scheme is kept (its port defaults to the
    scheme's, as for any URL), and so is a path prefix (a proxy mounting Ollama under ``/ollama``).
    """
    text = host.strip()
    has_scheme = "://" in text
    url = httpx.URL(text if has_scheme else f"http://{text}")
    if not url.host:
        url = url.copy_with(host="127.0.0.1")
    if not has_scheme and url.port is None:
        url = url.copy_with(port=_DEFAULT_PORT)
    return str(url).rstrip("/")
