# pyright: strict
"""Real MCP servers for the agentic-mcp tests: paths, a git repository and HTTP probe servers.

Test modules cannot import this file (``--import-mode=importlib``); they use the fixtures:

- ``probe_server_script`` / ``paging_server_script``: the paths of ``servers/probe_server.py`` (run
  ``python probe_server.py stdio``) and ``servers/paging_server.py`` (stdio); ``python_executable``
  is ``sys.executable``.
- ``time_server_command`` / ``git_server_command``: argv lists of the PyPI reference servers
  ``mcp-server-time`` and ``mcp-server-git --repository <git_repo>`` (stdio).
- ``git_repo`` (session): a git repository with 200 commits (subjects ``feat:``, ``fix:``,
  ``docs:``, ``test:``, ``refactor:``), built with ``git fast-import`` in well under a second.
- ``probe_http_url`` (session): ``http://127.0.0.1:<port>/mcp`` of a probe server subprocess on
  streamable HTTP. Shared by every test of the session: ``grow`` tools added there stay, so use
  unique names.
- ``start_probe_http``: a factory that starts a probe server of the test's own and returns a
  ``ProbeHttpServer`` handle (``url``, ``port``, ``pid``, ``kill()``, ``restart()``, ``stop()``);
  everything it started is stopped after the test.
- ``mcp_protocol``: ``"auto"`` then ``"legacy"`` (the ``mode=`` of ``mcp.Client``).

A missing ``git`` or reference-server binary skips the test with the reason, unless
``AGENTIC_REQUIRE_SERVICES=1``: then it fails. Every process started here is stopped by its PID.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Literal

import pytest

from tests.fixtures.servers import find_binary, free_port, missing_service, stop_process
from tests.fixtures.system_tools import require_tools

SERVERS_DIR = Path(__file__).parent / "servers"
PROBE_SERVER = SERVERS_DIR / "probe_server.py"
PAGING_SERVER = SERVERS_DIR / "paging_server.py"

GIT_COMMITS = 200
GIT_USER_NAME = "Agentic Tester"
GIT_USER_EMAIL = "tester@example.invalid"

_HTTP_START_TIMEOUT_S = 20.0
_HTTP_STOP_TIMEOUT_S = 5.0
_HTTP_START_ATTEMPTS = 3

McpProtocol = Literal["auto", "legacy"]


# -- paths and commands ---------------------------------------------------------------------------


@pytest.fixture(scope="session")
def python_executable() -> str:
    """The interpreter running the tests (it has ``mcp``): start the test servers with it."""
    return sys.executable


@pytest.fixture(scope="session")
def probe_server_script() -> Path:
    """``servers/probe_server.py`` (``python probe_server.py stdio`` or ``http --port N``)."""
    return PROBE_SERVER


@pytest.fixture(scope="session")
def paging_server_script() -> Path:
    """``servers/paging_server.py`` (stdio; 25 tools listed in pages of 10)."""
    return PAGING_SERVER


@pytest.fixture(scope="session")
def time_server_command() -> list[str]:
    """argv of the ``mcp-server-time`` reference server (stdio)."""
    binary = find_binary("mcp-server-time")
    if binary is None:
        missing_service("mcp-server-time not found: run `uv sync` (dev dependency mcp-server-time)")
    return [str(binary)]


@pytest.fixture(scope="session")
def git_server_command(git_repo: Path) -> list[str]:
    """argv of the ``mcp-server-git`` reference server on ``git_repo`` (stdio)."""
    binary = find_binary("mcp-server-git")
    if binary is None:
        missing_service("mcp-server-git not found: run `uv sync` (dev dependency mcp-server-git)")
    return [str(binary), "--repository", str(git_repo)]


@pytest.fixture(params=["auto", "legacy"])
def mcp_protocol(request: pytest.FixtureRequest) -> McpProtocol:
    """Each test runs in the 2026-07-28 era (``auto``) and the handshake era (``legacy``)."""
    mode: McpProtocol = request.param
    return mode


# -- git repository -------------------------------------------------------------------------------

_KINDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("feat", ("src/app.py", "tests/test_app.py")),
    ("fix", ("src/util.py",)),
    ("docs", ("README.md", "docs/guide.md")),
    ("feat", ("src/util.py", "src/app.py", "tests/test_util.py")),
    ("test", ("tests/test_app.py",)),
    ("fix", ("src/app.py", "tests/test_app.py")),
    ("refactor", ("src/util.py", "src/app.py")),
    ("docs", ("docs/guide.md",)),
)


def _fast_import_stream(commits: int) -> bytes:
    """A ``git fast-import`` stream of ``commits`` commits on ``refs/heads/main``."""
    contents: dict[str, list[str]] = {}
    out: list[bytes] = []

    def data(payload: bytes) -> None:
        out.append(b"data %d\n" % len(payload))
        out.append(payload)
        out.append(b"\n")

    for n in range(1, commits + 1):
        kind, files = _KINDS[n % len(_KINDS)]
        subject = f"{kind}: change {n:03d} to {files[0]}"
        body = f"\n\nTouches {', '.join(files)}.\n" if n % 3 == 0 else "\n"
        stamp = 1_700_000_000 + n * 3600
        out.append(b"commit refs/heads/main\n")
        out.append(b"mark :%d\n" % n)
        identity = f"{GIT_USER_NAME} <{GIT_USER_EMAIL}> {stamp} +0000"
        out.append(f"author {identity}\ncommitter {identity}\n".encode())
        data((subject + body).encode())
        for path in files:
            lines = contents.setdefault(path, [f"# {path}\n"])
            lines.append(f"line {n}: {kind} change\n")
            out.append(f"M 100644 inline {path}\n".encode())
            data("".join(lines).encode())
    out.append(b"done\n")
    return b"".join(out)


def _git(repo: Path, *args: str, stdin: bytes | None = None) -> None:
    # The machine's global and system git configuration (hooks, templates, signing) stays out.
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
    result = subprocess.run(
        ["git", "-C", str(repo), *args], input=stdin, capture_output=True, env=env, check=False
    )
    if result.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed: {result.stderr.decode(errors='replace')}")


@pytest.fixture(scope="session")
def git_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A git repository (branch ``main``, clean work tree) with 200 commits; its path."""
    require_tools("git")
    repo = tmp_path_factory.mktemp("git-repo")
    _git(repo, "init", "--quiet", "--initial-branch=main")
    _git(repo, "config", "user.name", GIT_USER_NAME)
    _git(repo, "config", "user.email", GIT_USER_EMAIL)
    _git(repo, "config", "commit.gpgsign", "false")
    _git(repo, "fast-import", "--quiet", "--done", stdin=_fast_import_stream(GIT_COMMITS))
    _git(repo, "reset", "--quiet", "--hard", "main")
    return repo


