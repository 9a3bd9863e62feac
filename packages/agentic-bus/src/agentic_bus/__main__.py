"""``python -m agentic_bus worker MODULE:FACTORY --nats URL``."""

import sys

from agentic_bus._cli import worker_command

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] != "worker":
        sys.exit("usage: python -m agentic_bus worker MODULE:FACTORY --nats URL [--slots N]")
    sys.exit(worker_command(sys.argv[2:]))
