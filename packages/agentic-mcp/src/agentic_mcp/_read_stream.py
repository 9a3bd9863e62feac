"""A wrapper of an SDK read stream that passes everything on to it: the base of the client's
end-of-stream watcher and the server's stdio line answerer."""

from __future__ import annotations

from types import TracebackType
from typing import Any, Self

__all__ = ["DelegatingReadStream"]


class DelegatingReadStream:
    """Everything the SDK asks of a read stream, passed on to ``inner``; subclasses change
    ``receive`` and ``__anext__``."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:  # last_context and anything else the SDK reads
        return getattr(self._inner, name)

    async def receive(self) -> Any:
        return await self._inner.receive()

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> Any:
        return await self._inner.__anext__()

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> Self:
        await self._inner.__aenter__()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> bool | None:
        return await self._inner.__aexit__(exc_type, exc_val, exc_tb)
