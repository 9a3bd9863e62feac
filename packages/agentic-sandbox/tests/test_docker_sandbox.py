"""DockerSandbox: its container settings, running programs on a real engine, its lifecycle.

Each engine test runs on Podman's Docker API and on Docker Engine (``container_engine``,
tests/fixtures/engines.py); without them these tests skip, unless ``AGENTIC_REQUIRE_SERVICES=1``.
The attacks are in ``test_docker_isolation.py``.
"""

from __future__ import annotations

import asyncio
import time

import pytest

from agentic_core import InteractiveSandbox, Sandbox, SandboxProcess
from agentic_sandbox import DockerSandbox, SandboxError, SandboxNotReadyError
from agentic_sandbox._docker_sandbox import (
    LABEL,
    VOLUME_DIR,
    WORK_DIR,
    ContainerSettings,
    container_settings,
)
from tests.fixtures.engines import ContainerEngine

SETTINGS = ContainerSettings(
    image="example:1",
    memory_mb=256,
    cpus=0.5,
    pids_limit=64,
    network=False,
    read_only=True,
    user="65534:65534",
    max_file_mb=8,
    max_disk_mb=32,
)


# -- settings (no engine) -------------------------------------------------------------------------


def test_docker_sandbox_implements_the_core_protocols() -> None:
    box = DockerSandbox("example:1")
    assert isinstance(box, Sandbox)
    assert isinstance(box, InteractiveSandbox)


def test_containers_are_isolated_by_default() -> None:
    config, host, program = container_settings(
        SETTINGS, language="python", env={}, interactive=False
    )
    assert config["entrypoint"][0] == "python3"  # the holder: it only waits
    assert program["cmd"] == ["python3", "-u", "main.py"]
    assert config["working_dir"] == program["workdir"] == WORK_DIR
    assert config["user"] == program["user"] == "65534:65534"
    assert config["labels"] == {LABEL: "1"}
    assert program["stdin"] is False
    assert host["network_mode"] == "none"
    assert host["mem_limit"] == host["memswap_limit"] == 256 * 1024 * 1024
    assert host["nano_cpus"] == 500_000_000
    assert host["pids_limit"] == 64
    assert host["read_only"] is True
    assert host["privileged"] is False
    assert host["cap_drop"] == ["ALL"]
    assert host["security_opt"] == ["no-new-privileges"]
    assert host["tmpfs"] == {"/tmp": "rw,nosuid,nodev,size=256m"}
    assert {u["Name"]: u["Hard"] for u in host["ulimits"]}["fsize"] == 8 * 1024 * 1024


def test_the_work_dir_is_a_sized_tmpfs_on_each_engine() -> None:
    _config, docker, _program = container_settings(
        SETTINGS, language="python", env={}, interactive=False
    )
    [volume] = docker["mounts"]
    assert (volume["Target"], volume["Type"]) == (VOLUME_DIR, "volume")
    options = volume["VolumeOptions"]["DriverConfig"]["Options"]
    assert (options["type"], options["device"]) == ("tmpfs", "tmpfs")
    assert options["o"].startswith("size=33554432,nr_inodes=32768,")
    podman = ContainerSettings(**{**SETTINGS.__dict__, "podman": True})
    _config, host, _program = container_settings(
        podman, language="python", env={}, interactive=False
    )
    assert host["mounts"] == []
    assert host["tmpfs"][VOLUME_DIR].startswith("rw,nosuid,nodev,size=33554432,")


def test_network_true_uses_the_engines_default_network() -> None:
    settings = ContainerSettings(**{**SETTINGS.__dict__, "network": True})
    _config, host, _program = container_settings(
        settings, language="shell", env={}, interactive=True
    )
    assert host["network_mode"] == "bridge"


def test_the_environment_is_only_what_the_caller_passes() -> None:
    _config, _host, program = container_settings(
        SETTINGS, language="python", env={"GIVEN": "1"}, interactive=False
    )
    assert program["environment"] == {"HOME": WORK_DIR, "LANG": "C.UTF-8", "GIVEN": "1"}


async def test_an_unknown_language_is_a_sandbox_error() -> None:
    async with DockerSandbox("example:1") as box:
        with pytest.raises(SandboxError, match="cobol"):
            await box.execute("DISPLAY 'HI'.", language="cobol")


