"""JSON schema to Python annotation text, and any string to a unique Python identifier.

Both feed the Code Mode stubs and listings: annotations are source text (``list[str] | None``)
written into generated files, never evaluated here.
"""

from __future__ import annotations

import keyword
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

_NON_WORD = re.compile(r"\W")
_SIMPLE_TYPES = {
    "string": "str",
    "integer": "int",
    "number": "float",
    "boolean": "bool",
    "null": "None",
    "object": "dict[str, Any]",
}
_OBJECT = "dict[str, Any]"


def python_identifier(name: str, taken: set[str]) -> str:
    """A valid Python identifier for ``name``, not in ``taken``; the result is added to ``taken``.

    Characters that cannot appear in an identifier become ``_``, a leading digit gets a ``_``
    prefix, keywords get a trailing ``_``, and a name already taken is numbered (``x_2``, ``x_3``).
    Soft keywords (``match``, ``type``) and builtins stay as they are: they are valid names.
    """
    # Python reads identifiers in NFKC form: normalize first so `taken` compares what Python sees.
    text = _NON_WORD.sub("_", unicodedata.normalize("NFKC", name))
    text = "".join(ch if ("_" + ch).isidentifier() else "_" for ch in text)
    if not text or not text[0].isidentifier():
        text = "_" + text
    if not text.isidentifier():  # odd normalization corners: fall back to ASCII
        text = re.sub(r"\W", "_", text, flags=re.ASCII)
    if keyword.iskeyword(text):
        text += "_"
    result = text
    if result in taken:
        stem = text.rstrip("_")  # `class_` -> `class_2`, `_` -> `_2`
        number = 2
        while f"{stem}_{number}" in taken:
            number += 1
        result = f"{stem}_{number}"
    taken.add(result)
    return result


def annotation_for(schema: Mapping[str, Any], *, root: Mapping[str, Any] | None = None) -> str:
    """The Python annotation (source text) for a JSON schema.

    ``root`` is the document ``$ref`` pointers resolve against (default: ``schema`` itself).
    Objects are ``dict[str, Any]``; whatever cannot be expressed is ``Any``.
    """
    return _join(_members(schema, root if root is not None else schema, frozenset()))


def optional_annotation(annotation: str) -> str:
    """``annotation`` widened to accept ``None`` (unchanged when it already does)."""
    # annotation_for puts None last, and a None nested in brackets always ends with "]".
    if annotation in ("Any", "None") or annotation.endswith(" | None"):
        return annotation
    return f"{annotation} | None"


@dataclass(frozen=True, slots=True)
class _Literal:
    values: tuple[object, ...]


_Member = str | _Literal


def _members(schema: object, root: Mapping[str, Any], seen: frozenset[str]) -> list[_Member]:
    mapping = _as_mapping(schema)
    if mapping is None:
        return ["Any"]  # `true`, or something that is not a schema
    members = _core_members(mapping, root, seen)
    if mapping.get("nullable") is True:  # OpenAPI 3.0 spelling of "or null"
        members.append("None")
    return members


def _core_members(
    schema: Mapping[str, Any], root: Mapping[str, Any], seen: frozenset[str]
) -> list[_Member]:
    ref = schema.get("$ref")
    if isinstance(ref, str):
        if ref in seen:
            return [_OBJECT]  # a recursive definition: stop at the first repetition
        target = _resolve(ref, root)
        # An unresolvable (remote, missing) definition is most likely a model: an object.
        return [_OBJECT] if target is None else _members(target, root, seen | {ref})
    if "const" in schema:
        literal = _literal_members([schema["const"]])
        if literal is not None:
            return literal
    enum = _as_list(schema.get("enum"))
    if enum:
        literal = _literal_members(enum)
        if literal is not None:
            return literal
    for key in ("anyOf", "oneOf"):
        options = _as_list(schema.get(key))
        if options:
            union = [member for option in options for member in _members(option, root, seen)]
            if "Any" not in union or "type" not in schema:
                return union
    all_of = _as_list(schema.get("allOf"))
    if all_of and len(all_of) == 1 and "type" not in schema:
        return _members(all_of[0], root, seen)  # older pydantic wraps a lone $ref this way
    types = schema.get("type")
    if isinstance(types, str):
        return _type_members(types, schema, root, seen)
    type_list = _as_list(types)
    if type_list:
        return [
            member
            for name in type_list
            for member in (_type_members(name, schema, root, seen) if isinstance(name, str) else [])
        ] or ["Any"]
    if isinstance(schema.get("properties"), Mapping):
        return [_OBJECT]
    if "items" in schema:
        return _type_members("array", schema, root, seen)
    return ["Any"]


def _type_members(
    name: str, schema: Mapping[str, Any], root: Mapping[str, Any], seen: frozenset[str]
) -> list[_Member]:
    if name == "array":
        # No `items` (or a tuple form) gives Any: _members reads a non-mapping as Any.
        return [f"list[{_join(_members(schema.get('items'), root, seen))}]"]
    return [_SIMPLE_TYPES.get(name, "Any")]


def _literal_members(values: list[Any]) -> list[_Member] | None:
    """``Literal[...]`` (+ ``None``) for enum/const values, or None when one cannot be a literal."""
    literal: list[object] = []
    has_none = False
    for value in values:
        if value is None:
            has_none = True
        elif isinstance(value, str | int):  # bool is an int; floats are not valid literals
            literal.append(cast("object", value))
        else:
            return None
    members: list[_Member] = [_Literal(tuple(literal))] if literal else []
    return [*members, "None"] if has_none else members


def _join(members: list[_Member]) -> str:
    if not members or "Any" in members:
        return "Any"
    parts: list[str] = []
    literal_at: int | None = None
    literal_values: list[object] = []
    literal_keys: set[tuple[type, object]] = set()
    for member in members:
        if isinstance(member, _Literal):
            if literal_at is None:
                literal_at = len(parts)
                parts.append("")  # placeholder: every literal value merges into one Literal[...]
            for value in member.values:
                key = (type(value), value)  # True and 1 are equal but distinct literals
                if key not in literal_keys:
                    literal_keys.add(key)
                    literal_values.append(value)
        elif member != "None" and member not in parts:
            parts.append(member)
    if literal_at is not None:
        parts[literal_at] = f"Literal[{', '.join(repr(value) for value in literal_values)}]"
    if "None" in members:
        parts.append("None")
    return " | ".join(parts)


def _resolve(ref: str, root: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The schema a local JSON pointer (``#/$defs/X``, ``#/definitions/X``, ``#``) names."""
    if not ref.startswith("#"):
        return None  # remote documents are never fetched
    node: object = root
    for raw in ref[1:].split("/")[1:]:
        part = raw.replace("~1", "/").replace("~0", "~")
        mapping = _as_mapping(node)
        if mapping is None or part not in mapping:
            return None
        node = mapping[part]
    return _as_mapping(node)


def _as_mapping(value: object) -> Mapping[str, Any] | None:
    return cast("Mapping[str, Any]", value) if isinstance(value, Mapping) else None


def _as_list(value: object) -> list[Any] | None:
    return cast("list[Any]", value) if isinstance(value, list) else None
