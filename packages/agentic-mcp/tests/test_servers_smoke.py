# pyright: strict
"""The test servers work with the raw SDK client (``mcp.Client``), in both protocol eras.

Covers ``servers/probe_server.py`` over stdio and streamable HTTP, ``servers/paging_server.py``
(25 tools in 3 pages) and the PyPI reference servers ``mcp-server-time`` and ``mcp-server-git``.
Every ``async with Client(...)`` is entered and left inside its test (one task).
"""

from __future__ import annotations

import sys
import uuid
from pathlib import Path
from typing import Any, Literal

import anyio
import pytest
from mcp import Client, StdioServerParameters, stdio_client
from mcp import types as mcp_types
from mcp.client.session import IncomingMessage
from mcp.client.streamable_http import streamable_http_client
from mcp.client.subscriptions import ToolsListChanged

pytestmark = pytest.mark.slow

Transport = Literal["stdio", "http"]
TIMEOUT_S = 30.0
BIG = 5_000_000

EXPECTED_ANNOTATIONS: dict[str, tuple[bool | None, bool | None]] = {
    # tool: (read_only_hint, idempotent_hint)
    "echo": (True, None),
    "add": (True, True),
    "stats": (None, None),
    "big": (None, None),
    "slow": (True, None),
    "cancelled_count": (True, None),
    "slow_write": (None, None),
    "side_effect": (None, None),
    "fail": (None, None),
    "grow": (None, None),
    "pid": (True, None),
    "env": (True, None),
    "header": (True, None),
    "save_note": (None, None),
    "choose": (True, None),
}


@pytest.fixture(params=["stdio", "http"])
def transport(request: pytest.FixtureRequest) -> Transport:
    kind: Transport = request.param
    return kind


def probe_client(
    transport: Transport,
    mode: str,
    request: pytest.FixtureRequest,
    *,
    message_handler: Any = None,
) -> Client:
    """A not yet entered ``Client`` on the probe server (the HTTP one only when asked for)."""
    if transport == "stdio":
        script: Path = request.getfixturevalue("probe_server_script")
        params = StdioServerParameters(command=sys.executable, args=[str(script), "stdio"])
        return Client(
            params, mode=mode, read_timeout_seconds=TIMEOUT_S, message_handler=message_handler
        )
    url: str = request.getfixturevalue("probe_http_url")
    return Client(
        streamable_http_client(url, max_sse_event_size=64 << 20),
        mode=mode,
        read_timeout_seconds=TIMEOUT_S,
        message_handler=message_handler,
    )


def text_of(result: mcp_types.CallToolResult) -> str:
    return "".join(
        block.text for block in result.content if isinstance(block, mcp_types.TextContent)
    )


async def test_probe_tools_and_calls(
    transport: Transport, mcp_protocol: str, request: pytest.FixtureRequest
) -> None:
    async with probe_client(transport, mcp_protocol, request) as client:
        assert client.protocol_version == (
            "2025-11-25" if mcp_protocol == "legacy" else "2026-07-28"
        )
        listing = await client.list_tools()
        assert listing.next_cursor is None
        tools = {tool.name: tool for tool in listing.tools}
        assert set(EXPECTED_ANNOTATIONS) <= set(tools)
        for name, (read_only, idempotent) in EXPECTED_ANNOTATIONS.items():
            annotations = tools[name].annotations
            hints = (None, None) if annotations is None else (
                annotations.read_only_hint, annotations.idempotent_hint
            )  # fmt: skip
            assert hints == (read_only, idempotent), name
        assert tools["choose"].input_schema["properties"]["color"]["enum"] == ["red", "green"]
        assert tools["stats"].output_schema is not None

        echo = await client.call_tool("echo", {"text": "héllo"})
        assert (echo.is_error, text_of(echo)) == (False, "héllo")
        added = await client.call_tool("add", {"a": 2, "b": 40})
        assert added.structured_content == {"result": 42}
        stats = await client.call_tool("stats", {"values": [1.0, 2.0, 6.0]})
        assert stats.structured_content == {"count": 3, "total": 9.0, "mean": 3.0}

        big = await client.call_tool("big", {"n_bytes": BIG})
        big_text = text_of(big)
        assert len(big_text) == BIG
        assert big_text.isascii()

        failed = await client.call_tool("fail", {"message": "boom"})
        assert failed.is_error
        assert "boom" in text_of(failed)