async def test_typescript_is_not_offered() -> None:
    async with DockerSandbox("example:1") as box:
        with pytest.raises(SandboxError, match="not enabled in this DockerSandbox"):
            await box.execute("let x: number = 1", language="typescript")


def test_limits_must_be_positive() -> None:
    with pytest.raises(ValueError, match="pids_limit"):
        DockerSandbox("example:1", pids_limit=0)


async def test_a_missing_engine_names_base_url() -> None:
    async with DockerSandbox("example:1", base_url="unix:///nonexistent/docker.sock") as box:
        assert not await box.is_ready()
        with pytest.raises(SandboxNotReadyError, match=r"base_url='unix:///nonexistent"):
            await box.execute("print(1)")


async def test_a_missing_engine_names_docker_host(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    async with DockerSandbox("example:1") as box:
        with pytest.raises(SandboxNotReadyError, match="DOCKER_HOST"):
            await box.execute("print(1)")


# -- running programs -----------------------------------------------------------------------------


async def test_python_runs_with_files_in_and_artifacts_out(docker_sandbox: DockerSandbox) -> None:
    code = (
        "import os, pathlib\n"
        "print(os.getcwd(), pathlib.Path('data/in.txt').read_text())\n"
        "pathlib.Path('out/sub').mkdir()\n"
        "pathlib.Path('out/sub/report.txt').write_text('done')\n"
    )
    result = await docker_sandbox.execute(code, files={"data/in.txt": "hello"})
    assert result.ok, result.stderr
    assert result.stdout == f"{WORK_DIR} hello\n"
    assert [(a.path, a.content) for a in result.artifacts] == [("sub/report.txt", b"done")]


async def test_the_program_owns_its_work_directory(shell_docker_sandbox: DockerSandbox) -> None:
    # Docker Engine leaves a new volume's root to root: the work dir must be the user's anyway.
    code = 'echo note > note.txt && echo "$HOME" && stat -c "%u:%g %a" . && cat note.txt'
    result = await shell_docker_sandbox.execute(code, language="sh")
    assert (result.exit_code, result.stderr) == (0, "")
    assert result.stdout.split("\n")[:3] == [WORK_DIR, "65534:65534 755", "note"]


async def test_a_symbolic_link_in_out_is_not_followed(docker_sandbox: DockerSandbox) -> None:
    code = "import os\nos.symlink('/etc/passwd', 'out/passwd')\nos.symlink('/', 'out/root')"
    result = await docker_sandbox.execute(code)
    assert result.ok, result.stderr
    assert result.artifacts == []


async def test_artifacts_past_the_limit_are_left_out(container_engine: ContainerEngine) -> None:
    async with DockerSandbox(
        container_engine.python_image, base_url=container_engine.base_url, max_artifact_bytes=1000
    ) as box:
        code = (
            "open('out/small.txt', 'w').write('x' * 10)\n"
            "open('out/big.bin', 'wb').write(bytes(5000))"
        )
        result = await box.execute(code)
    assert [a.path for a in result.artifacts] == ["small.txt"]


async def test_shell_code_runs_in_the_busybox_image(shell_docker_sandbox: DockerSandbox) -> None:
    result = await shell_docker_sandbox.execute(
        "echo $((6 * 7)) > out/answer; cat out/answer", language="sh"
    )
    assert (result.exit_code, result.stdout) == (0, "42\n")
    assert [a.content for a in result.artifacts] == [b"42\n"]


async def test_an_image_without_the_interpreter_is_a_sandbox_error(
    shell_docker_sandbox: DockerSandbox,
) -> None:
    with pytest.raises(SandboxError, match="cannot run python code"):
        await shell_docker_sandbox.execute("print(1)")


async def test_a_missing_image_is_not_ready(container_engine: ContainerEngine) -> None:
    async with DockerSandbox(
        "localhost/no-such-image:0", base_url=container_engine.base_url
    ) as box:
        assert not await box.is_ready()
        with pytest.raises(SandboxNotReadyError, match="never pulls"):
            await box.execute("print(1)")


async def test_read_only_false_lets_the_program_write_the_root(
    container_engine: ContainerEngine,
) -> None:
    async with DockerSandbox(
        container_engine.shell_image, base_url=container_engine.base_url, read_only=False, user=None
    ) as box:
        result = await box.execute("echo x > /etc/written && cat /etc/written", language="sh")
    assert result.stdout == "x\n", result.stderr
    assert container_engine.sandbox_containers() == []


# -- talking to a running program ---------------------------------------------------------------


async def test_write_readline_and_wait(docker_sandbox: DockerSandbox) -> None:
    code = "import sys\nfor line in sys.stdin:\n    print(line.strip().upper())\nprint('bye')"
    async with docker_sandbox.start(code) as process:
        assert isinstance(process, SandboxProcess)
        await process.write(b"hello\n")
        assert await process.readline(limit=100) == b"HELLO\n"
        result = await process.wait()  # closes stdin: the loop ends
    assert (result.exit_code, result.stdout) == (0, "bye\n")


async def test_a_line_longer_than_the_limit_comes_in_pieces(
    docker_sandbox: DockerSandbox,
) -> None:
    async with docker_sandbox.start("print('abcdefghij')") as process:
        assert await process.readline(limit=4) == b"abcd"
        assert await process.readline(limit=4) == b"efgh"
        assert await process.readline(limit=4) == b"ij\n"


async def test_an_unread_talkative_program_waits_instead_of_overflowing(
    docker_sandbox: DockerSandbox,
) -> None:
    lines = 150_000  # about 1.6 MB: more than max_output_bytes, read a line at a time
    code = f"for i in range({lines}):\n    print(f'line {{i:06}}')\nprint('end')"
    async with docker_sandbox.start(code, timeout_s=60) as process:
        await asyncio.sleep(0.5)  # the program fills the buffer, then blocks
        received = [await process.readline(limit=100) for _ in range(lines + 1)]
        result = await process.wait()
    assert received[0] == b"line 000000\n"
    assert received[-1] == b"end\n"
    assert not result.truncated
    assert result.exit_code == 0


async def test_writing_after_the_end_is_a_sandbox_error(docker_sandbox: DockerSandbox) -> None:
    async with docker_sandbox.start("print('x')") as process:
        await process.wait()
        with pytest.raises(SandboxError, match="cannot write"):
            await process.write(b"late\n")


# -- the container is always removed --------------------------------------------------------------


async def test_leaving_the_block_removes_a_running_container(
    docker_sandbox: DockerSandbox, container_engine: ContainerEngine
) -> None:
    async with docker_sandbox.start("import time\ntime.sleep(600)"):
        assert len(container_engine.sandbox_containers()) == 1
    assert container_engine.sandbox_containers() == []


async def test_a_cancelled_run_removes_its_container(
    docker_sandbox: DockerSandbox, container_engine: ContainerEngine
) -> None:
    run = asyncio.ensure_future(docker_sandbox.execute("import time\ntime.sleep(600)"))
    deadline = time.monotonic() + 20
    while not container_engine.sandbox_containers() and time.monotonic() < deadline:  # noqa: ASYNC110
        await asyncio.sleep(0.1)
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    assert container_engine.sandbox_containers() == []


@pytest.mark.parametrize("delay_s", [0.0, 0.02, 0.1])
async def test_a_run_cancelled_while_launching_leaves_nothing_after_stop(
    container_engine: ContainerEngine, delay_s: float
) -> None:
    box = DockerSandbox(container_engine.python_image, base_url=container_engine.base_url)
    assert await box.is_ready()  # connected: the cancellation hits the launch itself
    run = asyncio.ensure_future(box.execute("import time\ntime.sleep(600)"))
    await asyncio.sleep(delay_s)
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    await box.stop()
    assert container_engine.sandbox_containers() == []


async def test_stop_removes_running_containers_and_refuses_new_runs(
    container_engine: ContainerEngine,
) -> None:
    box = DockerSandbox(container_engine.python_image, base_url=container_engine.base_url)
    session = box.start("import time\ntime.sleep(600)")
    await session.__aenter__()
    await box.stop()
    assert container_engine.sandbox_containers() == []
    await session.__aexit__(None, None, None)
    with pytest.raises(SandboxNotReadyError, match="stopped"):
        await box.execute("print(1)")


async def test_runs_in_parallel_each_get_their_own_container(
    docker_sandbox: DockerSandbox,
) -> None:
    results = await asyncio.gather(
        *(
            docker_sandbox.execute(f"import socket\nprint({i}, socket.gethostname())")
            for i in range(4)
        )
    )
    assert [r.stdout.split()[0] for r in results] == ["0", "1", "2", "3"]
