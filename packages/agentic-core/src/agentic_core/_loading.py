"""``MODULE:NAME`` references: how command lines and run files reach user code."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any

from agentic_core._errors import AgentCoreError

__all__ = ["ObjectReferenceError", "load_object"]


class ObjectReferenceError(AgentCoreError, ValueError):
    """A ``MODULE:NAME`` reference that is malformed, or names nothing that imports."""


def load_object(reference: str, *, what: str = "object") -> Any:
    """The object ``MODULE:NAME`` names (``NAME`` may be dotted: ``flows:Factory.build``).

    The current directory is importable first, as with ``python -m``: ``flows:build`` finds
    ``./flows.py`` wherever the command runs from. ``what`` says what the reference is for, in
    errors (``"workflow factory"``).

    Raises:
        ObjectReferenceError: the reference is not ``MODULE:NAME``, its module does not import,
            or the module has no such attribute; the message names the reference.
    """
    module_name, sep, attribute = reference.partition(":")
    if not sep or not module_name or not attribute:
        raise ObjectReferenceError(
            f"expected MODULE:NAME for the {what} (e.g. myapp.flows:build), got {reference!r}"
        )
    cwd = str(Path.cwd())
    if cwd not in sys.path:
        sys.path.insert(0, cwd)
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ObjectReferenceError(
            f"cannot import module {module_name!r} for the {what} {reference!r}: {exc}"
        ) from None
    target: Any = module
    try:
        for part in attribute.split("."):
            target = getattr(target, part)
    except AttributeError:
        raise ObjectReferenceError(
            f"module {module_name!r} has no attribute {attribute!r} ({what} {reference!r})"
        ) from None
    return target
