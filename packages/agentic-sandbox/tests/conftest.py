"""Sandboxes for the tests, and a way to find any process a sandboxed program left behind.

``sandbox`` is the real thing: a ProcessSandbox that must use bubblewrap. Without bwrap those tests
skip with the reason, unless ``AGENTIC_REQUIRE_SERVICES=1`` (CI): then they fail.
``unshare_sandbox`` is the fallback jail (``unshare`` and a setup script, no bwrap).
``jailed_sandbox`` is each of the two in turn (test ids ``[bwrap]`` and ``[unshare]``).
``docker_sandbox`` and ``shell_docker_sandbox`` are DockerSandboxes on each real engine in turn,
Podman and Docker Engine (``container_engine``, from ``tests/fixtures/engines.py``), with the Python
and the busybox test image; each checks after its test that no container of ours is left.
``bridge_server`` is a container on that engine's default bridge network answering ``pong``, for
``network=True``. ``host_unix_socket`` and ``host_abstract_socket`` (``tests/fixtures/
host_sockets.py``) are unix-socket servers on the host answering ``pong`` to anyone (a
world-writable path under ``/tmp``; an abstract name): no sandboxed program may reach them.

A program started with ``marker_env`` carries ``AGENTIC_TEST_MARKER=<uuid>`` in its environment;
``leftover_processes()`` lists the live processes that still carry it, read from ``/proc/*/environ``
(root reads any process's; a zombie's is empty).
"""

from __future__ import annotations

import asyncio
import shutil
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path

import docker
import pytest

from agentic_sandbox import DockerSandbox, ProcessSandbox
from tests.fixtures.engines import ContainerEngine
from tests.fixtures.system_tools import require_ready_sandbox, require_tools

if not sys.platform.startswith("linux"):
    pytest.skip("ProcessSandbox needs Linux", allow_module_level=True)

MARKER_VARIABLE = "AGENTIC_TEST_MARKER"


def processes_with_marker(marker: str) -> list[int]:
    """Live processes whose environment holds ``AGENTIC_TEST_MARKER=marker``."""
    needle = f"{MARKER_VARIABLE}={marker}".encode()
    found: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if needle in environ.split(b"\0"):
            found.append(int(entry.name))
    return found


@pytest.fixture
def marker() -> str:
    return uuid.uuid4().hex


@pytest.fixture
def marker_env(marker: str) -> dict[str, str]:
    """The environment to pass to a sandboxed program so its processes can be found later."""
    return {MARKER_VARIABLE: marker}


@pytest.fixture
def leftover_processes(marker: str) -> Callable[[], list[int]]:
    """Lists the live processes started with ``marker_env`` (none may outlive a run)."""
    return lambda: processes_with_marker(marker)


@pytest.fixture
def wait_for_processes(marker: str) -> Callable[[int], Awaitable[None]]:
    """Waits (5 s at most) until ``count`` processes started with ``marker_env`` run."""

    async def wait(count: int) -> None:
        async with asyncio.timeout(5):
            while len(processes_with_marker(marker)) < count:  # noqa: ASYNC110 - polling /proc
                await asyncio.sleep(0.01)

    return wait


@pytest.fixture
async def sandbox(tmp_path: Path) -> AsyncIterator[ProcessSandbox]:
    """A bwrap-jailed sandbox with small limits (runs in ``tmp_path``)."""
    require_tools("bwrap")
    async with ProcessSandbox(
        workdir=tmp_path, timeout_s=10, memory_mb=256, max_processes=32, use_bwrap=True
    ) as box:
        await require_ready_sandbox(box)
        yield box


@pytest.fixture
async def unshare_sandbox() -> AsyncIterator[ProcessSandbox]:
    """The fallback jail without bwrap: ``unshare`` PID and network namespaces.

    Its work dirs go to the system temporary directory: without a mount namespace of its own,
    uid 65534 must be able to reach them (pytest's ``tmp_path`` is private to root).
    """
    async with ProcessSandbox(
        timeout_s=10, memory_mb=256, max_processes=32, use_bwrap=False
    ) as box:
        await require_ready_sandbox(box)
        yield box


