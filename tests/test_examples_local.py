"""The examples on the embedded model (SmolLM2-135M): a sensible answer, or a clear refusal.

``examples/agentic.toml`` is sized for the 135M model, as ``agentic demo`` is: its answers are
checked for their content (the weather tool's figure, the plan of the city), over a few seeds
here; ``AGENTIC_EXAMPLE_SEEDS=10`` runs the measurement (seeds 1..10; or a list such as
``4,7``). The programs whose ``--model`` needs more than 135M say so at their top and refuse
the embedded model with that sentence.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.slow

_ROOT = Path(__file__).resolve().parents[1]
_EXAMPLES = _ROOT / "examples"
_AGENTIC = Path(sys.executable).with_name("agentic")
_RUN_FILE = _EXAMPLES / "agentic.toml"
_TASK = "Plan a day in Oslo"  # the README's command
_MODEL_LINE = 'small = { provider = "local", options = { max_tokens = 80 } }'


def _seeds() -> list[int]:
    chosen = os.environ.get("AGENTIC_EXAMPLE_SEEDS", "").strip()
    if not chosen:
        return [1, 2, 3]
    if "," in chosen:
        return [int(seed) for seed in chosen.split(",")]
    return list(range(1, int(chosen) + 1))


def _offline_env() -> dict[str, str]:
    """No API keys, no Ollama: the embedded model answers."""
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_TOKEN"))}
    env.pop("AGENTIC_MODEL", None)
    env["OLLAMA_HOST"] = "127.0.0.1:9"  # nothing listens there
    return env


def _answers(stdout: str) -> dict[str, str]:
    """Each agent's answer in the run's output (``--json``: one event a line)."""
    for line in stdout.splitlines():
        event: dict[str, Any] = json.loads(line)
        if event.get("event") == "WorkflowOutputEvent":
            return {
                str(message.get("author_name") or message["role"]): " ".join(
                    str(c.get("text", "")) for c in message["contents"]
                )
                for message in event["data"]
            }
    raise AssertionError(f"no output in:\n{stdout}")


@pytest.mark.parametrize("seed", _seeds())
def test_the_run_file_answers_sensibly_on_the_embedded_model(seed: int, tmp_path: Path) -> None:
    text = _RUN_FILE.read_text(encoding="utf-8")
    assert text.count(_MODEL_LINE) == 1, "the run file's model line changed: update this test"
    seeded = tmp_path / "agentic.toml"
    seeded.write_text(
        text.replace(
            _MODEL_LINE, _MODEL_LINE.replace("max_tokens = 80", f"max_tokens = 80, seed = {seed}")
        ),
        encoding="utf-8",
    )
    done = subprocess.run(
        [str(_AGENTIC), "run", str(seeded), _TASK, "--json"],
        cwd=_ROOT,  # the tools are python:examples.tools.trip:...
        env=_offline_env(),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    answers = _answers(done.stdout)
    # The researcher quotes the weather tool: its figure, below zero (not a lost minus sign).
    assert re.search(r"3\.5\b.*below zero", answers["researcher"]), answers
    # The planner quotes the day_plan tool: the plan of the city asked about.
    assert "Oslo" in answers["planner"], answers
    assert "Vigeland" in answers["planner"], answers


_NEEDS_A_BIGGER_MODEL = ["mcp_agent.py", "typescript_state_machine.py"]


@pytest.mark.parametrize("name", _NEEDS_A_BIGGER_MODEL)
def test_an_example_that_needs_a_bigger_model_refuses_the_embedded_one(name: str) -> None:
    program = _EXAMPLES / name
    done = subprocess.run(
        [sys.executable, str(program), "--model", "local"],
        cwd=_ROOT,
        env=_offline_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode != 0, done.stdout
    message = done.stderr.strip().splitlines()[-1]
    prefix = f"{name}: "
    assert message.startswith(prefix), done.stderr
    sentence = message.removeprefix(prefix)
    assert "SmolLM2-135M" in sentence
    assert "refused" in sentence
    # The same sentence stands at the program's top (its docstring), backticks aside.
    docstring = ast.get_docstring(ast.parse(program.read_text(encoding="utf-8"))) or ""
    assert " ".join(sentence.split()) in " ".join(docstring.replace("`", "").split())
