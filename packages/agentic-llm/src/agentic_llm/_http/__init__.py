"""The HTTP layer shared by every provider client (private).

A provider brings its request/response mapping and uses:

- ``HTTPClient``: one ``httpx.AsyncClient`` per chat client; ``request_json`` and ``stream`` with
  retries (429, 5xx, connect errors; exponential backoff with full jitter, ``Retry-After``),
  status -> ``LLMError`` mapping with the provider's message, timeouts -> ``LLMTimeoutError``,
  secret headers redacted everywhere.
- ``HTTPStream``: ``sse_events()`` / ``ndjson()`` readers, ``decode_json()`` for one event's
  JSON (a malformed event is a ``ProviderError``), ``cut_off()`` for a stream that ended without
  its terminal event.
- ``RetryPolicy`` (and ``agentic_llm._secret.Secret`` for keys).
"""

from agentic_llm._http._client import HTTPClient, HTTPStream, display_url
from agentic_llm._http._errors import ErrorDetails, error_from_response, provider_error_message
from agentic_llm._http._retry import RetryPolicy, is_retryable_status, parse_retry_after
from agentic_llm._http._streams import SSEEvent, decode_json_event, iter_sse_events

__all__ = [
    "ErrorDetails",
    "HTTPClient",
    "HTTPStream",
    "RetryPolicy",
    "SSEEvent",
    "decode_json_event",
    "display_url",
    "error_from_response",
    "is_retryable_status",
    "iter_sse_events",
    "parse_retry_after",
    "provider_error_message",
]
