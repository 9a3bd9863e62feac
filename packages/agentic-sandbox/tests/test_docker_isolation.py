"""Attacks on DockerSandbox: each must fail inside the container and leave the host intact.

The same list as ProcessSandbox's (test_isolation.py), plus the out-of-memory kill, against a real
engine: each runs on Podman's Docker API and on Docker Engine (``container_engine``). The
``docker_sandbox`` fixture also checks that no container is left after each test.
"""

from __future__ import annotations

import ast
import os
import tempfile
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from agentic_sandbox import DockerSandbox, SandboxError
from tests.fixtures.engines import ContainerEngine, bytes_on_disk
from tests.fixtures.sandbox_attacks import (
    DAEMONIZE,
    ENVIRONMENT_AND_LEAKS,
    FILL_A_TMPFS_OF_ITS_OWN,
    FORK_UNTIL_REFUSED,
    PEEK_AT_OTHER_PROCESSES,
    PRIVILEGES,
    PROCESS_IDS,
    RUNAWAY_TREE,
    SECRET,
    WAIT_FOR_A_LINE,
    connect_code,
    fill_disk_code,
    host_can_still_fork,
    read_each_code,
    unix_connect_code,
    write_each_code,
)

QUOTA_MB = 16

# -- resource exhaustion ------------------------------------------------------------------------


async def test_a_fork_bomb_is_bounded_and_leaves_no_process(
    docker_sandbox: DockerSandbox,
    marker_env: dict[str, str],
    leftover_processes: Callable[[], list[int]],
) -> None:
    result = await docker_sandbox.execute(FORK_UNTIL_REFUSED, env=marker_env)
    children, error = result.stdout.split()
    assert error == "BlockingIOError"  # EAGAIN from the pids cgroup
    assert int(children) < docker_sandbox.pids_limit
    assert leftover_processes() == []
    assert host_can_still_fork()


async def test_a_shell_fork_bomb_is_stopped_by_the_timeout(
    shell_docker_sandbox: DockerSandbox,
    marker_env: dict[str, str],
    leftover_processes: Callable[[], list[int]],
) -> None:
    # (A builtin loop, not `sleep`: a full pids cgroup could refuse the sleep its fork.)
    result = await shell_docker_sandbox.execute(
        "b() { b | b & }; b; while :; do :; done", language="sh", env=marker_env, timeout_s=2
    )
    assert result.timed_out
    assert leftover_processes() == []
    assert host_can_still_fork()


async def test_a_memory_hog_is_killed_as_out_of_memory(docker_sandbox: DockerSandbox) -> None:
    code = "chunks = []\nwhile True:\n    chunks.append(bytearray(16 * 1024 * 1024))"
    result = await docker_sandbox.execute(code)
    assert result.exit_code == 137
    assert "out of memory" in result.stderr
    assert not result.timed_out


async def test_an_infinite_loop_times_out_and_its_container_is_removed(
    docker_sandbox: DockerSandbox,
    container_engine: ContainerEngine,
    marker_env: dict[str, str],
    leftover_processes: Callable[[], list[int]],
) -> None:
    code = RUNAWAY_TREE
    result = await docker_sandbox.execute(code, env=marker_env, timeout_s=1)
    assert result.timed_out
    assert result.exit_code == 137
    assert result.duration_s < 5
    assert "out of memory" not in result.stderr
    assert container_engine.sandbox_containers() == []
    assert leftover_processes() == []


async def test_a_hundred_megabytes_of_output_are_cut(docker_sandbox: DockerSandbox) -> None:
    code = "import sys\nfor _ in range(100):\n    sys.stdout.write('x' * 1_000_000)\n"
    result = await docker_sandbox.execute(code, timeout_s=30)
    assert result.truncated
    assert not result.timed_out  # killed at the limit, not at the deadline
    assert len(result.stdout) == docker_sandbox.max_output_bytes
    assert result.exit_code == 137


async def test_endless_stderr_from_shell_is_cut(shell_docker_sandbox: DockerSandbox) -> None:
    result = await shell_docker_sandbox.execute("yes error >&2", language="sh", timeout_s=30)
    assert result.truncated
    assert not result.timed_out
    assert len(result.stderr) == shell_docker_sandbox.max_output_bytes


async def test_a_huge_file_is_stopped_at_the_file_size_limit(
    container_engine: ContainerEngine,
) -> None:
    async with DockerSandbox(
        container_engine.shell_image, base_url=container_engine.base_url, max_file_mb=1
    ) as box:
        result = await box.execute("head -c 5000000 /dev/zero > big.bin; echo $?", language="sh")
    assert result.stdout.strip() != "0"  # SIGXFSZ killed head


@pytest.fixture
async def small_disk_sandbox(container_engine: ContainerEngine) -> AsyncIterator[DockerSandbox]:
    """A DockerSandbox with a 16 MiB disk and 4 MiB files."""
    async with DockerSandbox(
        container_engine.python_image,
        base_url=container_engine.base_url,
        timeout_s=10,
        memory_mb=256,
        max_disk_mb=QUOTA_MB,
        max_file_mb=4,
    ) as box:
        yield box
    assert container_engine.sandbox_containers() == []


