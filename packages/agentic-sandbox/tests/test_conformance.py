"""Both sandboxes pass core's Sandbox conformance suite (ProcessSandbox in its default jail,
DockerSandbox on the Podman and the Docker Engine test engines)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from agentic_core.protocols import Sandbox
from agentic_core.testing.conformance import InteractiveSandboxConformance
from agentic_sandbox import DockerSandbox, ProcessSandbox
from tests.fixtures.engines import ContainerEngine
from tests.fixtures.system_tools import require_ready_sandbox


class TestProcessSandbox(InteractiveSandboxConformance):
    max_output_bytes = 200_000

    @pytest.fixture
    async def sandbox(self) -> AsyncIterator[Sandbox]:
        async with ProcessSandbox(max_output_bytes=self.max_output_bytes, timeout_s=20) as box:
            await require_ready_sandbox(box)
            yield box


class TestDockerSandbox(InteractiveSandboxConformance):
    max_output_bytes = 200_000

    @pytest.fixture
    async def sandbox(self, container_engine: ContainerEngine) -> AsyncIterator[Sandbox]:
        async with DockerSandbox(
            container_engine.python_image,
            base_url=container_engine.base_url,
            max_output_bytes=self.max_output_bytes,
            timeout_s=20,
        ) as box:
            yield box
        assert container_engine.sandbox_containers() == []
