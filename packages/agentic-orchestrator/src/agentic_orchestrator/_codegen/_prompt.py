"""The generator's prompt (short: small local models have 2k-token windows) and code extraction."""

from __future__ import annotations

import re
from collections.abc import Mapping

from agentic_orchestrator._code_blocks import FENCE, canonical_language
from agentic_orchestrator._codegen._models import CodeTask, source_file_names

MAX_ERRORS_SHOWN = 5
MAX_ERROR_CHARS = 600
MAX_CODE_CHARS = 6000

_OPEN_FENCE = re.compile(r"```[ \t]*([\w+#.-]*)[^\n]*\n(.*)\Z", re.DOTALL)
_FENCE_LABELS = {"python": "python", "typescript": "ts", "javascript": "js"}
_TEST_HINTS = {
    "python": "test_ functions using assert, importing with `from solution import ...`.",
    "typescript": 'node:test and node:assert, importing the code from "./solution.ts".',
}


def default_system_prompt(language: str) -> str:
    """The generator's system prompt when none is given."""
    label = _fence_label(language)
    return (
        f"You are an expert {canonical_language(language)} programmer. "
        f"Reply with the complete code in one ```{label} block, nothing else."
    )


def build_prompt(task: CodeTask, context: Mapping[str, str], *, show_tests: bool = True) -> str:
    """The user message for ``task``: language, task, context, tests, previous code and errors.

    ``context`` holds parts other generators wrote (by name), e.g. the types to implement.
    ``show_tests=False`` leaves the test file out (the task states what it checks instead):
    small models tend to copy a test file's code rather than implement the function.
    """
    language = canonical_language(task.language)
    label = _fence_label(language)
    code_file, test_file = source_file_names(language)
    lines = [f"Language: {language}.", f"Task: {task.prompt.strip()}"]
    if task.context.strip():
        lines += ["", "Context:", task.context.strip()]
    for name, code in context.items():
        lines += ["", f"Already written ({name}), do not repeat it:", _fenced(label, code)]
    if task.role == "test":
        hint = _TEST_HINTS.get(language, f"import the code from {code_file}.")
        lines += ["", f"Write the tests of {test_file}: {hint}"]
    elif task.tests.strip() and show_tests:
        lines += [
            "",
            f"Your code is saved as {code_file} and must pass these tests ({test_file}):",
            _fenced(label, task.tests),
        ]
    if task.previous_errors or task.previous_code:
        lines += ["", f"This is attempt {task.attempt}. Your previous code:"]
        lines.append(_fenced(label, _clip(task.previous_code, MAX_CODE_CHARS)))
    if task.previous_errors:
        lines.append("It failed with these errors:")
        shown = task.previous_errors[:MAX_ERRORS_SHOWN]
        lines += [f"- {_clip(error.strip(), MAX_ERROR_CHARS)}" for error in shown]
        if len(task.previous_errors) > len(shown):
            lines.append(f"- ... and {len(task.previous_errors) - len(shown)} more")
        lines.append("Fix these errors.")
    lines += ["", f"Reply with the complete code in one ```{label} block."]
    return "\n".join(lines)


def extract_generated_code(text: str, language: str) -> str:
    """The code of a model's reply: a fenced block in ``language`` (else unlabelled, else any).

    A reply cut off inside its fence still gives the code after the fence; a reply with no
    fence at all is taken as bare code.
    """
    wanted = canonical_language(language)
    blocks = [(canonical_language(label), body) for label, body in FENCE.findall(text)]
    blocks = [(label, body) for label, body in blocks if body.strip()]
    ranked = sorted(blocks, key=lambda block: 0 if block[0] == wanted else 1 if not block[0] else 2)
    if ranked:  # sorted is stable: the first block of the best kind
        return ranked[0][1].strip("\n")
    unclosed = _OPEN_FENCE.search(text)
    if unclosed is not None and unclosed.group(2).strip():
        return unclosed.group(2).strip("\n")
    return text.strip()


def _fence_label(language: str) -> str:
    canonical = canonical_language(language)
    return _FENCE_LABELS.get(canonical, canonical)


def _fenced(label: str, code: str) -> str:
    return f"```{label}\n{code.strip(chr(10))}\n```"


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n... ({len(text) - limit} more characters)"
