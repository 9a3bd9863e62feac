"""MCPClient against real MCP servers over stdio and streamable HTTP, in both protocol eras."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import structlog

from agentic_mcp import (
    MCPClient,
    MCPClientClosedError,
    MCPConnectionError,
    MCPServerConfig,
    MCPTimeoutError,
    MCPToolError,
    MCPToolNotAllowedError,
    MCPToolNotFoundError,
)

pytestmark = pytest.mark.slow

ProbeConfig = Callable[..., MCPServerConfig]


@pytest.fixture
def probe(probe_server_script: Path, mcp_protocol: str) -> ProbeConfig:
    """Builds a stdio config of the probe server in the test's protocol era."""

    def build(name: str = "probe", **options: Any) -> MCPServerConfig:
        options.setdefault("protocol", mcp_protocol)
        return MCPServerConfig.stdio(
            name, sys.executable, str(probe_server_script), "stdio", **options
        )

    return build


async def _pid(client: MCPClient, server: str = "probe") -> int:
    return int((await client.call_tool(server, "pid")).value())


# -- discovery and calls --------------------------------------------------------------------------


async def test_discovery_reads_every_page(paging_server_script: Path, mcp_protocol: str) -> None:
    config = MCPServerConfig.stdio(
        "paging", sys.executable, str(paging_server_script), protocol=mcp_protocol
    )
    async with MCPClient([config]) as client:
        tools = await client.list_tools()
        assert [tool.name for tool in tools] == [f"tool_{i:02d}" for i in range(25)]
        assert tools[0].qualified_name == "paging__tool_00"
        refreshed = await client.list_tools("paging", refresh=True)
        assert len(refreshed) == 25
        result = await client.call_tool("paging", "tool_24", {"x": 7})
        assert result.text == "tool_24:7"
        status = client.status()["paging"]
        assert status.state == "connected"
        assert status.generation == 1
        assert status.tool_count == 25
        expected_era = "2025-11-25" if mcp_protocol == "legacy" else "2026-07-28"
        assert status.protocol_version == expected_era


async def test_calls_text_structured_and_progress(probe: ProbeConfig) -> None:
    async with MCPClient([probe()]) as client:
        added = await client.call_tool("probe", "add", {"a": 2, "b": 40})
        assert added.value() == 42
        assert not added.is_error
        stats = await client.call_tool("probe", "stats", {"values": [1.0, 2.0, 3.0]})
        assert stats.structured == {"count": 3, "total": 6.0, "mean": 2.0}
        assert stats.value() == {"count": 3, "total": 6.0, "mean": 2.0}
        steps: list[tuple[float, float | None, str | None]] = []

        async def on_progress(value: float, total: float | None, message: str | None) -> None:
            steps.append((value, total, message))

        slow = await client.call_tool(
            "probe", "slow", {"seconds": 0.3, "steps": 3}, progress=on_progress
        )
        assert not slow.is_error
        assert [step[0] for step in steps] == [1.0, 2.0, 3.0]
        assert steps[0][1:] == (3.0, "step 1")


async def test_unknown_tool_unknown_server_and_bad_arguments(probe: ProbeConfig) -> None:
    async with MCPClient([probe()]) as client:
        with pytest.raises(MCPToolNotFoundError, match=r"has no tool 'nope'.*echo"):
            await client.call_tool("probe", "nope", {})
        with pytest.raises(MCPToolNotFoundError, match="no MCP server named 'other'"):
            await client.call_tool("other", "echo", {"text": "x"})
        bad = await client.call_tool("probe", "add", {"a": "not a number", "b": 1})
        assert bad.is_error
        assert "a" in bad.text
        with pytest.raises(MCPToolError, match=r"probe\.add failed") as raised:
            bad.raise_for_error()
        assert raised.value.result is bad
        failed = await client.call_tool("probe", "fail", {"message": "boom 17"})
        assert failed.is_error
        assert "boom 17" in failed.text
        assert (await client.call_tool("probe", "echo", {"text": "still fine"})).text == (
            "still fine"
        )