async def test_probe_grow_signals_list_changed(
    transport: Transport, mcp_protocol: str, request: pytest.FixtureRequest
) -> None:
    """Handshake era: a tools/list_changed notification; 2026-07-28: a listen-stream event."""
    notified = anyio.Event()

    async def on_message(message: IncomingMessage) -> None:
        if isinstance(message, mcp_types.ToolListChangedNotification):
            notified.set()

    name = f"grown_{uuid.uuid4().hex[:8]}"
    async with probe_client(transport, mcp_protocol, request, message_handler=on_message) as client:
        before = await client.list_tools()
        assert name not in {tool.name for tool in before.tools}
        if mcp_protocol == "legacy":
            assert (await client.call_tool("grow", {"name": name})).structured_content == {
                "result": f"added {name}"
            }
            with anyio.fail_after(5):
                await notified.wait()
        else:
            async with client.listen(tools_list_changed=True) as subscription:
                await client.call_tool("grow", {"name": name})
                with anyio.fail_after(5):
                    event = await anext(aiter(subscription))
                assert isinstance(event, ToolsListChanged)
                # While a listen stream is open, the SDK also tees its events to message_handler
                # as ToolListChangedNotification (without one, nothing arrives at this era).
                with anyio.fail_after(5):
                    await notified.wait()
        after = await client.list_tools(cache_mode="refresh")
        assert name in {tool.name for tool in after.tools}
        assert text_of(await client.call_tool(name, {})) == f"grown:{name}"


async def test_probe_stdio_stderr_and_progress(
    probe_server_script: Path, mcp_protocol: str, tmp_path: Path
) -> None:
    params = StdioServerParameters(command=sys.executable, args=[str(probe_server_script), "stdio"])
    reports: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        reports.append((progress, total, message))

    errlog_path = tmp_path / "stderr.txt"
    with errlog_path.open("w") as errlog:
        transport = stdio_client(params, errlog=errlog)
        async with Client(transport, mode=mcp_protocol, read_timeout_seconds=TIMEOUT_S) as client:
            result = await client.call_tool(
                "slow", {"seconds": 0.15, "steps": 3}, progress_callback=on_progress
            )
            assert not result.is_error
    assert reports == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]
    assert "probe ready" in errlog_path.read_text()


async def test_paging_server_lists_three_pages(
    paging_server_script: Path, mcp_protocol: str
) -> None:
    params = StdioServerParameters(command=sys.executable, args=[str(paging_server_script)])
    async with Client(params, mode=mcp_protocol, read_timeout_seconds=TIMEOUT_S) as client:
        pages: list[list[str]] = []
        cursor: str | None = None
        while True:
            page = await client.list_tools(cursor=cursor)
            pages.append([tool.name for tool in page.tools])
            cursor = page.next_cursor
            if cursor is None:
                break
        assert [len(names) for names in pages] == [10, 10, 5]
        assert [name for names in pages for name in names] == [f"tool_{i:02d}" for i in range(25)]
        assert text_of(await client.call_tool("tool_24", {"x": 7})) == "tool_24:7"


async def test_time_server(time_server_command: list[str], mcp_protocol: str) -> None:
    command, *args = time_server_command
    params = StdioServerParameters(command=command, args=args)
    async with Client(params, mode=mcp_protocol, read_timeout_seconds=TIMEOUT_S) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert {"get_current_time", "convert_time"} <= names
        result = await client.call_tool("get_current_time", {"timezone": "Asia/Tokyo"})
        assert not result.is_error, text_of(result)
        assert result.structured_content is not None
        assert result.structured_content["timezone"] == "Asia/Tokyo"
        assert "+09:00" in result.structured_content["datetime"]


async def test_git_server(git_server_command: list[str], git_repo: Path, mcp_protocol: str) -> None:
    command, *args = git_server_command
    params = StdioServerParameters(command=command, args=args)
    async with Client(params, mode=mcp_protocol, read_timeout_seconds=TIMEOUT_S) as client:
        result = await client.call_tool("git_log", {"repo_path": str(git_repo), "max_count": 50})
        text = text_of(result)
        assert not result.is_error, text
        assert text.count("Commit: ") == 50
        assert "Message: docs:" in text
        assert "Message: fix:" in text
        assert "Message: feat:" in text
        status = await client.call_tool("git_status", {"repo_path": str(git_repo)})
        assert "nothing to commit" in text_of(status)


async def test_probe_http_kill_and_restart(start_probe_http: Any, tmp_path: Path) -> None:
    """``start_probe_http``: env reaches the server; SIGKILL, then restart on the same port."""
    effects = tmp_path / "effects.txt"
    server = start_probe_http(env={"PROBE_SIDE_EFFECTS": str(effects)})
    first_pid: int = server.pid
    async with Client(server.url, mode="legacy", read_timeout_seconds=TIMEOUT_S) as client:
        assert (await client.call_tool("pid", {})).structured_content == {"result": first_pid}
        await client.call_tool("side_effect", {"tag": "one"})
    server.kill()
    server.restart()
    assert server.pid != first_pid
    async with Client(server.url, mode="auto", read_timeout_seconds=TIMEOUT_S) as client:
        assert (await client.call_tool("pid", {})).structured_content == {"result": server.pid}
        await client.call_tool("side_effect", {"tag": "two"})
    assert effects.read_text() == "one\ntwo\n"


@pytest.mark.parametrize("option", ["json_response", "stateless"])
async def test_probe_http_options(start_probe_http: Any, option: str) -> None:
    server = start_probe_http(**{option: True})
    for mode in ("legacy", "auto"):
        async with Client(server.url, mode=mode, read_timeout_seconds=TIMEOUT_S) as client:
            result = await client.call_tool("add", {"a": 1, "b": 2})
            assert result.structured_content == {"result": 3}, mode
