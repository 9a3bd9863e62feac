# pyright: reportMissingImports=false, reportMissingModuleSource=false
"""Serving overhead per request: the OpenAI endpoint, the MCP server and A2A against a bare route.

Run: ``uv run python benches/serve.py [--rounds N] [--target-s S] [--session-requests N]``;
``uv run --group bench python benches/serve.py --profile COLUMN`` prints a pyinstrument profile
of about 2 s of one column's requests instead (client and server, both on this loop).

One agent (core's ``ChatAgent`` on ``agentic_core.testing.FunctionChatClient``, which answers at
once with ``echo: <the last message>``) is called the same way through each column:

- ``in-process``: ``await agent.run(text)``, the floor;
- ``bare route``: a 10-line Starlette app (POST JSON -> ``await agent.run(text)`` -> JSON),
  called with ``httpx.AsyncClient`` (one kept-alive connection);
- ``openai``: ``agentic_orchestrator.create_openai_app([agent])``, ``POST /v1/chat/completions``
  with the same client; ``openai stream``: the same with ``stream: true``, the server-sent chunks
  read to ``data: [DONE]``;
- ``mcp``: ``agentic_mcp.create_mcp_app(create_mcp_server([agent]))`` over streamable HTTP,
  called with the mcp SDK's ``ClientSession.call_tool``;
- ``a2a``: ``agentic_bus.serve_a2a(agent)``, called with the a2a-sdk client's ``send_message``
  (JSON-RPC ``SendMessage``, not streamed; each message without a context id, so a new task
  and conversation each). Skipped, with a note, when ``serve_a2a`` is not importable;
- ``mcp sdk alone`` and ``a2a-sdk alone``: references, no agentic code in the server. The same
  agent served the way each SDK's users write a server (the mcp SDK's ``MCPServer`` with one
  tool; the a2a-sdk's ``DefaultRequestHandler``, ``InMemoryTaskStore`` and routes with an
  eight-line ``AgentExecutor``), called by the same clients. Issue 30 requires both protocols
  on their official SDKs, so a protocol's SDK alone is the floor agentic's server can reach;
  each protocol's verdict also says what that floor costs and how agentic's server compares.

Every server is core's ``serve_asgi`` (uvicorn) on 127.0.0.1, in this process and on this event
loop, beside its client: one request's time is then the client's and the server's CPU plus two
loopback socket hops, with no wake-up of another process in between. A server in a subprocess
was tried for the bare route: about 1.3 ms per request against 1.0 ms here, with a similar
spread; the extra 0.3 ms is cross-process wake-ups on this 2-core machine, no serving work, and
would dilute the ratios (it is paid per HTTP exchange, whatever the protocol). Every HTTP column
pays the same uvicorn (h11), httpx and loopback costs as the bare route, so the ratios compare
protocol work; the MCP and A2A columns include their SDK clients' CPU.

The MCP server keeps a thread per session and agent (a session's calls continue one
conversation), and a turn on a thread costs more as the thread grows. So MCP is called in
sessions of ``--session-requests`` calls (default 100; each a new session, opened untimed), and
its floor is ``in-process, thread``: ``agent.run(text, thread=...)`` in runs of as many calls on
a new thread, so both do the same agent work.

Per-request overhead = a column's µs per request - its floor's in the same round (``in-process``;
``in-process, thread`` for MCP). Targets (issue 30): overhead <= 1.5 ms per request and <= 2x the
bare route's overhead. Method: a warm-up, then each column calibrated to about ``--target-s`` of
requests per round; ``--rounds`` rounds (default 5), each running every column once (round robin,
the starting column rotated each round, ``gc.collect()`` before each column; the cyclic GC stays
enabled); medians with (min-max) over rounds, and ratios of the same round. Every reply is checked
(the echoed text), so every column made the same call.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import statistics
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

BENCHES = Path(__file__).resolve().parent
REPO_ROOT = BENCHES.parent
# benches/mcp.py is named like the SDK: keep this directory last, so `import mcp` is the SDK.
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != BENCHES]
sys.path.insert(0, str(REPO_ROOT))
sys.path.append(str(BENCHES))

import httpx  # noqa: E402
from _common import fmt  # noqa: E402

from agentic_core import ChatAgent, ChatMessage, ChatOptions, serve_asgi  # noqa: E402
from agentic_core.testing import FunctionChatClient  # noqa: E402
from tests.fixtures.servers import free_port, wait_until_listening  # noqa: E402

TEXT = "ping"
REPLY = f"echo: {TEXT}"
AGENT = "echo"
HOST = "127.0.0.1"
OVERHEAD_TARGET_US = 1_500.0
BARE_RATIO_TARGET = 2.0
FLOOR, THREAD_FLOOR, BARE = "in-process", "in-process, thread", "bare route"
MCP_SDK, A2A_SDK = "mcp sdk alone", "a2a-sdk alone"  # references: each protocol's SDK, no agentic
REFERENCES = {"mcp": MCP_SDK, "a2a": A2A_SDK}

Request = Callable[[], Awaitable[str]]  # one request; returns the reply's text
Session = Callable[[], contextlib.AbstractAsyncContextManager[Request]]  # opened untimed


@dataclass
class Column:
    """One way of calling the agent. ``session()`` opens what a batch of requests uses."""

    name: str
    session: Session
    floor: str | None = FLOOR  # the column its overhead is measured against (None: a floor)
    batch: int = 0  # requests per session; 0: one session per round, its size calibrated
    batches: int = 1  # sessions per round (calibrated when ``batch`` is fixed)
    samples: list[float] = field(default_factory=list[float])  # µs per request, one per round


def echo(messages: list[ChatMessage], options: ChatOptions | None) -> str:
    del options
    return f"echo: {messages[-1].text}"


def check(column: str, text: str) -> None:
    if text != REPLY:
        raise SystemExit(f"{column}: the agent answered {text!r}, expected {REPLY!r}")


def fixed(request: Request) -> Session:
    """A session that is always the same ``request`` (a client kept open for the whole run)."""

    @contextlib.asynccontextmanager
    async def session() -> AsyncIterator[Request]:
        yield request

    return session


# --------------------------------------------------------------------------------------------
# servers: serve_asgi on a free loopback port, in this process


@contextlib.asynccontextmanager
async def served(
    app: Any, *, lifespan: Literal["on", "off"] = "off", port: int | None = None
) -> AsyncIterator[str]:
    """``app`` served by uvicorn on ``port`` (a free loopback port by default) for the block;
    yields its base URL."""
    port = port or free_port()
    task = asyncio.ensure_future(serve_asgi(app, host=HOST, port=port, lifespan=lifespan))
    try:
        await wait_until_listening(port, task, host=HOST)
        yield f"http://{HOST}:{port}"
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


def bare_app(agent: ChatAgent) -> Any:
    """The reference: a bare Starlette route doing the same call."""
    from starlette.applications import Starlette
    from starlette.requests import Request as HttpRequest
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    async def chat(request: HttpRequest) -> JSONResponse:
        body = await request.json()
        response = await agent.run(body["text"])
        return JSONResponse({"text": response.text})

    return Starlette(routes=[Route("/chat", chat, methods=["POST"])])


# --------------------------------------------------------------------------------------------
# the columns


def in_process(agent: ChatAgent) -> Column:
    async def request() -> str:
        return (await agent.run(TEXT)).text

    return Column(FLOOR, fixed(request), floor=None)


def in_process_thread(agent: ChatAgent, batch: int) -> Column:
    @contextlib.asynccontextmanager
    async def session() -> AsyncIterator[Request]:
        thread = agent.get_new_thread()

        async def request() -> str:
            return (await agent.run(TEXT, thread=thread)).text

        yield request

    return Column(THREAD_FLOOR, session, floor=None, batch=batch)


async def bare_route(agent: ChatAgent, stack: contextlib.AsyncExitStack) -> Column:
    url = await stack.enter_async_context(served(bare_app(agent)))
    http = await stack.enter_async_context(httpx.AsyncClient(base_url=url))

    async def request() -> str:
        response = await http.post("/chat", json={"text": TEXT})
        response.raise_for_status()
        return response.json()["text"]

    return Column(BARE, fixed(request))


async def openai_columns(agent: ChatAgent, stack: contextlib.AsyncExitStack) -> list[Column]:
    from agentic_orchestrator import create_openai_app

    url = await stack.enter_async_context(served(create_openai_app([agent])))
    http = await stack.enter_async_context(httpx.AsyncClient(base_url=url))
    body: dict[str, Any] = {"model": AGENT, "messages": [{"role": "user", "content": TEXT}]}

    async def plain() -> str:
        response = await http.post("/v1/chat/completions", json=body)
        response.raise_for_status()
        return response.json()["choices"][0]["message"]["content"]

    async def streamed() -> str:
        text: list[str] = []
        async with http.stream("POST", "/v1/chat/completions", json=body | {"stream": True}) as r:
            r.raise_for_status()
            # Read to the end of the body (not only to [DONE]): a response left unread closes
            # its connection, and the next request would pay for a new one.
            async for line in r.aiter_lines():
                data = line.removeprefix("data: ")
                if data in (line, "[DONE]"):  # not an event, or the end marker
                    continue
                choices = json.loads(data)["choices"]
                text.extend(choice["delta"].get("content") or "" for choice in choices)
        return "".join(text)

    return [Column("openai", fixed(plain)), Column("openai stream", fixed(streamed))]


def mcp_session(url: str) -> Session:
    """Sessions of the mcp SDK's ``ClientSession`` over streamable HTTP to ``url``."""
    from mcp import ClientSession
    from mcp import types as mcp_types
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import (  # pyright: ignore[reportPrivateUsage]
        create_mcp_http_client,
    )

    @contextlib.asynccontextmanager
    async def session() -> AsyncIterator[Request]:
        async with (
            create_mcp_http_client() as http,
            streamable_http_client(url, http_client=http) as (read, write),
            ClientSession(read, write, read_timeout_seconds=30) as client,
        ):
            await client.initialize()

            async def request() -> str:
                result = await client.call_tool(AGENT, {"message": TEXT})
                if result.is_error:
                    raise SystemExit(f"mcp: the tool failed: {result.content}")
                return "".join(
                    c.text for c in result.content if isinstance(c, mcp_types.TextContent)
                )

            yield request

    return session


