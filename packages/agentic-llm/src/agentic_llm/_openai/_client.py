"""OpenAIChatClient: OpenAI Chat Completions, and any server that speaks it (via ``base_url``)."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Sequence
from contextlib import aclosing

import httpx
import structlog

from agentic_core import ChatMessage, ChatOptions, ChatResponse, ChatResponseUpdate
from agentic_llm._base import HTTPChatClient
from agentic_llm._errors import AuthenticationError, ProviderError
from agentic_llm._http import HTTPClient, RetryPolicy, provider_error_message
from agentic_llm._openai._mapping import (
    MaxTokensField,
    build_chat_request,
    parse_chat_completion,
    parse_chunk,
    response_as_update,
)
from agentic_llm._secret import Secret

_log = structlog.get_logger(__name__)

OPENAI_BASE_URL = "https://api.openai.com/v1"
API_KEY_VARIABLE = "OPENAI_API_KEY"
_DONE = "[DONE]"


class OpenAIChatClient(HTTPChatClient):
    """A chat model behind the OpenAI Chat Completions API (``POST {base_url}/chat/completions``).

    The key comes from ``api_key`` or, for OpenAI itself (no ``base_url``), from the
    ``OPENAI_API_KEY`` environment variable. With ``base_url`` any OpenAI-compatible server
    works (llama.cpp, vLLM, Ollama's ``/v1``, LM Studio, proxies); there the key is optional and
    the environment variable is not read, so an OpenAI key never reaches another server unasked.

    ``max_tokens`` is sent as ``max_completion_tokens`` to OpenAI (``max_tokens`` is deprecated
    there and refused by reasoning models) and as ``max_tokens`` to other servers (which do not
    all know the newer name); ``max_tokens_field`` overrides the choice.

    Example::

        async with OpenAIChatClient("gpt-4o-mini") as client:
            response = await client.generate([ChatMessage.user("Hello!")])
            print(response.text, response.usage.total_tokens)
    """

    provider = "openai"

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        organization: str | None = None,
        timeout_s: float = 60.0,
        max_retries: int = 3,
        max_tokens_field: MaxTokensField | None = None,
    ) -> None:
        key = api_key if api_key is not None else _key_from_environment(base_url)
        url = (base_url or OPENAI_BASE_URL).rstrip("/")
        secret_headers = {"Authorization": Secret(f"Bearer {key}")} if key else {}
        headers = {"OpenAI-Organization": organization} if organization else {}
        http = HTTPClient(
            provider=self.provider,
            base_url=url,
            timeout_s=timeout_s,
            retry=RetryPolicy(max_retries=max_retries),
            headers=headers,
            secret_headers=secret_headers,
            auth_hint=(
                f"check the key in {API_KEY_VARIABLE} or the api_key argument"
                if key
                else "no API key was sent: pass api_key="
            ),
        )
        super().__init__(model, http)
        self.max_tokens_field: MaxTokensField = max_tokens_field or (
            "max_completion_tokens" if _is_openai(url) else "max_tokens"
        )

    async def generate(
        self, messages: Sequence[ChatMessage], options: ChatOptions | None = None
    ) -> ChatResponse:
        """One complete reply; ``response.value`` holds the parsed ``response_format`` if valid."""
        body = build_chat_request(
            self.model, messages, options, stream=False, max_tokens_field=self.max_tokens_field
        )
        payload = await self._http.request_json("POST", "chat/completions", json_body=body)
        response = parse_chat_completion(
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
        """The reply as it is produced: text pieces, tool-call fragments by ``index``, and
        usage with the last chunk. A stream that ends before ``[DONE]`` raises ProviderError.

        A stream answered with an empty body (llama.cpp's server does that with
        ``tool_choice="auto"`` and tools) is asked again once, not streamed, and that reply
        comes as one update.
        """
        body = build_chat_request(
            self.model, messages, options, stream=True, max_tokens_field=self.max_tokens_field
        )
        async with (
            self._http.stream("POST", "chat/completions", json_body=body) as stream,
            aclosing(stream.sse_events()) as sse_events,
        ):
            events = 0
            async for event in sse_events:
                if event.data.strip() == _DONE:
                    return
                events += 1
                chunk = stream.decode_json(event.data)
                if isinstance(chunk, dict) and "error" in chunk:
                    raise self._stream_error(event.data)
                update = parse_chunk(chunk)
                if update is not None:
                    yield update
            if events:
                raise stream.cut_off(f"the terminal {_DONE} event", events=events)
        _log.debug(
            "llm_empty_stream_fallback",
            provider=self.provider,
            model=self.model,
            reason="the server answered the streamed request with an empty body; asking again "
            "without streaming",
        )
        yield response_as_update(await self.generate(messages, options))

    async def health_check(self) -> bool:
        """Whether ``GET {base_url}/models`` answers (one try; False with the reason logged)."""
        return await self._probe("GET", "models")

    def _stream_error(self, data: str) -> ProviderError:
        details = provider_error_message(data)
        return ProviderError(
            self._http.redact(
                f"{self._http.label} reported an error mid-stream: {details.message}"
            ),
            provider=self.provider,
            body=self._http.redact(data[:4000]),
        )


def _key_from_environment(base_url: str | None) -> str | None:
    if base_url is not None:
        return None  # local and third-party servers: no key unless one is passed
    key = os.environ.get(API_KEY_VARIABLE, "").strip()
    if not key:
        raise AuthenticationError(
            f"no OpenAI API key: set the {API_KEY_VARIABLE} environment variable or pass "
            "api_key= (for a local OpenAI-compatible server, pass base_url= and no key is needed)",
            provider="openai",
        )
    return key


def _is_openai(url: str) -> bool:
    host = httpx.URL(url).host
    return host == "api.openai.com" or host.endswith(".openai.com")