async def test_many_files_past_max_disk_mb_get_enospc_and_the_result_names_the_quota(
    small_disk_sandbox: DockerSandbox,
) -> None:
    result = await small_disk_sandbox.execute(
        fill_disk_code("many") + "open('more.txt', 'w').write('x' * 8192)\n"
    )
    written, error = result.stdout.split()
    assert error == "ENOSPC", result.stderr
    assert 8 <= int(written) < QUOTA_MB
    assert result.stderr.endswith(
        "[agentic-sandbox] no space left: the run's disk (the work directory) is full at "
        f"max_disk_mb={QUOTA_MB}\n"
    )


async def test_the_engine_disk_never_holds_what_the_program_writes(
    small_disk_sandbox: DockerSandbox, container_engine: ContainerEngine
) -> None:
    before = bytes_on_disk(container_engine.state_dir)
    async with small_disk_sandbox.start(fill_disk_code("many", then_wait=True)) as program:
        line = await program.readline(limit=64)
        assert line.split()[1] == b"ENOSPC", line
        grown = bytes_on_disk(container_engine.state_dir) - before
        await program.write(b"done\n")
        result = await program.wait()
    assert result.exit_code == 0
    assert grown < 4 * 1024 * 1024, grown  # the engine's own bookkeeping, not the 15 MiB


async def test_artifacts_written_before_a_timeout_come_back(
    small_disk_sandbox: DockerSandbox,
) -> None:
    # The timed-out container is frozen, not removed, until its disk has been read.
    code = "import time\nopen('out/partial.txt', 'w').write('so far')\ntime.sleep(60)"
    result = await small_disk_sandbox.execute(code, timeout_s=1)
    assert result.timed_out
    assert result.exit_code == 137
    assert [(a.path, a.content) for a in result.artifacts] == [("partial.txt", b"so far")]


async def test_input_files_larger_than_the_quota_are_refused(
    small_disk_sandbox: DockerSandbox,
) -> None:
    with pytest.raises(SandboxError, match=f"more than max_disk_mb={QUOTA_MB}"):
        await small_disk_sandbox.execute("pass", files={"big.bin": b"\0" * (QUOTA_MB + 1) * 2**20})


# -- network --------------------------------------------------------------------------------------


async def test_no_network_cannot_reach_a_server_on_the_host(
    docker_sandbox: DockerSandbox, tcp_server: int
) -> None:
    result = await docker_sandbox.execute(connect_code(tcp_server))
    assert result.exit_code == 1
    assert "pong" not in result.stdout
    assert "Error" in result.stderr  # ConnectionRefusedError / Network is unreachable


async def test_no_network_cannot_reach_a_container_that_network_true_reaches(
    container_engine: ContainerEngine, docker_sandbox: DockerSandbox, bridge_server: tuple[str, int]
) -> None:
    address, port = bridge_server
    connected = DockerSandbox(
        container_engine.python_image,
        base_url=container_engine.base_url,
        network=True,
        timeout_s=10,
    )
    async with connected:
        reached = await connected.execute(connect_code(port, address))
    assert (reached.exit_code, reached.stdout, reached.stderr) == (0, "pong\n", "")

    refused = await docker_sandbox.execute(connect_code(port, address))
    assert refused.exit_code == 1
    assert "pong" not in refused.stdout
    assert "OSError" in refused.stderr  # Network is unreachable
    assert container_engine.sandbox_containers() == []


async def test_network_true_has_an_interface_on_the_engine_bridge(
    container_engine: ContainerEngine,
) -> None:
    async with DockerSandbox(
        container_engine.shell_image, base_url=container_engine.base_url, network=True
    ) as box:
        result = await box.execute("ls /sys/class/net; ip route", language="sh")
    assert result.stdout.split()[:2] == ["eth0", "lo"]
    assert "default via" in result.stdout


def test_the_engine_network_is_not_the_host_network(container_engine: ContainerEngine) -> None:
    # The bridge and netavark's firewall rules live in the engine's own network namespace.
    ours = str(Path("/proc/self/ns/net").readlink())
    assert container_engine.network_namespace() not in (None, ours)


async def test_no_network_has_only_a_loopback_interface(
    shell_docker_sandbox: DockerSandbox,
) -> None:
    result = await shell_docker_sandbox.execute("ls /sys/class/net", language="sh")
    assert result.stdout.split() == ["lo"]


async def test_a_world_writable_unix_socket_on_the_host_is_unreachable(
    docker_sandbox: DockerSandbox, host_unix_socket: Path
) -> None:
    result = await docker_sandbox.execute(unix_connect_code(str(host_unix_socket)))
    assert result.stdout == "FileNotFoundError\n", result.stderr