async def mcp_column(agent: ChatAgent, stack: contextlib.AsyncExitStack, batch: int) -> Column:
    from agentic_mcp import create_mcp_app, create_mcp_server

    app = create_mcp_app(create_mcp_server([agent]))
    url = await stack.enter_async_context(served(app, lifespan="on")) + "/mcp"
    return Column("mcp", mcp_session(url), floor=THREAD_FLOOR, batch=batch)


async def mcp_sdk_column(agent: ChatAgent, stack: contextlib.AsyncExitStack, batch: int) -> Column:
    """The mcp SDK alone, as its users write a server: ``MCPServer`` with one tool calling the
    agent on a thread per session, JSON responses (as ours for agents). No guard, no bounds."""
    from mcp.server.mcpserver import Context, MCPServer

    server = MCPServer("sdk-alone", log_level="WARNING")  # its INFO lines would fill the table
    threads: dict[int, Any] = {}

    async def call(message: str, ctx: Context) -> str:
        key = id(ctx.session)
        thread = threads.get(key)
        if thread is None:
            thread = threads[key] = agent.get_new_thread()
        return (await agent.run(message, thread=thread)).text

    # This module's annotations are strings, and the SDK resolves them in the module's globals,
    # where the locally imported Context is not: give it the objects.
    call.__annotations__ = {"message": str, "ctx": Context, "return": str}
    server.tool(name=AGENT)(call)

    app = server.streamable_http_app(json_response=True)
    url = await stack.enter_async_context(served(app, lifespan="on")) + "/mcp"
    return Column(MCP_SDK, mcp_session(url), floor=THREAD_FLOOR, batch=batch)


