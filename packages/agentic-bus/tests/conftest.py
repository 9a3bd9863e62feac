"""agentic-bus tests: the session's real ``nats-server`` (fixture ``nats_server``, a URL) comes
from the root conftest's server fixtures."""
