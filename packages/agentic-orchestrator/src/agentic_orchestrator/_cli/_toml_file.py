"""A run file's bytes to TOML data: whatever the bytes, a ``ConfigError`` with its line, never a
traceback.

tomllib trusts its input: it recurses once per nested array or inline table (a
``RecursionError`` a few hundred levels down) and slows down quadratically with the parts of a
dotted key (100k parts: minutes). So nesting is bounded on the text before tomllib reads it,
and again on the data (table headers and dotted keys add levels too).
"""

from __future__ import annotations

import codecs
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, cast

from agentic_orchestrator._cli._errors import ConfigError
from agentic_orchestrator._cli._positions import (
    Path_,
    key_at_line,
    key_lines,
    line_of,
    short_key,
)

__all__ = ["MAX_NESTING", "TomlFile", "read_toml"]

MAX_NESTING: Final = 64
"""Levels of tables, arrays and dotted-key parts a run file may nest (a real one needs ~5)."""

_NESTING = (
    f"nested more than {MAX_NESTING} levels deep (tables, arrays, dotted keys); "
    "a run file needs a few levels: flatten it"
)
# What the nesting scan stops at: string openers, comments, brackets, the dots of dotted keys
# and any character that ends a key (a dotted key is bare words, quoted parts, dots, blanks).
_TOKEN = re.compile(r"\"\"\"|'''|[\n\"'#.\[\]{}]|[^\w \t.\-]")
_STRING_END = {
    '"': re.compile(r'\\.|"|\n'),
    "'": re.compile(r"'|\n"),
    '"""': re.compile(r'\\.|"""', re.DOTALL),
    "'''": re.compile(r"'''"),
}
_LONG_NUMBER = re.compile(r"[0-9_]{4301,}")


@dataclass(frozen=True)
class TomlFile:
    """A parsed run file: its name, text, data and the line of each key."""

    name: str
    text: str
    data: dict[str, Any]
    lines: dict[Path_, int]


def read_toml(file: str | Path) -> TomlFile:
    """Read, decode (UTF-8, a leading BOM allowed) and parse ``file``, nesting bounded."""
    name = str(file)
    try:
        raw = Path(file).read_bytes()
    except OSError as exc:
        raise ConfigError(name, 0, "", f"cannot read the file: {exc.strerror or exc}") from None
    text = _decode(name, raw)
    deep = _too_deep_line(text)
    if deep is not None:
        raise ConfigError(name, deep, key_at_line(text, deep), _NESTING)
    data = _parse(name, text)
    lines = key_lines(text)
    path = _too_deep_path(data)
    if path is not None:
        raise ConfigError(name, line_of(lines, path), short_key(path), _NESTING)
    return TomlFile(name=name, text=text, data=data, lines=lines)


def _decode(name: str, raw: bytes) -> str:
    bom = len(codecs.BOM_UTF8) if raw.startswith(codecs.BOM_UTF8) else 0  # Windows editors
    try:
        return raw[bom:].decode("utf-8")
    except UnicodeDecodeError as exc:
        offset = bom + exc.start
        line = raw.count(b"\n", 0, offset) + 1
        column = offset - raw.rfind(b"\n", 0, offset)
        key = key_at_line(raw[bom:offset].decode("utf-8"), line)
        raise ConfigError(
            name,
            line,
            key,
            f"not UTF-8 text: byte 0x{raw[offset]:02X} at offset {offset} (line {line}, "
            f"column {column}); save the file as UTF-8",
        ) from None


def _parse(name: str, text: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        found = re.search(r"at line (\d+)", str(exc))
        line = int(found.group(1)) if found else 0
        raise ConfigError(name, line, key_at_line(text, line), f"invalid TOML: {exc}") from None
    except ValueError:
        # Not a TOMLDecodeError: Python refuses to convert an integer of over 4300 digits.
        long = _LONG_NUMBER.search(text)
        line = text.count("\n", 0, long.start()) + 1 if long else 0
        raise ConfigError(
            name, line, key_at_line(text, line), "invalid TOML: a number of over 4300 digits"
        ) from None
    except RecursionError:  # the scan above should have caught it: still no traceback
        raise ConfigError(name, 0, "", _NESTING) from None


def _too_deep_line(text: str) -> int | None:
    """The line where brackets or a dotted key's parts first nest past ``MAX_NESTING``."""
    depth = dots = 0
    line = 1
    position = 0
    while (token := _TOKEN.search(text, position)) is not None:
        mark = token.group()
        position = token.end()
        if mark in ('"', "'", '"""', "'''"):
            end = _string_end(text, position, mark)
            line += text.count("\n", position, end)
            position = end  # a quoted part of a dotted key: the run of dots goes on
            continue
        if mark == "#":
            end = text.find("\n", position)
            position = len(text) if end < 0 else end
            continue
        if mark == ".":
            dots += 1
        else:
            dots = 0
            if mark == "\n":
                line += 1
            elif mark in "[{":
                depth += 1
            elif mark in "]}":
                depth = max(depth - 1, 0)
        if dots > MAX_NESTING or depth > MAX_NESTING:
            return line
    return None


def _string_end(text: str, start: int, quote: str) -> int:
    """Where the string opened by ``quote`` before ``start`` ends (its closing quote included)."""
    position = start
    while (found := _STRING_END[quote].search(text, position)) is not None:
        mark = found.group()
        if mark == "\n":
            return found.start()  # an unterminated one-line string: tomllib will say so
        if mark.startswith("\\"):
            position = found.end()
            continue
        end = found.end()
        if len(quote) == 3:  # up to two quotes may sit just before the closing three
            while end < len(text) and end - found.end() < 2 and text[end] == quote[0]:
                end += 1
        return end
    return len(text)


def _too_deep_path(data: dict[str, Any]) -> Path_ | None:
    """The path of a value nested past ``MAX_NESTING`` (cut there), or None."""
    stack: list[tuple[Path_, Any]] = [((), data)]
    while stack:
        path, value = stack.pop()
        if len(path) > MAX_NESTING:
            return path
        if isinstance(value, dict):
            table = cast("dict[str, Any]", value)
            stack.extend(((*path, key), child) for key, child in table.items())
        elif isinstance(value, list):
            array = cast("list[Any]", value)
            stack.extend(((*path, index), child) for index, child in enumerate(array))
    return None