async def test_a_slow_tool_times_out_and_the_session_stays_usable(probe: ProbeConfig) -> None:
    async with MCPClient([probe()]) as client:
        before = (await client.call_tool("probe", "cancelled_count")).value()
        fast = asyncio.create_task(client.call_tool("probe", "echo", {"text": "fast"}))
        started = time.monotonic()
        with pytest.raises(MCPTimeoutError, match=r"probe\.slow did not answer within 0.5 s"):
            await client.call_tool("probe", "slow", {"seconds": 10}, timeout_s=0.5)
        assert time.monotonic() - started < 3.0
        assert (await fast).text == "fast"
        assert (await client.call_tool("probe", "add", {"a": 1, "b": 1})).value() == 2
        deadline = time.monotonic() + 5
        while (await client.call_tool("probe", "cancelled_count")).value() == before:
            assert time.monotonic() < deadline, "the server never saw the cancellation"
            await asyncio.sleep(0.05)
        assert client.status()["probe"].generation == 1


async def test_five_megabyte_result_over_stdio(probe: ProbeConfig) -> None:
    async with MCPClient([probe()]) as client:
        result = await client.call_tool("probe", "big", {"n_bytes": 5_000_000})
        assert len(result.text) == 5_000_000


async def test_five_megabyte_result_over_http(probe_http_url: str, mcp_protocol: str) -> None:
    config = MCPServerConfig.http("web", probe_http_url, protocol=mcp_protocol)
    async with MCPClient([config]) as client:
        result = await client.call_tool("web", "big", {"n_bytes": 5_000_000})
        assert len(result.text) == 5_000_000
        assert (await client.call_tool("web", "add", {"a": 1, "b": 2})).value() == 3


# -- connection loss ------------------------------------------------------------------------------


async def test_kill_mid_call_with_twenty_callers(probe: ProbeConfig) -> None:
    """SIGKILL while 20 read-only calls are in flight: all are retried and succeed."""
    async with MCPClient([probe()]) as client:
        old_pid = await _pid(client)
        calls = [
            asyncio.create_task(client.call_tool("probe", "slow", {"seconds": 0.5, "steps": 1}))
            for _ in range(20)
        ]
        await asyncio.sleep(0.2)
        os.kill(old_pid, signal.SIGKILL)
        results = await asyncio.gather(*calls)
        assert all(result.text == "slept 0.5 s" or not result.is_error for result in results)
        later = await asyncio.gather(
            *(client.call_tool("probe", "add", {"a": i, "b": 1}) for i in range(20))
        )
        assert [result.value() for result in later] == [i + 1 for i in range(20)]
        new_pid = await _pid(client)
        assert new_pid != old_pid
        status = client.status()["probe"]
        assert status.generation == 2
        assert status.state == "connected"
        assert status.tool_count > 10


@pytest.mark.parametrize(
    ("policy", "retried"), [("safe", False), ("always", True), ("never", False)]
)
async def test_in_flight_write_follows_retry_in_flight(
    probe: ProbeConfig, tmp_path: Path, policy: str, retried: bool
) -> None:
    log = tmp_path / "effects.txt"
    config = probe(retry_in_flight=policy, env={"PROBE_SIDE_EFFECTS": str(log)})
    async with MCPClient([config]) as client:
        pid = await _pid(client)
        call = asyncio.create_task(
            client.call_tool("probe", "slow_write", {"seconds": 0.5, "tag": "once"})
        )
        await asyncio.sleep(0.2)
        os.kill(pid, signal.SIGKILL)
        if retried:
            assert (await call).text == "once"
            assert log.read_text().split() == ["once"]
        else:
            with pytest.raises(MCPConnectionError, match=f"retry_in_flight='{policy}'"):
                await call
            assert not log.exists()
        # Calls made after the loss was noticed go to the new session.
        assert (await client.call_tool("probe", "side_effect", {"tag": "after"})).text == "after"
        assert log.read_text().split()[-1] == "after"


async def test_a_read_only_call_is_not_retried_under_never(probe: ProbeConfig) -> None:
    async with MCPClient([probe(retry_in_flight="never")]) as client:
        pid = await _pid(client)
        call = asyncio.create_task(client.call_tool("probe", "slow", {"seconds": 1}))
        await asyncio.sleep(0.2)
        os.kill(pid, signal.SIGKILL)
        with pytest.raises(MCPConnectionError, match="connection lost during slow"):
            await call
        assert (await client.call_tool("probe", "echo", {"text": "back"})).text == "back"


