"""Logging setup: structlog, one logger per module, key=value or JSON lines.

Two processors come with it, on by default in ``configure_logging`` and public for programs
that configure structlog themselves: ``add_run_context`` (which run, superstep and executor a
line comes from, and the current trace) and ``redact_secrets`` (keys and values that look like
credentials never reach a log line).
"""

from __future__ import annotations

import logging
import re
import sys
from collections.abc import Mapping, MutableMapping
from typing import Any

import structlog

from agentic_core._redact import UNPARSABLE_URL, is_secret_name, redact_url
from agentic_core._run_context import CURRENT_INVOCATION, enable
from agentic_core._telemetry import tracer

__all__ = ["add_run_context", "configure_logging", "redact_secrets"]

# Whoever can put add_run_context in a processor chain has loaded this module: from now on the
# engine keeps the invocation in CURRENT_INVOCATION for it.
enable()

REDACTED = "[REDACTED]"

# Secrets inside text. Each pattern keeps what says what the secret was, and masks the rest.
_SECRET_TEXT: tuple[tuple[re.Pattern[str], str], ...] = (
    # Authorization header values: "Bearer <token>", "Basic <base64>" (not "basic usage").
    (re.compile(r"\b([Bb]earer)\s+[A-Za-z0-9\-._~+/]+=*"), rf"\1 {REDACTED}"),
    (re.compile(r"\b(Basic)\s+(?![a-z]+\b)[A-Za-z0-9+/]{6,}={0,2}"), rf"\1 {REDACTED}"),
    # Provider API keys by their prefixes: OpenAI/Anthropic/... "sk-", GitHub, Slack, Hugging
    # Face, GitLab, Google, AWS access key ids.
    (re.compile(r"\b(?:sk|rk|pk)-[A-Za-z0-9_\-]{8,}"), REDACTED),
    (re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})"), REDACTED),
    (re.compile(r"\bxox[abprs]-[A-Za-z0-9\-]{10,}"), REDACTED),
    (re.compile(r"\b(?:hf_[A-Za-z0-9]{20,}|glpat-[A-Za-z0-9_\-]{20,})"), REDACTED),
    (re.compile(r"\bAIza[0-9A-Za-z_\-]{30,}"), REDACTED),
    (re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"), REDACTED),
    # Query parameters and key=value pairs named like secrets: ?api_key=..., password=...
    (
        re.compile(
            r"(?i)(?<![A-Za-z0-9])((?:api[_-]?key|[a-z_]*token|[a-z_]*secret|password|passwd)=)"
            r"[^&\s\"',;]+"
        ),
        rf"\1{REDACTED}",
    ),
)


# A URL inside text, up to what cannot be part of one in a message.
_URL = re.compile(r"\b[A-Za-z][A-Za-z0-9+.\-]*://[^\s\"'<>`]+")
# Its password, for text that does not parse as a URL: scheme://user:password@host.
_URL_PASSWORD = re.compile(r"\b([A-Za-z][A-Za-z0-9+.\-]*://[^\s/:@]*):[^\s/@]+@")


def _redact_url_in_text(match: re.Match[str]) -> str:
    url = match.group(0)
    redacted = redact_url(url, mask=REDACTED)
    if redacted == UNPARSABLE_URL:
        return _URL_PASSWORD.sub(rf"\1:{REDACTED}@", url)
    return redacted


def _redact_text(text: str) -> str:
    if "://" in text:
        text = _URL.sub(_redact_url_in_text, text)
    for pattern, replacement in _SECRET_TEXT:
        text = pattern.sub(replacement, text)
    return text


def _redact(value: Any) -> Any:
    """``value`` with secrets masked; containers are copied, never changed in place."""
    if isinstance(value, str):
        return _redact_text(value)
    if isinstance(value, Mapping):
        return {
            key: REDACTED if isinstance(key, str) and is_secret_name(key) else _redact(item)
            for key, item in value.items()  # pyright: ignore[reportUnknownVariableType]
        }
    if isinstance(value, list | tuple):
        return type(value)(_redact(item) for item in value)  # pyright: ignore[reportUnknownArgumentType, reportUnknownVariableType]
    return value


def redact_secrets(
    logger: Any, method_name: str, event_dict: MutableMapping[str, Any]
) -> MutableMapping[str, Any]:
    """A structlog processor that masks secrets as ``[REDACTED]``, in nested values too.

    Values under keys named like secrets (``api_key``, ``apikey``, ``token``, ``secret``,
    ``password``, ``authorization``, ``credentials``, ``cookie``, ...) are replaced whole; inside
    text, ``sk-...``-style API keys, ``Bearer <token>``, ``Basic <base64>``, URLs (by
    :func:`agentic_core.redact_url`: a password, a lone token user as in ``nats://TOKEN@host``,
    secret query parameters) and ``api_key=...``-style parameters are masked. Put
    it after ``format_exc_info`` (so exception text is covered) and before the renderer::

        structlog.configure(processors=[..., format_exc_info, redact_secrets, JSONRenderer()])
    """
    for key, value in event_dict.items():
        if is_secret_name(key):
            event_dict[key] = REDACTED
        elif isinstance(value, str | Mapping | list | tuple):
            event_dict[key] = _redact(value)
    return event_dict


def add_run_context(
    logger: Any, method_name: str, event_dict: MutableMapping[str, Any]
) -> MutableMapping[str, Any]:
    """A structlog processor that adds where a line comes from: ``run_id``, ``superstep`` and
    ``executor_id`` while an executor runs (in any process), and ``trace_id``/``span_id`` (hex,
    as trace back-ends show them) while an OpenTelemetry span is current and telemetry is on.

    Values the line binds itself win. ``configure_logging`` includes it; add it to your own
    ``structlog.configure(processors=[...])`` otherwise.
    """
    invocation = CURRENT_INVOCATION.get()
    if invocation is not None:
        event_dict.setdefault("run_id", invocation.run_id)
        event_dict.setdefault("superstep", invocation.superstep)
        event_dict.setdefault("executor_id", invocation.executor_id)
    if tracer() is not None:
        from opentelemetry import trace

        span_context = trace.get_current_span().get_span_context()
        if span_context.is_valid:
            event_dict.setdefault("trace_id", format(span_context.trace_id, "032x"))
            event_dict.setdefault("span_id", format(span_context.span_id, "016x"))
    return event_dict


def configure_logging(*, json: bool = False, level: int | str = "INFO") -> None:
    """Configure structlog (and the stdlib root logger) for agentic.

    ``json=True`` renders one JSON object per line (for collectors); otherwise key=value
    console lines. Every line carries the run context (``add_run_context``) and has its secrets
    masked (``redact_secrets``). Call it once at program start; libraries never call it
    themselves.
    """
    numeric = logging.getLevelNamesMapping().get(level.upper()) if isinstance(level, str) else level
    if numeric is None:
        raise ValueError(f"unknown log level {level!r}")
    renderer: structlog.typing.Processor = (
        structlog.processors.JSONRenderer() if json else structlog.dev.ConsoleRenderer(colors=False)
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            add_run_context,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            redact_secrets,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=False,
    )
    logging.basicConfig(level=numeric, stream=sys.stderr, format="%(message)s", force=True)
