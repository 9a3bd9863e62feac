"""``agentic run``, ``runs``, ``graph`` and plugin commands through Typer's runner.

The model is ``tests.cli_models:scripted``: each agent answers ``<Role>: <task>``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from agentic_orchestrator._cli import app
from agentic_orchestrator._cli._build import ModelPool, build_workflow
from agentic_orchestrator._cli._config import load_run_config

SCRIPTED = "python:tests.cli_models:scripted"

AGENTS = """\
[[agents]]
name = "writer"
instructions = "Writer. Draft."
description = "drafts"

[[agents]]
name = "editor"
instructions = "Editor. Edit."
description = "edits"
"""


def config(tmp_path: Path, pattern: str = 'type = "sequential"') -> Path:
    path = tmp_path / "run.toml"
    path.write_text(f'name = "pair"\n\n{AGENTS}\n[pattern]\n{pattern}\n', encoding="utf-8")
    return path


def invoke(*args: str | Path) -> Result:
    return CliRunner().invoke(app, [str(a) for a in args])


def test_a_run_shows_its_graph_steps_and_output_without_colour_codes(tmp_path: Path) -> None:
    result = invoke("run", config(tmp_path), "tea", "--model", SCRIPTED)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert "superstep 0: writer" in lines
    assert "  writer: Writer: tea" in lines
    assert "superstep 1: editor" in lines
    assert "completed after 3 supersteps" in result.stdout
    assert "editor: Editor: tea" in result.stdout.split("output")[-1]
    assert "\x1b[" not in result.output


def test_quiet_prints_only_the_answer(tmp_path: Path) -> None:
    result = invoke("run", config(tmp_path), "tea", "--model", SCRIPTED, "--quiet")
    assert result.exit_code == 0, result.output
    assert result.stdout == "Editor: tea\n"


def test_json_prints_one_valid_json_event_per_line_and_nothing_else(tmp_path: Path) -> None:
    result = invoke("run", config(tmp_path), "tea", "--model", SCRIPTED, "--json")
    assert result.exit_code == 0, result.output
    events = [json.loads(line) for line in result.stdout.splitlines()]
    kinds = [e["event"] for e in events]
    assert kinds[0] == "WorkflowStartedEvent"
    assert kinds[-1] == "WorkflowCompletedEvent"
    assert events[-1]["status"] == "completed"
    streamed = "".join(e["update"]["text"] for e in events if e["event"] == "AgentRunUpdateEvent")
    assert streamed == "Writer: teaEditor: tea"
    [output] = [e for e in events if e["event"] == "WorkflowOutputEvent"]
    assert [m["author_name"] for m in output["data"]] == [None, "writer", "editor"]


def test_runs_lists_a_checkpointed_run_and_its_details(tmp_path: Path) -> None:
    checkpoints = tmp_path / "checkpoints"
    ran = invoke(
        "run", config(tmp_path), "tea", "--model", SCRIPTED, "--checkpoint-dir", checkpoints
    )
    assert ran.exit_code == 0, ran.output
    listed = invoke("runs", checkpoints, "--json")
    assert listed.exit_code == 0, listed.output
    [run] = json.loads(listed.stdout)
    assert (run["workflow"], run["status"], run["last_superstep"], run["checkpoints"]) == (
        "pair",
        "completed",
        2,
        3,
    )
    table = invoke("runs", checkpoints)
    assert run["run_id"] in table.stdout
    assert "completed" in table.stdout
    detail = invoke("runs", checkpoints, "--run", run["run_id"], "--json")
    history = json.loads(detail.stdout)["checkpoints"]
    assert [c["superstep"] for c in history] == [0, 1, 2]
    assert history[-1]["id"] == run["last_checkpoint_id"]


def test_runs_of_an_empty_directory_says_so(tmp_path: Path) -> None:
    result = invoke("runs", tmp_path)
    assert result.exit_code == 0
    assert result.stdout.strip() == "no checkpointed runs"


def test_resuming_an_unknown_run_is_a_usage_error(tmp_path: Path) -> None:
    result = invoke(
        "run", config(tmp_path), "tea", "--model", SCRIPTED, "--checkpoint-dir", tmp_path,
        "--resume", "nope",
    )  # fmt: skip
    assert result.exit_code == 2
    assert "--resume nope: no checkpoint of that run in" in result.stderr


def test_resume_needs_the_checkpoint_directory(tmp_path: Path) -> None:
    result = invoke("run", config(tmp_path), "tea", "--model", SCRIPTED, "--resume", "abc")
    assert result.exit_code == 2
    assert "--resume needs --checkpoint-dir" in result.stderr


def test_an_unknown_runtime_scheme_is_a_clear_error(tmp_path: Path) -> None:
    result = invoke("run", config(tmp_path), "tea", "--model", SCRIPTED, "--runtime", "zmq://x")
    assert result.exit_code == 2
    assert "--runtime zmq://x: no 'zmq' runtime installed (installed: nats)" in result.stderr


def test_a_runtime_url_token_never_reaches_the_error(tmp_path: Path) -> None:
    token = "s3cr3tT0ken"  # noqa: S105 - a made-up token to look for
    result = invoke(
        "run", config(tmp_path), "tea", "--model", SCRIPTED, "--runtime", f"zmq://{token}@x"
    )
    assert result.exit_code == 2
    assert "--runtime zmq://***@x: no 'zmq' runtime installed" in result.stderr
    assert token not in result.output


def test_a_run_over_its_superstep_budget_fails_without_a_traceback(tmp_path: Path) -> None:
    result = invoke("run", config(tmp_path), "tea", "--model", SCRIPTED, "--max-supersteps", "1")
    assert result.exit_code == 1
    assert "Traceback" not in result.output
    assert "failed in superstep 1: workflow 'pair' exceeded max_supersteps=1" in result.stdout


@pytest.mark.parametrize(
    ("pattern", "answer"),
    [
        ('type = "concurrent"', "Editor: tea"),
        ('type = "group-chat"\nmax_rounds = 2', "Editor: tea"),
        ('type = "handoff"\nstart = "editor"', "Editor: tea"),
    ],
)
def test_each_pattern_type_runs_from_the_file(tmp_path: Path, pattern: str, answer: str) -> None:
    result = invoke("run", config(tmp_path, pattern), "tea", "--model", SCRIPTED, "-q")
    assert result.exit_code == 0, result.output
    assert result.stdout.strip().splitlines()[-1] == answer


def test_a_delegating_lead_answers_through_its_sub_agents(tmp_path: Path) -> None:
    path = config(tmp_path, 'type = "delegating"\nlead = "writer"\nagents = ["editor"]')
    result = invoke("run", path, "tea", "--model", SCRIPTED, "-q")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("Writer: tea")


def test_a_magentic_team_builds_with_its_manager(tmp_path: Path) -> None:
    loaded = load_run_config(config(tmp_path, 'type = "magentic"\nmax_rounds = 3'))
    workflow = build_workflow(loaded, ModelPool(loaded, override=SCRIPTED))
    assert {"writer", "editor"} <= set(workflow.executors)


def test_graph_prints_mermaid_and_a_tree(tmp_path: Path) -> None:
    mermaid = invoke("graph", "tests.cli_models:pair_workflow")
    assert mermaid.exit_code == 0, mermaid.output
    assert mermaid.stdout.startswith("flowchart TD\n")
    assert "n_writer --> n_editor" in mermaid.stdout
    tree = invoke("graph", "tests.cli_models:pair_workflow", "--format", "text")
    assert tree.stdout.splitlines()[:3] == ["pair", "└── writer  (start)", "    └── editor"]


def test_graph_of_something_that_is_no_workflow_is_refused() -> None:
    result = invoke("graph", "tests.cli_models:scripted")
    assert result.exit_code == 2
    assert "tests.cli_models:scripted gave FunctionChatClient, not a Workflow" in result.stderr


def test_version_and_plugin_commands() -> None:
    version = invoke("--version")
    assert version.exit_code == 0
    assert version.stdout.startswith("agentic ")
    worker = invoke("worker", "--help")  # agentic-bus's command, its own help
    assert worker.exit_code == 0
    assert "usage: agentic-worker" in worker.stdout


def test_the_sample_run_file_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    root = Path(__file__).resolve().parents[3]
    monkeypatch.chdir(root)  # its Python tool is examples.agent_with_tools:get_weather
    result = invoke("run", "examples/agentic.toml", "Plan a day in Oslo", "--model", SCRIPTED, "-q")
    assert result.exit_code == 0, result.output
    assert result.stdout == "You: Plan a day in Oslo\n"
