"""Reading a tool-grammar reply while it streams: which branch it took, and the answer's text as
soon as its characters arrive (a tool call is only read whole, at the end). Pure: no I/O."""

from __future__ import annotations

import re
from typing import Literal, cast

from pydantic_core import from_json

from agentic_llm._local._tool_grammar import ANSWER_KEY, TOOL_KEY

Branch = Literal["tool", "answer"]

_BRANCH = re.compile(rf'\s*\{{\s*"({TOOL_KEY}|{ANSWER_KEY})"')


class ReplyReader:
    """Feed it the reply's pieces; each ``feed`` returns the answer text that became readable.

    The grammar writes the answer as ``{"answer": "..."}``: the reply so far is parsed as
    partial JSON (pydantic-core's ``allow_partial``, which holds an incomplete escape back), and
    what the answer string gained is returned. A structured answer (an object) or a tool call
    yields nothing here: the caller reads those whole.
    """

    def __init__(self) -> None:
        self._raw = ""
        self._branch: Branch | None = None
        self._answered = ""  # the answer text returned so far

    @property
    def raw(self) -> str:
        """Everything fed so far."""
        return self._raw

    @property
    def branch(self) -> Branch | None:
        """``"tool"`` or ``"answer"`` once the first key is read, else None."""
        return self._branch

    def feed(self, piece: str) -> str:
        """Add ``piece``; return the answer text decoded from it (often ``""``)."""
        self._raw += piece
        if self._branch is None:
            found = _BRANCH.match(self._raw)
            if found is None:
                return ""
            self._branch = "tool" if found.group(1) == TOOL_KEY else "answer"
        if self._branch != "answer":
            return ""
        try:
            reply = from_json(self._raw, allow_partial="trailing-strings")
        except ValueError:  # not (yet) a JSON prefix the parser can complete
            return ""
        answer: object = (
            cast("dict[str, object]", reply).get(ANSWER_KEY) if isinstance(reply, dict) else None
        )
        if not isinstance(answer, str) or not answer.startswith(self._answered):
            return ""
        new, self._answered = answer[len(self._answered) :], answer
        return new
