"""agentic-mcp.

Model Context Protocol client, agent tools and Code Mode for agentic.
"""

import typing as _typing

__all__ = ["__version__"]

if _typing.TYPE_CHECKING:
    __version__: str
else:

    def __getattr__(name: str) -> str:
        # The version is read from the installed metadata on first use: importing
        # importlib.metadata costs ~30 ms, which `import agentic_mcp` should not pay.
        if name == "__version__":
            from importlib.metadata import version

            globals()["__version__"] = value = version("agentic-mcp")
            return value
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
