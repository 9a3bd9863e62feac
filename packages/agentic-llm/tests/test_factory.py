"""create_chat_client resolves provider specs through the entry-point registry."""

from __future__ import annotations

import pytest

from agentic_llm import AuthenticationError, LLMError, OpenAIChatClient, create_chat_client


def test_openai_spec_builds_an_openai_client(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-real")
    client = create_chat_client("openai:gpt-4o-mini")
    assert isinstance(client, OpenAIChatClient)
    assert client.model == "gpt-4o-mini"
    assert "sk-test" not in repr(client)


def test_keywords_reach_the_constructor(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    client = create_chat_client("openai:local-model", base_url="http://127.0.0.1:9/v1")
    assert isinstance(client, OpenAIChatClient)


def test_a_missing_key_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(AuthenticationError, match="OPENAI_API_KEY"):
        create_chat_client("openai:gpt-4o-mini")


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("", "empty chat client spec"),
        ("nope:model", "unknown chat client provider 'nope'"),
        ("openai", "names no model"),
        ("openai:", "names no model"),
    ],
)
def test_bad_specs_are_clear_errors(spec: str, message: str) -> None:
    with pytest.raises(LLMError, match=message):
        create_chat_client(spec)


@pytest.mark.parametrize(
    ("spec", "env", "class_name"),
    [
        (
            "anthropic:claude-sonnet-4-5",
            {"ANTHROPIC_API_KEY": "sk-ant-test"},
            "AnthropicChatClient",
        ),
        ("gemini:gemini-2.5-flash", {"GEMINI_API_KEY": "g-test"}, "GeminiChatClient"),
        ("gemini:gemini-2.5-flash", {"GOOGLE_API_KEY": "g-test"}, "GeminiChatClient"),
        ("ollama:llama3.2", {"OLLAMA_HOST": "127.0.0.1:11500"}, "OllamaChatClient"),
    ],
)
def test_every_registered_provider_resolves(
    spec: str, env: dict[str, str], class_name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "OLLAMA_HOST"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    client = create_chat_client(spec)
    assert type(client).__name__ == class_name
    assert client.model == spec.split(":", 1)[1]
    for value in env.values():
        if "test" in value:
            assert value not in repr(client)


@pytest.mark.parametrize(
    ("spec", "variable"),
    [("anthropic:claude", "ANTHROPIC_API_KEY"), ("gemini:gemini-2.5-flash", "GEMINI_API_KEY")],
)
def test_missing_provider_keys_name_their_variable(
    spec: str, variable: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(AuthenticationError, match=variable):
        create_chat_client(spec)
