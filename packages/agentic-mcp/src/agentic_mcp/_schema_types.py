"""JSON schema to Python: identifiers and annotation source text for the Code Mode stubs."""

from __future__ import annotations

import builtins
import keyword
import re
from collections.abc import Mapping
from typing import Any

_NOT_IDENTIFIER = re.compile(r"\W")
_SIMPLE = {
    "string": "str",
    "integer": "int",
    "number": "float",
    "boolean": "bool",
    "null": "None",
    "object": "dict[str, Any]",
    "array": "list[Any]",
}


def python_identifier(name: str, taken: set[str]) -> str:
    """``name`` as a valid, unused Python identifier (added to ``taken``)."""
    candidate = _NOT_IDENTIFIER.sub("_", name) or "_"
    if candidate[0].isdigit():
        candidate = f"_{candidate}"
    if keyword.iskeyword(candidate) or keyword.issoftkeyword(candidate):
        candidate += "_"
    unique, counter = candidate, 2
    while unique in taken:
        unique = f"{candidate}_{counter}"
        counter += 1
    taken.add(unique)
    return unique


def shadows_builtin(name: str) -> bool:
    """Whether ``name`` hides a builtin (fine for a parameter, not for a module global)."""
    return hasattr(builtins, name)


def annotation_for(
    schema: Mapping[str, Any] | bool, *, root: Mapping[str, Any] | None = None
) -> str:
    """The Python annotation (source text) for a JSON schema; ``Any`` when unsure."""
    return _annotation(schema, root if root is not None else _as_mapping(schema), frozenset())


def _as_mapping(schema: Mapping[str, Any] | bool) -> Mapping[str, Any]:
    return schema if isinstance(schema, Mapping) else {}


def _annotation(
    schema: Mapping[str, Any] | bool, root: Mapping[str, Any], seen: frozenset[str]
) -> str:
    if not isinstance(schema, Mapping) or not schema:
        return "Any"
    reference = schema.get("$ref")
    if isinstance(reference, str):
        target = _resolve(reference, root)
        if target is None or reference in seen:
            return "dict[str, Any]"
        return _annotation(target, root, seen | {reference})
    if "const" in schema:
        return _literal([schema["const"]])
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        return _literal(list(enum))  # pyright: ignore[reportUnknownArgumentType]
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list) and options:
            return _union([_annotation(option, root, seen) for option in options])  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
    all_of = schema.get("allOf")
    if isinstance(all_of, list) and len(all_of) == 1:  # pyright: ignore[reportUnknownArgumentType]
        return _annotation(all_of[0], root, seen)  # pyright: ignore[reportUnknownArgumentType]
    kind = schema.get("type")
    if isinstance(kind, list):
        return _union([_annotation({**schema, "type": item}, root, seen) for item in kind])  # pyright: ignore[reportUnknownVariableType]
    if kind == "array":
        items = schema.get("items")
        return f"list[{_annotation(items, root, seen)}]" if items else "list[Any]"
    if isinstance(kind, str) and kind in _SIMPLE:
        return _SIMPLE[kind]
    if "properties" in schema:
        return "dict[str, Any]"
    return "Any"


def _resolve(reference: str, root: Mapping[str, Any]) -> Mapping[str, Any] | None:
    for prefix in ("#/$defs/", "#/definitions/"):
        if reference.startswith(prefix):
            container = root.get(prefix[2:-1])
            if isinstance(container, Mapping):
                target = container.get(reference[len(prefix) :])  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
                if isinstance(target, Mapping):
                    return target  # pyright: ignore[reportUnknownVariableType]
    return None


def _literal(values: list[Any]) -> str:
    literals = [
        value for value in values if value is None or isinstance(value, str | int | float | bool)
    ]
    if not literals:
        return "Any"
    parts = [repr(value) for value in literals]
    return f"Literal[{', '.join(parts)}]"


def _union(parts: list[str]) -> str:
    unique: list[str] = []
    for part in parts:
        for piece in _split_union(part):
            if piece not in unique:
                unique.append(piece)
    if "Any" in unique:
        return "Any"
    if "None" in unique:
        unique.remove("None")
        unique.append("None")
    return " | ".join(unique)


def _split_union(annotation: str) -> list[str]:
    """Top-level ``|`` members of an annotation (brackets respected)."""
    pieces: list[str] = []
    depth, start = 0, 0
    for index, char in enumerate(annotation):
        if char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
        elif char == "|" and depth == 0:
            pieces.append(annotation[start:index].strip())
            start = index + 1
    pieces.append(annotation[start:].strip())
    return pieces
