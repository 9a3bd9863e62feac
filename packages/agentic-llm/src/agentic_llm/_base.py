"""HTTPChatClient: what every HTTP provider client shares (lifecycle, repr, health check).

A provider subclass sets ``provider``, builds its ``HTTPClient`` in ``__init__`` and implements
``generate`` / ``generate_stream`` with its own request/response mapping (kept in a pure
``_mapping`` module beside it) plus ``health_check`` as one cheap ``_probe``.
"""

from __future__ import annotations

from types import TracebackType
from typing import Self

import structlog

from agentic_core import BaseChatClient
from agentic_llm._http import HTTPClient, display_url

_log = structlog.get_logger(__name__)


class HTTPChatClient(BaseChatClient):
    """A ``ChatClient`` over one reusable HTTP connection pool.

    Use it with ``async with`` or call ``aclose()`` when done; its ``repr`` shows the model and
    base URL only, never a key.
    """

    def __init__(self, model: str, http: HTTPClient) -> None:
        if not model:
            raise ValueError(f"{type(self).__name__} needs a model name")
        self.model = model
        self._http = http

    @property
    def base_url(self) -> str:
        """The API root every path is relative to."""
        return self._http.base_url

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(model={self.model!r}, base_url={display_url(self.base_url)!r})"
        )

    async def aclose(self) -> None:
        """Close the connection pool; the client cannot be used afterwards (idempotent)."""
        await self._http.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def _probe(self, method: str, path: str) -> bool:
        """One request without retries: True on a 2xx answer, else False with the reason logged."""
        try:
            await self._http.request_json(method, path, max_retries=0)
        except Exception as exc:  # noqa: BLE001 - a health check reports, it never raises
            _log.warning(
                "llm_health_check_failed",
                provider=self.provider,
                model=self.model,
                reason=self._http.redact(f"{type(exc).__name__}: {exc}"),
            )
            return False
        return True