def a2a_unavailable() -> str | None:
    """Why the A2A column cannot run, or None when it can."""
    try:
        from agentic_bus import serve_a2a  # noqa: F401
    except (ImportError, AttributeError) as exc:
        return f"{type(exc).__name__}: {exc}"
    return None


async def a2a_request(url: str, stack: contextlib.AsyncExitStack) -> Request:
    """One ``SendMessage`` to the A2A agent at ``url`` with the a2a-sdk client."""
    from uuid import uuid4

    from a2a.client import ClientConfig, create_client
    from a2a.types import Message, Part, Role, SendMessageRequest

    http = await stack.enter_async_context(httpx.AsyncClient())
    client = await create_client(url, ClientConfig(streaming=False, httpx_client=http))
    stack.push_async_callback(client.close)

    async def request() -> str:
        message = Message(role=Role.ROLE_USER, parts=[Part(text=TEXT)], message_id=uuid4().hex)
        text = ""
        async for event in client.send_message(SendMessageRequest(message=message)):
            if event.HasField("message"):
                text = "".join(part.text for part in event.message.parts)
            elif event.HasField("task"):
                task = event.task
                parts = [p for artifact in task.artifacts for p in artifact.parts]
                if not parts and task.status.HasField("message"):
                    parts = list(task.status.message.parts)
                text = "".join(part.text for part in parts)
        return text

    return request


