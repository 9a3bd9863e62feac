"""agentic-bus tests: the session's real ``nats-server`` (fixture ``nats_server``, a URL) comes
from the root conftest's server fixtures.

``bus_graphs`` (the workflows of the distributed tests) must be importable by name, here and
in worker processes, so this directory goes on ``sys.path`` (and on their ``PYTHONPATH``).
"""

from __future__ import annotations

import sys
from pathlib import Path

TESTS_DIR = Path(__file__).resolve().parent
if str(TESTS_DIR) not in sys.path:
    sys.path.insert(0, str(TESTS_DIR))
