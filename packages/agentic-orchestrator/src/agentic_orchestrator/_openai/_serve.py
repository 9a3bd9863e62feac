"""``serve_openai``: the endpoint served with uvicorn until cancelled, as the run viewer is."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

from agentic_orchestrator._errors import OrchestrationConfigError
from agentic_orchestrator._openai._app import create_openai_app
from agentic_orchestrator._openai._models import Target

__all__ = ["serve_openai"]

_GRACE_S = 2
"""How long open streams may take to close once the server stops."""


async def serve_openai(
    targets: Mapping[str, Target] | Sequence[Target],
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    token: str | None = None,
    **options: Any,
) -> None:
    """Serve ``create_openai_app(targets, token=token, **options)`` on ``host``:``port`` until
    cancelled (Ctrl-C). A host other than loopback needs ``token`` (``ServerGuardError``).

    Example:
        ```python
        await serve_openai([agent], port=8000)  # OpenAI(base_url="http://127.0.0.1:8000/v1")
        ```
    """
    if not 0 <= port <= 65535:
        raise OrchestrationConfigError(f"port must be 0..65535, got {port}")
    app = create_openai_app(targets, token=token, **options)
    app.check_bind(host)
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
        # Cancelled (a test, an embedding program): shut down as Ctrl-C does, sockets closed.
        server.should_exit = True
        await serving
        raise
