"""MCP Code Mode in the real sandboxes: ProcessSandbox (bubblewrap, and its ``unshare`` jail) and
DockerSandbox (on Podman and Docker Engine), with a real MCP server on the host.

Each test runs once per sandbox (``process``, ``unshare``, ``podman``, ``docker``). Skips with
the reason where a sandbox cannot run here; fails instead under ``AGENTIC_REQUIRE_SERVICES=1``
(CI).
"""

from __future__ import annotations

import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from agentic_core import InteractiveSandbox, WorkflowBuilder
from agentic_mcp import (
    CodeMode,
    CodeModeExecutor,
    CodeModeResult,
    MCPClient,
    MCPServerConfig,
)
from agentic_sandbox import DockerSandbox, ProcessSandbox
from tests.fixtures.system_tools import require_ready_sandbox, require_tools

pytestmark = pytest.mark.slow

PROBE = Path(__file__).parent.parent / "packages/agentic-mcp/tests/servers/probe_server.py"


@pytest.fixture(params=["process", "unshare", "podman", "docker"])
async def sandbox(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[InteractiveSandbox]:
    """A real sandbox, network off, small limits."""
    if request.param in ("process", "unshare"):
        use_bwrap = request.param == "process"
        if use_bwrap:
            require_tools("bwrap")
        box: InteractiveSandbox = ProcessSandbox(
            workdir=tmp_path, timeout_s=20, memory_mb=256, use_bwrap=use_bwrap
        )
    else:
        engine: Any = request.getfixturevalue(
            "podman_engine" if request.param == "podman" else "dockerd_engine"
        )
        box = DockerSandbox(
            engine.python_image, base_url=engine.base_url, timeout_s=20, memory_mb=256
        )
    async with box:
        await require_ready_sandbox(box)
        yield box


@pytest.fixture
async def client(tmp_path: Path) -> AsyncIterator[MCPClient]:
    effects = tmp_path / "effects.txt"
    config = MCPServerConfig.stdio(
        "probe",
        sys.executable,
        str(PROBE),
        "stdio",
        env={"PROBE_SIDE_EFFECTS": str(effects), "PROBE_TOKEN": "host-only-secret"},
        stderr="devnull",
    )
    async with MCPClient([config]) as mcp:
        yield mcp


def effects(tmp_path: Path) -> list[str]:
    path = tmp_path / "effects.txt"
    return path.read_text().split() if path.exists() else []


async def test_stub_calls_return_values_and_prints_come_back(
    client: MCPClient, sandbox: InteractiveSandbox
) -> None:
    mode = CodeMode(client, sandbox)
    code = (
        "import mcp\n"
        "total = mcp.probe.add(a=2, b=3)\n"
        "stats = mcp.probe.stats(values=[1.0, 2.0, 6.0])\n"
        "big = mcp.probe.big(n_bytes=5_000_000)\n"
        "print('sum', total, 'mean', stats['mean'], 'big', len(big))\n"
        "print(mcp.probe.choose(color='red'))\n"
    )
    result = await mode.execute(code)
    assert result.ok, result
    assert "sum 5 mean 3.0 big 5000000" in result.stdout
    assert [(c.tool, c.is_error) for c in result.tool_calls] == [
        ("add", False),
        ("stats", False),
        ("big", False),
        ("choose", False),
    ]
    assert result.tool_calls[2].result_bytes > 5_000_000
    assert len(result.stdout) < 200  # the 5 MB stayed in the sandbox


async def test_denied_and_unapproved_tools_are_refused(
    client: MCPClient, sandbox: InteractiveSandbox, tmp_path: Path
) -> None:
    asked: list[str] = []

    def approve(server: str, tool: str, arguments: dict[str, Any]) -> bool:
        asked.append(tool)
        return tool != "save_note"

    mode = CodeMode(client, sandbox, deny=["probe.side_effect", "probe.slow*"], approval=approve)
    assert "side_effect" not in mode.api_listing()
    assert "mcp.probe.add(" in mode.api_listing()
    code = (
        "import mcp\n"
        "for call in (lambda: mcp.call_tool('probe', 'side_effect', {'tag': 'x'}),\n"
        "             lambda: mcp.probe.save_note(title='t', body='b')):\n"
        "    try:\n"
        "        call()\n"
        "    except mcp.ToolError as error:\n"
        "        print('refused:', error.kind)\n"
        "print(mcp.probe.echo(text='allowed'))\n"
    )
    result = await mode.execute(code)
    assert result.ok, result
    assert result.stdout.splitlines() == ["refused: NotAllowed", "refused: NotAllowed", "allowed"]
    assert asked == ["save_note", "echo"]
    assert effects(tmp_path) == []


async def test_the_call_budget_is_enforced(client: MCPClient, sandbox: InteractiveSandbox) -> None:
    mode = CodeMode(client, sandbox, max_tool_calls=3)
    code = (
        "import mcp\n"
        "done = 0\n"
        "try:\n"
        "    for i in range(10):\n"
        "        mcp.probe.add(a=i, b=0)\n"
        "        done += 1\n"
        "except mcp.ToolError as error:\n"
        "    print(done, error.kind)\n"
    )
    result = await mode.execute(code)
    assert result.stdout.strip() == "3 Budget"
    assert len(result.tool_calls) == 4
    assert result.tool_calls[-1].error is not None
    assert result.tool_calls[-1].error.startswith("Budget")


async def test_runaway_code_is_killed(client: MCPClient, sandbox: InteractiveSandbox) -> None:
    mode = CodeMode(client, sandbox, timeout_s=2)
    started = time.monotonic()
    result = await mode.execute(
        "import mcp\nprint(mcp.probe.add(a=1, b=1), flush=True)\nwhile True:\n    pass\n"
    )
    assert result.timed_out
    assert not result.ok
    assert time.monotonic() - started < 15
    assert "2" in result.stdout
    assert "timeout" in (result.error or "")


async def test_garbage_on_fd1_and_stdin_reads_do_not_touch_the_channel(
    client: MCPClient, sandbox: InteractiveSandbox
) -> None:
    mode = CodeMode(client, sandbox)
    code = (
        "import os, subprocess, sys\n"
        "import mcp\n"
        'os.write(1, b\'garbage not json\\n{"t": "done"\')\n'
        "subprocess.run([sys.executable, '-c', 'print(\"child garbage\")'])\n"
        "print('stdin:', repr(sys.stdin.read()), repr(os.read(0, 10)))\n"
        "print(mcp.probe.echo(text='channel intact'))\n"
    )
    result = await mode.execute(code)
    assert result.ok, result
    assert "channel intact" in result.stdout
    assert "stdin: '' b''" in result.stdout
    assert "garbage not json" in result.stderr
    assert "child garbage" in result.stderr


async def test_forged_frames_are_rejected(
    client: MCPClient, sandbox: InteractiveSandbox, tmp_path: Path
) -> None:
    mode = CodeMode(client, sandbox, deny=["probe.side_effect"])
    forge_call = (
        "import json, os\n"
        "frame = json.dumps({'t': 'call', 'id': 99, 'server': 'probe', 'tool': 'side_effect',\n"
        "                    'args': {'tag': 'forged'}}).encode() + b'\\n'\n"
        "for fd in range(3, 30):\n"
        "    try:\n"
        "        os.write(fd, frame)\n"
        "    except OSError:\n"
        "        pass\n"
        "print('sent')\n"
    )
    result = await mode.execute(forge_call)
    assert effects(tmp_path) == []
    assert [c.error.split(":")[0] for c in result.tool_calls if c.error] == ["NotAllowed"]
    forge_garbage = (
        "import os, time\n"
        "for fd in range(3, 30):\n"
        "    try:\n"
        "        os.write(fd, b'{not a frame}\\n')\n"
        "    except OSError:\n"
        "        pass\n"
        "time.sleep(30)\n"
    )
    started = time.monotonic()
    result = await mode.execute(forge_garbage)
    assert time.monotonic() - started < 15
    assert not result.ok
    assert "broke the tool channel" in (result.error or "")


async def test_tool_errors_tracebacks_and_local_type_errors(
    client: MCPClient, sandbox: InteractiveSandbox
) -> None:
    mode = CodeMode(client, sandbox)
    caught = await mode.execute(
        "import mcp\ntry:\n    mcp.probe.fail(message='disk full')\n"
        "except mcp.ToolError as e:\n    print('caught', e.kind, 'disk full' in str(e))\n"
    )
    assert caught.stdout.strip() == "caught ToolError True"
    uncaught = await mode.execute("import mcp\n\nmcp.probe.fail(message='boom')\n")
    assert uncaught.exit_code != 0
    assert "ToolError" in (uncaught.error or "")
    assert "line 3" in (uncaught.error or "")
    missing = await mode.execute("import mcp\nmcp.probe.add(a=1)\n")
    assert "TypeError" in (missing.error or "")
    assert missing.tool_calls == []
    invalid = await mode.execute(
        "import mcp\ntry:\n    mcp.probe.add(a='one', b=2)\n"
        "except mcp.ToolError as e:\n    print(e.kind)\n"
    )
    assert invalid.stdout.strip() == "Invalid"
    assert invalid.tool_calls[0].error is not None


async def test_host_secrets_and_the_network_stay_outside(
    client: MCPClient, sandbox: InteractiveSandbox
) -> None:
    mode = CodeMode(client, sandbox)
    code = (
        "import os, socket\n"
        "print('token' , os.environ.get('PROBE_TOKEN'))\n"
        "try:\n"
        "    socket.create_connection(('1.1.1.1', 80), timeout=2)\n"
        "    print('network on')\n"
        "except OSError:\n"
        "    print('network off')\n"
    )
    result = await mode.execute(code)
    assert result.stdout.split() == ["token", "None", "network", "off"]


async def test_code_reaches_neither_host_sockets_nor_the_server_nor_tools_added_mid_run(
    client: MCPClient, sandbox: InteractiveSandbox, host_unix_socket: Path, tmp_path: Path
) -> None:
    # The way around the tool channel: a host socket (an MCP server listening on one), the
    # MCP server's process (its environment holds PROBE_TOKEN), or a tool the server adds
    # while the run goes on (not in this run's listing, so never allowed).
    mode = CodeMode(client, sandbox, deny=["probe.side_effect"])
    code = (
        "import glob, socket\n"
        "import mcp\n"
        "client = socket.socket(socket.AF_UNIX)\n"
        "try:\n"
        f"    client.connect({str(host_unix_socket)!r})\n"
        "    print('socket reached', client.recv(4))\n"
        "except OSError as exc:\n"
        "    print('socket', type(exc).__name__)\n"
        "seen = []\n"
        "for path in glob.glob('/proc/[0-9]*/environ'):\n"
        "    try:\n"
        "        if b'host-only-secret' in open(path, 'rb').read():\n"
        "            seen.append(path)\n"
        "    except OSError:\n"
        "        pass\n"
        "print('server seen', seen)\n"
        "print(mcp.probe.grow(name='fresh_tool'))\n"
        "for tool in ('fresh_tool', 'side_effect'):\n"
        "    try:\n"
        "        mcp.call_tool('probe', tool, {'tag': 'sneaked'})\n"
        "        print(tool, 'called')\n"
        "    except mcp.ToolError as error:\n"
        "        print(tool, error.kind)\n"
    )
    result = await mode.execute(code)
    assert result.ok, result
    assert result.stdout.splitlines() == [
        "socket FileNotFoundError",
        "server seen []",
        "added fresh_tool",
        "fresh_tool NotAllowed",
        "side_effect NotAllowed",
    ]
    assert effects(tmp_path) == []


async def test_as_tool_and_the_executor(client: MCPClient, sandbox: InteractiveSandbox) -> None:
    mode = CodeMode(client, sandbox, max_output_chars=300)
    tool = mode.as_tool()
    assert tool.name == "execute_python"
    assert "mcp.probe.add(*, a: int, b: int) -> int" in tool.description
    assert tool.parameters["required"] == ["code"]
    text = await tool.invoke(
        {"code": "import mcp\nprint(mcp.probe.add(a=40, b=2))\nprint('x' * 5000)"}
    )
    assert text.startswith("42\n")
    assert "characters of output cut" in text
    assert len(text) < 500
    node = CodeModeExecutor(mode, output_result=True)
    workflow = WorkflowBuilder().set_start_executor(node).build()
    run = await workflow.run("import mcp\nprint(mcp.probe.echo(text='from a graph'))")
    [output] = run.get_outputs()
    assert isinstance(output, CodeModeResult)
    assert output.stdout.strip() == "from a graph"


async def test_result_size_and_per_call_time_limits(
    client: MCPClient, sandbox: InteractiveSandbox
) -> None:
    mode = CodeMode(client, sandbox, max_result_bytes=100_000, call_timeout_s=0.5, detail="names")
    assert "mcp.probe.big\n" in mode.api_listing() + "\n"
    assert "Call help(" in mode.describe()
    code = (
        "import mcp\n"
        "for call in (lambda: mcp.probe.big(n_bytes=200_000),\n"
        "             lambda: mcp.probe.slow(seconds=5)):\n"
        "    try:\n"
        "        call()\n"
        "    except mcp.ToolError as error:\n"
        "        print(error.kind)\n"
        "print(len(mcp.probe.big(n_bytes=50_000)))\n"
        "help(mcp.probe.choose)\n"
    )
    result = await mode.execute(code)
    assert result.ok, result
    lines = result.stdout.splitlines()
    assert lines[:3] == ["TooLarge", "Timeout", "50000"]
    assert "color: Literal['red', 'green']" in result.stdout
    assert [record.error is not None for record in result.tool_calls] == [True, True, False]
