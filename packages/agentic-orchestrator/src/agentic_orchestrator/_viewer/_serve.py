"""Serving the viewer's app with uvicorn (the caller has checked the address: ``check_bind``)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from agentic_orchestrator._viewer._errors import ViewerError

if TYPE_CHECKING:
    from agentic_core import ServerGuard

__all__ = ["serve_app"]

_GRACE_S = 2
"""How long open event streams may take to close once the server stops."""


async def serve_app(app: ServerGuard, *, host: str, port: int) -> None:
    """Serve ``app`` on ``host``:``port`` until cancelled."""
    if not 0 <= port <= 65535:
        raise ViewerError(f"port must be 0..65535, got {port}")
    import uvicorn  # the [viewer] extra: imported only to serve

    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        lifespan="off",
        timeout_graceful_shutdown=_GRACE_S,
    )
    server = uvicorn.Server(config)
    serving = asyncio.ensure_future(server.serve())
    try:
        await asyncio.shield(serving)
    except asyncio.CancelledError:
        # Cancelled (a test, an embedding program): shut down the way Ctrl-C does, so the
        # listening socket and open streams are closed, not left to the garbage collector.
        server.should_exit = True
        await serving
        raise
