"""The ``agentic`` command as a real process: help, a checkpointed run, Ctrl-C and resume.

The model is scripted (``--model python:tests.cli_models:...``); ``slow`` blocks its ``SLOW``
agent and creates a marker file first, so the test interrupts the run mid-superstep without
guessing at timings.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fixtures.servers import stop_process

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
AGENTIC = Path(sys.executable).with_name("agentic")
"""The console script ``uv run agentic`` runs (installed by agentic-orchestrator)."""

CONFIG = """\
name = "pair"

[[agents]]
name = "writer"
instructions = "Writer. Draft."

[[agents]]
name = "editor"
instructions = "Editor SLOW. Edit."

[pattern]
type = "sequential"
"""


def agentic(
    *args: str | Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(AGENTIC), *map(str, args)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "pair.toml"
    path.write_text(CONFIG, encoding="utf-8")
    return path


def test_help_lists_the_commands() -> None:
    result = agentic("--help")
    assert result.returncode == 0, result.stderr
    for command in ("demo", "run", "graph", "runs", "worker"):
        assert command in result.stdout
    module = subprocess.run(
        [sys.executable, "-m", "agentic_orchestrator._cli", "run", "--help"],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert module.returncode == 0
    assert "--checkpoint-dir" in module.stdout


def test_a_config_error_is_one_line_and_exit_code_2(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(CONFIG.replace('type = "sequential"', 'type = "sequential"\nturns = 3'))
    result = agentic("run", path, "task")
    assert result.returncode == 2
    assert result.stderr.strip() == f"{path}:13: pattern.turns: unknown key"
    assert result.stdout == ""


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        pytest.param(
            CONFIG.replace("Draft.", "Brouillon \u00e9crit.").encode("latin-1"),
            ":5: agents[0].instructions: not UTF-8 text: byte 0xE9 at offset",
            id="latin-1",
        ),
        pytest.param(
            (CONFIG + "a = " + "[" * 100_000 + "]" * 100_000 + "\n").encode(),
            ":13: pattern.a: nested more than 64 levels deep",
            id="deep",
        ),
        pytest.param(
            CONFIG.replace(
                'name = "pair"\n',
                'name = "pair"\n[models.fast]\nprovider = "openai"\napi_key = "sk-LEAK"\n',
            ).encode(),
            ":4: models.fast.api_key: an inline API key (secret rule 'api-key')",
            id="api-key",
        ),
    ],
)
def test_a_hostile_run_file_is_one_line_and_exit_code_2(
    tmp_path: Path, content: bytes, expected: str
) -> None:
    path = tmp_path / "hostile.toml"
    path.write_bytes(content)
    result = agentic("run", path, "task")
    assert result.returncode == 2, result.stderr
    [line] = result.stderr.strip().splitlines()
    assert line.startswith(f"{path}{expected}"), line
    assert "LEAK" not in result.stderr
    assert result.stdout == ""


def test_a_run_writes_checkpoints_that_runs_lists(config: Path, tmp_path: Path) -> None:
    checkpoints = tmp_path / "checkpoints"
    ran = agentic(
        "run", config, "tea", "--model", "python:tests.cli_models:scripted",
        "--checkpoint-dir", checkpoints,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    assert "editor: Editor: tea" in ran.stdout
    listed = agentic("runs", checkpoints, "--json")
    [run] = json.loads(listed.stdout)
    assert (run["status"], run["last_superstep"]) == ("completed", 2)


def test_ctrl_c_stops_the_run_and_resume_finishes_it(config: Path, tmp_path: Path) -> None:
    checkpoints = tmp_path / "checkpoints"
    marker = tmp_path / "blocked"
    model = "python:tests.cli_models:slow"
    command = [
        str(AGENTIC), "run", str(config), "tea", "--model", model,
        "--checkpoint-dir", str(checkpoints),
    ]  # fmt: skip
    env = {**os.environ, "AGENTIC_TEST_BLOCK_FILE": str(marker)}
    process = subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        while not marker.exists():  # the editor blocks in superstep 1, after checkpoint 0
            if process.poll() is not None:
                pytest.fail(f"the run ended before blocking: {process.communicate()}")
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=0.05)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
    finally:
        stop_process(process, timeout_s=10)
    assert process.returncode == 130, err.decode()
    hint = err.decode().strip().splitlines()[-1]
    found = re.fullmatch(
        rf"interrupted; resume with: agentic run {re.escape(str(config))} tea "
        rf"--checkpoint-dir {re.escape(str(checkpoints))} --resume (\w+)",
        hint,
    )
    assert found, hint
    assert "Traceback" not in err.decode()
    assert "superstep 1: editor" in out.decode()
    run_id = found.group(1)

    [interrupted] = json.loads(agentic("runs", checkpoints, "--json").stdout)
    assert (interrupted["run_id"], interrupted["status"]) == (run_id, "interrupted")
    assert interrupted["pending_executors"] == ["editor"]

    resumed = agentic(
        "run", config, "tea", "--model", model, "--checkpoint-dir", checkpoints,
        "--resume", run_id, "--quiet",
    )  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout == "Editor: tea\n"
    [done] = json.loads(agentic("runs", checkpoints, "--json").stdout)
    assert (done["run_id"], done["status"], done["last_superstep"]) == (run_id, "completed", 2)


def test_mcp_tools_from_the_config_reach_the_agent(tmp_path: Path) -> None:
    probe = ROOT / "packages" / "agentic-mcp" / "tests" / "servers" / "probe_server.py"
    path = tmp_path / "mcp.toml"
    path.write_text(
        f"""\
