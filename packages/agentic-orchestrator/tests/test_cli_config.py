"""``agentic run`` config files: every mistake is one line naming the file, line and key."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentic_core.testing import ScriptedChatClient
from agentic_orchestrator import AgentSpec
from agentic_orchestrator._cli import app
from agentic_orchestrator._cli._config import key_lines, load_run_config
from agentic_orchestrator._cli._errors import ConfigError

SCRIPTED = "python:tests.cli_models:scripted"

GOOD = """\
name = "pair"

[models]
fast = "python:tests.cli_models:scripted"

[[agents]]
name = "writer"
instructions = "Writer. Draft."
model = "fast"

[[agents]]
name = "editor"
instructions = "Editor. Edit."
model = "fast"

[pattern]
type = "sequential"
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "agentic.toml"
    path.write_text(text, encoding="utf-8")
    return path


def run_error(tmp_path: Path, text: str) -> str:
    """Run the command on ``text``; it must fail with exit code 2 and no traceback."""
    path = write(tmp_path, text)
    result = CliRunner().invoke(app, ["run", str(path), "task"])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert result.stdout == ""
    return result.stderr.strip()


def test_an_unknown_model_names_the_file_line_and_key(tmp_path: Path) -> None:
    text = GOOD.replace('model = "fast"\n\n[pattern]', 'model = "x"\n\n[pattern]')
    message = run_error(tmp_path, text)
    path = tmp_path / "agentic.toml"
    assert message.startswith(f"{path}:14: agents[1].model: unknown model 'x'")


def test_an_unknown_key_is_refused_at_its_line(tmp_path: Path) -> None:
    text = GOOD.replace('instructions = "Editor. Edit."', 'instructions = "Editor."\ncolour = 1')
    assert run_error(tmp_path, text).endswith("agentic.toml:14: agents[1].colour: unknown key")


def test_a_wrong_type_names_the_key(tmp_path: Path) -> None:
    text = GOOD.replace('name = "writer"', 'name = "writer"\nmax_tool_iterations = "many"')
    message = run_error(tmp_path, text)
    assert (
        "agentic.toml:8: agents[0].max_tool_iterations: Input should be a valid integer" in message
    )


def test_an_unknown_pattern_type_lists_the_known_ones(tmp_path: Path) -> None:
    message = run_error(tmp_path, GOOD.replace('type = "sequential"', 'type = "pipeline"'))
    assert "agentic.toml:17: pattern.type: unknown pattern type; use sequential, concurrent" in (
        message
    )


def test_a_missing_pattern_section_is_named(tmp_path: Path) -> None:
    message = run_error(tmp_path, GOOD.replace('[pattern]\ntype = "sequential"\n', ""))
    assert message.endswith("agentic.toml: pattern: Field required")


def test_a_pattern_naming_an_unknown_agent_points_at_it(tmp_path: Path) -> None:
    text = GOOD.replace('type = "sequential"', 'type = "sequential"\nagents = ["writer", "critic"]')
    message = run_error(tmp_path, text)
    assert message.endswith(
        "agentic.toml:18: pattern.agents[1]: unknown agent 'critic' (agents: editor, writer)"
    )


def test_two_agents_with_one_name_are_refused(tmp_path: Path) -> None:
    message = run_error(tmp_path, GOOD.replace('name = "editor"', 'name = "writer"'))
    assert message.endswith("agentic.toml:12: agents[1].name: two agents are named 'writer'")


def test_a_tool_naming_an_undeclared_mcp_server_says_how_to_declare_it(tmp_path: Path) -> None:
    text = GOOD.replace(
        'model = "fast"\n\n[pattern]', 'model = "fast"\ntools = ["mcp:time"]\n\n[pattern]'
    )
    message = run_error(tmp_path, text)
    assert "agentic.toml:15: agents[1].tools: unknown MCP server 'time'" in message
    assert "add [mcp.servers.time]" in message


