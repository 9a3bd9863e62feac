"""agentic-sandbox.

Isolated code execution for agentic: a local process jail (``ProcessSandbox``), throwaway
containers on any Docker-API engine (``DockerSandbox``) and a workflow node running code in any
sandbox (``SandboxExecutor``).

Public names load lazily, on first use: ``import agentic_sandbox`` stays cheap.
``__init__.pyi`` is the one list of them.
"""

from agentic_core import lazy_exports as _lazy_exports

__getattr__, __dir__, __all__ = _lazy_exports(  # pyright: ignore[reportUnsupportedDunderAll]
    __name__, __file__, distribution="agentic-sandbox"
)
