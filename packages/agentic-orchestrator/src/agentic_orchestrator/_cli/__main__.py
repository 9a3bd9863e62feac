"""``python -m agentic_orchestrator._cli ...``: the ``agentic`` command without its script."""

from agentic_orchestrator._cli._app import main

if __name__ == "__main__":
    main()
