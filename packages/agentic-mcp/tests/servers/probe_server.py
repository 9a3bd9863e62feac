# pyright: strict
"""A real MCP server for the agentic-mcp tests (``MCPServer("probe")``, mcp 2.x).

Run it::

    python probe_server.py stdio
    python probe_server.py http --port N [--json-response] [--stateless]

Over HTTP it serves streamable HTTP on ``http://127.0.0.1:N/mcp``. Over stdio it writes
``probe ready`` to stderr before serving; nothing but the protocol goes to stdout.

Tools (annotations in brackets; the rest carry none):

- ``echo(text: str) -> str`` [readOnly]
- ``add(a: int, b: int) -> int`` [readOnly, idempotent]
- ``stats(values: list[float]) -> Stats`` (structured content: count, total, mean)
- ``big(n_bytes: int) -> str``: exactly ``n_bytes`` ASCII characters
- ``slow(seconds: float, steps: int = 3) -> str`` [readOnly]: reports progress ``steps`` times
  (``i, steps, "step i"``) while sleeping ``seconds`` in total; a cancelled call is counted
- ``cancelled_count() -> int``: how many ``slow`` calls were cancelled in this process
- ``slow_write(seconds: float, tag: str) -> str``: sleeps, then appends ``tag`` and a newline to
  the file named by ``$PROBE_SIDE_EFFECTS`` (if set); returns ``tag``
- ``side_effect(tag: str) -> str``: appends ``tag`` at once, like ``slow_write``
- ``fail(message: str) -> str``: raises ``ToolError(message)`` (an ``is_error`` result)
- ``grow(name: str) -> str``: adds a tool ``name`` (which returns ``"grown:<name>"``) and signals
  tools list-changed in both protocol eras; returns ``"added <name>"``
- ``pid() -> int``, ``env(name: str) -> str | None``, ``header(name: str) -> str | None`` (an
  HTTP request header; null over stdio)
- ``save_note(title: str, body: str) -> str``, ``choose(color: "red" | "green", count: int | None)``

The server is one object per process: tools added by ``grow`` are seen by every HTTP session.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Literal

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import BaseModel

SIDE_EFFECTS_ENV = "PROBE_SIDE_EFFECTS"
READY_LINE = "probe ready"

READ_ONLY = ToolAnnotations(read_only_hint=True)
READ_ONLY_IDEMPOTENT = ToolAnnotations(read_only_hint=True, idempotent_hint=True)

server: MCPServer = MCPServer("probe", instructions="Test server of the agentic-mcp suite.")

_counters = {"cancelled": 0}
_notes: dict[str, str] = {}


class Stats(BaseModel):
    """Summary of a list of numbers."""

    count: int
    total: float
    mean: float


@server.tool(annotations=READ_ONLY)
def echo(text: str) -> str:
    """Return ``text`` unchanged."""
    return text


@server.tool(annotations=READ_ONLY_IDEMPOTENT)
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def stats(values: list[float]) -> Stats:
    """Count, total and mean of ``values`` (mean 0 for no values)."""
    total = float(sum(values))
    return Stats(count=len(values), total=total, mean=total / len(values) if values else 0.0)


@server.tool()
def big(n_bytes: int) -> str:
    """A string of exactly ``n_bytes`` ASCII characters."""
    pattern = "0123456789abcdef"
    return (pattern * (n_bytes // len(pattern) + 1))[:n_bytes]


@server.tool(annotations=READ_ONLY)
async def slow(seconds: float, steps: int = 3, *, ctx: Context) -> str:
    """Sleep ``seconds`` in ``steps`` parts, reporting progress after each part."""
    steps = max(steps, 1)
    try:
        for i in range(1, steps + 1):
            await anyio.sleep(seconds / steps)
            await ctx.report_progress(i, steps, f"step {i}")
    except anyio.get_cancelled_exc_class():
        _counters["cancelled"] += 1
        raise
    return f"slept {seconds}"


@server.tool(annotations=READ_ONLY)
def cancelled_count() -> int:
    """How many ``slow`` calls were cancelled in this server process."""
    return _counters["cancelled"]


def _record(tag: str) -> None:
    target = os.environ.get(SIDE_EFFECTS_ENV)
    if target:
        with Path(target).open("a", encoding="utf-8") as file:
            file.write(tag + "\n")


@server.tool()
async def slow_write(seconds: float, tag: str) -> str:
    """Sleep ``seconds``, then append ``tag`` to the side-effects file; return ``tag``."""
    await anyio.sleep(seconds)
    _record(tag)
    return tag


@server.tool()
def side_effect(tag: str) -> str:
    """Append ``tag`` to the side-effects file at once; return ``tag``."""
    _record(tag)
    return tag


@server.tool()
def fail(message: str) -> str:
    """Always fails with ``message`` (an ``is_error`` result)."""
    raise ToolError(message)


def _grown_tool(name: str) -> Callable[[], str]:
    def grown() -> str:
        return f"grown:{name}"

    grown.__doc__ = f"Added at run time by grow({name!r})."
    return grown


@server.tool()
async def grow(name: str, ctx: Context) -> str:
    """Add a tool called ``name`` and tell the client the tool list changed."""
    server.add_tool(_grown_tool(name), name=name)
    # Handshake era (2025-11-25 and older): a notifications/tools/list_changed on the session's
    # standalone channel. The 2026-07-28 era drops that one (debug log) and instead delivers an
    # event on the subscriptions/listen streams; publishing with nobody listening is harmless.
    await ctx.session.send_tool_list_changed()
    await ctx.notify_tools_changed()
    return f"added {name}"


@server.tool(annotations=READ_ONLY)
def pid() -> int:
    """The server's process id."""
    return os.getpid()


@server.tool(annotations=READ_ONLY)
def env(name: str) -> str | None:
    """The value of environment variable ``name`` in the server process (null when unset)."""
    return os.environ.get(name)


@server.tool(annotations=READ_ONLY)
def header(name: str, ctx: Context) -> str | None:
    """The value of HTTP request header ``name`` (null over stdio or when absent)."""
    headers = ctx.headers
    return None if headers is None else headers.get(name.lower())


@server.tool()
def save_note(title: str, body: str) -> str:
    """Keep a note in memory."""
    _notes[title] = body
    return f"saved {title} ({len(body)} chars)"


@server.tool(annotations=READ_ONLY)
def choose(color: Literal["red", "green"], count: int | None = None) -> str:
    """Pick a color, optionally several times."""
    return color if count is None else " ".join([color] * count)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="MCP probe server of the agentic-mcp tests.")
    sub = parser.add_subparsers(dest="transport", required=True)
    sub.add_parser("stdio", help="serve over stdin/stdout")
    http = sub.add_parser("http", help="serve streamable HTTP on 127.0.0.1:PORT/mcp")
    http.add_argument("--port", type=int, required=True)
    http.add_argument("--json-response", action="store_true")
    http.add_argument("--stateless", action="store_true")
    args = parser.parse_args(argv)
    if args.transport == "stdio":
        sys.stderr.write(READY_LINE + "\n")
        sys.stderr.flush()
        server.run("stdio")
    else:
        server.run(
            "streamable-http",
            host="127.0.0.1",
            port=args.port,
            json_response=args.json_response,
            stateless_http=args.stateless,
        )


if __name__ == "__main__":
    main()