@pytest.fixture(params=["bwrap", "unshare"])
async def jailed_sandbox(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[ProcessSandbox]:
    """The bwrap jail, then the unshare one, with the small limits of ``sandbox``."""
    use_bwrap = request.param == "bwrap"
    if use_bwrap:
        require_tools("bwrap")
    async with ProcessSandbox(
        workdir=tmp_path, timeout_s=10, memory_mb=256, max_processes=32, use_bwrap=use_bwrap
    ) as box:
        await require_ready_sandbox(box)
        assert box.isolation == request.param
        yield box


@pytest.fixture
def outside_dir() -> Iterator[Path]:
    """A world-readable directory outside any work dir, holding ``secret.txt``."""
    directory = Path(tempfile.mkdtemp(prefix="agentic-outside-"))
    directory.chmod(0o777)
    secret = directory / "secret.txt"
    secret.write_text("TOP-SECRET")
    secret.chmod(0o644)
    try:
        yield directory
    finally:
        shutil.rmtree(directory)


@pytest.fixture
async def tcp_server() -> AsyncIterator[int]:
    """A server on 127.0.0.1 answering b"pong" to every connection; yields its port."""

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"pong")
        await writer.drain()
        writer.close()
        await writer.wait_closed()

    server = await asyncio.start_server(answer, "127.0.0.1", 0)
    try:
        yield server.sockets[0].getsockname()[1]
    finally:
        server.close()
        await server.wait_closed()


def docker_sandbox_on(engine: ContainerEngine, image: str) -> DockerSandbox:
    """A DockerSandbox on ``engine`` with the small limits of these tests."""
    return DockerSandbox(
        image, base_url=engine.base_url, timeout_s=10, memory_mb=256, pids_limit=64
    )


@pytest.fixture
async def docker_sandbox(container_engine: ContainerEngine) -> AsyncIterator[DockerSandbox]:
    """A DockerSandbox on the Python test image, with small limits."""
    async with docker_sandbox_on(container_engine, container_engine.python_image) as box:
        yield box
    assert container_engine.sandbox_containers() == []


@pytest.fixture
async def shell_docker_sandbox(container_engine: ContainerEngine) -> AsyncIterator[DockerSandbox]:
    """A DockerSandbox on the busybox test image (shell only)."""
    async with docker_sandbox_on(container_engine, container_engine.shell_image) as box:
        yield box
    assert container_engine.sandbox_containers() == []


_PONG_SERVER = """\
import socket
server = socket.create_server(("0.0.0.0", 8080))
print("ready", flush=True)
while True:
    connection, _ = server.accept()
    connection.sendall(b"pong")
    connection.close()
"""


@pytest.fixture
def bridge_server(container_engine: ContainerEngine) -> Iterator[tuple[str, int]]:
    """A container on the engine's default bridge answering b"pong"; yields (its IP, port)."""
    client = docker.DockerClient(base_url=container_engine.base_url)
    container = client.containers.run(
        container_engine.python_image,
        ["python3", "-c", _PONG_SERVER],
        detach=True,
        network_mode="bridge",
        user="65534:65534",
        labels={"agentic-test": "bridge-server"},
    )
    try:
        deadline = time.monotonic() + 30
        while b"ready" not in container.logs():
            container.reload()
            assert container.status == "running", container.logs().decode(errors="replace")
            assert time.monotonic() < deadline, "the bridge server did not start"
            time.sleep(0.05)
        container.reload()
        address = str(container.attrs["NetworkSettings"]["IPAddress"])
        assert address, container.attrs["NetworkSettings"]
        yield address, 8080
    finally:
        container.remove(force=True)
        client.close()
