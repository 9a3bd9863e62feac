"""The public API of agentic_mcp is exactly its sorted ``__all__``."""

import types

import agentic_mcp


def test_all_is_sorted_and_unique() -> None:
    assert list(agentic_mcp.__all__) == sorted(set(agentic_mcp.__all__))


def test_public_names_are_exactly_all() -> None:
    for name in agentic_mcp.__all__:  # names load lazily: load each one first
        getattr(agentic_mcp, name)
    public = {
        name
        for name, value in vars(agentic_mcp).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
    }
    assert public | {"__version__"} == set(agentic_mcp.__all__)


def test_version_is_a_release_string() -> None:
    assert agentic_mcp.__version__.count(".") >= 2


def test_the_api_names_are_exported() -> None:
    expected = {
        "MCPServerConfig",
        "MCPClient",
        "CodeMode",
        "CodeModeExecutor",
        "MCPClientError",
        "MCPConnectionError",
        "MCPTimeoutError",
        "MCPToolError",
        "MCPToolNotFoundError",
        "MCPToolNotAllowedError",
        "MCPClientClosedError",
    }
    assert expected <= set(agentic_mcp.__all__)
    assert issubclass(agentic_mcp.MCPClientClosedError, agentic_mcp.MCPClientError)
