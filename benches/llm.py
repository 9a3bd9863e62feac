"""LLM client overhead against a fake local server, and LocalChatClient's speed on this machine.

Run: ``uv run python benches/llm.py [--rounds N]``.

1. Client-side overhead. benches/_fake_llm_server.py runs in its own process on 127.0.0.1 (a free
   port; stopped by its handle at the end) and serves canned OpenAI, Anthropic, Gemini and Ollama
   replies, each encoded once and sent in one write: the whole reply (200 text pieces joined),
   or a stream of 200 text pieces, one HTTP chunk per event, plus the provider's framing events
   (OpenAI 4, Anthropic 6, Gemini 0, Ollama 1). Per provider, ``generate`` is timed in µs per
   request and ``generate_stream`` (consumed to the end) in µs per text chunk: the streamed
   request's time / 200, both as wall time and as this process's CPU time (the client's own
   work, without the server's or other processes' time: the steadier figure on this shared
   machine). The floor is a bare ``httpx.AsyncClient`` sending the same request (the URL,
   headers and JSON body our client sent, recorded once with respx) and reading the same body:
   ``response.json()`` for a whole reply; ``aiter_lines()``, the SSE ``data:`` prefix stripped
   and ``json.loads`` per event for a stream (NDJSON: per line), then the text picked out. So
   ``x floor`` and ``CPU over`` are our request building, response mapping, SSE parsing, update
   objects, retry and error plumbing, with the socket, HTTP parsing and JSON decoding common to
   both. ``conn/req`` counts the TCP connections the server accepted per timed request: a
   client that closes a response before its end cannot put the connection back in its pool.
   Every run's text is checked against the canned text.
2. ``LocalChatClient`` (llama.cpp in-process, the default SmolLM2-135M-Instruct model, default
   threads): a fixed prompt, ``max_tokens=64``, temperature 0: tokens/s of ``generate`` and of a
   consumed ``generate_stream`` (output tokens / wall time, prompt processing included), and the
   stream's time to first token. The floor is llama.cpp's server code run in-process the way
   LocalChatClient runs it (``xllamacpp.Server`` on the same file, same context, threads and
   greedy sampling), its ``handle_chat_completions`` called directly with the same messages (no
   worker thread, no mapping); both must write the same text. llama.cpp's server reuses the
   cached prefix of the previous prompt, so every run's system message starts with its own tag:
   each prompt is processed whole, as a new conversation's would be.

Method: one warm-up run per case, then (HTTP cases) a timed run calibrates how many runs make a
round last ``--target-s``; every round times every case once, in turn (ours and the floor: load
on the shared machine hits both alike), ``gc.collect()`` before each; the local rows alternate
ours and the floor the same way. The table shows medians and min-max over rounds, and ratios
computed round by round, then their median (min-max).
``--profile PROVIDER`` prints cProfiles of about a second of that provider's requests instead
(generate, then streams).
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import importlib.util
import json
import os
import pstats
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import httpx
import respx
from _common import alternate, fmt, ratio_summary
from _fake_llm_server import ANTHROPIC_MODEL, GEMINI_MODEL, Canned, canned, expected_text

from agentic_core import ChatMessage, ChatOptions
from agentic_llm import (
    AnthropicChatClient,
    GeminiChatClient,
    LLMError,
    LocalChatClient,
    OllamaChatClient,
    OpenAIChatClient,
)

CHUNKS = 200
OURS, FLOOR, LLAMA = "agentic_llm", "httpx floor", "llama.cpp floor"
MESSAGES = [ChatMessage.system("You are a helpful assistant."), ChatMessage.user("Say hello.")]
OPTIONS = ChatOptions(max_tokens=256, temperature=0.2)
LOCAL_PROMPT = "Write a short story about a robot who learns to paint."
LOCAL_MAX_TOKENS = 64
SERVER = Path(__file__).resolve().with_name("_fake_llm_server.py")

Client = OpenAIChatClient | AnthropicChatClient | GeminiChatClient | OllamaChatClient
Kind = Literal["generate", "stream"]


# --------------------------------------------------------------------------------------------
# providers: our client, and how the floor picks the text out of the provider's JSON


def _openai_piece(event: Any) -> str:
    choices = event["choices"]
    return (choices[0]["delta"].get("content") or "") if choices else ""


def _anthropic_text(reply: Any) -> str:
    return "".join(block["text"] for block in reply["content"] if block["type"] == "text")


def _anthropic_piece(event: Any) -> str:
    return event["delta"].get("text", "") if event["type"] == "content_block_delta" else ""


def _gemini_text(reply: Any) -> str:
    return "".join(part.get("text", "") for part in reply["candidates"][0]["content"]["parts"])


@dataclass(frozen=True)
class Provider:
    name: str
    client: Callable[[str], Client]  # server root URL -> our client
    text: Callable[[Any], str]  # a whole reply's JSON -> its text
    piece: Callable[[Any], str]  # one streamed event's JSON -> its text ("" for framing)
    ndjson: bool = False


PROVIDERS = [
    Provider(
        "openai",
        lambda root: OpenAIChatClient("gpt-4o-mini", api_key="sk-bench", base_url=f"{root}/v1"),
        lambda reply: reply["choices"][0]["message"]["content"],
        _openai_piece,
    ),
    Provider(
        "anthropic",
        lambda root: AnthropicChatClient(ANTHROPIC_MODEL, api_key="sk-ant-bench", base_url=root),
        _anthropic_text,
        _anthropic_piece,
    ),
    Provider(
        "gemini",
        lambda root: GeminiChatClient(GEMINI_MODEL, api_key="AIza-bench", base_url=root),
        _gemini_text,
        _gemini_text,
    ),
    Provider(
        "ollama",
        lambda root: OllamaChatClient("llama3.2", host=root),
        lambda reply: reply["message"]["content"],
        lambda event: event["message"]["content"],
        ndjson=True,
    ),
]


@dataclass(frozen=True)
class Sent:
    """One request as our client sent it: the floor sends the same."""

    path: str
    params: dict[str, str]
    headers: dict[str, str]
    body: Any

    @classmethod
    def of(cls, request: httpx.Request) -> Sent:
        skip = {"host", "content-length"}
        headers = {k: v for k, v in request.headers.items() if k.lower() not in skip}
        return cls(request.url.path, dict(request.url.params), headers, json.loads(request.content))


async def recorded_requests(provider: Provider, reply: Canned) -> dict[Kind, Sent]:
    """What our client sends for ``generate`` and ``generate_stream`` (answered by respx)."""
    root = "http://fake-llm.invalid"
    whole = httpx.Response(200, headers={"content-type": reply.content_type}, content=reply.body)
    streamed = httpx.Response(
        200, headers={"content-type": reply.stream_content_type}, content=b"".join(reply.events)
    )
    with respx.mock(base_url=root, assert_all_called=True) as mock:
        route = mock.post().mock(side_effect=[whole, streamed])
        async with provider.client(root) as client:
            await client.generate(MESSAGES, OPTIONS)
            async for _ in client.generate_stream(MESSAGES, OPTIONS):
                pass
        return {
            "generate": Sent.of(route.calls[0].request),
            "stream": Sent.of(route.calls[1].request),
        }


# --------------------------------------------------------------------------------------------
# the HTTP cases


@dataclass
class Case:
    provider: str
    kind: Kind
    impl: str
    units: int  # text chunks per run (1 for generate)
    run: Callable[[], Awaitable[str]]  # one request; returns the reply's text
    samples: list[float] = field(default_factory=list[float])  # wall µs per unit, per round
    cpu: list[float] = field(default_factory=list[float])  # this process's CPU µs per unit
    reps: int = 1
    connections: int = 0  # new connections the server accepted during the timed rounds


def ours_cases(provider: Provider, whole: Client, streamed: Client) -> list[Case]:
    """``generate`` on the first client and ``generate_stream`` on the second (each case has
    its own connections, so conn/req is the case's own)."""

    async def generate() -> str:
        return (await whole.generate(MESSAGES, OPTIONS)).text

    async def stream() -> str:
        updates = streamed.generate_stream(MESSAGES, OPTIONS)
        return "".join([update.text async for update in updates])

    return [
        Case(provider.name, "generate", OURS, 1, generate),
        Case(provider.name, "stream", OURS, CHUNKS, stream),
    ]


def floor_cases(
    provider: Provider,
    whole_http: httpx.AsyncClient,
    stream_http: httpx.AsyncClient,
    sent: dict[Kind, Sent],
) -> list[Case]:
    whole, streamed = sent["generate"], sent["stream"]

    async def generate() -> str:
        response = await whole_http.post(
            whole.path, params=whole.params, headers=whole.headers, json=whole.body
        )
        response.raise_for_status()
        return provider.text(response.json())

    async def stream() -> str:
        pieces: list[str] = []
        async with stream_http.stream(
            "POST",
            streamed.path,
            params=streamed.params,
            headers=streamed.headers,
            json=streamed.body,
        ) as response:
            response.raise_for_status()
            async for line in response.aiter_lines():
                if provider.ndjson:
                    if line:
                        pieces.append(provider.piece(json.loads(line)))
                elif line.startswith("data:") and (data := line[5:].lstrip()) != "[DONE]":
                    pieces.append(provider.piece(json.loads(data)))
        return "".join(pieces)

    return [
        Case(provider.name, "generate", FLOOR, 1, generate),
        Case(provider.name, "stream", FLOOR, CHUNKS, stream),
    ]


def check(case: Case, text: str) -> None:
    if text != expected_text(CHUNKS):
        raise SystemExit(
            f"{case.impl} {case.provider} {case.kind}: read {text[:80]!r}..., not the canned text"
        )


async def calibrate(case: Case, target_s: float) -> None:
    check(case, await case.run())  # warm-up: connection, imports, lazy caches
    t0 = time.perf_counter()
    check(case, await case.run())
    case.reps = max(1, min(10_000, round(target_s / (time.perf_counter() - t0))))


async def accepted(stats: httpx.AsyncClient) -> int:
    """How many connections the fake server has accepted so far."""
    return int((await stats.get("/__connections")).text)


async def time_round(case: Case, stats: httpx.AsyncClient) -> None:
    gc.collect()
    before = await accepted(stats)
    text = ""
    c0, t0 = time.process_time(), time.perf_counter()
    for _ in range(case.reps):
        text = await case.run()
    elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
    case.connections += await accepted(stats) - before
    check(case, text)
    case.samples.append(elapsed / case.reps / case.units * 1e6)
    case.cpu.append(cpu / case.reps / case.units * 1e6)


@contextmanager
def fake_server(chunks: int) -> Iterator[str]:
    """The fake server's root URL while the block runs; the process is stopped at the end."""
    process = subprocess.Popen(
        [sys.executable, str(SERVER), "--chunks", str(chunks)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None
        port = process.stdout.readline().strip()
        if not port.isdigit():
            raise SystemExit(f"the fake LLM server did not start (it printed {port!r})")
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


async def http_cases(root: str) -> tuple[list[Case], list[Client | httpx.AsyncClient]]:
    """Every provider's cases (ours, then the floor), and the clients to close afterwards."""
    replies = canned(CHUNKS)
    cases: list[Case] = []
    clients: list[Client | httpx.AsyncClient] = []
    for provider in PROVIDERS:
        sent = await recorded_requests(provider, replies[provider.name])
        whole, streamed = provider.client(root), provider.client(root)
        whole_http, stream_http = (httpx.AsyncClient(base_url=root, timeout=60.0) for _ in "ab")
        clients += [whole, streamed, whole_http, stream_http]
        cases += ours_cases(provider, whole, streamed)
        cases += floor_cases(provider, whole_http, stream_http, sent)
    return cases, clients


async def http_results(args: argparse.Namespace) -> list[Case]:
    with fake_server(CHUNKS) as root:
        cases, clients = await http_cases(root)
        stats = httpx.AsyncClient(base_url=root)  # one kept-alive connection, counted once
        clients.append(stats)
        try:
            for case in cases:
                print(
                    f"  ... {case.provider} {case.kind} / {case.impl}", file=sys.stderr, flush=True
                )
                await calibrate(case, args.target_s)
            # every case once per round, ours and the floor in turn: load hits both alike
            await alternate(cases, args.rounds, lambda case: time_round(case, stats))
        finally:
            for client in clients:
                await client.aclose()
    return cases


# --------------------------------------------------------------------------------------------
# LocalChatClient and the bare llama.cpp floor (xllamacpp.Server called directly)


@dataclass
class LocalRun:
    seconds: float
    tokens: int
    first_s: float | None  # time to the first text (streams)
    text: str


def local_messages(tag: str) -> list[ChatMessage]:
    # The tag comes first: llama.cpp's prefix cache can reuse nothing of the last prompt.
    return [
        ChatMessage.system(f"[{tag}] You are a helpful assistant."),
        ChatMessage.user(LOCAL_PROMPT),
    ]


async def ours_local(client: LocalChatClient, kind: Kind, tag: str) -> LocalRun:
    options = ChatOptions(max_tokens=LOCAL_MAX_TOKENS, temperature=0.0)
    t0 = time.perf_counter()
    if kind == "generate":
        response = await client.generate(local_messages(tag), options)
        seconds = time.perf_counter() - t0
        return LocalRun(seconds, response.usage.output_tokens, None, response.text)
    first: float | None = None
    tokens = 0
    pieces: list[str] = []
    async for update in client.generate_stream(local_messages(tag), options):
        if update.text:
            if first is None:
                first = time.perf_counter() - t0
            pieces.append(update.text)
        if update.usage is not None:
            tokens = update.usage.output_tokens
    return LocalRun(time.perf_counter() - t0, tokens, first, "".join(pieces))


def floor_local(server: Any, kind: Kind, tag: str) -> LocalRun:
    messages = [{"role": m.role.value, "content": m.text} for m in local_messages(tag)]
    request: dict[str, Any] = {
        "messages": messages, "max_tokens": LOCAL_MAX_TOKENS, "temperature": 0.0,
    }  # fmt: skip
    t0 = time.perf_counter()
    if kind == "generate":
        reply = server.handle_chat_completions(request)
        seconds = time.perf_counter() - t0
        text = reply["choices"][0]["message"]["content"] or ""
        return LocalRun(seconds, reply["usage"]["completion_tokens"], None, text)
    first: float | None = None
    pieces: list[str] = []
    usage: dict[str, Any] = {}

    def on_chunk(chunk: dict[str, Any]) -> bool:  # llama.cpp calls it chunk by chunk
        nonlocal first
        choices = chunk.get("choices") or []
        piece = choices[0]["delta"].get("content") if choices else None
        if piece:
            if first is None:
                first = time.perf_counter() - t0
            pieces.append(piece)
        usage.update(chunk.get("usage") or {})
        return False  # True would stop the generation

    stream_request = {**request, "stream": True, "stream_options": {"include_usage": True}}
    server.handle_chat_completions(stream_request, on_chunk)
    tokens = int(usage.get("completion_tokens") or len(pieces))
    return LocalRun(time.perf_counter() - t0, tokens, first, "".join(pieces))


def floor_server(client: LocalChatClient) -> tuple[Any, str]:
    """llama.cpp's server in-process on the client's model, set up as LocalChatClient sets up
    its own (threads, context, one slot), and a description of that setup."""
    xllamacpp: Any = importlib.import_module("xllamacpp")  # untyped

    cpus = os.cpu_count() or 1
    threads = client.n_threads or max(cpus // 2, 1)
    params: Any = xllamacpp.CommonParams()
    params.model.path = str(client.model_path)
    params.n_ctx = client.n_ctx
    params.n_parallel = 1
    params.verbosity = -1
    params.warmup = False
    params.cache_ram_mib = 0  # as LocalChatClient: no host-memory prompt cache
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = cpus
    params.hostnames = ["127.0.0.1"]  # its HTTP side, unused here, on a loopback port
    params.ui = False
    setup = (
        f"{client.model_path.name}, n_ctx {client.n_ctx}, llama.cpp threads {threads} "
        f"(batch {cpus})"
    )
    return xllamacpp.Server(params), setup


LocalResults = dict[tuple[str, Kind], list[LocalRun]]


async def local_results(rounds: int) -> tuple[LocalResults, str] | str:
    """Runs per (impl, kind) and a description of the setup, or why the rows are skipped."""
    try:
        client = LocalChatClient()
    except LLMError as exc:
        return f"{type(exc).__name__}: {exc}"
    if importlib.util.find_spec("xllamacpp") is None:
        return "xllamacpp is not installed: run `uv sync` (dev dependency xllamacpp)"
    results: LocalResults = {}
    async with client:
        if not await client.health_check():  # loads the model (logged when it cannot)
            return "LocalChatClient could not load its model"
        server, setup = floor_server(client)
        try:
            for number in range(-1, rounds):  # round -1: warm-up
                if number >= 0:
                    print(f"  ... local round {number + 1}/{rounds}", file=sys.stderr, flush=True)
                for kind in ("generate", "stream"):
                    tag = f"{kind[0]}{number}"  # ours and the floor get the same prompt
                    gc.collect()
                    ours = await ours_local(client, kind, tag)
                    gc.collect()
                    floor = floor_local(server, kind, tag)
                    if ours.text != floor.text:
                        raise SystemExit(
                            f"local {kind}: LocalChatClient wrote {ours.text[:80]!r}..., "
                            f"llama.cpp {floor.text[:80]!r}..."
                        )
                    if number >= 0:
                        results.setdefault((OURS, kind), []).append(ours)
                        results.setdefault((LLAMA, kind), []).append(floor)
        finally:
            del server  # stops llama.cpp's server and frees the model
    return results, setup


# --------------------------------------------------------------------------------------------
# report


@dataclass
class Row:
    measure: str
    impl: str
    value: float
    unit: str
    range: str = ""  # min-max over rounds
    x_floor: str = ""  # ours / floor, per round: median (min-max)
    cpu: str = ""  # this process's CPU time per unit (HTTP)
    cpu_x: str = ""  # ours / floor, CPU time, per round: median (min-max)
    cpu_over: str = ""  # ours - floor, CPU time, paired per round
    conns: str = ""  # new connections per request (HTTP)
    note: str = ""


def span(values: list[float]) -> str:
    """min-max of ``values``."""
    return f"{fmt(min(values))}-{fmt(max(values))}"


def http_rows(cases: list[Case]) -> list[Row]:
    by_key = {(c.provider, c.kind, c.impl): c for c in cases}
    framing = {name: len(reply.events) - CHUNKS for name, reply in canned(CHUNKS).items()}
    rows: list[Row] = []
    for provider in PROVIDERS:
        for kind in ("generate", "stream"):
            measure = f"{provider.name}: {kind}"
            unit = "µs/request" if kind == "generate" else "µs/chunk"
            ours, floor = by_key[provider.name, kind, OURS], by_key[provider.name, kind, FLOOR]
            for case in (ours, floor):
                value, cpu = statistics.median(case.samples), statistics.median(case.cpu)
                row = Row(measure, case.impl, value, unit, span(case.samples), cpu=fmt(cpu))
                row.conns = f"{case.connections / (len(case.samples) * case.reps):.2f}"
                row.note = f"{len(case.samples)} x {case.reps} runs"
                if kind == "stream":
                    row.note += f"; {fmt(value * CHUNKS / 1000)} ms per stream"
                if case is ours:
                    row.x_floor = ratio_summary(ours.samples, floor.samples)
                    row.cpu_x = ratio_summary(ours.cpu, floor.cpu)
                    paired = [o - f for o, f in zip(ours.cpu, floor.cpu, strict=True)]
                    row.cpu_over = f"{statistics.median(paired):+.1f}"
                    if kind == "stream":
                        row.note += f" of {CHUNKS} text + {framing[provider.name]} framing events"
                rows.append(row)
    return rows


def local_rows(results: LocalResults) -> list[Row]:
    rows: list[Row] = []

    def tps(runs: list[LocalRun]) -> list[float]:
        return [r.tokens / r.seconds for r in runs]

    def ttft(runs: list[LocalRun]) -> list[float]:
        return [(r.first_s or r.seconds) * 1000 for r in runs]

    for kind in ("generate", "stream"):
        for impl in (OURS, LLAMA):
            runs = results[impl, kind]
            values = tps(runs)
            value = statistics.median(values)
            tokens = statistics.median(r.tokens for r in runs)
            seconds = statistics.median(r.seconds for r in runs)
            note = f"{tokens:g} tokens in {fmt(seconds * 1000)} ms (prompt processing included)"
            if kind == "stream":
                decode = [
                    (r.tokens - 1) / (r.seconds - r.first_s)
                    for r in runs
                    if r.first_s is not None and r.seconds > r.first_s
                ]
                note += f"; {fmt(statistics.median(decode))} tok/s after the first token"
            x = ratio_summary(values, tps(results[LLAMA, kind])) if impl == OURS else ""
            rows.append(Row(f"local: {kind}", impl, value, "tok/s", span(values), x, note=note))
    for impl in (OURS, LLAMA):
        values = ttft(results[impl, "stream"])
        value = statistics.median(values)
        x = ratio_summary(values, ttft(results[LLAMA, "stream"])) if impl == OURS else ""
        note = "time to the first text chunk of the stream"
        rows.append(Row("local: stream TTFT", impl, value, "ms", span(values), x, note=note))
    return rows


def print_table(rows: list[Row], args: argparse.Namespace, local_note: str) -> None:
    head = (
        f"{'measure':<20} {'implementation':<16} {'median':>8} {'unit':<10} {'min-max':>13} "
        f"{'x floor':>17} {'CPU':>6} {'CPU x floor':>17} {'CPU over':>8} {'conn/req':>8}  note"
    )
    print(head)
    print("-" * len(head))
    previous = ""
    for row in rows:
        group = row.measure.split(":")[0]
        if previous and group != previous:
            print()
        previous = group
        print(
            f"{row.measure:<20} {row.impl:<16} {fmt(row.value):>8} {row.unit:<10} "
            f"{row.range:>13} {row.x_floor:>17} {row.cpu:>6} {row.cpu_x:>17} {row.cpu_over:>8} "
            f"{row.conns:>8}  {row.note}"
        )
    print(
        f"\nHTTP: medians and min-max of {args.rounds} rounds after a warm-up, every case once "
        "per round, ours and the floor in turn (about "
        f"{args.target_s:g} s of requests per case per round); each case has its own client "
        "and connections to the fake server (another process, same machine). median = wall "
        "time; CPU = this process's CPU time (the client's own work: the server's and other "
        "processes' time excluded), same unit. µs/chunk = a streamed request's time / its "
        f"{CHUNKS} text chunks. x floor = ours / the bare httpx floor doing the same request "
        "and JSON decoding, per round, then the median (min-max) (above 1: ours is slower); "
        "CPU over = ours - floor in CPU µs, "
        "paired per round; conn/req = new TCP connections the server accepted per timed "
        "request (0: the connection is reused; 1: a new one each time, which against a real "
        f"provider means a new TLS handshake). local: medians and min-max of {args.rounds} rounds "
        "(ours, then the floor, each round) after a "
        f"warm-up, {local_note}; x floor = ours / llama.cpp's server code called directly (tok/s: "
        "below 1 is slower; ms: above 1 is slower). Every run's text was checked (HTTP: the "
        "canned text; local: ours = the floor's)."
    )


async def profile(name: str, root: str) -> None:
    provider = next(p for p in PROVIDERS if p.name == name)
    async with provider.client(root) as client:
        for case in ours_cases(provider, client, client):
            await case.run()  # warm-up
            profiler = cProfile.Profile()
            deadline = time.perf_counter() + 1.0  # about a second of requests
            profiler.enable()
            for _ in range(10_000):
                await case.run()
                if time.perf_counter() > deadline:
                    break
            profiler.disable()
            print(f"==== {OURS} {name} {case.kind} ({case.units} text chunks), by own time")
            pstats.Stats(profiler).sort_stats("tottime").print_stats(25)


async def main_async(args: argparse.Namespace) -> None:
    if args.profile:
        with fake_server(CHUNKS) as root:
            await profile(args.profile, root)
        return
    rows = http_rows(await http_results(args))  # the server is stopped before the local runs
    local_note = "LocalChatClient rows skipped (--no-local)"
    if not args.no_local:
        outcome = await local_results(args.rounds)
        if isinstance(outcome, str):
            local_note = f"LocalChatClient rows skipped ({outcome})"
        else:
            results, local_note = outcome
            rows += local_rows(results)
    print(f"\nLLM clients (Python {sys.version.split()[0]}, {sys.platform}, GC enabled)\n")
    print_table(rows, args, local_note)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=5, help="timed rounds (default 5)")
    parser.add_argument(
        "--target-s", type=float, default=0.2, help="seconds per HTTP case per round (default 0.2)"
    )
    parser.add_argument("--no-local", action="store_true", help="skip LocalChatClient")
    parser.add_argument(
        "--profile",
        choices=[p.name for p in PROVIDERS],
        help="print cProfiles (~1 s of generate, ~1 s of streams) of one provider's client instead",
    )
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error("--rounds must be >= 1")
    asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