def test_a_python_tool_that_cannot_be_imported_is_named(tmp_path: Path) -> None:
    text = GOOD.replace(
        'model = "fast"\n\n[pattern]',
        'model = "fast"\ntools = [\n  "python:nowhere.tools:f",\n]\n\n[pattern]',
    )
    message = run_error(tmp_path, text)
    assert "agentic.toml:15: agents[1].tools[0]: cannot import module 'nowhere.tools'" in message


def test_a_malformed_tool_spec_is_refused(tmp_path: Path) -> None:
    text = GOOD.replace(
        'model = "fast"\n\n[pattern]', 'model = "fast"\ntools = ["grep"]\n\n[pattern]'
    )
    message = run_error(tmp_path, text)
    assert "agentic.toml:15: agents[1].tools: tool 'grep' is neither" in message


def test_invalid_toml_reports_the_parser_line(tmp_path: Path) -> None:
    message = run_error(tmp_path, GOOD.replace('name = "editor"', "name = editor"))
    assert message.startswith(f"{tmp_path / 'agentic.toml'}:12: agents[1].name: invalid TOML")


def test_a_missing_file_is_a_usage_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["run", str(tmp_path / "nope.toml"), "task"])
    assert result.exit_code == 2
    assert "nope.toml: cannot read the file" in result.stderr


def test_a_delegating_lead_must_not_be_its_own_sub_agent(tmp_path: Path) -> None:
    text = GOOD.replace('type = "sequential"', 'type = "delegating"\nlead = "writer"')
    message = run_error(tmp_path, text)
    assert message.endswith(
        "agentic.toml:18: pattern.lead: the lead 'writer' cannot also be a sub-agent"
    )


def test_a_good_file_loads_with_its_models_and_pattern(tmp_path: Path) -> None:
    loaded = load_run_config(write(tmp_path, GOOD))
    assert loaded.config.models == {"fast": SCRIPTED}
    assert loaded.config.participants() == ["writer", "editor"]
    assert loaded.config.pattern.type == "sequential"


def test_an_agents_table_is_an_agent_spec(tmp_path: Path) -> None:
    writer = load_run_config(write(tmp_path, GOOD)).config.agents[0]
    assert isinstance(writer, AgentSpec)
    agent = writer.build(chat_client=ScriptedChatClient(["hi"]))
    assert (agent.name, agent.instructions) == ("writer", "Writer. Draft.")


def test_a_model_table_inside_an_agent_is_refused_at_its_key(tmp_path: Path) -> None:
    text = GOOD.replace('model = "fast"\n\n[[', 'model = { provider = "openai" }\n\n[[', 1)
    message = run_error(tmp_path, text)
    assert "agentic.toml:9: agents[0].model: Input should be a valid string" in message


def test_config_errors_are_typed_with_their_parts(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        load_run_config(
            write(tmp_path, GOOD.replace('model = "fast"\n\n[[', 'model = "nope"\n\n[['))
        )
    assert (caught.value.line, caught.value.key) == (9, "agents[0].model")


def test_key_lines_follow_tables_arrays_of_tables_and_dotted_keys() -> None:
    text = """\
title = "x"
[[agents]]
name = "a"
tools = [
  "python:m:f",   # a = b in a comment
  "x = y",
]
description = '''
fake = 1
'''
[[agents]]
name = "b"
[mcp.servers.time]
command = "t"
[pattern]
options.depth = 2
"""
    lines = key_lines(text)
    assert lines[("title",)] == 1
    assert lines[("agents", 0)] == 2
    assert lines[("agents", 0, "tools")] == 4
    assert lines[("agents", 0, "description")] == 8
    assert ("agents", 0, "fake") not in lines
    assert lines[("agents", 1, "name")] == 12
    assert lines[("mcp", "servers", "time", "command")] == 14
    assert lines[("pattern", "options", "depth")] == 16


def test_the_sample_run_file_in_examples_is_valid() -> None:
    sample = Path(__file__).resolve().parents[3] / "examples" / "agentic.toml"
    loaded = load_run_config(sample)
    assert [agent.name for agent in loaded.config.agents] == ["researcher", "planner"]