# -- probe server over streamable HTTP ------------------------------------------------------------


class ProbeHttpServer:
    """A ``probe_server.py http`` subprocess on a fixed loopback port."""

    def __init__(
        self,
        port: int,
        log_dir: Path,
        *,
        env: Mapping[str, str] | None = None,
        json_response: bool = False,
        stateless: bool = False,
    ) -> None:
        self.port = port
        self.url = f"http://127.0.0.1:{port}/mcp"
        self.log_path = log_dir / f"probe-http-{port}.log"
        self._env = {**os.environ, **(env or {})}
        self._argv = [sys.executable, str(PROBE_SERVER), "http", "--port", str(port)]
        if json_response:
            self._argv.append("--json-response")
        if stateless:
            self._argv.append("--stateless")
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int:
        """PID of the current server process."""
        if self._process is None:
            raise RuntimeError("the probe server is not started")
        return self._process.pid

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def log_tail(self, n_bytes: int = 4000) -> str:
        try:
            return self.log_path.read_bytes()[-n_bytes:].decode(errors="replace")
        except OSError:
            return ""

    def start(self) -> None:
        """Start the server (appending to its log) and wait until its port accepts connections."""
        if self.running:
            raise RuntimeError(f"the probe server on port {self.port} is already running")
        with self.log_path.open("ab") as log:
            self._process = subprocess.Popen(
                self._argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                env=self._env,
            )  # fmt: skip
        try:
            self._wait_until_listening()
        except BaseException:
            self.kill()
            raise

    def _wait_until_listening(self) -> None:
        assert self._process is not None
        deadline = time.monotonic() + _HTTP_START_TIMEOUT_S
        last_error = "no attempt"
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise RuntimeError(
                    f"probe server exited with code {self._process.returncode} before listening on "
                    f"127.0.0.1:{self.port}; its log:\n{self.log_tail()}"
                )
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1.0):
                    return
            except OSError as exc:
                last_error = str(exc)
            time.sleep(0.05)
        raise RuntimeError(
            f"probe server did not listen on 127.0.0.1:{self.port} within "
            f"{_HTTP_START_TIMEOUT_S:.0f} s (last error: {last_error}); its log:\n{self.log_tail()}"
        )

    def kill(self) -> None:
        """SIGKILL the server (no-op when it is not running) and reap it."""
        if self._process is not None and self._process.poll() is None:
            self._process.kill()
            self._process.wait(timeout=_HTTP_STOP_TIMEOUT_S)

    def stop(self) -> None:
        """SIGTERM the server, SIGKILL it if it is still alive after 5 s."""
        if self._process is not None:
            stop_process(self._process, _HTTP_STOP_TIMEOUT_S)

    def restart(self) -> None:
        """Kill the server if it runs, then start a new one on the same port."""
        self.kill()
        self.start()


def _start_on_free_port(
    log_dir: Path,
    *,
    env: Mapping[str, str] | None = None,
    json_response: bool = False,
    stateless: bool = False,
) -> ProbeHttpServer:
    last_error: Exception | None = None
    for _ in range(_HTTP_START_ATTEMPTS):  # the port may be taken between probing and binding
        server = ProbeHttpServer(
            free_port(), log_dir, env=env, json_response=json_response, stateless=stateless
        )
        try:
            server.start()
        except RuntimeError as exc:
            last_error = exc
            continue
        return server
    raise RuntimeError(f"probe server failed to start {_HTTP_START_ATTEMPTS} times: {last_error}")


@pytest.fixture(scope="session")
def probe_http_url() -> Iterator[str]:
    """``http://127.0.0.1:<port>/mcp`` of a session-wide probe server (streamable HTTP)."""
    log_dir = Path(tempfile.mkdtemp(prefix="agentic-mcp-probe-"))
    server = _start_on_free_port(log_dir)
    try:
        yield server.url
    finally:
        server.stop()
        shutil.rmtree(log_dir, ignore_errors=True)


StartProbeHttp = Callable[..., ProbeHttpServer]


@pytest.fixture
def start_probe_http(tmp_path: Path) -> Iterator[StartProbeHttp]:
    """Factory: ``start_probe_http(env=None, json_response=False, stateless=False)`` starts a probe
    server on a free port and returns its handle; all of them are stopped after the test."""
    started: list[ProbeHttpServer] = []

    def start(
        *,
        env: Mapping[str, str] | None = None,
        json_response: bool = False,
        stateless: bool = False,
    ) -> ProbeHttpServer:
        server = _start_on_free_port(
            tmp_path, env=env, json_response=json_response, stateless=stateless
        )
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()