async def a2a_column(agent: ChatAgent, stack: contextlib.AsyncExitStack) -> Column:
    from agentic_bus import serve_a2a

    app = serve_a2a(agent)
    stack.push_async_callback(app.aclose)  # as A2AApp.run does on its way out
    url = await stack.enter_async_context(served(app))
    return Column("a2a", fixed(await a2a_request(url, stack)))


async def a2a_sdk_column(agent: ChatAgent, stack: contextlib.AsyncExitStack) -> Column:
    """The a2a-sdk alone, as its users write a server: ``DefaultRequestHandler``,
    ``InMemoryTaskStore``, its JSON-RPC and card routes, and an ``AgentExecutor`` calling the
    agent (a task, the reply as an artifact, completed). No guard, no bounds, no StateStore."""
    from a2a.helpers import new_task_from_user_message, new_text_part
    from a2a.server.agent_execution import AgentExecutor, RequestContext
    from a2a.server.events import EventQueue
    from a2a.server.request_handlers import DefaultRequestHandler
    from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
    from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
    from a2a.types import AgentCapabilities, AgentCard, AgentInterface
    from starlette.applications import Starlette

    class Executor(AgentExecutor):
        async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
            if context.current_task is None and context.message is not None:
                await event_queue.enqueue_event(new_task_from_user_message(context.message))
            assert context.task_id
            assert context.context_id
            updater = TaskUpdater(event_queue, context.task_id, context.context_id)
            response = await agent.run(context.get_user_input())
            await updater.add_artifact([new_text_part(response.text)], name="response")
            await updater.complete()

        async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
            del context, event_queue

    port = free_port()
    url = f"http://{HOST}:{port}"
    card = AgentCard(
        name=AGENT,
        description="the agent, served by the a2a-sdk alone",
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(protocol_binding="JSONRPC", url=f"{url}/", protocol_version="1.0")
        ],
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
    )
    handler = DefaultRequestHandler(
        agent_executor=Executor(), task_store=InMemoryTaskStore(), agent_card=card
    )
    stack.push_async_callback(handler.aclose)
    app = Starlette(routes=[*create_agent_card_routes(card), *create_jsonrpc_routes(handler, "/")])
    await stack.enter_async_context(served(app, port=port))
    return Column(A2A_SDK, fixed(await a2a_request(url, stack)))


# --------------------------------------------------------------------------------------------
# measurement


async def run_batch(column: Column, client: FunctionChatClient, requests: int) -> float:
    """One session of ``requests`` requests; the seconds they took (the opening untimed)."""
    client.calls.clear()  # the double records every request: keep it small
    async with column.session() as request:
        text = ""
        t0 = time.perf_counter()
        for _ in range(requests):
            text = await request()
        elapsed = time.perf_counter() - t0
    check(column.name, text)
    return elapsed