async def test_server_that_keeps_dying_is_marked_failed(tmp_path: Path) -> None:
    script = tmp_path / "once.py"
    marker = tmp_path / "started"
    # Serves once; every later start exits at once (a server that cannot come back).
    script.write_text(
        "import pathlib, sys\n"
        f"marker = pathlib.Path({str(marker)!r})\n"
        "if marker.exists():\n    sys.exit(3)\n"
        "marker.write_text('x')\n"
        "from mcp.server.mcpserver import MCPServer\n"
        "import os\n"
        "server = MCPServer('once')\n"
        "@server.tool()\ndef pid() -> int:\n    return os.getpid()\n"
        "server.run('stdio')\n"
    )
    config = MCPServerConfig.stdio(
        "once", sys.executable, str(script), max_reconnect_attempts=2, reconnect_backoff_s=0.05
    )
    async with MCPClient([config]) as client:
        os.kill(await _pid(client, "once"), signal.SIGKILL)
        deadline = time.monotonic() + 20
        while client.status()["once"].state != "failed":
            assert time.monotonic() < deadline, client.status()
            await asyncio.sleep(0.05)
        with pytest.raises(MCPConnectionError, match=r"'once'.*unreachable.*reconnect_server"):
            await client.call_tool("once", "pid", timeout_s=2)
        marker.unlink()
        status = await client.reconnect_server("once")
        assert status.state == "connected"
        assert status.generation == 2
        assert await _pid(client, "once") > 0


async def test_http_server_killed_and_restarted_on_the_same_port(
    start_probe_http: Any, mcp_protocol: str
) -> None:
    server = start_probe_http()
    config = MCPServerConfig.http(
        "web", server.url, protocol=mcp_protocol, reconnect_backoff_s=0.05
    )
    async with MCPClient([config]) as client:
        assert (await client.call_tool("web", "echo", {"text": "one"})).text == "one"
        server.kill()
        with pytest.raises((MCPConnectionError, MCPTimeoutError)):
            await client.call_tool("web", "side_effect", {"tag": "x"}, timeout_s=5)
        server.restart()
        deadline = time.monotonic() + 20
        while True:
            try:
                result = await client.call_tool("web", "echo", {"text": "two"}, timeout_s=5)
                break
            except (MCPConnectionError, MCPTimeoutError):
                assert time.monotonic() < deadline
                if client.status()["web"].state == "failed":
                    await client.reconnect_server("web")
                await asyncio.sleep(0.1)
        assert result.text == "two"
        assert client.status()["web"].generation >= 2


async def test_unreachable_servers_fail_fast_and_clearly(tmp_path: Path) -> None:
    from tests.fixtures.servers import free_port

    port = free_port()
    started = time.monotonic()
    with pytest.raises(MCPConnectionError, match=f"'down'.*127.0.0.1:{port}"):
        async with MCPClient([MCPServerConfig.http("down", f"http://127.0.0.1:{port}/mcp")]):
            pass
    assert time.monotonic() - started < 10
    with pytest.raises(MCPConnectionError, match=r"'missing'.*no-such-mcp-server"):
        async with MCPClient([MCPServerConfig.stdio("missing", "no-such-mcp-server-binary")]):
            pass
    crash = tmp_path / "crash.py"
    crash.write_text("import sys\nprint('bad config', file=sys.stderr)\nsys.exit(2)\n")
    with pytest.raises(MCPConnectionError, match="'crash'"):
        async with MCPClient([MCPServerConfig.stdio("crash", sys.executable, str(crash))]):
            pass


