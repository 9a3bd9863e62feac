"""Secrets never reach a log line: keys named like secrets, and secrets inside text."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from typing import Any

import pytest
import structlog

from agentic_core import configure_logging, redact_secrets

_log = structlog.get_logger("agentic.test.redaction")

OPENAI_KEY = "sk-proj-Abc123Def456Ghi789"
ANTHROPIC_KEY = "sk-ant-api03-XyZ987wvu654"
BEARER = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl"
BASIC = "dXNlcjpodW50ZXIy"  # base64 of "user:hunter2"
PASSWORD = "hunter2-Secret!"  # noqa: S105 - a fake secret to mask


@pytest.fixture(autouse=True)
def _reset_structlog() -> Iterator[None]:
    yield
    structlog.reset_defaults()
    logging.getLogger().handlers.clear()


def _record(capsys: pytest.CaptureFixture[str]) -> tuple[str, dict[str, Any]]:
    line = capsys.readouterr().err.strip().splitlines()[-1]
    return line, json.loads(line)


def test_configure_logging_masks_secret_keys_and_secrets_in_text(
    capsys: pytest.CaptureFixture[str],
) -> None:
    configure_logging(json=True)

    _log.info(
        f"calling the model with key {ANTHROPIC_KEY}",
        api_key=OPENAI_KEY,
        headers={"Authorization": f"Bearer {BEARER}", "X-Api-Key": "k-1", "Accept": "json"},
        config={"db": {"password": PASSWORD, "host": "db.local"}, "retries": [1, 2]},
        url=f"postgresql://app:{PASSWORD}@db.local:5432/main",
        header=f"Authorization: Basic {BASIC}",
        note=f"retrying with Bearer {BEARER} after 401",
        query=f"https://api.example.com/v1?api_key={PASSWORD}&page=2",
        client_secret="s3",  # noqa: S106 - a fake secret to mask
        cookie="session=abc",
    )

    line, record = _record(capsys)
    for secret in (OPENAI_KEY, ANTHROPIC_KEY, BEARER, BASIC, PASSWORD, "k-1", "s3", "abc"):
        assert secret not in line, secret
    assert record["event"] == "calling the model with key [REDACTED]"
    assert record["api_key"] == "[REDACTED]"
    assert record["headers"] == {
        "Authorization": "[REDACTED]",
        "X-Api-Key": "[REDACTED]",
        "Accept": "json",
    }
    assert record["config"] == {
        "db": {"password": "[REDACTED]", "host": "db.local"},
        "retries": [1, 2],
    }
    assert record["url"] == "postgresql://app:[REDACTED]@db.local:5432/main"
    assert record["header"] == "Authorization: Basic [REDACTED]"
    assert record["note"] == "retrying with Bearer [REDACTED] after 401"
    assert record["query"] == "https://api.example.com/v1?api_key=[REDACTED]&page=2"
    assert (record["client_secret"], record["cookie"]) == ("[REDACTED]", "[REDACTED]")


def test_exception_text_is_masked_too(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging(json=True)

    try:
        raise ConnectionError(f"cannot reach redis://:{PASSWORD}@cache:6379/0")
    except ConnectionError:
        _log.exception("store unreachable")

    line, record = _record(capsys)
    assert PASSWORD not in line
    assert "redis://:[REDACTED]@cache:6379/0" in record["exception"]


def test_key_value_console_lines_are_masked(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging(json=False)

    _log.warning("auth failed", token=OPENAI_KEY, detail=f"sent Bearer {BEARER}")

    err = capsys.readouterr().err
    assert OPENAI_KEY not in err
    assert BEARER not in err
    assert "[REDACTED]" in err


def test_what_only_looks_like_a_secret_is_kept() -> None:
    event = {
        "event": "basic usage of the sk- prefix, a token budget and Bearer",
        "max_tokens": 512,
        "input_tokens": 10,
        "token_count": 3,
        "monkey": "banana",
        "url": "https://example.com/path?page=2#top",
        "model": "gpt-4o-mini",
    }

    assert redact_secrets(None, "info", dict(event)) == event


def test_redaction_copies_containers_and_never_changes_the_callers() -> None:
    headers = {"authorization": "Bearer abcdefgh"}
    messages = [f"key {OPENAI_KEY}"]

    redacted = redact_secrets(None, "info", {"headers": headers, "messages": messages})

    assert redacted == {"headers": {"authorization": "[REDACTED]"}, "messages": ["key [REDACTED]"]}
    assert headers == {"authorization": "Bearer abcdefgh"}
    assert messages == [f"key {OPENAI_KEY}"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"Authorization: Bearer {BEARER}", "Authorization: Bearer [REDACTED]"),
        ("ghp_abcdefghijklmnopqrstuvwxyz0123456789", "[REDACTED]"),
        ("xoxb-1234567890-abcdefghij", "[REDACTED]"),
        ("AKIAABCDEFGHIJKLMNOP is the id", "[REDACTED] is the id"),
        ("amqp://guest:guest@localhost:5672/", "amqp://guest:[REDACTED]@localhost:5672/"),
        ("password=hunter2 user=bob", "password=[REDACTED] user=bob"),
        # A lone user in a URL is a token (NATS, GitHub): nats://TOKEN@host.
        (
            "connect nats://s3cr3tT0ken@nats.local:4222 failed",
            "connect nats://[REDACTED]@nats.local:4222 failed",
        ),
        (
            "GET https://host/mcp?api_key=k3y&page=2",
            "GET https://host/mcp?api_key=[REDACTED]&page=2",
        ),
        (
            "servers nats://a:pw@h1:4222,nats://tok@h2:4222",
            "servers nats://a:[REDACTED]@h1:4222,nats://[REDACTED]@h2:4222",
        ),
    ],
)
def test_secrets_inside_text_are_masked(text: str, expected: str) -> None:
    assert redact_secrets(None, "info", {"event": text}) == {"event": expected}