[[agents]]
name = "calculator"
instructions = "Add."
tools = ["mcp:probe"]

[mcp.servers.probe]
command = {json.dumps(sys.executable)}
args = [{json.dumps(str(probe))}, "stdio"]
allowed_tools = ["add"]

[pattern]
type = "sequential"
""",
        encoding="utf-8",
    )
    result = agentic("run", path, "2 + 40", "--model", "python:tests.cli_models:tool_caller", "-q")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "sum: 42\n"


def test_an_mcp_server_reads_env_references_when_it_starts(tmp_path: Path) -> None:
    probe = ROOT / "packages" / "agentic-mcp" / "tests" / "servers" / "probe_server.py"
    path = tmp_path / "mcp.toml"
    path.write_text(
        f"""\
[[agents]]
name = "calculator"
instructions = "Add."
tools = ["mcp:probe"]

[mcp.servers.probe]
command = {json.dumps(sys.executable)}
args = ["${{AGENTIC_TEST_PROBE}}", "stdio"]
env = {{ PROBE_TOKEN = "${{AGENTIC_TEST_TOKEN}}" }}

[pattern]
type = "sequential"
""",
        encoding="utf-8",
    )
    model = "python:tests.cli_models:tool_caller"
    env = {**os.environ, "AGENTIC_TEST_PROBE": str(probe), "AGENTIC_TEST_TOKEN": "t"}
    result = agentic("run", path, "2 + 40", "--model", model, "-q", env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "sum: 42\n"
    del env["AGENTIC_TEST_TOKEN"]
    unset = agentic("run", path, "2 + 40", "--model", model, "-q", env=env)
    assert unset.returncode == 2
    assert unset.stderr.strip() == (
        f"{path}:9: mcp.servers.probe.env.PROBE_TOKEN: the environment variable "
        "AGENTIC_TEST_TOKEN is not set (the file refers to it)"
    )


def test_an_mcp_server_that_cannot_start_is_named_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "mcp.toml"
    path.write_text(
        """\
[[agents]]
name = "calculator"
tools = ["mcp:ghost"]

[mcp.servers.ghost]
command = "/nonexistent/mcp-ghost"

[pattern]
type = "sequential"
""",
        encoding="utf-8",
    )
    result = agentic("run", path, "task", "--model", "python:tests.cli_models:scripted")
    assert result.returncode == 2, result.stderr
    last = result.stderr.strip().splitlines()[-1]  # after the client's own warning log
    assert last.startswith(f"{path}:5: mcp.servers.ghost: MCPConnectionError")
    assert "Traceback" not in result.stderr


def test_a_run_on_the_nats_runtime_is_executed_by_a_worker(
    config: Path, nats_server: str, tmp_path: Path
) -> None:
    # agentic-bus's worker imports MODULE:FACTORY from sys.path only: the repository root on it.
    env = {**os.environ, "AGENTIC_TEST_CONFIG": str(config), "PYTHONPATH": str(ROOT)}
    log = tmp_path / "worker.log"
    with log.open("wb") as sink:
        worker = subprocess.Popen(
            [str(AGENTIC), "worker", "tests.cli_models:config_workflow", "--nats", nats_server],
            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=sink,
        )  # fmt: skip
        try:
            result = agentic(
                "run", config, "tea", "--model", "python:tests.cli_models:scripted",
                "--runtime", nats_server, "-q",
            )  # fmt: skip
        finally:
            stop_process(worker, timeout_s=30)
    assert result.returncode == 0, result.stderr + log.read_text()
    assert result.stdout == "Editor: tea\n"


def test_a_durable_runtime_refuses_a_checkpoint_dir_naming_the_safe_call(
    config: Path, nats_server: str, tmp_path: Path
) -> None:
    """A NATS run keeps its checkpoints in NATS KV, fenced: a second store next to them would be
    one no process can resume from, so the pair is refused before anything runs."""
    result = agentic(
        "run", config, "tea", "--model", "python:tests.cli_models:scripted",
        "--runtime", nats_server, "--checkpoint-dir", tmp_path / "runs",
    )  # fmt: skip
    assert result.returncode == 2
    assert "--checkpoint-dir cannot be used with --runtime" in result.stderr
    assert f"--runtime {nats_server} --resume RUN_ID" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "runs").exists()


def test_resume_on_a_durable_runtime_looks_in_the_runtimes_store(
    config: Path, nats_server: str
) -> None:
    result = agentic(
        "run", config, "tea", "--model", "python:tests.cli_models:scripted",
        "--runtime", nats_server, "--resume", "no-such-run",
    )  # fmt: skip
    assert result.returncode == 2
    assert "--resume no-such-run: no checkpoint of that run in the store of --runtime" in (
        result.stderr
    )


def test_a_runtime_that_is_not_installed_says_which_package_to_add(config: Path) -> None:
    result = agentic("run", config, "tea", "--runtime", "redis://127.0.0.1:1")
    assert result.returncode == 2
    assert "no 'redis' runtime installed (installed: nats)" in result.stderr
