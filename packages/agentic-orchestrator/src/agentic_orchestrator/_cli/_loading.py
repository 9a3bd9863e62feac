"""``MODULE:NAME`` references: how the command line reaches user code (factories, tools)."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any

from agentic_orchestrator._cli._errors import UsageError


def load_object(reference: str, *, what: str = "object") -> Any:
    """The object ``MODULE:NAME`` (``NAME`` may be dotted) names.

    The current directory is importable first, as with ``python -m``: a user's
    ``agentic graph flows:build`` finds ``./flows.py``. Problems raise ``UsageError`` naming the
    reference.
    """
    module_name, sep, attribute = reference.partition(":")
    if not sep or not module_name or not attribute:
        raise UsageError(
            f"expected MODULE:NAME for the {what} (e.g. myapp.flows:build), got {reference!r}"
        )
    cwd = str(Path.cwd())
    if cwd not in sys.path:
        sys.path.insert(0, cwd)
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise UsageError(
            f"cannot import module {module_name!r} for the {what} {reference!r}: {exc}"
        ) from None
    target: Any = module
    try:
        for part in attribute.split("."):
            target = getattr(target, part)
    except AttributeError:
        raise UsageError(
            f"module {module_name!r} has no attribute {attribute!r} ({what} {reference!r})"
        ) from None
    return target
