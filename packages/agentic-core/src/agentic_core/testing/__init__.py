"""Test doubles for agentic_core: chat clients that answer without a model or a network.

The conformance suites live in ``agentic_core.testing.conformance`` (they import pytest, so
import them from tests only).
"""

from agentic_core.testing._chat_clients import FunctionChatClient, ScriptedChatClient

__all__ = ["FunctionChatClient", "ScriptedChatClient"]
