"""Attacks on ProcessSandbox: each must fail inside the jail and leave the host intact.

The ``sandbox`` fixture requires bubblewrap (skipped without it, failed in CI); the
``unshare_sandbox`` one checks what the fallback jail still promises, and ``jailed_sandbox``
runs a test in each of the two jails.
"""

from __future__ import annotations

import asyncio
import os
import re
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

from agentic_sandbox import ProcessSandbox
from tests.fixtures.sandbox_attacks import (
    DAEMONIZE,
    ENVIRONMENT_AND_LEAKS,
    FORK_UNTIL_REFUSED,
    NEW_USER_NAMESPACE,
    PEEK_AT_OTHER_PROCESSES,
    PRIVILEGES,
    PROCESS_IDS,
    RUNAWAY_TREE,
    SECRET,
    WAIT_FOR_A_LINE,
    connect_code,
    host_can_still_fork,
    read_each_code,
    unix_connect_code,
    write_each_code,
)
from tests.fixtures.system_tools import require_ready_sandbox, require_tools

# -- resource exhaustion ------------------------------------------------------------------------


async def test_a_fork_bomb_is_bounded_and_leaves_no_process(
    sandbox: ProcessSandbox,
    marker_env: dict[str, str],
    leftover_processes: Callable[[], list[int]],
) -> None:
    result = await sandbox.execute(FORK_UNTIL_REFUSED, env=marker_env)
    children, error = result.stdout.split()
    assert error == "BlockingIOError"  # EAGAIN from RLIMIT_NPROC
    assert int(children) < sandbox.max_processes
    assert leftover_processes() == []
    assert host_can_still_fork()


async def test_a_shell_fork_bomb_is_stopped_by_the_timeout(
    sandbox: ProcessSandbox,
    marker_env: dict[str, str],
    leftover_processes: Callable[[], list[int]],
) -> None:
    result = await sandbox.execute("b() { b | b & }; b", language="sh", env=marker_env, timeout_s=1)
    assert result.timed_out or result.exit_code == 0
    assert leftover_processes() == []
    assert host_can_still_fork()


async def test_a_memory_hog_gets_memory_error(sandbox: ProcessSandbox) -> None:
    code = "chunks = []\nwhile True:\n    chunks.append(bytearray(16 * 1024 * 1024))"
    result = await sandbox.execute(code)
    assert result.exit_code == 1
    assert "MemoryError" in result.stderr
    assert not result.timed_out


@pytest.mark.parametrize(
    "code",
    [
        "const chunks = [];\nwhile (true) chunks.push(Buffer.alloc(16 * 1024 * 1024, 1));",
        "const chunks = [];\nwhile (true) chunks.push(new Array(1e6).fill(1.5));",
    ],
    ids=["buffers", "heap"],
)
async def test_a_node_memory_hog_is_stopped(node_24_on_path: Path, code: str) -> None:
    # Node gets a looser data limit than memory_mb (V8's code range); the hog must still stop.
    require_tools("bwrap")
    async with ProcessSandbox(timeout_s=20, memory_mb=256, use_bwrap=True) as box:
        result = await box.execute(code, language="js")
    assert result.exit_code != 0
    assert not result.timed_out
    assert re.search(r"out of memory|RangeError|bad_alloc|heap limit", result.stderr, re.I), (
        result.stderr[-500:]
    )


async def test_a_single_huge_allocation_fails(sandbox: ProcessSandbox) -> None:
    result = await sandbox.execute("x = bytearray(4 * 1024 ** 3)")
    assert "MemoryError" in result.stderr


async def test_an_infinite_loop_is_killed_with_its_whole_tree(
    sandbox: ProcessSandbox,
    marker_env: dict[str, str],
    leftover_processes: Callable[[], list[int]],
) -> None:
    code = RUNAWAY_TREE
    result = await sandbox.execute(code, env=marker_env, timeout_s=1)
    assert result.timed_out
    assert result.exit_code == 137
    assert result.duration_s < 5
    assert leftover_processes() == []


async def test_cpu_seconds_are_limited(tmp_path: Path) -> None:
    async with ProcessSandbox(workdir=tmp_path, cpu_s=1, timeout_s=20) as box:
        await require_ready_sandbox(box)
        result = await box.execute("while True:\n    pass")
    assert not result.timed_out
    assert result.exit_code in (128 + 9, 128 + 24)  # SIGKILL or SIGXCPU


async def test_a_hundred_megabytes_of_output_are_cut_at_once(sandbox: ProcessSandbox) -> None:
    code = "import sys\nfor _ in range(100):\n    sys.stdout.write('x' * 1_000_000)\n"
    result = await sandbox.execute(code, timeout_s=30)
    assert result.truncated
    assert not result.timed_out  # killed at the limit, not at the deadline
    assert len(result.stdout) == sandbox.max_output_bytes
    assert result.exit_code == 137


async def test_endless_stderr_from_shell_is_cut(sandbox: ProcessSandbox) -> None:
    result = await sandbox.execute("yes error >&2", language="sh", timeout_s=30)
    assert result.truncated
    assert not result.timed_out
    assert len(result.stderr) == sandbox.max_output_bytes


