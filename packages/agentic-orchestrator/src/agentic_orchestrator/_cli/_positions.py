"""Where keys sit in a run file: their line (tomllib reports none) and their dotted name."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from agentic_orchestrator._secrets import Path_

__all__ = ["Path_", "dotted", "key_at_line", "key_lines", "line_of", "short_key"]

_SHOWN_PARTS = 8
"""A key deeper than this is cut short in messages (a deeply nested file has keys of 100k parts)."""


def dotted(path: Sequence[str | int]) -> str:
    """``("agents", 1, "model")`` -> ``agents[1].model``."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text


def line_of(lines: Mapping[Path_, int], path: Path_) -> int:
    """The line of ``path``, or of the nearest enclosing key found; 0 when none is."""
    for end in range(len(path), 0, -1):
        line = lines.get(tuple(path[:end]))
        if line is not None:
            return line
    return 0


def key_at_line(text: str, line: int) -> str:
    """The dotted key defined on ``line`` of ``text`` (the longest, for a header), or ``""``."""
    if line <= 0:
        return ""
    found = [path for path, at in key_lines(text).items() if at == line]
    return short_key(max(found, key=len, default=()))


def short_key(path: Path_) -> str:
    """``dotted(path)``, cut after a few parts when it is very long."""
    shown = dotted(path[:_SHOWN_PARTS])
    return f"{shown}..." if len(path) > _SHOWN_PARTS else shown


def key_lines(text: str) -> dict[Path_, int]:
    """Where each key of a TOML text is defined: ``{("agents", 1, "model"): 12, ...}``.

    Headers ``[a.b]`` and ``[[a]]`` (numbered from 0) open tables, ``key = ...`` and dotted keys
    sit in them. Lines inside multi-line strings and arrays are skipped. Only the first place of
    a key is kept (TOML forbids a second anyway).
    """
    lines: dict[Path_, int] = {}
    table: Path_ = ()
    counts: dict[Path_, int] = {}
    skipping_until: str | None = None  # a multi-line string's closing quotes
    depth = 0  # open brackets of a multi-line array value
    # "\n" only, as tomllib counts lines (splitlines would also break at \f, \x1c, \u2028...).
    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw.strip()
        if skipping_until is not None:
            if raw.count(skipping_until) % 2 == 1:
                skipping_until = None
            continue
        if depth > 0:
            depth += _bracket_balance(line)
            continue
        if not line or line.startswith("#"):
            continue
        if line.startswith("[["):
            path = _split_key(line[2 : line.find("]]")])
            counts[path] = counts.get(path, -1) + 1
            table = (*path, counts[path])
            lines.setdefault(path, number)
            lines.setdefault(table, number)
        elif line.startswith("["):
            table = _split_key(line[1 : line.find("]")])
            lines.setdefault(table, number)
        elif "=" in line:
            key, _, value = line.partition("=")
            lines.setdefault((*table, *_split_key(key)), number)
            value = value.strip()
            for quotes in ('"""', "'''"):
                if value.startswith(quotes) and value.count(quotes) == 1:
                    skipping_until = quotes
            if skipping_until is None:
                depth = max(0, _bracket_balance(value))
    return lines


def _split_key(key: str) -> Path_:
    found: list[str] = re.findall(r'"[^"]*"|\'[^\']*\'|[^.]+', key.strip())
    return tuple(part.strip().strip("\"'") for part in found)


def _bracket_balance(text: str) -> int:
    """Open minus closed brackets of a line, outside strings and comments."""
    balance = 0
    quote: str | None = None
    for char in text:
        if quote is not None:
            quote = None if char == quote else quote
        elif char in "\"'":
            quote = char
        elif char == "#":
            break
        elif char in "[{":
            balance += 1
        elif char in "]}":
            balance -= 1
    return balance
