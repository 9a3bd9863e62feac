"""A fake LLM server for benches/llm.py (a helper, not a benchmark).

Canned OpenAI, Anthropic, Gemini and Ollama chat replies (shapes from each provider's API
reference, as in packages/agentic-llm/tests), whole and streamed, served by a minimal
HTTP/1.1 keep-alive server on 127.0.0.1. Every response is encoded once at start-up and sent in
one write: the client's work is all there is left to measure. A streamed reply is chunked
transfer encoding with one HTTP chunk per event (as a provider flushes each event), carrying
``chunks`` text pieces plus the provider's framing events.

``GET /__connections`` answers how many connections the server has accepted (a client that
closes a response before its end cannot reuse its connection: the bench counts them).

Run: ``python benches/_fake_llm_server.py --chunks 200``: prints the port it listens on, then
serves until SIGTERM (or ``--lifetime-s``, so a forgotten server cannot outlive its bench).
``--port`` picks the port (the test fixture ``fake_llm_server`` of tests/fixtures/llm.py runs it
that way, for real keep-alive connections to every provider client).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
from dataclasses import dataclass
from typing import Any

GEMINI_MODEL = "gemini-2.5-flash"
ANTHROPIC_MODEL = "claude-haiku-4-5"


@dataclass(frozen=True)
class Canned:
    """One provider's replies: ``body`` for a whole reply, ``events`` (wire form, separators
    included) for a streamed one."""

    path: str  # the whole reply's path (the streamed one too, except for Gemini)
    stream_path: str
    body: bytes
    content_type: str
    events: list[bytes]
    stream_content_type: str


def pieces(chunks: int) -> list[str]:
    """The text pieces of a streamed reply (the whole reply is their concatenation)."""
    return [f" token{i}" for i in range(chunks)]


def expected_text(chunks: int) -> str:
    return "".join(pieces(chunks))


def _sse(payload: dict[str, Any], *, event: str | None = None, crlf: bool = False) -> bytes:
    name = f"event: {event}\n" if event else ""
    end = "\r\n\r\n" if crlf else "\n\n"  # Gemini separates events with CRLF pairs
    return f"{name}data: {json.dumps(payload)}{end}".encode()


def _openai(chunks: int) -> Canned:
    usage = {"prompt_tokens": 19, "completion_tokens": chunks, "total_tokens": 19 + chunks}
    message = {"role": "assistant", "content": expected_text(chunks), "refusal": None}
    body = {
        "id": "chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT",
        "object": "chat.completion",
        "created": 1741569952,
        "model": "gpt-4o-mini-2024-07-18",
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": "stop"}],
        "usage": usage,
        "service_tier": "default",
        "system_fingerprint": "fp_44709d6fcb",
    }

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            "id": "chatcmpl-123",
            "object": "chat.completion.chunk",
            "created": 1694268190,
            "model": "gpt-4o-mini",
            "system_fingerprint": "fp_44709d6fcb",
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
            "usage": None,
        }

    events = [
        _sse(chunk({"role": "assistant", "content": ""})),
        *(_sse(chunk({"content": piece})) for piece in pieces(chunks)),
        _sse(chunk({}, "stop")),
        _sse({**chunk({}), "choices": [], "usage": usage}),
        b"data: [DONE]\n\n",
    ]
    return Canned(
        "/v1/chat/completions",
        "/v1/chat/completions",
        json.dumps(body).encode(),
        "application/json",
        events,
        "text/event-stream",
    )


def _anthropic(chunks: int) -> Canned:
    body = {
        "id": "msg_013Zva2CMHLNnXjNJJKqJ2EF",
        "type": "message",
        "role": "assistant",
        "content": [{"type": "text", "text": expected_text(chunks)}],
        "model": ANTHROPIC_MODEL,
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {
            "input_tokens": 25,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "output_tokens": chunks,
        },
    }
    start = {
        "type": "message_start",
        "message": {
            **body,
            "id": "msg_1nZdL29xx5MUA1yADyHTEsnR8uuvGzszyY",
            "content": [],
            "stop_reason": None,
            "usage": {"input_tokens": 25, "output_tokens": 1},
        },
    }
    stream = [
        start,
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "ping"},
        *(
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": p}}
            for p in pieces(chunks)
        ),
        {"type": "content_block_stop", "index": 0},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn", "stop_sequence": None},
            "usage": {"output_tokens": chunks},
        },
        {"type": "message_stop"},
    ]
    return Canned(
        "/v1/messages",
        "/v1/messages",
        json.dumps(body).encode(),
        "application/json",
        [_sse(event, event=event["type"]) for event in stream],
        "text/event-stream",
    )


def _gemini(chunks: int) -> Canned:
    usage = {
        "promptTokenCount": 8,
        "candidatesTokenCount": chunks,
        "totalTokenCount": 8 + chunks,
        "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 8}],
    }

    def response(text: str, *, last: bool) -> dict[str, Any]:
        candidate: dict[str, Any] = {"content": {"role": "model", "parts": [{"text": text}]}}
        if last:
            candidate["finishReason"] = "STOP"
        candidate["index"] = 0
        reply: dict[str, Any] = {"candidates": [candidate]}
        if last:
            reply["usageMetadata"] = usage
        reply["modelVersion"] = GEMINI_MODEL
        reply["responseId"] = "mBDTaKjWFdWgz7IPiqnNgQk"
        return reply

    texts = pieces(chunks)
    root = f"/v1beta/models/{GEMINI_MODEL}"
    return Canned(
        f"{root}:generateContent",
        f"{root}:streamGenerateContent",
        json.dumps(response(expected_text(chunks), last=True)).encode(),
        "application/json",
        [_sse(response(t, last=i == len(texts) - 1), crlf=True) for i, t in enumerate(texts)],
        "text/event-stream",
    )


def _ollama(chunks: int) -> Canned:
    stats = {
        "total_duration": 4883583458,
        "load_duration": 1334875,
        "prompt_eval_count": 26,
        "prompt_eval_duration": 342546000,
        "eval_count": chunks,
        "eval_duration": 4535599000,
    }
    body = {
        "model": "llama3.2",
        "created_at": "2023-12-12T14:13:43.416799Z",
        "message": {"role": "assistant", "content": expected_text(chunks)},
        "done_reason": "stop",
        "done": True,
        **stats,
    }

    def chunk(text: str) -> dict[str, Any]:
        return {
            "model": "llama3.2",
            "created_at": "2023-08-04T08:52:19.385406455-07:00",
            "message": {"role": "assistant", "content": text},
            "done": False,
        }

    last = {**body, "message": {"role": "assistant", "content": ""}}
    lines = [chunk(piece) for piece in pieces(chunks)] + [last]
    return Canned(
        "/api/chat",
        "/api/chat",
        json.dumps(body).encode(),
        "application/json",
        [json.dumps(line).encode() + b"\n" for line in lines],
        "application/x-ndjson",
    )


def canned(chunks: int) -> dict[str, Canned]:
    """Each provider's replies, by provider name."""
    return {
        "openai": _openai(chunks),
        "anthropic": _anthropic(chunks),
        "gemini": _gemini(chunks),
        "ollama": _ollama(chunks),
    }


