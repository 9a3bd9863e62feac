"""The viewer's web server comes from the optional extra ``agentic-orchestrator[viewer]``."""

from __future__ import annotations

import importlib.util

from agentic_orchestrator._viewer._errors import ViewerError

__all__ = ["INSTALL_HINT", "require_viewer_extra"]

INSTALL_HINT = "pip install 'agentic-orchestrator[viewer]'"
_MODULES = ("starlette", "uvicorn", "sse_starlette")


def require_viewer_extra() -> None:
    """Raise ``ViewerError`` naming the install command when a web server module is missing."""
    missing = [name for name in _MODULES if importlib.util.find_spec(name) is None]
    if missing:
        raise ViewerError(
            f"the run viewer needs {', '.join(missing)}: {INSTALL_HINT}",
        )
