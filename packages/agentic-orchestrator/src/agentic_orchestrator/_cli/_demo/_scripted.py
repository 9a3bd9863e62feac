"""The demo's scripted model (``--model scripted``): instant, offline, no model file.

It plays each part the way a model would, answering by who asks (the calculator, the chef,
the code generator), and makes one mistake on purpose in each part, so a fast run still shows
the checker and the code loop send work back and get it repaired.
"""

from __future__ import annotations

from agentic_core import ChatMessage, ChatOptions, FunctionCallContent, FunctionResultContent, Role
from agentic_core.testing import FunctionChatClient
from agentic_orchestrator._cli._demo._party import CALCULATOR_INSTRUCTIONS, CHEF_INSTRUCTIONS

SCRIPTED_MODEL = "scripted"

_WRONG_CODE = "def sandwiches_needed(friends, per_friend):\n    return friends + per_friend\n"
_RIGHT_CODE = "def sandwiches_needed(friends, per_friend):\n    return friends * per_friend\n"


def scripted_demo_client() -> FunctionChatClient:
    """A test double that answers the demo's requests (see the module docstring)."""
    return FunctionChatClient(_reply, model=SCRIPTED_MODEL, chunk_size=8)


def _reply(messages: list[ChatMessage], options: ChatOptions | None) -> ChatMessage | str:
    system = " ".join(m.text for m in messages if m.role is Role.SYSTEM)
    if CALCULATOR_INSTRUCTIONS in system:
        return _calculator(messages)
    if CHEF_INSTRUCTIONS in system:
        return "1. Cheese and tomato\n2. Egg and cress\n3. Hummus and cucumber"
    return _coder(messages)


def _calculator(messages: list[ChatMessage]) -> ChatMessage | str:
    last = messages[-1]
    if any(isinstance(c, FunctionResultContent) for c in last.contents):
        result = next(c for c in last.contents if isinstance(c, FunctionResultContent))
        return f"You need {result.result} sandwiches."
    calls = sum(isinstance(c, FunctionCallContent) for m in messages for c in m.contents)
    # The first try multiplies the wrong numbers: the checker sends it back.
    a, b = (4, 4) if calls == 0 else (4, 3)
    return ChatMessage.assistant(
        contents=[
            FunctionCallContent(
                call_id=f"call-{calls + 1}", name="multiply", arguments={"a": a, "b": b}
            )
        ]
    )


def _coder(messages: list[ChatMessage]) -> str:
    prompt = messages[-1].text
    # The first attempt adds instead of multiplying: the tests fail, the loop repairs it.
    code = _RIGHT_CODE if "friends + per_friend" in prompt else _WRONG_CODE
    return f"```python\n{code}```"
