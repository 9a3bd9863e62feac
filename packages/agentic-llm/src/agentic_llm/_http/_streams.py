"""Stream parsing: Server-Sent Events, and one streamed event's JSON (SSE or NDJSON lines).

They take an async iterable of text lines (``split_lines`` splits a body on ``\\n``,
``\\r\\n`` and ``\\r``), so they are tested without any HTTP. Knowing whether a stream is complete
is the provider's job (``[DONE]``, ``message_stop``, ``"done": true``): the readers only parse.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import AsyncGenerator, AsyncIterable, AsyncIterator
from dataclasses import dataclass
from typing import Any

from agentic_llm._errors import ProviderError


@dataclass(frozen=True, slots=True)
class SSEEvent:
    """One dispatched Server-Sent Event (``event`` defaults to ``"message"``)."""

    data: str
    event: str = "message"
    id: str | None = None


async def iter_sse_events(lines: AsyncIterable[str]) -> AsyncGenerator[SSEEvent]:
    """The events of an ``text/event-stream`` body, per the WHATWG event-stream format.

    ``data:`` lines of one event are joined with ``\\n``; a blank line dispatches the event;
    ``:`` lines are comments (keep-alives); ``retry:`` and unknown fields are ignored. An event
    without a terminating blank line at the end of the stream is dispatched too: a provider that
    sends its last event without the blank line still has its answer read (completeness is
    checked by the provider's terminal event, never assumed).
    """
    data: list[str] = []
    event = ""
    last_id: str | None = None
    async for line in lines:
        if not line:
            if data:
                yield SSEEvent(data="\n".join(data), event=event or "message", id=last_id)
            data, event = [], ""
            continue
        if line.startswith(":"):
            continue
        field, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if field == "data":
            data.append(value)
        elif field == "event":
            event = value
        elif field == "id" and "\0" not in value:
            last_id = value
    if data:
        yield SSEEvent(data="\n".join(data), event=event or "message", id=last_id)


def decode_json_event(text: str, *, provider: str, label: str) -> Any:
    """``text`` parsed as JSON, or a ``ProviderError`` saying the stream sent a malformed event."""
    try:
        return json.loads(text)
    except ValueError as exc:
        raise ProviderError(
            f"{label} sent a malformed stream event (not JSON: {exc}): {text[:200]!r}; "
            "the answer is incomplete",
            provider=provider,
            body=text[:4000],
        ) from exc


_LINE_BREAK = re.compile(r"\r\n|\n|\r")


async def split_lines(chunks: AsyncIterator[bytes]) -> AsyncGenerator[str]:
    """UTF-8 text lines of a byte stream, split on ``\\r\\n``, ``\\n`` or ``\\r`` (as SSE says).

    A ``\\r`` at the end of a chunk waits for the next one, which may start with ``\\n``.
    Pulls from ``chunks`` without closing it, so a caller can keep reading the same iterator.
    """
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    buffer = ""
    async for chunk in chunks:
        buffer += decoder.decode(chunk)
        start = 0
        for match in _LINE_BREAK.finditer(buffer):
            if match.group() == "\r" and match.end() == len(buffer):
                break  # maybe the first half of a \r\n split across chunks
            yield buffer[start : match.start()]
            start = match.end()
        buffer = buffer[start:]
    buffer += decoder.decode(b"", final=True)
    lines = _LINE_BREAK.split(buffer)
    if lines and lines[-1] == "":
        lines.pop()  # the text ended with a line break
    for line in lines:
        yield line
