"""Reading a tool-grammar reply while it streams: which branch it took, and the answer's text as
soon as its characters arrive (a tool call is only read whole, at the end). Pure: no I/O."""

from __future__ import annotations

import json
import re
from typing import Final, Literal

from agentic_llm._local._tool_grammar import ANSWER_KEY, TOOL_KEY

Branch = Literal["tool", "answer"]

_BRANCH = re.compile(rf'\s*\{{\s*"({TOOL_KEY}|{ANSWER_KEY})"')
_ANSWER_STRING = re.compile(rf'\s*\{{\s*"{ANSWER_KEY}"\s*:\s*"')
_SIMPLE_ESCAPES: Final = {
    '"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t",
}  # fmt: skip
_UNICODE_ESCAPE_LEN: Final = 6  # \uXXXX
_HIGH_SURROGATE_PREFIXES: Final = ("D8", "D9", "DA", "DB")


class ReplyReader:
    """Feed it the reply's pieces; each ``feed`` returns the answer text that became readable.

    The grammar writes the answer as ``{"answer": "..."}``: once that prefix is in, the string's
    characters are decoded as they come (an escape is held back until complete). A structured
    answer (an object) or a tool call yields nothing here: the caller reads those whole.
    """

    def __init__(self) -> None:
        self._raw = ""
        self._branch: Branch | None = None
        self._cursor: int | None = None  # where the answer string's undecoded characters start
        self._closed = False  # the answer string's closing quote was read

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
        if self._branch != "answer" or self._closed:
            return ""
        if self._cursor is None:
            opened = _ANSWER_STRING.match(self._raw)
            if opened is None:
                return ""  # not there yet, or not a string (a structured answer)
            self._cursor = opened.end()
        return self._decode()

    def _decode(self) -> str:
        out: list[str] = []
        raw, at = self._raw, self._cursor or 0
        while at < len(raw):
            char = raw[at]
            if char == '"':
                self._closed = True
                at += 1
                break
            if char != "\\":
                out.append(char)
                at += 1
                continue
            if at + 1 >= len(raw):
                break  # the escape's second character is still to come
            code = raw[at + 1]
            if code == "u":
                escape = _unicode_escape(raw, at)
                if escape is None:
                    break
                out.append(escape[0])
                at += escape[1]
                continue
            out.append(_SIMPLE_ESCAPES.get(code, code))
            at += 2
        self._cursor = at
        return "".join(out)


def _unicode_escape(raw: str, at: int) -> tuple[str, int] | None:
    """The text of the ``\\uXXXX`` escape at ``at`` and its length (a surrogate pair is two
    escapes, decoded together), or None while it is incomplete."""
    first = raw[at : at + _UNICODE_ESCAPE_LEN]
    if len(first) < _UNICODE_ESCAPE_LEN:
        return None
    if not first[2:].upper().startswith(_HIGH_SURROGATE_PREFIXES):
        return _decoded(first), _UNICODE_ESCAPE_LEN
    second = raw[at + _UNICODE_ESCAPE_LEN : at + 2 * _UNICODE_ESCAPE_LEN]
    if len(second) < _UNICODE_ESCAPE_LEN and "\\u".startswith(second[:2]):
        return None  # the low half may still come
    if second.startswith("\\u"):
        return _decoded(first + second), 2 * _UNICODE_ESCAPE_LEN
    return _decoded(first), _UNICODE_ESCAPE_LEN


def _decoded(escapes: str) -> str:
    try:
        return str(json.loads(f'"{escapes}"'))
    except ValueError:  # not hex: the grammar never writes it; keep the characters
        return escapes