async def test_a_huge_file_is_stopped_at_the_file_size_limit(tmp_path: Path) -> None:
    async with ProcessSandbox(workdir=tmp_path, max_file_mb=1) as box:
        await require_ready_sandbox(box)
        result = await box.execute("head -c 5000000 /dev/zero > big.bin; echo $?", language="sh")
    assert result.stdout.strip() != "0"  # SIGXFSZ killed head


async def test_open_files_are_limited(sandbox: ProcessSandbox) -> None:
    code = "import resource\nprint(resource.getrlimit(resource.RLIMIT_NOFILE))"
    result = await sandbox.execute(code)
    assert result.stdout == f"({sandbox.max_open_files}, {sandbox.max_open_files})\n"


# -- network --------------------------------------------------------------------------------------


async def test_no_network_cannot_reach_a_server_on_the_host(
    sandbox: ProcessSandbox, tcp_server: int
) -> None:
    result = await sandbox.execute(connect_code(tcp_server))
    assert result.exit_code == 1
    assert "pong" not in result.stdout
    assert "Error" in result.stderr  # ConnectionRefusedError / Network is unreachable


async def test_network_true_reaches_the_server(tmp_path: Path, tcp_server: int) -> None:
    require_tools("bwrap")
    async with ProcessSandbox(workdir=tmp_path, network=True, use_bwrap=True) as box:
        result = await box.execute(connect_code(tcp_server))
    assert result.stdout == "pong\n", result.stderr


async def test_unshare_fallback_also_cuts_the_network(
    unshare_sandbox: ProcessSandbox, tcp_server: int
) -> None:
    result = await unshare_sandbox.execute(connect_code(tcp_server))
    assert unshare_sandbox.isolation == "unshare"
    assert result.exit_code == 1
    assert "pong" not in result.stdout


async def test_a_world_writable_unix_socket_on_the_host_is_unreachable(
    jailed_sandbox: ProcessSandbox, host_unix_socket: Path
) -> None:
    result = await jailed_sandbox.execute(unix_connect_code(str(host_unix_socket)))
    assert "connected" not in result.stdout
    assert result.stdout == "FileNotFoundError\n", result.stderr  # no host /tmp in the jail


async def test_an_abstract_unix_socket_on_the_host_is_unreachable(
    jailed_sandbox: ProcessSandbox, host_abstract_socket: str
) -> None:
    # Abstract names belong to the network namespace: the jail's own has none of the host's.
    result = await jailed_sandbox.execute(unix_connect_code(host_abstract_socket))
    assert result.stdout == "ConnectionRefusedError\n", result.stderr


async def test_host_runtime_directories_are_not_in_the_jail(jailed_sandbox: ProcessSandbox) -> None:
    # (Not /root or /home: the interpreter may live there, and is bound at its own path.)
    paths = ["/run", "/var/run", "/var/tmp", "/var/lib", "/dev/shm", "/mnt", "/srv"]
    code = (
        "import os\n"
        f"for path in {paths!r}:\n"
        "    try:\n"
        "        print(path, os.listdir(path))\n"
        "    except OSError as exc:\n"
        "        print(path, type(exc).__name__)\n"
    )
    result = await jailed_sandbox.execute(code)
    seen = dict(line.split(" ", 1) for line in result.stdout.splitlines())
    assert set(seen) == set(paths), result.stderr
    for path, listing in seen.items():
        assert listing in ("FileNotFoundError", "[]"), (path, listing)


# -- file system ----------------------------------------------------------------------------------


async def test_files_outside_the_work_dir_cannot_be_read(
    sandbox: ProcessSandbox, outside_dir: Path
) -> None:
    secret = outside_dir / "secret.txt"
    code = read_each_code([str(secret), __file__, "/etc/shadow", "/root/.bashrc"])
    result = await sandbox.execute(code)
    assert "TOP-SECRET" not in result.stdout
    assert f"{secret} FileNotFoundError" in result.stdout
    assert f"{__file__} FileNotFoundError" in result.stdout
    assert "/etc/shadow FileNotFoundError" in result.stdout


async def test_writes_outside_the_work_dir_do_not_reach_the_host(
    sandbox: ProcessSandbox, outside_dir: Path
) -> None:
    targets = [outside_dir / "pwned", Path("/usr/pwned"), Path("/etc/pwned"), Path("/pwned")]
    host_tmp = Path(tempfile.gettempdir()) / f"pwned-{os.getpid()}"
    code = write_each_code([str(t) for t in [*targets, host_tmp]])
    result = await sandbox.execute(code)
    for target in targets:
        assert f"{target} written" not in result.stdout
        assert not target.exists()
    assert not host_tmp.exists()  # /tmp inside is a private tmpfs
    assert sorted(p.name for p in outside_dir.iterdir()) == ["secret.txt"]


async def test_the_interpreter_is_read_only(sandbox: ProcessSandbox) -> None:
    code = "import os, sys\nopen(os.path.join(sys.prefix, 'pwned'), 'w')"
    result = await sandbox.execute(code)
    assert result.exit_code == 1
    assert "Read-only file system" in result.stderr or "Permission denied" in result.stderr


