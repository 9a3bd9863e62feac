"""Every ```python block of the READMEs runs (top-level await allowed), so docs never rot."""

from __future__ import annotations

import ast
import asyncio
import re
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
READMES = [ROOT / "README.md", *sorted(ROOT.glob("packages/*/README.md"))]
_BLOCK = re.compile(r"```python\n(.*?)```", re.DOTALL)

BLOCKS = [
    pytest.param(code, id=f"{path.relative_to(ROOT)}#{index}")
    for path in READMES
    for index, code in enumerate(_BLOCK.findall(path.read_text()))
]


@pytest.mark.parametrize("code", BLOCKS)
def test_readme_block_runs(
    code: str, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    if "REDIS_URL" in code:  # an example of the Redis stores talks to the session's server
        monkeypatch.setenv("REDIS_URL", request.getfixturevalue("redis_server"))
    if "NATS_URL" in code:  # an example of agentic-bus talks to the session's nats-server
        monkeypatch.setenv("NATS_URL", request.getfixturevalue("nats_server"))
    compiled = compile(code, "<readme>", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    namespace: dict[str, object] = {"__name__": "__readme__"}
    result = types.FunctionType(compiled, namespace)()
    if asyncio.iscoroutine(result):
        asyncio.run(result)
