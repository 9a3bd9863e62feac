"""``serve_openai``: the endpoint served with uvicorn until cancelled, as the run viewer is."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agentic_core import serve_asgi
from agentic_orchestrator._errors import OrchestrationConfigError
from agentic_orchestrator._openai._app import create_openai_app
from agentic_orchestrator._openai._models import Target

__all__ = ["serve_openai"]


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
    await serve_asgi(app, host=host, port=port)