async def test_tokens_in_a_server_url_stay_out_of_errors_and_logs(probe_http_url: str) -> None:
    from tests.fixtures.servers import free_port

    wrong_path = probe_http_url.replace("/mcp", "/nope")
    urls = [
        wrong_path.replace("http://", "http://tok3n-s3cret@") + "?api_key=k3y-s3cret",
        f"http://127.0.0.1:{free_port()}/mcp?access_token=tok3n-s3cret",
    ]
    for url in urls:
        config = MCPServerConfig.http("web", url, connect_timeout_s=5)
        with structlog.testing.capture_logs() as logs, pytest.raises(MCPConnectionError) as failed:
            async with MCPClient([config]):
                pass
        assert config.where() in str(failed.value)
        assert "s3cret" not in str(failed.value)
        assert logs
        assert "s3cret" not in repr(logs)


# -- listing changes ------------------------------------------------------------------------------


async def test_tools_list_changed_is_seen_in_both_eras(probe: ProbeConfig) -> None:
    changed: list[str] = []
    async with MCPClient([probe()], on_tools_changed=changed.append) as client:
        assert (await client.call_tool("probe", "grow", {"name": "sprout"})).text == "added sprout"
        deadline = time.monotonic() + 2
        while "sprout" not in {tool.name for tool in await client.list_tools()}:
            assert time.monotonic() < deadline, "the new tool never appeared"
            await asyncio.sleep(0.02)
        assert changed == ["probe"]
        assert "probe__sprout" in {tool.name for tool in client.get_tools()}
        assert (await client.call_tool("probe", "sprout")).text == "grown:sprout"


async def test_a_tool_added_unnoticed_is_found_by_asking_again(probe: ProbeConfig) -> None:
    async with MCPClient([probe()]) as client:
        await client.call_tool("probe", "grow", {"name": "late"})
        assert (await client.call_tool("probe", "late")).text == "grown:late"


# -- lifecycle ------------------------------------------------------------------------------------


async def test_close_from_another_task_fails_pending_calls(
    probe: ProbeConfig, capfd: pytest.CaptureFixture[str]
) -> None:
    client = MCPClient([probe()])
    await client.__aenter__()
    pending = asyncio.create_task(client.call_tool("probe", "slow", {"seconds": 10}))
    await asyncio.sleep(0.2)
    started = time.monotonic()
    await asyncio.create_task(client.close())
    with pytest.raises(MCPClientClosedError):
        await pending
    assert time.monotonic() - started < 5
    await client.close()  # idempotent
    with pytest.raises(MCPClientClosedError):
        await client.call_tool("probe", "echo", {"text": "x"})
    captured = capfd.readouterr()
    assert "cancel scope" not in captured.out + captured.err


async def test_many_clients_closed_in_any_order(
    probe: ProbeConfig, capfd: pytest.CaptureFixture[str]
) -> None:
    clients = [MCPClient([probe(f"p{i}")]) for i in range(4)]
    await asyncio.gather(*(client.__aenter__() for client in clients))
    pids = [await _pid(client, f"p{i}") for i, client in enumerate(clients)]
    await clients[0].close()  # FIFO in this task: the SDK's classic trap
    await clients[1].close()
    await asyncio.gather(clients[3].close(), asyncio.create_task(clients[2].close()))
    captured = capfd.readouterr()
    assert "cancel scope" not in captured.out + captured.err
    deadline = time.monotonic() + 5
    while any(_alive(pid) for pid in pids):
        assert time.monotonic() < deadline, "a server outlived its client"
        await asyncio.sleep(0.05)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/stat")
    return status.exists() and status.read_text().split()[2] != "Z"


async def test_several_servers_disconnect_and_status(probe: ProbeConfig) -> None:
    async with MCPClient([probe("a"), probe("b")]) as client:
        assert client.servers == ["a", "b"]
        names = {tool.qualified_name for tool in await client.list_tools()}
        assert {"a__echo", "b__echo"} <= names
        await client.disconnect_server("a")
        assert list(client.status()) == ["b"]
        with pytest.raises(MCPToolNotFoundError):
            await client.call_tool("a", "echo", {"text": "x"})
        with pytest.raises(ValueError, match="already connected"):
            await client.connect_server(MCPServerConfig.stdio("b", sys.executable, "-V"))


# -- what a server gets and says -----------------------------------------------------------------


