"""The Tool protocol: anything an agent can call."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class Tool(Protocol):
    """A callable capability offered to a model: a name, a description, a JSON schema.

    ``invoke`` receives the model's arguments (already parsed from JSON) and returns a
    JSON-able result; raising makes the call an error result the model sees.
    """

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...

    @property
    def parameters(self) -> dict[str, Any]: ...

    async def invoke(self, arguments: Mapping[str, Any]) -> Any: ...
