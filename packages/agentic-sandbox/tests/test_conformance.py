"""ProcessSandbox passes core's Sandbox conformance suite (in every isolation mode it has)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from agentic_core.protocols import Sandbox
from agentic_core.testing.conformance import InteractiveSandboxConformance
from agentic_sandbox import ProcessSandbox


class TestProcessSandbox(InteractiveSandboxConformance):
    max_output_bytes = 200_000

    @pytest.fixture
    async def sandbox(self) -> AsyncIterator[Sandbox]:
        async with ProcessSandbox(max_output_bytes=self.max_output_bytes, timeout_s=20) as box:
            yield box
