"""Part 2 of ``agentic demo``: a grounded code loop, run in the process sandbox.

The model writes a function; the sandbox byte-compiles it and runs its tests; failures go back
to the model with the errors, up to ``MAX_ATTEMPTS`` tries. Only code that passed the tests is
reported as the result.
"""

from __future__ import annotations

FUNCTION = "sandwiches_needed"
SIGNATURE = (
    "def sandwiches_needed(friends, per_friend):\n"
    '    """Return the number of sandwiches to make: friends times per_friend."""'
)
# Sized for the embedded 135M model: the docstring states the rule and the prompt shows no test
# (``show_tests=False``), because the small model copies test code and literal numbers into its
# answer. Measured first tries that pass: 10 of 10 seeds at temperature 0.2, 9 of 10 at 0.6;
# with a docstring that only describes the goal, 8 of 10; with the asserts shown, 7 of 10.
PROMPT = f"Complete this Python function. Reply with only the code.\n```python\n{SIGNATURE}\n```"
TESTS = """\
from solution import sandwiches_needed


def test_the_party():
    assert sandwiches_needed(4, 3) == 12


def test_nobody_comes():
    assert sandwiches_needed(0, 5) == 0


def test_one_hungry_friend():
    assert sandwiches_needed(1, 7) == 7
"""
MAX_ATTEMPTS = 5
TEMPERATURE = 0.3
MAX_TOKENS = 150
SANDBOX_OPTIONS: dict[str, object] = {"timeout_s": 30, "memory_mb": 512}