async def test_an_abstract_unix_socket_on_the_host_is_unreachable(
    docker_sandbox: DockerSandbox, host_abstract_socket: str
) -> None:
    result = await docker_sandbox.execute(unix_connect_code(host_abstract_socket))
    assert result.stdout == "ConnectionRefusedError\n", result.stderr


# -- file system ----------------------------------------------------------------------------------


async def test_host_files_cannot_be_read(docker_sandbox: DockerSandbox, outside_dir: Path) -> None:
    secret = outside_dir / "secret.txt"
    code = read_each_code([str(secret), __file__, "/etc/shadow", "/root/.bashrc"])
    result = await docker_sandbox.execute(code)
    assert "TOP-SECRET" not in result.stdout
    assert f"{secret} FileNotFoundError" in result.stdout
    assert f"{__file__} FileNotFoundError" in result.stdout
    assert "/etc/shadow PermissionError" in result.stdout  # the image's, unreadable to uid 65534


async def test_writes_outside_the_work_dir_do_not_reach_the_host(
    docker_sandbox: DockerSandbox, outside_dir: Path
) -> None:
    targets = [outside_dir / "pwned", Path("/usr/pwned"), Path("/etc/pwned"), Path("/pwned")]
    host_tmp = Path(tempfile.gettempdir()) / f"pwned-{os.getpid()}"
    code = write_each_code([str(t) for t in [*targets, host_tmp]])
    result = await docker_sandbox.execute(code)
    for target in targets:
        assert f"{target} written" not in result.stdout
        assert not target.exists()
    assert f"{host_tmp} written" in result.stdout  # the container's own /tmp (a tmpfs)...
    assert not host_tmp.exists()  # ...not the host's
    assert sorted(p.name for p in outside_dir.iterdir()) == ["secret.txt"]


async def test_a_tmpfs_of_its_own_counts_against_the_memory_limit(
    container_engine: ContainerEngine,
) -> None:
    # Podman's default seccomp profile lets the program make user namespaces (Docker's does
    # not): root in one, it mounts a tmpfs, whose pages the container's memory cgroup counts.
    async with DockerSandbox(
        container_engine.shell_image,
        base_url=container_engine.base_url,
        memory_mb=128,
        max_file_mb=64,
        timeout_s=20,
    ) as box:
        result = await box.execute(FILL_A_TMPFS_OF_ITS_OWN, language="sh")
    written = [int(word) for word in result.stdout.split() if word.isdigit()]
    assert max(written, default=0) <= 3, result  # at most 150 MB of 50 MB files in 128 MiB


async def test_the_program_runs_unprivileged(docker_sandbox: DockerSandbox) -> None:
    code = PRIVILEGES
    result = await docker_sandbox.execute(code)
    lines = result.stdout.splitlines()
    capabilities = {
        line.split()[0]: int(line.split()[1], 16) for line in lines if line.startswith("Cap")
    }
    assert lines[0] == "uid 65534"
    assert capabilities["CapEff:"] == capabilities["CapPrm:"] == capabilities["CapBnd:"] == 0
    assert "NoNewPrivs:\t1" in lines


# -- environment and processes --------------------------------------------------------------------


async def test_the_parents_secrets_are_not_visible(
    docker_sandbox: DockerSandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    code = ENVIRONMENT_AND_LEAKS
    result = await docker_sandbox.execute(code, env={"MINE": "1"})
    assert "sk-test" not in result.stdout
    assert "LEAK" not in result.stdout
    assert "OPENAI_API_KEY" not in result.stdout
    assert "'MINE'" in result.stdout.splitlines()[0]


async def test_the_host_processes_are_invisible(docker_sandbox: DockerSandbox) -> None:
    result = await docker_sandbox.execute(PROCESS_IDS)
    pids = ast.literal_eval(result.stdout)
    assert len(pids) == 2  # a fresh PID namespace: its first process (which waits), the program
    assert "1" in pids


async def test_a_run_can_neither_see_nor_trace_nor_kill_another_run(
    docker_sandbox: DockerSandbox,
) -> None:
    # Both run as uid 65534: only their PID namespaces keep them apart.
    async with docker_sandbox.start(WAIT_FOR_A_LINE, env={"BAIT": "agentic-secret"}) as victim:
        assert await victim.readline(limit=64) == b"up\n"
        attack = await docker_sandbox.execute(PEEK_AT_OTHER_PROCESSES)
        assert attack.stdout == "found [] attached []\n", attack.stderr
        await victim.write(b"still here?\n")
        result = await victim.wait()
    assert (result.exit_code, result.timed_out) == (0, False)


async def test_a_daemonized_child_does_not_survive(
    docker_sandbox: DockerSandbox,
    marker_env: dict[str, str],
    leftover_processes: Callable[[], list[int]],
) -> None:
    result = await docker_sandbox.execute(DAEMONIZE, env=marker_env)
    assert result.stdout == "up\n", result.stderr
    assert leftover_processes() == []
