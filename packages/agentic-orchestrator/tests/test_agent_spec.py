"""AgentSpec and load_agent_specs: sub-agents from TOML, and every way a file can be wrong."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentic_core import ChatAgent
from agentic_core.testing import ScriptedChatClient
from agentic_orchestrator import AgentSpec, ModelSpec, OrchestrationConfigError, load_agent_specs

GOOD = """
[[agents]]
name = "researcher"
instructions = "Find facts."
model = "openai:gpt-4o-mini"
tools = ["search"]

[[agents]]
name = "writer"
model = { provider = "ollama", model = "llama3.2", base_url = "http://127.0.0.1:1" }
"""


def test_specs_load_from_a_file_or_text(tmp_path: Path) -> None:
    path = tmp_path / "agents.toml"
    path.write_text(GOOD)
    for source in (path, GOOD):
        researcher, writer = load_agent_specs(source)
        assert researcher.name == "researcher"
        assert researcher.model == "openai:gpt-4o-mini"
        assert researcher.tools == ["search"]
        assert writer.model == ModelSpec(
            provider="ollama", model="llama3.2", base_url="http://127.0.0.1:1"
        )


@pytest.mark.parametrize(
    ("toml", "match"),
    [
        ('[[agents]]\nname = "a"\nmodle = "x"', r"<toml>: agent 'a': modle: Extra inputs"),
        (
            '[[agents]]\nname = "a"\ntools = "search"',
            r"agent 'a': tools: Input should be a valid list",
        ),
        ('[[agents]]\ninstructions = "no name"', r"agent #1: name: Field required"),
        ('[[agents]]\nname = "a b"', r"agent 'a b': name: String should match"),
        ('[[agents]]\nname = "a"\n[[agents]]\nname = "a"', "two agents are named 'a'"),
        ('[agent]\nname = "a"', r"unknown top-level key\(s\) 'agent'"),
        ("[[agents]\nname=", "cannot read agent specs"),
        (
            '[[agents]]\nname = "a"\nmodel = { provider = "x", key = "sk-1" }',
            r"model\.ModelSpec\.key",
        ),
    ],
)
def test_a_wrong_file_names_the_culprit(toml: str, match: str) -> None:
    with pytest.raises(OrchestrationConfigError, match=match):
        load_agent_specs(toml)


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    missing = tmp_path / "nope.toml"
    with pytest.raises(OrchestrationConfigError, match=r"nope\.toml: cannot read"):
        load_agent_specs(missing)


def test_build_with_a_client_tools_and_a_factory() -> None:
    spec = AgentSpec(name="w", instructions="Write.", tools=["t"], max_tool_iterations=2)
    client = ScriptedChatClient(["hi"])

    def lookup() -> str:
        return "x"

    agent = spec.build(chat_client=client, tools={"t": lookup})
    assert isinstance(agent, ChatAgent)
    assert agent.instructions == "Write."
    assert [t.name for t in agent.tools] == ["lookup"]
    made = spec.model_copy(update={"tools": []}).build(client_factory=lambda s: client)
    assert made.chat_client is client
    with pytest.raises(OrchestrationConfigError, match="unknown tool\\(s\\) 't'"):
        spec.build(chat_client=client)


def test_build_from_the_model_spec_through_the_entry_points(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """agentic-llm is installed in the workspace: its ollama client is found by name."""
    model = ModelSpec(provider="ollama", model="llama3.2", options={"host": "http://127.0.0.1:9"})
    agent = AgentSpec(name="w", model=model).build()
    assert agent.chat_client.provider == "ollama"
    assert agent.chat_client.model == "llama3.2"
    wrong = ModelSpec(provider="ollama", model="llama3.2", base_url="http://127.0.0.1:9")
    with pytest.raises(OrchestrationConfigError, match="'ollama' does not take base_url"):
        AgentSpec(name="w", model=wrong).build()

    keyed = AgentSpec(name="k", model=ModelSpec(provider="openai", model="m", api_key_env="MY_KEY"))
    monkeypatch.delenv("MY_KEY", raising=False)
    with pytest.raises(OrchestrationConfigError, match="MY_KEY holds no API key"):
        keyed.build()
    monkeypatch.setenv("MY_KEY", "sk-secret-value")
    built = keyed.build()
    assert "sk-secret-value" not in repr(built.chat_client)

    with pytest.raises(OrchestrationConfigError, match="no 'nosuch' registered"):
        AgentSpec(name="x", model="nosuch:model").build()
    with pytest.raises(OrchestrationConfigError, match="names no model"):
        AgentSpec(name="x").build()


@pytest.mark.parametrize(
    ("option", "rule"),
    [("token", "token"), ("password", "password"), ("Authorization", "authorization")],
)
def test_model_options_refuse_secrets_by_named_rule_without_quoting_them(
    option: str, rule: str
) -> None:
    toml = (
        '[[agents]]\nname = "a"\n'
        f'model = {{ provider = "x", options = {{ {option} = "hunter2-value" }} }}'
    )
    with pytest.raises(OrchestrationConfigError, match=f"secret rule '{rule}'") as caught:
        load_agent_specs(toml)
    assert "hunter2-value" not in str(caught.value)
    assert "api_key_env" in str(caught.value)


def test_model_options_that_only_look_like_secrets_are_kept() -> None:
    toml = (
        '[[agents]]\nname = "a"\n'
        'model = { provider = "x", options = { max_tokens = 100, keyboard = "us" } }'
    )
    [spec] = load_agent_specs(toml)
    assert spec.model is not None
    assert not isinstance(spec.model, str)
    assert spec.model.options == {"max_tokens": 100, "keyboard": "us"}
