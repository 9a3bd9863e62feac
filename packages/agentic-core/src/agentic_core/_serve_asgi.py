"""Serving an ASGI app with uvicorn until cancelled: the one loop every agentic server uses."""

from __future__ import annotations

import asyncio
from typing import Any, Literal

__all__ = ["serve_asgi"]


async def serve_asgi(
    app: Any,
    *,
    host: str,
    port: int,
    lifespan: Literal["on", "off"] = "off",
    grace_s: int = 2,
) -> None:
    """Serve ``app`` on ``host``:``port`` with uvicorn until cancelled (Ctrl-C, or the task).

    The caller has checked the address (``ServerGuard.check_bind``) and the port. Cancelling
    shuts the server down as Ctrl-C does: the listening socket and open streams (given
    ``grace_s`` seconds to finish) are closed, not left to the garbage collector.

    Raises:
        ImportError: uvicorn is not installed (it comes with each serving extra).
    """
    import uvicorn  # imported only to serve: no server, no import

    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        lifespan=lifespan,
        timeout_graceful_shutdown=grace_s,
    )
    server = uvicorn.Server(config)
    serving = asyncio.ensure_future(server.serve())
    try:
        await asyncio.shield(serving)
    except asyncio.CancelledError:
        server.should_exit = True
        await serving
        raise