async def calibrate(column: Column, client: FunctionChatClient, target_s: float) -> None:
    """Warm up ``column``; size its rounds to about ``target_s``."""
    probe = column.batch or 20
    await run_batch(column, client, probe)  # imports, connections, first-call costs
    # The faster of two probes: a busy moment of the machine should not shrink the rounds.
    per_request = min([await run_batch(column, client, probe) for _ in range(2)]) / probe
    if column.batch:
        column.batches = max(1, min(1_000, round(target_s / (per_request * column.batch))))
    else:
        column.batch = max(5, min(50_000, round(target_s / per_request)))


async def time_round(column: Column, client: FunctionChatClient) -> None:
    gc.collect()
    elapsed = 0.0
    for _ in range(column.batches):
        elapsed += await run_batch(column, client, column.batch)
    column.samples.append(elapsed / (column.batch * column.batches) * 1e6)


async def profile(column: Column, client: FunctionChatClient) -> None:
    """Print a pyinstrument profile of about 2 s of ``column``'s requests (warmed up first)."""
    from pyinstrument import Profiler

    await calibrate(column, client, 0.1)
    # Every stack on the loop is sampled: the client's and the server's work alike.
    profiler = Profiler(interval=0.0002, async_mode="disabled")
    profiler.start()
    deadline = time.perf_counter() + 2.0
    while time.perf_counter() < deadline:
        await run_batch(column, client, column.batch)
    profiler.stop()
    print(f"==== {column.name}: about 2 s of requests")
    print(profiler.output_text(unicode=True, color=False))


async def measure(args: argparse.Namespace) -> tuple[list[Column], float]:
    """The timed columns, and the CPU share this process had during the rounds."""
    client = FunctionChatClient(echo)
    agent = ChatAgent(client, name=AGENT)
    async with contextlib.AsyncExitStack() as stack:
        columns = [in_process(agent), in_process_thread(agent, args.session_requests)]
        columns.append(await bare_route(agent, stack))
        columns += await openai_columns(agent, stack)
        columns.append(await mcp_column(agent, stack, args.session_requests))
        columns.append(await mcp_sdk_column(agent, stack, args.session_requests))
        why = a2a_unavailable()
        if why is None:
            columns.append(await a2a_column(agent, stack))
            columns.append(await a2a_sdk_column(agent, stack))
        else:
            print(f"a2a: skipped, agentic_bus.serve_a2a is not importable ({why})")
        if args.profile:
            chosen = [column for column in columns if column.name == args.profile]
            if not chosen:
                raise SystemExit(f"--profile {args.profile}: no such column here")
            await profile(chosen[0], client)
            return [], 0.0
        for column in columns:
            print(f"  ... calibrating {column.name}", file=sys.stderr, flush=True)
            await calibrate(column, client, args.target_s)
        cpu, wall = time.process_time(), time.perf_counter()
        for number in range(args.rounds):
            print(f"  ... round {number + 1}/{args.rounds}", file=sys.stderr, flush=True)
            start = number % len(columns)  # round robin, a different column first each round
            for column in columns[start:] + columns[:start]:
                await time_round(column, client)
        share = (time.process_time() - cpu) / (time.perf_counter() - wall)
    return columns, share


# --------------------------------------------------------------------------------------------
# the table


def summary(values: Sequence[float], scale: Callable[[float], str] = fmt) -> str:
    """Median (min-max)."""
    return f"{scale(statistics.median(values))} ({scale(min(values))}-{scale(max(values))})"


def ratio(value: float) -> str:
    return f"{value:.2f}"


