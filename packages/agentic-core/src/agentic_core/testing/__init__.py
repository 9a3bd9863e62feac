"""Test doubles for agentic_core: chat clients and a sandbox that answer from a script.

``ScriptedChatClient`` / ``FunctionChatClient`` stand in for a model, ``ScriptedSandbox`` for an
``InteractiveSandbox``: no model, no network, no code run unless a test's function runs it.

The conformance suites live in ``agentic_core.testing.conformance`` (they import pytest, so
import them from tests only).
"""

from agentic_core.testing._chat_clients import FunctionChatClient, ScriptedChatClient
from agentic_core.testing._sandbox import SandboxCall, ScriptedProcess, ScriptedSandbox

__all__ = [
    "FunctionChatClient",
    "SandboxCall",
    "ScriptedChatClient",
    "ScriptedProcess",
    "ScriptedSandbox",
]
