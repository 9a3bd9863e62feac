"""GeminiChatClient: Google's Gemini API (``generateContent`` / ``streamGenerateContent``)."""

from __future__ import annotations

import json
import os
from collections import OrderedDict
from collections.abc import AsyncIterator, Generator, Sequence
from contextlib import aclosing, contextmanager
from urllib.parse import quote

import structlog

from agentic_core import ChatMessage, ChatOptions, ChatResponse, ChatResponseUpdate, FinishReason
from agentic_llm._base import HTTPChatClient
from agentic_llm._errors import AuthenticationError, InvalidRequestError, ProviderError
from agentic_llm._gemini._mapping import GeminiResponseReader, build_generate_request
from agentic_llm._http import HTTPClient, RetryPolicy, provider_error_message
from agentic_llm._json import JSONObject, parse_structured_value
from agentic_llm._secret import Secret

_log = structlog.get_logger(__name__)

GEMINI_BASE_URL = "https://generativelanguage.googleapis.com"
API_VERSION = "v1beta"
API_KEY_VARIABLES = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
_KEY_HEADER = "x-goog-api-key"
_REMEMBERED_CALLS = 1024
"""How many function calls keep their API ``id`` / ``thoughtSignature`` for the next request."""


class GeminiChatClient(HTTPChatClient):
    """A Gemini model behind the Gemini API
    (``POST {base_url}/v1beta/models/{model}:generateContent``).

    The key comes from ``api_key`` or, for Google's endpoint (no ``base_url``), from
    ``GEMINI_API_KEY``, else ``GOOGLE_API_KEY``. It is sent in the ``x-goog-api-key`` header,
    never in the URL (so it cannot leak through logged URLs). With ``base_url`` (a proxy or a
    test server) the environment is not read: pass ``api_key`` if that server needs one.

    ``model`` is a model id such as ``"gemini-2.5-flash"`` (``"models/..."`` and
    ``"tunedModels/..."`` names work too). Streaming uses ``streamGenerateContent?alt=sse``.

    Gemini 3 models require the ``thoughtSignature`` of a function call back with the call; the
    client remembers the signatures (and API call ids) of the last 1024 calls it returned and
    re-attaches them, so a ``ChatAgent`` tool loop works without the caller seeing them.

    Example::

        async with GeminiChatClient("gemini-2.5-flash") as client:
            response = await client.generate([ChatMessage.user("Hello!")])
            print(response.text, response.usage.total_tokens)
    """

    provider = "gemini"

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout_s: float = 60.0,
        max_retries: int = 3,
    ) -> None:
        key = api_key if api_key is not None else _key_from_environment(base_url)
        url = (base_url or GEMINI_BASE_URL).rstrip("/")
        http = HTTPClient(
            provider=self.provider,
            base_url=url,
            timeout_s=timeout_s,
            retry=RetryPolicy(max_retries=max_retries),
            secret_headers={_KEY_HEADER: Secret(key)} if key else {},
            auth_hint=(
                f"check the key in {' or '.join(API_KEY_VARIABLES)} or the api_key argument"
                if key
                else "no API key was sent: pass api_key="
            ),
        )
        super().__init__(model, http)
        self._call_extras: OrderedDict[str, JSONObject] = OrderedDict()

    async def generate(
        self, messages: Sequence[ChatMessage], options: ChatOptions | None = None
    ) -> ChatResponse:
        """One complete reply; ``response.value`` holds the parsed ``response_format`` if valid."""
        model = options.model if options and options.model else self.model
        body = build_generate_request(messages, options, call_extras=self._call_extras)
        with self._key_errors():
            payload = await self._http.request_json(
                "POST", f"{_model_path(model)}:generateContent", json_body=body
            )
        if isinstance(payload, dict) and "error" in payload:
            raise self._error_in_body(json.dumps(payload), "answered with an error")
        reader = GeminiResponseReader()
        update = reader.read(payload)
        if not reader.candidates_seen and reader.block_reason is None:
            text = json.dumps(payload)
            raise ProviderError(
                self._http.redact(
                    f"{self._http.label} returned a response without candidates: {text[:300]}"
                ),
                provider=self.provider,
                body=self._http.redact(text[:4000]),
            )
        self._after_reply(reader)
        updates = [update, reader.final_update()] if update else [reader.final_update()]
        response = ChatResponse.from_updates(updates, model=reader.model or model)
        if options is not None and options.response_format is not None:
            response.value = parse_structured_value(response.text, options.response_format)
        return response

    async def generate_stream(
        self, messages: Sequence[ChatMessage], options: ChatOptions | None = None
    ) -> AsyncIterator[ChatResponseUpdate]:
        """The reply as it is produced: text pieces and whole function calls (Gemini sends each
        call complete), then one update with the usage and finish reason.

        A stream that ends before any chunk carried a ``finishReason`` (or a prompt block) was
        cut off: it raises ProviderError rather than return a partial answer.
        """
        model = options.model if options and options.model else self.model
        body = build_generate_request(messages, options, call_extras=self._call_extras)
        reader = GeminiResponseReader()
        with self._key_errors():
            async with (
                self._http.stream(
                    "POST",
                    f"{_model_path(model)}:streamGenerateContent",
                    json_body=body,
                    params={"alt": "sse"},
                ) as stream,
                aclosing(stream.sse_events()) as sse_events,
            ):
                events = 0
                async for event in sse_events:
                    events += 1
                    chunk = stream.decode_json(event.data)
                    if isinstance(chunk, dict) and "error" in chunk:
                        raise self._error_in_body(event.data, "reported an error mid-stream")
                    update = reader.read(chunk)
                    if update is not None:
                        yield update
                if not reader.finished:
                    raise stream.cut_off("a chunk with a finishReason", events=events)
        self._after_reply(reader)
        final = reader.final_update()
        if final.model is None:
            final.model = model
        yield final

    async def health_check(self) -> bool:
        """Whether ``GET {base_url}/v1beta/models/{model}`` answers (one try; False with the
        reason logged)."""
        return await self._probe("GET", _model_path(self.model))

    def _after_reply(self, reader: GeminiResponseReader) -> None:
        """Keep the calls' API ids and thought signatures; log a blocked or filtered reply."""
        for call_id, extras in reader.call_extras.items():
            self._call_extras[call_id] = extras
            self._call_extras.move_to_end(call_id)
        while len(self._call_extras) > _REMEMBERED_CALLS:
            self._call_extras.popitem(last=False)
        if reader.block_reason is not None:
            _log.warning(
                "llm_prompt_blocked",
                provider=self.provider,
                model=self.model,
                block_reason=reader.block_reason,
                message=(
                    f"gemini blocked the prompt (promptFeedback.blockReason="
                    f"{reader.block_reason}): {reader.block_message or 'no details given'}; "
                    "the reply is empty with finish_reason content_filter"
                ),
            )
        elif reader.finish_reason is FinishReason.CONTENT_FILTER:
            _log.warning(
                "llm_response_filtered",
                provider=self.provider,
                model=self.model,
                finish_reason=reader.raw_finish_reason,
                message=(
                    f"gemini stopped the reply (finishReason={reader.raw_finish_reason}); "
                    "it may be empty or partial"
                ),
            )

    @contextmanager
    def _key_errors(self) -> Generator[None]:
        """Gemini answers a wrong key with HTTP 400 ``API_KEY_INVALID``: an AuthenticationError."""
        try:
            yield
        except InvalidRequestError as exc:
            if exc.status != 400 or "API_KEY_INVALID" not in exc.body:
                raise
            hint = self._http.auth_hint or ""
            raise AuthenticationError(
                f"{exc} ({hint})" if hint else str(exc),
                provider=exc.provider,
                status=exc.status,
                body=exc.body,
            ) from exc

    def _error_in_body(self, data: str, what: str) -> ProviderError:
        details = provider_error_message(data)
        return ProviderError(
            self._http.redact(f"{self._http.label} {what}: {details.message}"),
            provider=self.provider,
            body=self._http.redact(data[:4000]),
        )


def _key_from_environment(base_url: str | None) -> str | None:
    if base_url is not None:
        return None  # proxies and test servers: no key unless one is passed
    for variable in API_KEY_VARIABLES:
        key = os.environ.get(variable, "").strip()
        if key:
            return key
    raise AuthenticationError(
        "no Gemini API key: set the GEMINI_API_KEY (or GOOGLE_API_KEY) environment variable "
        "or pass api_key=",
        provider="gemini",
    )


def _model_path(model: str) -> str:
    """``v1beta/models/<id>`` (``models/...`` and ``tunedModels/...`` names kept as they are)."""
    name = model if model.startswith(("models/", "tunedModels/")) else f"models/{model}"
    return f"{API_VERSION}/{quote(name, safe='/-._~')}"
