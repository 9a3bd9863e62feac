"""Serving the viewer's app with uvicorn, on a loopback address unless asked otherwise.

Importing this module needs no web server: the command line checks hosts with ``is_loopback``
before it knows whether the ``[viewer]`` extra is installed.
"""

from __future__ import annotations

import asyncio
import ipaddress
from typing import TYPE_CHECKING

from agentic_orchestrator._viewer._errors import ViewerError

if TYPE_CHECKING:
    from starlette.types import ASGIApp

__all__ = ["is_loopback", "serve_app"]

_GRACE_S = 2
"""How long open event streams may take to close once the server stops."""


def is_loopback(host: str) -> bool:
    """Whether ``host`` only reaches this machine (``localhost``, 127.0.0.0/8, ``::1``)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


async def serve_app(app: ASGIApp, *, host: str, port: int, allow_remote: bool) -> None:
    """Serve ``app`` until cancelled; a non-loopback ``host`` needs ``allow_remote=True``."""
    if not is_loopback(host) and not allow_remote:
        raise ViewerError(
            f"the viewer serves 127.0.0.1 only ({host!r} would let other machines answer and "
            "resume runs); pass allow_remote=True behind your own authentication"
        )
    if not 0 <= port <= 65535:
        raise ViewerError(f"port must be 0..65535, got {port}")
    import uvicorn  # the [viewer] extra: imported only to serve (is_loopback needs none)

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
