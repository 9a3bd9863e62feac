"""Every package's public API is exactly its sorted ``__all__``, and exported names only grow.

One test for the seven packages (and core's public subpackages): ``__all__`` sorted and
unique, the public names after every lazy name is loaded exactly ``__all__``, a release
``__version__``, importing a package loading no implementation module, the names API.md
promises exported, errors under the package's root. ``data/exported_names.json`` is the API as
it stood before the issue-28 renames: every name in it must still be exported (a renamed name
stays as an alias), so the set only grows; regenerate it only when a name is removed on
purpose, in a release that says so.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
import types
from pathlib import Path

import pytest

PACKAGES = [
    "agentic_core",
    "agentic_llm",
    "agentic_sandbox",
    "agentic_mcp",
    "agentic_bus",
    "agentic_storage",
    "agentic_orchestrator",
]
"""The distributions' top-level packages: lazily loaded, each with a ``__version__``."""

NAMESPACES = [
    *PACKAGES,
    "agentic_core.protocols",
    "agentic_core.stores",
    "agentic_core.testing",
    "agentic_core.testing.conformance",
]
"""Every public module with an ``__all__``."""

API_NAMES = {
    "agentic_core": {
        "Agent",
        "AgenticError",
        "BusMessage",
        "ChatAgent",
        "ChatClient",
        "ChatMessage",
        "CheckpointStore",
        "ContinuationToken",
        "Embedder",
        "ExecutionResult",
        "Executor",
        "InMemoryBus",
        "InMemoryCheckpointStore",
        "InMemoryStateStore",
        "InMemoryVectorStore",
        "InteractiveSandbox",
        "MessageBus",
        "Sandbox",
        "SandboxProcess",
        "StateStore",
        "StateStoreCheckpointStore",
        "StateStoreMemoryProvider",
        "StateStoreMessageStore",
        "VectorPoint",
        "VectorSearchResult",
        "VectorStore",
        "Workflow",
        "WorkflowBuilder",
        "WorkflowContext",
        "handler",
        "lazy_exports",
        "tool",
    },
    "agentic_core.testing": {"FunctionChatClient", "ScriptedChatClient", "ScriptedSandbox"},
    "agentic_core.testing.conformance": {
        "CheckpointStoreConformance",
        "InteractiveSandboxConformance",
        "MessageBusConformance",
        "SandboxConformance",
        "StateStoreConformance",
        "VectorStoreConformance",
        "make_checkpoint",
    },
    "agentic_llm": {
        "AnthropicChatClient",
        "AuthenticationError",
        "ContextLengthError",
        "GeminiChatClient",
        "LLMError",
        "LLMTimeoutError",
        "LocalChatClient",
        "OllamaChatClient",
        "OpenAIChatClient",
        "ProviderError",
        "RateLimitError",
        "create_chat_client",
    },
    "agentic_sandbox": {
        "CodeExecutionRequest",
        "DockerSandbox",
        "ProcessSandbox",
        "SandboxError",
        "SandboxExecutor",
        "SandboxNotReadyError",
    },
    "agentic_mcp": {
        "CodeMode",
        "CodeModeExecutor",
        "CodeModeResult",
        "MCPClient",
        "MCPClientClosedError",
        "MCPClientError",
        "MCPConnectionError",
        "MCPServerConfig",
        "MCPTimeoutError",
        "MCPToolError",
        "MCPToolNotAllowedError",
        "MCPToolNotFoundError",
        "MCPToolResult",
    },
    "agentic_bus": {
        "NatsBus",
        "NatsEventSink",
        "NatsKVStateStore",
        "NatsRuntime",
        "ProxyAgent",
        "Subjects",
        "Worker",
        "serve_agent",
    },
    "agentic_storage": {
        "KeyPatterns",
        "QdrantVectorStore",
        "RedisCheckpointStore",
        "RedisStateStore",
        "VectorMemoryProvider",
    },
    "agentic_orchestrator": {
        "CodeAssemblerExecutor",
        "CompileValidatorExecutor",
        "ConcurrentBuilder",
        "DagResult",
        "DagWorkflow",
        "DelegatingAgent",
        "ErrorFingerprinter",
        "ExecutionMode",
        "GroupChatBuilder",
        "HandoffBuilder",
        "LLMGeneratorExecutor",
        "MagenticBuilder",
        "Orchestrator",
        "SequentialBuilder",
        "TaskAgent",
        "TestValidatorExecutor",
        "Workflow",
        "WorkflowStep",
        "any_termination",
        "code_failed",
        "code_passed",
        "keyword_termination",
        "llm_selector",
        "max_messages_termination",
        "max_rounds_termination",
        "no_repeat_selector",
        "repair_is_simple",
        "round_robin_selector",
        "smart_selector",
    },
}
"""Names /work/shared/design/API.md promises (those implemented so far), per module."""

