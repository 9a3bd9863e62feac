"""Engine tests run under every runtime: in-process asyncio and the JSON round-trip one."""

from __future__ import annotations

import pytest

from agentic_core import LocalRuntime, Runtime, SerializingRuntime


@pytest.fixture(params=["local", "serializing"])
def runtime(request: pytest.FixtureRequest) -> Runtime:
    """Each engine test runs once per runtime."""
    return LocalRuntime() if request.param == "local" else SerializingRuntime()
