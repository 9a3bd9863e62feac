"""The ``agentic`` command line (Typer + Rich). Not part of the Python API: the console script
``agentic`` calls :func:`main`; ``app`` is the Typer application (for ``CliRunner`` tests)."""

from agentic_orchestrator._cli._app import app, main

__all__ = ["app", "main"]
