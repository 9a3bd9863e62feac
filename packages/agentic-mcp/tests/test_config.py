"""MCPServerConfig: constructors, mcp.json files, validation, secrets kept out of reprs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from agentic_core import redact_url
from agentic_mcp import MCPServerConfig
from agentic_mcp._connection import reconnect_backoff


def test_stdio_and_http_constructors() -> None:
    git = MCPServerConfig.stdio("git", "mcp-server-git", "--repository", "/src", cwd=Path("/tmp"))
    assert (git.transport, git.command, git.args, git.cwd) == (
        "stdio",
        "mcp-server-git",
        ["--repository", "/src"],
        "/tmp",
    )
    assert git.prefix == "git__"
    assert git.call_timeout_s == 60.0
    assert git.connect_timeout_s == 30.0
    web = MCPServerConfig.http("web", "https://example.com/mcp", headers={"X-Key": "k"})
    assert (web.transport, web.url) == ("http", "https://example.com/mcp")
    assert MCPServerConfig.http("w", "http://h/mcp", tool_prefix="").prefix == ""


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"name": "bad name", "command": "x"}, "letters, digits"),
        ({"name": "x"}, "exactly one of command"),
        ({"name": "x", "command": "a", "url": "http://h"}, "exactly one of command"),
        ({"name": "x", "url": "ftp://h/mcp"}, "http"),
        ({"name": "x", "command": "a", "call_timeout_s": 0}, "greater than 0"),
        ({"name": "x", "command": "a", "retry_in_flight": "sometimes"}, "never"),
        ({"name": "x", "command": "a", "colour": "red"}, "Extra inputs"),
    ],
)
def test_bad_configs_are_refused_with_the_reason(fields: dict[str, object], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        MCPServerConfig.model_validate(fields)


def test_allow_and_deny_globs() -> None:
    config = MCPServerConfig.stdio(
        "s", "x", allowed_tools=["git_*", "ping"], denied_tools=["*commit*"]
    )
    assert config.allows("git_log")
    assert config.allows("ping")
    assert not config.allows("git_commit")
    assert not config.allows("rm")
    assert MCPServerConfig.stdio("s", "x").allows("anything")
    assert not MCPServerConfig.stdio("s", "x", allowed_tools=[]).allows("anything")


def test_from_mcp_json_reads_the_common_file(tmp_path: Path) -> None:
    document = {
        "mcpServers": {
            "git": {"command": "uvx", "args": ["mcp-server-git"], "env": {"TOKEN": "t0k3n"}},
            "remote": {
                "type": "http",
                "url": "https://mcp.example.com/mcp",
                "headers": {"Authorization": "Bearer abc"},
                "timeout": 120000,
            },
            "off": {"command": "x", "disabled": True},
        }
    }
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps(document))
    for source in (document, path, str(path)):
        git, remote = MCPServerConfig.from_mcp_json(source, connect_timeout_s=5)
        assert (git.name, git.command, git.args, git.env) == (
            "git",
            "uvx",
            ["mcp-server-git"],
            {"TOKEN": "t0k3n"},
        )
        assert (remote.name, remote.url, remote.call_timeout_s) == (
            "remote",
            "https://mcp.example.com/mcp",
            120.0,
        )
        assert git.connect_timeout_s == remote.connect_timeout_s == 5


def test_from_mcp_json_names_what_is_wrong(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"mcpServers\.bad: .*exactly one of command"):
        MCPServerConfig.from_mcp_json({"mcpServers": {"bad": {"args": ["x"]}}})
    with pytest.raises(ValueError, match=r"mcpServers\.old uses transport 'sse'"):
        MCPServerConfig.from_mcp_json({"mcpServers": {"old": {"type": "sse", "url": "http://h"}}})
    with pytest.raises(ValueError, match="'mcpServers' object"):
        MCPServerConfig.from_mcp_json({"servers": []})
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    with pytest.raises(ValueError, match=r"cannot read MCP servers from .*broken\.json"):
        MCPServerConfig.from_mcp_json(broken)


def test_secrets_stay_out_of_reprs_and_locations() -> None:
    config = MCPServerConfig.http(
        "web",
        "https://user:hunter2@example.com/mcp?token=abc123",
        headers={"Authorization": "Bearer sk-secret"},
    )
    stdio = MCPServerConfig.stdio("s", "srv", env={"API_KEY": "sk-secret"})
    for text in (repr(config), str(config), config.where(), repr(stdio), str(stdio)):
        assert "sk-secret" not in text
        assert "hunter2" not in text
        assert "abc123" not in text
    assert config.where() == "https://user:***@example.com/mcp?token=***"
    assert redact_url("http://127.0.0.1:8000/mcp") == "http://127.0.0.1:8000/mcp"


@pytest.mark.parametrize(
    ("url", "where"),
    [
        ("https://host/mcp?api_key=k3y-s3cret", "https://host/mcp?api_key=***"),
        ("https://tok3n-s3cret@host/mcp", "https://***@host/mcp"),
        (
            "https://tok3n-s3cret@host/mcp?profile=dev&apiKey=k3y-s3cret#access_token=tok3n-s3cret",
            "https://***@host/mcp?profile=dev&apiKey=***#access_token=***",
        ),
    ],
)
def test_tokens_in_the_user_or_query_stay_out_of_reprs_and_errors(url: str, where: str) -> None:
    config = MCPServerConfig.http("web", url)
    assert config.where() == where
    for text in (repr(config), str(config)):
        assert "s3cret" not in text
        assert where in text
    with pytest.raises(ValidationError) as refused:
        MCPServerConfig.http("web", url.replace("https://", "ftp://"))
    assert "s3cret" not in str(refused.value)
    assert where.replace("https://", "ftp://") in str(refused.value)


def test_reconnect_pauses_double_up_to_the_maximum_with_jitter() -> None:
    config = MCPServerConfig.stdio("s", "srv", reconnect_backoff_s=0.2, reconnect_backoff_max_s=1.0)
    backoff = reconnect_backoff(config)
    for failure, ceiling in enumerate([0.2, 0.4, 0.8, 1.0, 1.0]):
        pauses = {backoff.delay(failure) for _ in range(50)}
        assert all(ceiling / 2 <= pause <= ceiling for pause in pauses), (failure, pauses)
        assert len(pauses) > 1  # jittered