def report(columns: list[Column], share: float, args: argparse.Namespace) -> bool:
    """Print the table and the verdicts; True when every protocol meets both targets."""
    by_name = {column.name: column for column in columns}
    rounds = range(args.rounds)

    def overheads(column: Column) -> list[float]:
        floor = by_name[column.floor or column.name]
        return [column.samples[i] - floor.samples[i] for i in rounds]

    bare = overheads(by_name[BARE])
    head = (
        f"{'column':<20} {'µs/request':>24} {'overhead µs':>24} {'overhead/bare':>20} "
        f"{'request/bare':>12}  {'floor':<19} {'per round':>13}"
    )
    print(f"\nserving overhead (Python {sys.version.split()[0]}, {sys.platform}, GC enabled)\n")
    print(head)
    print("-" * len(head))
    verdicts: list[str] = []
    met = True
    for column in columns:
        per_round = f"{column.batch * column.batches:,} req"
        if column.floor is None:
            print(
                f"{column.name:<20} {summary(column.samples):>24} {'':>24} {'':>20} {'':>12}  "
                f"{'(floor)':<19} {per_round:>13}"
            )
            continue
        extra = overheads(column)
        to_bare = [extra[i] / bare[i] for i in rounds]
        whole = [column.samples[i] / by_name[BARE].samples[i] for i in rounds]
        print(
            f"{column.name:<20} {summary(column.samples):>24} {summary(extra):>24} "
            f"{summary(to_bare, ratio):>20} {ratio(statistics.median(whole)):>12}  "
            f"{column.floor:<19} {per_round:>13}"
        )
        if column.name == BARE or column.name in REFERENCES.values():
            continue
        median, times = statistics.median(extra), statistics.median(to_bare)
        ok = median <= OVERHEAD_TARGET_US and times <= BARE_RATIO_TARGET
        met &= ok
        verdicts.append(
            f"{'PASS' if ok else 'MISS'}  {column.name}: overhead {fmt(median)} µs/request "
            f"(target <= {OVERHEAD_TARGET_US:,.0f}), {times:.2f}x the bare route's "
            f"{fmt(statistics.median(bare))} µs (target <= {BARE_RATIO_TARGET:g}x)"
        )
        reference = by_name.get(REFERENCES.get(column.name, ""))
        if reference is not None:
            alone = overheads(reference)
            to_alone = statistics.median([extra[i] / alone[i] for i in rounds])
            verdicts.append(
                f"      {column.name}: its SDK alone ({reference.name}) costs "
                f"{fmt(statistics.median(alone))} µs/request over the same floor, "
                f"{statistics.median([alone[i] / bare[i] for i in rounds]):.2f}x the bare "
                f"route's; agentic's server costs {to_alone:.2f}x the SDK alone"
            )
    print()
    for line in verdicts:
        print(line)
    print(
        f"\nMedians (min-max) of {args.rounds} rounds, round robin, about {args.target_s:g} s of "
        "requests per column per round after a warm-up. overhead = µs/request - the floor's in "
        "the same round; overhead/bare = that / the bare route's overhead, per round; "
        "request/bare = whole request times, median of rounds. MCP runs in sessions of "
        f"{args.session_requests} calls (one conversation each), against the same turns on a "
        "thread in-process. Every reply was checked."
    )
    # Client and servers share this loop, so the process is busy all the time it is timed:
    # a share well below 100 % means other processes took the CPU and every µs is inflated.
    busy = " (other processes took the CPU: absolute µs inflated)" if share < 0.9 else ""
    print(f"CPU share of this process during the rounds: {share:.0%}{busy}.")
    return met


def main(argv: Sequence[str] | None = None) -> bool:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=5, help="timed rounds (default 5)")
    parser.add_argument(
        "--target-s", type=float, default=0.3, help="seconds per column per round (default 0.3)"
    )
    parser.add_argument(
        "--session-requests",
        type=int,
        default=100,
        help="MCP calls per session, and turns per thread of its floor (default 100)",
    )
    parser.add_argument(
        "--profile",
        choices=[
            FLOOR,
            THREAD_FLOOR,
            BARE,
            "openai",
            "openai stream",
            "mcp",
            MCP_SDK,
            "a2a",
            A2A_SDK,
        ],
        help="print a pyinstrument profile of one column instead (needs --group bench)",
    )
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.session_requests < 1 or args.target_s <= 0:
        parser.error("--rounds and --session-requests must be >= 1, --target-s > 0")
    columns, share = asyncio.run(measure(args))
    return report(columns, share, args) if columns else False


if __name__ == "__main__":
    main()
