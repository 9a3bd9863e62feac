"""The command line's own errors: what went wrong, said in one line, with the exit code."""

from __future__ import annotations

from agentic_orchestrator._errors import OrchestrationConfigError, OrchestratorError


class CLIError(OrchestratorError):
    """A command cannot go on; ``str(error)`` is the line shown to the user (no traceback)."""

    exit_code: int = 1


class UsageError(CLIError):
    """A wrong argument or an unusable spec on the command line (exit code 2)."""

    exit_code = 2


class ConfigError(CLIError, OrchestrationConfigError):
    """A run configuration is wrong: ``file:line: key.path: message`` (exit code 2).

    ``line`` is 0 when the file could not be read or the key is not in it.
    """

    exit_code = 2

    def __init__(self, file: str, line: int, key: str, message: str) -> None:
        self.file = file
        self.line = line
        self.key = key
        self.message = message
        where = f"{file}:{line}" if line else file
        super().__init__(f"{where}: {key}: {message}" if key else f"{where}: {message}")