ERROR_ROOTS = {
    "agentic_core": "AgenticError",
    "agentic_llm": "LLMError",
    "agentic_sandbox": "SandboxError",
    "agentic_mcp": "MCPClientError",
    "agentic_bus": "AgenticError",  # raises core's BusError, WorkflowExecutionError, AgentError
    "agentic_storage": "StorageError",  # core's, re-exported
    "agentic_orchestrator": "OrchestratorError",
}
"""Each package's root exception (its own, or core's when it raises core's families); every
``...Error`` the package exports derives from it, and it from ``AgenticError``."""

SNAPSHOT = Path(__file__).parent / "data" / "exported_names.json"


def _all(module: types.ModuleType) -> list[str]:
    names: list[str] = module.__all__
    return names


def _ruff_order(name: str) -> tuple[int, str]:
    """RUF022's isort-style order: SCREAMING_CASE, then CamelCase, then the rest."""
    group = 0 if name.isupper() else 1 if name[:1].isupper() else 2
    return group, name


def _public_names(module: types.ModuleType) -> set[str]:
    return {
        name
        for name, value in vars(module).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
    }


def _snapshot() -> dict[str, list[str]]:
    loaded: dict[str, list[str]] = json.loads(SNAPSHOT.read_text())
    return loaded


@pytest.mark.parametrize("name", NAMESPACES)
def test_all_is_sorted_and_unique(name: str) -> None:
    names = _all(importlib.import_module(name))

    # lazy_exports sorts plainly; ruff (RUF022) orders an ``__all__`` written out in a module.
    assert names in (sorted(set(names)), sorted(set(names), key=_ruff_order))


@pytest.mark.parametrize("name", NAMESPACES)
def test_every_name_in_all_resolves(name: str) -> None:
    module = importlib.import_module(name)

    for exported in _all(module):
        assert getattr(module, exported) is not None, exported


@pytest.mark.parametrize("name", NAMESPACES)
def test_public_names_are_exactly_all_once_loaded(name: str) -> None:
    module = importlib.import_module(name)
    for exported in _all(module):  # names load lazily: load each one first
        getattr(module, exported)

    public = _public_names(module)
    assert public == set(_all(module)) - {"__version__"}


@pytest.mark.parametrize("name", PACKAGES)
def test_unknown_names_raise_attribute_error(name: str) -> None:
    module = importlib.import_module(name)

    with pytest.raises(AttributeError, match="NoSuchThing"):
        getattr(module, "NoSuchThing")  # noqa: B009


@pytest.mark.parametrize("name", PACKAGES)
def test_version_is_a_release_string(name: str) -> None:
    version: str = importlib.import_module(name).__version__

    assert "__version__" in _all(importlib.import_module(name))
    assert version.count(".") >= 2


@pytest.mark.parametrize("name", PACKAGES)
def test_importing_a_package_loads_only_the_lazy_export_helper(name: str) -> None:
    code = (
        f"import sys, {name}\n"
        "prefixes = ('agentic_', 'pydantic', 'httpx')\n"
        "print(sorted(m for m in sys.modules if m.startswith(prefixes)))\n"
    )

    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)

    assert out.stdout.strip() == str(sorted({"agentic_core", "agentic_core._lazy", name}))


@pytest.mark.parametrize("name", sorted(API_NAMES))
def test_the_api_names_are_exported(name: str) -> None:
    exported = set(_all(importlib.import_module(name)))

    assert API_NAMES[name] - exported == set()


@pytest.mark.parametrize("name", sorted(ERROR_ROOTS))
def test_every_error_derives_from_the_package_root_and_the_workspace_root(name: str) -> None:
    import agentic_core
    from agentic_core import AgenticError

    module = importlib.import_module(name)
    # A package whose errors are all core's (agentic-bus) need not re-export the root.
    root: type[Exception] = getattr(module, ERROR_ROOTS[name], None) or getattr(
        agentic_core, ERROR_ROOTS[name]
    )
    errors: list[type[Exception]] = [
        getattr(module, exported) for exported in _all(module) if exported.endswith("Error")
    ]

    assert errors
    assert [error.__name__ for error in errors if not issubclass(error, root)] == []
    assert issubclass(root, AgenticError)


def test_the_snapshot_covers_every_namespace() -> None:
    assert sorted(_snapshot()) == sorted(NAMESPACES)


@pytest.mark.parametrize("name", NAMESPACES)
def test_every_name_ever_exported_is_still_exported_and_resolves(name: str) -> None:
    module = importlib.import_module(name)
    before = _snapshot()[name]

    missing = sorted(set(before) - set(_all(module)))
    assert missing == [], f"{name} no longer exports {missing}: keep old names as aliases"
    for exported in before:
        assert getattr(module, exported) is not None, exported
