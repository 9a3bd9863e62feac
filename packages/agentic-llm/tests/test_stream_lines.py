"""Line splitting across chunk boundaries, and draining a stream so its connection is reused."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
import respx

from agentic_llm._http._client import HTTPClient
from agentic_llm._http._retry import RetryPolicy
from agentic_llm._http._streams import split_lines


async def _chunks(*parts: bytes) -> AsyncIterator[bytes]:
    for part in parts:
        yield part


async def _lines(*parts: bytes) -> list[str]:
    return [line async for line in split_lines(_chunks(*parts))]


@pytest.mark.parametrize(
    ("parts", "expected"),
    [
        ((b"a\nb\n",), ["a", "b"]),
        ((b"a\r\nb\r\n",), ["a", "b"]),
        ((b"a\r", b"\nb\r\n"), ["a", "b"]),  # \r\n split across chunks is one break
        ((b"a\rb\r",), ["a", "b"]),
        ((b"a\n\nb",), ["a", "", "b"]),  # blank lines kept (they end SSE events); no final break
        ((b"caf\xc3", b"\xa9\n"), ["café"]),  # a UTF-8 character split across chunks
        ((b"", b"x", b"", b"y\n"), ["xy"]),
    ],
)
async def test_split_lines_handles_every_break_and_boundary(
    parts: tuple[bytes, ...], expected: list[str]
) -> None:
    assert await _lines(*parts) == expected


class _RecordingStream(httpx.AsyncByteStream):
    def __init__(self, parts: list[bytes]) -> None:
        self.parts = parts
        self.finished = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for part in self.parts:
            yield part
        self.finished = True


async def test_a_stream_left_at_its_terminal_event_is_read_to_the_end() -> None:
    body = _RecordingStream([b"data: 1\n\n", b"data: [DONE]\n\n", b"\n", b": trailing comment\n"])

    client = HTTPClient(
        provider="test",
        base_url="http://127.0.0.1:9",
        timeout_s=5,
        retry=RetryPolicy(max_retries=0),
    )
    with respx.mock:
        respx.post("http://127.0.0.1:9/x").mock(
            return_value=httpx.Response(
                200, stream=body, headers={"content-type": "text/event-stream"}
            )
        )
        async with client.stream("POST", "x", json_body={}) as stream:
            async for event in stream.sse_events():
                if event.data == "[DONE]":
                    break
    assert body.finished
    await client.aclose()
