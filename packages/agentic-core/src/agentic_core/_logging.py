"""Logging setup: structlog, one logger per module, key=value or JSON lines."""

from __future__ import annotations

import logging
import sys

import structlog


def configure_logging(*, json: bool = False, level: int | str = "INFO") -> None:
    """Configure structlog (and the stdlib root logger) for agentic.

    ``json=True`` renders one JSON object per line (for collectors); otherwise key=value
    console lines. Call it once at program start; libraries never call it themselves.
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
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=False,
    )
    logging.basicConfig(level=numeric, stream=sys.stderr, format="%(message)s", force=True)
