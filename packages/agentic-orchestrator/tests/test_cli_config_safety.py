"""Run files with hostile bytes or secrets: one line naming the file, line and key, exit code 2.

Whatever the bytes (not UTF-8, nested 100k deep, numbers too long for Python), ``agentic run``
and the other commands reading a run file answer with one line, never a traceback. Secrets are
refused by named rules whose errors say what to write instead and never show the value.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentic_orchestrator._cli import app
from agentic_orchestrator._cli._config import describe_sources, load_run_config
from agentic_orchestrator._cli._errors import ConfigError
from agentic_orchestrator._secrets import SECRET_RULES

GOOD = """\
name = "pair"

[models]
fast = "python:tests.cli_models:scripted"

[[agents]]
name = "writer"
instructions = "Writer. Draft."
model = "fast"

[pattern]
type = "sequential"
"""
PLANTED = "s3cr3t-VALUE-never-shown"
"""The value of each refused secret: no error may show it."""


def write(tmp_path: Path, content: str | bytes) -> Path:
    path = tmp_path / "agentic.toml"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def one_line_error(*args: str | Path) -> str:
    """Invoke ``agentic ARGS``: exit code 2, nothing on stdout, one line on stderr (returned)."""
    result = CliRunner().invoke(app, [str(arg) for arg in args])
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "Traceback" not in result.output
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


def run_error(tmp_path: Path, content: str | bytes) -> str:
    return one_line_error("run", write(tmp_path, content), "task")


# -- bytes and nesting ----------------------------------------------------------------------------


def test_a_file_that_is_not_utf8_names_the_byte_its_line_and_key(tmp_path: Path) -> None:
    latin1 = GOOD.replace("Writer. Draft.", "Écrivain.").encode("latin-1")
    message = run_error(tmp_path, latin1)
    offset = latin1.index(b"\xc9")
    assert message == (
        f"{tmp_path / 'agentic.toml'}:8: agents[0].instructions: not UTF-8 text: byte 0xC9 at "
        f"offset {offset} (line 8, column 17); save the file as UTF-8"
    )


def test_binary_garbage_is_one_line(tmp_path: Path) -> None:
    message = run_error(tmp_path, b"\x00\x01\xff\xfe PK\x03\x04 \x89PNG\r\n\x1a\n")
    assert message.startswith(f"{tmp_path / 'agentic.toml'}:1: not UTF-8 text: byte 0xFF")


def test_a_utf8_byte_order_mark_is_accepted(tmp_path: Path) -> None:
    loaded = load_run_config(write(tmp_path, b"\xef\xbb\xbf" + GOOD.encode()))
    assert loaded.config.name == "pair"
    assert loaded.lines[("agents", 0, "model")] == 9


DEEP = 100_000


@pytest.mark.parametrize(
    ("tail", "line", "key"),
    [
        pytest.param("a = " + "[" * DEEP + "]" * DEEP, 13, "pattern.a", id="arrays"),
        pytest.param("a = " + "{b = " * DEEP + "1" + "}" * DEEP, 13, "pattern.a", id="tables"),
        pytest.param("a" + ".b" * DEEP + " = 1", 13, "pattern.a.b.b.b.b.b.b...", id="dotted"),
        pytest.param("[" + "a." * DEEP + "b]", 13, "a.a.a.a.a.a.a.a...", id="header"),
        pytest.param(  # each part within the limit, their sum past it
            "[" + "t." * 40 + "u]\n" + "k" + ".v" * 40 + " = 1", 13, "t.t.t.t.t.t.t.t...", id="sum"
        ),
    ],
)
def test_deep_nesting_is_refused_at_its_line(
    tmp_path: Path, tail: str, line: int, key: str
) -> None:
    message = run_error(tmp_path, f"{GOOD}{tail}\n")
    assert message == (
        f"{tmp_path / 'agentic.toml'}:{line}: {key}: nested more than 64 levels deep (tables, "
        "arrays, dotted keys); a run file needs a few levels: flatten it"
    )


def test_brackets_in_strings_and_comments_are_no_nesting(tmp_path: Path) -> None:
    brackets = "[{" * 100
    text = GOOD.replace(
        'instructions = "Writer. Draft."',
        f"instructions = \"{brackets}\"  # {brackets}\ndescription = '''\n{brackets}\n'''",
    )
    loaded = load_run_config(write(tmp_path, text))
    assert loaded.config.agents[0].instructions == brackets


def test_a_number_too_long_for_python_is_one_line(tmp_path: Path) -> None:
    message = run_error(tmp_path, GOOD.replace('type = "sequential"', "n = " + "9" * 5000))
    assert message == (
        f"{tmp_path / 'agentic.toml'}:12: pattern.n: invalid TOML: a number of over 4300 digits"
    )


def test_the_viewer_reading_a_run_file_reports_the_same_line(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD.encode() + b"\xff\n")
    message = one_line_error("viewer", "--workflow", path)
    assert message.startswith(f"{path}:13: not UTF-8 text: byte 0xFF at offset {len(GOOD)}")


# -- secrets --------------------------------------------------------------------------------------

MODEL_FIX = 'name the environment variable holding it instead: api_key_env = "NAME"'


def mcp(table: str) -> str:
    return f'{GOOD}\n[mcp.servers.api]\nurl = "https://mcp.example.com/mcp"\n{table}\n'


@pytest.mark.parametrize(
    ("text", "line", "key", "rule", "fix"),
    [
        pytest.param(  # issue 27: was "Input should be a valid string"
            GOOD.replace(
                'fast = "python:tests.cli_models:scripted"',
                f'fast = {{ provider = "openai", model = "gpt-4o", api_key = "{PLANTED}" }}',
            ),
            4, "models.fast.api_key", "api-key", MODEL_FIX, id="models-api-key",
        ),
        pytest.param(
            GOOD.replace(
                'fast = "python:tests.cli_models:scripted"',
                f'fast = {{ provider = "openai", options = {{ client_secret = "{PLANTED}" }} }}',
            ),
            4, "models.fast.options.client_secret", "secret", MODEL_FIX, id="models-secret",
        ),
        pytest.param(
            GOOD.replace(
                'fast = "python:tests.cli_models:scripted"',
                f'[models.fast]\nprovider = "openai"\noptions.password = "{PLANTED}"',
            ),
            6, "models.fast.options.password", "password", MODEL_FIX, id="models-password",
        ),
        pytest.param(
            GOOD.replace(
                'fast = "python:tests.cli_models:scripted"',
                f'fast = {{ provider = "openai", base_url = "https://me:{PLANTED}@llm.example" }}',
            ),
            4, "models.fast.base_url", "url-credentials", 'api_key_env = "NAME"',
            id="models-url",
        ),
        pytest.param(
            mcp(f'headers = {{ Authorization = "Bearer {PLANTED}" }}'),
            16, "mcp.servers.api.headers.Authorization", "authorization",
            'Authorization = "Bearer ${NAME}"', id="authorization-header",
        ),
        pytest.param(
            mcp(f'headers = {{ Cookie = "session={PLANTED}" }}'),
            16, "mcp.servers.api.headers.Cookie", "cookie", 'Cookie = "${NAME}"', id="cookie",
        ),
        pytest.param(
            mcp(f'headers = {{ X-Api-Key = "{PLANTED}" }}'),
            16, "mcp.servers.api.headers.X-Api-Key", "api-key", 'X-Api-Key = "${NAME}"',
            id="api-key-header",
        ),
        pytest.param(
            mcp(f'[mcp.servers.api.env]\nGITHUB_TOKEN = "{PLANTED}"'),
            17, "mcp.servers.api.env.GITHUB_TOKEN", "token", 'GITHUB_TOKEN = "${NAME}"',
            id="env-token",
        ),
        pytest.param(
            mcp(f'env = {{ PGPASSWORD = "{PLANTED}" }}'),
            16, "mcp.servers.api.env.PGPASSWORD", "password", 'PGPASSWORD = "${NAME}"',
            id="env-password",
        ),
        pytest.param(
            mcp(f'args = ["--verbose", "--password", "{PLANTED}"]'),
            16, "mcp.servers.api.args[2]", "password", "${NAME} in place of the value",
            id="args-option",
        ),
        pytest.param(
            mcp(f'args = ["--access-token={PLANTED}"]'),
            16, "mcp.servers.api.args[0]", "token", "${NAME} in place of the value",
            id="args-attached",
        ),
        pytest.param(
            GOOD + f'\n[mcp.servers.db]\nurl = "https://admin:{PLANTED}@db.example/mcp"\n',
            15, "mcp.servers.db.url", "url-credentials", "scheme://user:${NAME}@host",
            id="url-credentials",
        ),
        pytest.param(
            GOOD.replace("Writer. Draft.", f"Read postgres://bot:{PLANTED}@db/app."),
            8, "agents[0].instructions", "url-credentials", 'api_key_env = "NAME"',
            id="instructions",
        ),
    ],
)  # fmt: skip
def test_a_secret_is_refused_by_a_named_rule_without_showing_it(
    tmp_path: Path, text: str, line: int, key: str, rule: str, fix: str
) -> None:
    message = run_error(tmp_path, text)
    assert message.startswith(f"{tmp_path / 'agentic.toml'}:{line}: {key}: ")
    assert f"(secret rule {rule!r}): a run file holds no secrets; " in message
    assert fix in message
    assert PLANTED not in message
    assert PLANTED.lower() not in message.lower()


def test_the_rules_have_distinct_names() -> None:
    names = [rule.name for rule in SECRET_RULES]
    assert len(set(names)) == len(names)
    assert {"api-key", "token", "password", "secret", "authorization", "cookie"} < set(names)
    assert "url-credentials" in names


def test_names_that_only_look_like_secrets_and_env_references_pass(tmp_path: Path) -> None:
    text = mcp(
        'args = ["--token=${API_TOKEN}", "--password", "${DB_PASSWORD}", "--keyboard", "us"]\n'
        'headers = { Authorization = "Bearer ${API_TOKEN}", X-Max-Tokens = "100", '
        'Author = "me" }\n'
        "[mcp.servers.api.env]\n"
        'GITHUB_TOKEN = "${GITHUB_TOKEN}"\n'
        'TOKENIZERS_PARALLELISM = "false"\n'
        'KEYBOARD = "us"\n'
        'EMPTY_SECRET = ""\n'
        '[mcp.servers.db]\nurl = "https://bot:${DB_PASSWORD}@db.example/mcp"\n'
    ).replace(
        'fast = "python:tests.cli_models:scripted"',
        'fast = { provider = "openai", model = "gpt-4o", api_key_env = "OPENAI_API_KEY" }',
    )
    loaded = load_run_config(write(tmp_path, text))
    env = loaded.config.mcp.servers["api"].env
    assert env == {
        "GITHUB_TOKEN": "${GITHUB_TOKEN}",
        "TOKENIZERS_PARALLELISM": "false",
        "KEYBOARD": "us",
        "EMPTY_SECRET": "",
    }


def test_a_model_table_mistake_names_the_key_not_the_string_branch(tmp_path: Path) -> None:
    typo = GOOD.replace(
        'fast = "python:tests.cli_models:scripted"', 'fast = { provider = "openai", modle = "x" }'
    )
    assert run_error(tmp_path, typo).endswith(":4: models.fast.modle: unknown key")
    number = GOOD.replace('fast = "python:tests.cli_models:scripted"', "fast = 5")
    assert run_error(tmp_path, number).endswith(
        ':4: models.fast: expected a model spec ("provider:model") or a table '
        "(provider = ..., model = ...)"
    )


# -- references -----------------------------------------------------------------------------------


def test_references_are_read_from_the_environment_when_a_server_starts(tmp_path: Path) -> None:
    text = mcp(
        'args = ["--token=${API_TOKEN}", "--plain"]\n'
        'headers = { Authorization = "Bearer ${API_TOKEN}" }\n'
        'env = { GITHUB_TOKEN = "${GITHUB_TOKEN}" }'
    ).replace("mcp.example.com", "${HOST}")
    loaded = load_run_config(write(tmp_path, text))
    environ = {"API_TOKEN": "t-1", "GITHUB_TOKEN": "g-2", "HOST": "mcp.test"}
    [(name, server)] = describe_sources(loaded, {"api"}, environ).items()
    assert name == "api"
    assert server["url"] == "https://mcp.test/mcp"
    assert server["args"] == ["--token=t-1", "--plain"]
    assert server["headers"] == {"Authorization": "Bearer t-1"}
    assert server["env"] == {"GITHUB_TOKEN": "g-2"}
    assert loaded.config.mcp.servers["api"].headers["Authorization"] == "Bearer ${API_TOKEN}"


def test_a_reference_to_an_unset_variable_names_it_and_its_key(tmp_path: Path) -> None:
    loaded = load_run_config(write(tmp_path, mcp('headers = { X-Api-Key = "${MISSING_KEY}" }')))
    with pytest.raises(ConfigError) as raised:
        describe_sources(loaded, {"api"}, {})
    assert str(raised.value) == (
        f"{tmp_path / 'agentic.toml'}:16: mcp.servers.api.headers.X-Api-Key: the environment "
        "variable MISSING_KEY is not set (the file refers to it)"
    )