# --------------------------------------------------------------------------------------------
# the server

_NOT_FOUND = (
    b"HTTP/1.1 404 Not Found\r\ncontent-type: text/plain\r\ncontent-length: 9\r\n\r\nnot found"
)


def _whole(body: bytes, content_type: str) -> bytes:
    head = f"HTTP/1.1 200 OK\r\ncontent-type: {content_type}\r\ncontent-length: {len(body)}\r\n\r\n"
    return head.encode() + body


def _chunked(events: list[bytes], content_type: str) -> bytes:
    head = f"HTTP/1.1 200 OK\r\ncontent-type: {content_type}\r\ntransfer-encoding: chunked\r\n\r\n"
    parts = [head.encode()]
    parts += [b"%x\r\n%s\r\n" % (len(event), event) for event in events]
    parts.append(b"0\r\n\r\n")
    return b"".join(parts)


def responses(chunks: int) -> dict[tuple[str, bool], bytes]:
    """The encoded HTTP responses by (path, streamed)."""
    table: dict[tuple[str, bool], bytes] = {}
    for reply in canned(chunks).values():
        table[reply.path, False] = _whole(reply.body, reply.content_type)
        table[reply.stream_path, True] = _chunked(reply.events, reply.stream_content_type)
    return table


class _Connection(asyncio.Protocol):
    """HTTP/1.1 with keep-alive: ``Content-Length`` request bodies (all our clients send)."""

    accepted = 0  # connections since start-up

    def __init__(self, table: dict[tuple[str, bool], bytes]) -> None:
        self.table = table
        self.buffer = b""
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        _Connection.accepted += 1

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while (end := self.buffer.find(b"\r\n\r\n")) >= 0:
            lines = self.buffer[:end].decode("latin-1").split("\r\n")
            length = 0
            for line in lines[1:]:
                name, _, value = line.partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value)
            if len(self.buffer) < end + 4 + length:
                return  # the body is still on its way
            body = self.buffer[end + 4 : end + 4 + length]
            self.buffer = self.buffer[end + 4 + length :]
            assert self.transport is not None
            self.transport.write(self.answer(lines[0], body))

    def answer(self, request_line: str, body: bytes) -> bytes:
        _method, target, _version = request_line.split(" ", 2)
        path = target.partition("?")[0]
        if path == "/__connections":
            return _whole(str(_Connection.accepted).encode(), "application/json")
        streamed = path.endswith(":streamGenerateContent")
        if not streamed and body:
            streamed = json.loads(body).get("stream") is True
        return self.table.get((path, streamed), _NOT_FOUND)


async def serve(chunks: int, lifetime_s: float, port: int = 0) -> None:
    loop = asyncio.get_running_loop()
    table = responses(chunks)
    server = await loop.create_server(lambda: _Connection(table), "127.0.0.1", port)
    port = server.sockets[0].getsockname()[1]
    print(port, flush=True)
    stop = asyncio.Event()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    loop.add_signal_handler(signal.SIGINT, stop.set)
    async with server:
        try:
            await asyncio.wait_for(stop.wait(), lifetime_s)
        except TimeoutError:
            print(f"fake LLM server: stopping after {lifetime_s:g} s", file=sys.stderr)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--chunks", type=int, default=200, help="text pieces per stream")
    parser.add_argument(
        "--lifetime-s", type=float, default=1800.0, help="stop after this long (default 1800)"
    )
    parser.add_argument("--port", type=int, default=0, help="listen here (default: any free)")
    args = parser.parse_args()
    asyncio.run(serve(args.chunks, args.lifetime_s, args.port))


if __name__ == "__main__":
    main()
