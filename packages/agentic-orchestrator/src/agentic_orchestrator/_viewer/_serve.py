"""Serving the viewer's app with uvicorn (the caller has checked the address: ``check_bind``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentic_core import serve_asgi
from agentic_orchestrator._viewer._errors import ViewerError

if TYPE_CHECKING:
    from agentic_core import ServerGuard

__all__ = ["serve_app"]


async def serve_app(app: ServerGuard, *, host: str, port: int) -> None:
    """Serve ``app`` on ``host``:``port`` until cancelled."""
    if not 0 <= port <= 65535:
        raise ViewerError(f"port must be 0..65535, got {port}")
    await serve_asgi(app, host=host, port=port)
