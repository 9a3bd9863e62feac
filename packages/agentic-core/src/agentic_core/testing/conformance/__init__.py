"""Conformance suites: one definition of a correct checkpoint, state and vector store, message
bus and sandbox.

Every back-end, in every package, proves itself by running the same tests. Subclass a suite in a
test module, name the subclass ``Test...`` so pytest collects it, and give it the object under
test as a fixture (``checkpoint_store``, ``state_store``, ``vector_store``, ``message_bus`` or
``sandbox``), sync
or async, with any fixtures it needs:

```python
from agentic_core.testing.conformance import CheckpointStoreConformance, StateStoreConformance


class TestFileCheckpointStore(CheckpointStoreConformance):
    @pytest.fixture
    def checkpoint_store(self, tmp_path: Path) -> CheckpointStore:
        return FileCheckpointStore(tmp_path)


class TestRedisStateStore(StateStoreConformance):
    ttl_s, ttl_wait_s = 0.2, 1.0  # slower expiry than the defaults allow for

    @pytest_asyncio.fixture
    async def state_store(self, redis_url: str) -> AsyncIterator[StateStore]:
        store = RedisStateStore(redis_url, prefix=uuid.uuid4().hex)
        yield store
        await store.close()
```

Each test must get a new, empty store. The suites need pytest and pytest-asyncio; each marks
its own tests, so they run whatever the project's ``asyncio_mode`` (in ``strict`` mode declare
an async fixture with ``pytest_asyncio.fixture``). Import this
package from tests only: it imports pytest. Class attributes tune each suite to its back-end
(``concurrent_saves``; ``ttl_s``, ``ttl_wait_s``; ``max_output_bytes``, ``timeout_slack_s``,
``shell``): see each suite's docstring.

One suite per module: ``_checkpoint_store`` (with ``make_checkpoint``, the checkpoint its tests
save), ``_state_store``, ``_vector_store``, ``_message_bus`` and ``_sandbox``.
"""

import pytest

# Before the suites are imported: pytest then rewrites their asserts, so a failing back-end sees
# the compared values, not a bare AssertionError.
pytest.register_assert_rewrite(
    "agentic_core.testing.conformance._checkpoint_store",
    "agentic_core.testing.conformance._message_bus",
    "agentic_core.testing.conformance._sandbox",
    "agentic_core.testing.conformance._state_store",
    "agentic_core.testing.conformance._vector_store",
)

from agentic_core.testing.conformance._checkpoint_store import (  # noqa: E402
    CheckpointStoreConformance,
    make_checkpoint,
)
from agentic_core.testing.conformance._message_bus import MessageBusConformance  # noqa: E402
from agentic_core.testing.conformance._sandbox import (  # noqa: E402
    InteractiveSandboxConformance,
    SandboxConformance,
)
from agentic_core.testing.conformance._state_store import StateStoreConformance  # noqa: E402
from agentic_core.testing.conformance._vector_store import VectorStoreConformance  # noqa: E402

__all__ = [
    "CheckpointStoreConformance",
    "InteractiveSandboxConformance",
    "MessageBusConformance",
    "SandboxConformance",
    "StateStoreConformance",
    "VectorStoreConformance",
    "make_checkpoint",
]
