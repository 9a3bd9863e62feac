"""Code in a model's reply, and whether a task agent should run it (the roadmap-v1 rules)."""

from __future__ import annotations

import re

from agentic_orchestrator._payloads import ExecutionMode

FENCE = re.compile(r"```[ \t]*([\w+#.-]*)[^\n]*\n(.*?)```", re.DOTALL)
"""A fenced code block: group 1 its label (maybe empty), group 2 its code."""

_LANGUAGES = {
    "python": "python",
    "python3": "python",
    "py": "python",
    "typescript": "typescript",
    "ts": "typescript",
    "javascript": "javascript",
    "js": "javascript",
    "node": "javascript",
    "sh": "sh",
    "shell": "sh",
    "bash": "bash",
}

EXECUTABLE_ACTIONS = ("execute", "run", "test", "build", "deploy", "install", "validate")
"""Action words that make ``ExecutionMode.TASK`` run the code."""


def canonical_language(language: str) -> str:
    """``"py"`` -> ``"python"``, ``"ts"`` -> ``"typescript"``; other names lower-cased as is."""
    lowered = language.strip().lower()
    return _LANGUAGES.get(lowered, lowered)


def extract_code(text: str, *, default_language: str = "python") -> tuple[str, str] | None:
    """``(language, code)`` of the first fenced block in a language a sandbox runs, else None.

    Languages: python, typescript, javascript, sh, bash (and their usual aliases: py, ts, js,
    shell). An unlabelled fence is taken as ``default_language``; a block in another language
    (``json``, ``text``...) is skipped.
    """
    for match in FENCE.finditer(text):
        label = match.group(1).lower()
        language = _LANGUAGES.get(label) if label else _LANGUAGES.get(default_language.lower())
        code = match.group(2)
        if language is not None and code.strip():
            return language, code
    return None


def should_execute(mode: ExecutionMode, action: str, reply: str) -> bool:
    """Whether a task agent runs the code of ``reply`` for a task whose action is ``action``.

    ALWAYS: yes. NEVER: no. AUTO: the model's marker decides (``[NO_EXECUTE]`` or
    ``<!-- NO_EXECUTE -->`` wins over ``[EXECUTE]`` / ``<!-- EXECUTE -->``; no marker: no).
    TASK: an executable action word (run, test, build...) says yes, a non-executable one
    (review, explain, generate...) says no, anything else no (least privilege). A word matches
    when the action has a word starting with it: "running tests" runs, "rerun" does not.
    """
    if mode is ExecutionMode.ALWAYS:
        return True
    if mode is ExecutionMode.NEVER:
        return False
    if mode is ExecutionMode.AUTO:
        if "[NO_EXECUTE]" in reply or "<!-- NO_EXECUTE -->" in reply:
            return False
        return "[EXECUTE]" in reply or "<!-- EXECUTE -->" in reply
    # review, analyze, explain, document, generate, refactor, suggest, plan and anything else:
    # not run.
    words = re.findall(r"[a-z]+", action.lower())
    return any(word.startswith(EXECUTABLE_ACTIONS) for word in words)
