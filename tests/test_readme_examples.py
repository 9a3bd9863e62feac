"""Every ```python block of the READMEs runs (top-level await allowed), so docs never rot."""

from __future__ import annotations

import ast
import asyncio
import os
import re
import socket
import subprocess
import sys
import time
import types
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fixtures.servers import free_port, stop_process

ROOT = Path(__file__).resolve().parents[1]
READMES = [ROOT / "README.md", *sorted(ROOT.glob("packages/*/README.md"))]
_BLOCK = re.compile(r"```python\n(.*?)```", re.DOTALL)

BLOCKS = [
    pytest.param(code, id=f"{path.relative_to(ROOT)}#{index}")
    for path in READMES
    for index, code in enumerate(_BLOCK.findall(path.read_text()))
]


SERVE_TOKEN = "readme-serve-token-0123456789"  # noqa: S105 - a fake secret


@pytest.fixture(scope="module")
def agentic_serve(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``agentic serve examples/agentic.toml`` (scripted offline model, token set): its URL."""
    port = free_port()
    command = [
        str(Path(sys.executable).with_name("agentic")), "serve", "examples/agentic.toml",
        "--port", str(port), "--model", "python:tests.cli_models:scripted",
    ]  # fmt: skip
    log = tmp_path_factory.mktemp("serve") / "serve.log"
    env = {**os.environ, "AGENTIC_SERVE_TOKEN": SERVE_TOKEN}
    with log.open("wb") as output:
        process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=output, stderr=output)
    try:
        deadline = time.monotonic() + 60
        while True:  # until it listens (a bounded wait, not a timing assertion)
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"agentic serve did not start: {log.read_text(errors='replace')}")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}"
    finally:
        stop_process(process, timeout_s=10)


@pytest.mark.parametrize("code", BLOCKS)
def test_readme_block_runs(
    code: str, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    if "REDIS_URL" in code:  # an example of the Redis stores talks to the session's server
        monkeypatch.setenv("REDIS_URL", request.getfixturevalue("redis_server"))
    if "NATS_URL" in code:  # an example of agentic-bus talks to the session's nats-server
        monkeypatch.setenv("NATS_URL", request.getfixturevalue("nats_server"))
    if "AGENTIC_SERVE_URL" in code:  # a client of `agentic serve examples/agentic.toml`
        monkeypatch.setenv("AGENTIC_SERVE_URL", request.getfixturevalue("agentic_serve"))
        monkeypatch.setenv("AGENTIC_SERVE_TOKEN", SERVE_TOKEN)
    compiled = compile(code, "<readme>", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    namespace: dict[str, object] = {"__name__": "__readme__"}
    result = types.FunctionType(compiled, namespace)()
    if asyncio.iscoroutine(result):
        asyncio.run(result)
