"""``agentic demo``: the README's main job, with the scripted model (fast) and, once, for real.

The scripted model makes one mistake in each part on purpose, so these tests see the checker
send the calculator back and the code loop repair a failing function through the real sandbox.
The real run uses the embedded llama.cpp model with a fixed seed (so it is repeatable here).
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from agentic_core.testing import FunctionChatClient
from agentic_orchestrator._cli import app
from agentic_orchestrator._cli._demo._party import PartyPlan, PartyRequest, party_workflow
from agentic_orchestrator._cli._demo._run import run_demo
from agentic_orchestrator._cli._demo._scripted import scripted_demo_client

pytestmark = pytest.mark.slow
# The demo's code loop runs in a ProcessSandbox: where none can run (no bubblewrap, no working
# `unshare`), these skip naming what to install (fail under AGENTIC_REQUIRE_SERVICES=1).
needs_code_sandbox = pytest.mark.usefixtures("process_sandbox_works")

_ROOT = Path(__file__).resolve().parents[1]
_AGENTIC = Path(sys.executable).with_name("agentic")


def _clean_env(**extra: str) -> dict[str, str]:
    """The environment without API keys (so the demo stays offline) plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_TOKEN"))}
    env.pop("AGENTIC_MODEL", None)
    env["OLLAMA_HOST"] = "127.0.0.1:9"  # nothing listens there: no Ollama is picked up
    return {**env, **extra}


async def test_the_checker_sends_a_wrong_tool_call_back() -> None:
    result = await party_workflow(scripted_demo_client()).run(PartyRequest())
    plan = result.get_outputs()[-1]
    assert isinstance(plan, PartyPlan)
    assert (plan.sandwiches, plan.verified, plan.attempts) == (12, True, 2)
    assert plan.tool_call == "multiply(4, 3) = 12"
    assert "Cheese" in plan.fillings


@needs_code_sandbox
async def test_the_demo_succeeds_with_the_scripted_model() -> None:
    out = io.StringIO()
    code = await run_demo(console=Console(file=out, width=100), model="scripted")
    text = out.getvalue()
    assert code == 0, text
    assert "12 sandwiches (verified: multiply(4, 3) = 12, 2 tries)" in text, text
    assert "both parts succeeded" in text, text
    # The validators' verdicts are shown once each, as they happen.
    assert text.count("checker: sent back: multiply was called with {'a': 4, 'b': 4}") == 1
    assert text.count("checker: accepted multiply(4, 3) = 12") == 1
    assert text.count("test: tests: 0 passed, 3 failed: ") == 1
    assert text.count("test: tests: 3 passed, 0 failed") == 1
    assert "\x1b[" not in text  # no colour codes when the output is not a terminal


def _agentic_demo(timeout_s: float, **env: str) -> subprocess.CompletedProcess[str]:
    """``agentic demo`` as a real process, from the repository root, offline."""
    done = subprocess.run(
        [str(_AGENTIC), "demo"],
        cwd=_ROOT,
        env=_clean_env(**env),
        capture_output=True,
        text=True,
        timeout=timeout_s,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "both parts succeeded" in done.stdout, done.stdout
    return done


@needs_code_sandbox
def test_agentic_demo_as_a_command_with_the_scripted_model() -> None:
    done = _agentic_demo(300, AGENTIC_MODEL="scripted")
    assert "sandwiches_needed" in done.stdout


@needs_code_sandbox
def test_agentic_demo_with_the_embedded_model() -> None:
    """The README's first command as a newcomer runs it: no key, no server, the local model."""
    done = _agentic_demo(600, AGENTIC_DEMO_SEED="0")
    assert "local llama.cpp" in done.stdout
    assert "checker: accepted multiply(4, 3) = 12" in done.stdout


def clueless_model() -> FunctionChatClient:
    """A model that never calls a tool and never writes code (``python:`` model factory)."""
    return FunctionChatClient(lambda messages, options: "I do not know.")


@needs_code_sandbox
def test_agentic_demo_through_the_typer_runner(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTIC_MODEL", "scripted")
    result = CliRunner().invoke(app, ["demo", "--quiet"])
    assert result.exit_code == 0, result.output
    assert "12 sandwiches (verified: multiply(4, 3) = 12, 2 tries)" in result.output
    assert "succeeded: python code passed test after 2 attempt(s)" in result.output
    assert "superstep" not in result.output  # --quiet: results only


@needs_code_sandbox
def test_the_demo_fails_with_exit_1_when_a_result_is_wrong(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(_ROOT)
    result = CliRunner().invoke(
        app, ["demo", "--quiet", "--model", "python:tests.test_demo:clueless_model"]
    )
    assert result.exit_code == 1, result.output
    assert "no answer (NOT verified, 4 tries)" in result.output
    assert "failed: python code did not pass compile after 5 attempt(s)" in result.output
    assert "part 1, multi-agent workflow: FAILED" in result.output