async def test_no_user_namespace_can_be_made_in_the_jail(jailed_sandbox: ProcessSandbox) -> None:
    # Root of a user namespace of its own, the program could mount a tmpfs as big as it likes.
    result = await jailed_sandbox.execute(NEW_USER_NAMESPACE)
    assert result.stdout.splitlines() == [
        "unshare EPERM",
        "unshare -Urm refused",
        "threads work",
    ], result.stderr


async def test_the_program_runs_unprivileged(sandbox: ProcessSandbox) -> None:
    code = PRIVILEGES
    result = await sandbox.execute(code)
    lines = result.stdout.splitlines()
    capabilities = [line.split() for line in lines if line.startswith("Cap")]
    assert lines[0] == f"uid {65534 if os.geteuid() == 0 else os.getuid()}"
    assert len(capabilities) == 5
    assert all(int(value, 16) == 0 for _name, value in capabilities)
    if os.geteuid() == 0:
        assert "NoNewPrivs:\t1" in lines


# -- environment and processes --------------------------------------------------------------------


async def test_the_parents_secrets_are_not_visible(
    sandbox: ProcessSandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    code = ENVIRONMENT_AND_LEAKS
    result = await sandbox.execute(code, env={"MINE": "1"})
    assert "sk-test" not in result.stdout
    assert "LEAK" not in result.stdout
    assert result.stdout.splitlines()[0] == "['HOME', 'LANG', 'MINE', 'PATH']"


async def test_the_host_processes_are_invisible(sandbox: ProcessSandbox) -> None:
    result = await sandbox.execute(PROCESS_IDS)
    assert result.stdout == "['1', '2']\n"  # a fresh PID namespace: bwrap's init and the program


async def test_a_daemonized_child_does_not_survive(
    sandbox: ProcessSandbox,
    marker_env: dict[str, str],
    leftover_processes: Callable[[], list[int]],
) -> None:
    result = await sandbox.execute(DAEMONIZE, env=marker_env)
    assert result.stdout == "up\n", result.stderr
    assert leftover_processes() == []


async def test_a_run_can_neither_see_nor_trace_nor_kill_another_run(
    jailed_sandbox: ProcessSandbox,
) -> None:
    # Both run as the same uid (65534 as root): only the PID namespace keeps them apart.
    secret = {"BAIT": "agentic-secret"}
    async with jailed_sandbox.start(WAIT_FOR_A_LINE, env=secret) as victim:
        assert await victim.readline(limit=64) == b"up\n"
        attack = await jailed_sandbox.execute(PEEK_AT_OTHER_PROCESSES)
        assert attack.stdout == "found [] attached []\n", attack.stderr
        await victim.write(b"still here?\n")
        result = await victim.wait()
    assert (result.exit_code, result.timed_out) == (0, False)


_CALLER = """
import asyncio, sys
from agentic_sandbox import ProcessSandbox
PROGRAM = "import time\\nprint('up', flush=True)\\ntime.sleep(600)"
async def main():
    box = ProcessSandbox(workdir=sys.argv[1], use_bwrap=sys.argv[2] == 'bwrap', timeout_s=600)
    async with box.start(PROGRAM, env={sys.argv[3]: sys.argv[4]}) as program:
        await program.readline(limit=16)
        print('started', flush=True)
        await asyncio.sleep(600)
asyncio.run(main())
"""


@pytest.mark.parametrize("mode", ["bwrap", "unshare"])
async def test_the_run_dies_with_the_process_that_started_it(
    mode: str,
    tmp_path: Path,
    marker_env: dict[str, str],
    leftover_processes: Callable[[], list[int]],
) -> None:
    require_tools("bwrap" if mode == "bwrap" else "unshare")
    [(variable, marker)] = marker_env.items()
    caller = await asyncio.create_subprocess_exec(
        sys.executable, "-c", _CALLER, str(tmp_path), mode, variable, marker,
        stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    try:
        assert caller.stdout is not None
        async with asyncio.timeout(20):
            assert await caller.stdout.readline() == b"started\n"
        assert leftover_processes() != []
    finally:
        caller.kill()  # SIGKILL: no clean-up of its own
        await caller.wait()
    async with asyncio.timeout(5):
        while leftover_processes():  # noqa: ASYNC110 - polling /proc
            await asyncio.sleep(0.02)


async def test_a_daemonized_child_does_not_survive_the_unshare_fallback(
    unshare_sandbox: ProcessSandbox,
    marker_env: dict[str, str],
    leftover_processes: Callable[[], list[int]],
) -> None:
    result = await unshare_sandbox.execute(DAEMONIZE, env=marker_env)
    assert result.stdout == "up\n", result.stderr
    assert leftover_processes() == []


async def test_the_unshare_fallback_scrubs_the_environment(
    unshare_sandbox: ProcessSandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    result = await unshare_sandbox.execute("import os\nprint(sorted(os.environ))")
    assert result.stdout == "['HOME', 'LANG', 'PATH']\n"