async def test_stdio_env_is_minimal_and_stderr_reaches_our_logs(
    probe: ProbeConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTIC_TEST_SECRET", "s3cret-value")
    with structlog.testing.capture_logs() as logs:
        async with MCPClient([probe(env={"GIVEN": "yes"})]) as client:
            assert (await client.call_tool("probe", "env", {"name": "GIVEN"})).value() == "yes"
            leaked = await client.call_tool("probe", "env", {"name": "AGENTIC_TEST_SECRET"})
            assert leaked.value() in (None, "")
            await asyncio.sleep(0.1)
    lines = [event for event in logs if event["event"] == "mcp_server_stderr"]
    assert any("probe ready" in event["line"] for event in lines)
    assert all(event["server"] == "probe" for event in lines)
    assert "GIVEN" not in repr(probe(env={"GIVEN": "yes"}))


async def test_allowed_and_denied_tools(probe: ProbeConfig) -> None:
    config = probe(allowed_tools=["e*", "add", "slow*"], denied_tools=["slow_write"])
    async with MCPClient([config]) as client:
        names = sorted(tool.name for tool in await client.list_tools())
        assert names == ["add", "echo", "env", "slow"]
        with pytest.raises(MCPToolNotAllowedError, match=r"probe\.slow_write is not allowed"):
            await client.call_tool("probe", "slow_write", {"seconds": 0, "tag": "x"})
        with pytest.raises(MCPToolNotAllowedError):
            await client.call_tool("probe", "pid")
        assert client.status()["probe"].tool_count == 4


# -- the reference servers from PyPI --------------------------------------------------------------


async def test_reference_time_and_git_servers(
    time_server_command: list[str], git_server_command: list[str], mcp_protocol: str
) -> None:
    servers = [
        MCPServerConfig.stdio("time", *time_server_command, protocol=mcp_protocol),
        MCPServerConfig.stdio("git", *git_server_command, protocol=mcp_protocol),
    ]
    async with MCPClient(servers) as client:
        names = {tool.qualified_name for tool in await client.list_tools()}
        assert {"time__get_current_time", "git__git_log", "git__git_status"} <= names
        now = await client.call_tool("time", "get_current_time", {"timezone": "Asia/Tokyo"})
        assert not now.is_error
        assert "Asia/Tokyo" in now.text
        repo = git_server_command[-1]
        log = await client.call_tool("git", "git_log", {"repo_path": repo, "max_count": 5})
        assert not log.is_error
        assert log.text.count("Commit:") == 5 or log.text.count("commit") >= 5


async def test_a_server_that_never_answers_times_out_on_connect() -> None:
    mute = MCPServerConfig.stdio(
        "mute", sys.executable, "-c", "import time; time.sleep(60)", connect_timeout_s=1
    )
    started = time.monotonic()
    with pytest.raises(MCPTimeoutError, match=r"'mute'.*did not connect within 1 s"):
        async with MCPClient([mute]):
            pass
    assert time.monotonic() - started < 8


async def test_health_checks_notice_a_dead_server_before_any_call(probe: ProbeConfig) -> None:
    async with MCPClient([probe(health_check_interval_s=0.2)]) as client:
        os.kill(await _pid(client), signal.SIGKILL)
        deadline = time.monotonic() + 15
        while client.status()["probe"].generation < 2:
            assert time.monotonic() < deadline, client.status()
            await asyncio.sleep(0.05)
        assert (await client.call_tool("probe", "echo", {"text": "healthy"})).text == "healthy"


async def test_http_headers_reach_the_server_and_stay_out_of_logs_and_errors(
    probe_http_url: str, mcp_protocol: str
) -> None:
    secret = "Bearer sk-test-0123456789"  # noqa: S105 - a test token
    config = MCPServerConfig.http(
        "web", probe_http_url, headers={"Authorization": secret}, protocol=mcp_protocol
    )
    with structlog.testing.capture_logs() as logs:
        async with MCPClient([config]) as client:
            sent = await client.call_tool("web", "header", {"name": "Authorization"})
            assert sent.value() == secret
            with pytest.raises(MCPTimeoutError) as raised:
                await client.call_tool("web", "slow", {"seconds": 5}, timeout_s=0.3)
            shown = [repr(client), repr(client.status()), str(raised.value), repr(config)]
    assert all("sk-test" not in text for text in shown + [repr(event) for event in logs])
