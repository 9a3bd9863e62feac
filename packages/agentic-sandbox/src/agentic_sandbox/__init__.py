"""agentic-sandbox.

Isolated code execution for agentic: a local process jail (``ProcessSandbox``), throwaway
containers on any Docker-API engine (``DockerSandbox``) and a workflow node running code in any
sandbox (``SandboxExecutor``).

Public names load lazily, on first use: ``import agentic_sandbox`` stays cheap.
"""

import typing as _typing

__all__ = [
    "CodeExecutionRequest",
    "DockerSandbox",
    "ProcessSandbox",
    "SandboxError",
    "SandboxExecutor",
    "SandboxNotReadyError",
    "__version__",
]

# Public name -> the module that defines it (imported on first access).
_LAZY: dict[str, str] = {
    "CodeExecutionRequest": "agentic_sandbox._executor",
    "DockerSandbox": "agentic_sandbox._docker_sandbox",
    "ProcessSandbox": "agentic_sandbox._process_sandbox",
    "SandboxError": "agentic_sandbox._errors",
    "SandboxExecutor": "agentic_sandbox._executor",
    "SandboxNotReadyError": "agentic_sandbox._errors",
}

if _typing.TYPE_CHECKING:
    from agentic_sandbox._docker_sandbox import DockerSandbox
    from agentic_sandbox._errors import SandboxError, SandboxNotReadyError
    from agentic_sandbox._executor import CodeExecutionRequest, SandboxExecutor
    from agentic_sandbox._process_sandbox import ProcessSandbox

    __version__: str
else:

    def __getattr__(name: str) -> object:
        module_name = _LAZY.get(name)
        if module_name is not None:
            import importlib

            value = getattr(importlib.import_module(module_name), name)
        elif name == "__version__":
            # importlib.metadata costs ~30 ms to import: read the version only when asked.
            from importlib.metadata import version

            value = version("agentic-sandbox")
        else:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        globals()[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*globals(), *__all__})
