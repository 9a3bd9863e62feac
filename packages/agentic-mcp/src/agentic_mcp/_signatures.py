"""Python signatures of MCP tools, and the listings of them shown to models.

The same parameters feed the Code Mode stubs (``_codemode_stubs``), so what a model reads in a
listing is exactly what it can call.
"""

from __future__ import annotations

import ast
import inspect
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast

from agentic_mcp._models import MCPToolInfo
from agentic_mcp._schema_types import annotation_for, optional_annotation, python_identifier

ListingDetail = Literal["names", "signatures", "full"]
"""How much a listing says per tool: call names, one-line signatures, or documented blocks."""

RESERVED_PARAMETER_NAMES = frozenset({"_args", "_runtime"})
"""Names the body of a generated stub uses: a parameter never takes them."""

_SUMMARY_CHARS = 120
_MAX_DEFAULT_CHARS = 200  # a longer default would swamp the listing: treat it as absent


@dataclass(frozen=True, slots=True)
class StubParameter:
    """One keyword-only parameter of a stub function."""

    name: str
    """The Python identifier."""
    wire_name: str
    """The argument's name on the server (what the call sends)."""
    annotation: str
    """Annotation source text, e.g. ``list[str] | None``."""
    required: bool
    """The schema requires it: the stub has no default for it."""
    default_repr: str | None
    """Source text of the default; None for a required parameter."""
    description: str
    omit_when_none: bool = False
    """Optional, defaulting to ``None``: left out of the call while it is ``None``."""


def stub_parameters(tool: MCPToolInfo) -> list[StubParameter]:
    """The tool's parameters from its input schema: required first, schema order otherwise.

    An optional parameter keeps its schema default when that is a JSON value; without one it
    becomes ``T | None = None`` and is left out of the call while ``None`` (the server then
    applies its own default).
    """
    schema = tool.input_schema
    properties = _mapping(schema.get("properties"))
    required_names = set(cast("list[Any]", schema.get("required") or []))
    taken = set(RESERVED_PARAMETER_NAMES)
    required: list[StubParameter] = []
    optional: list[StubParameter] = []
    for wire_name, raw in properties.items():
        prop = _mapping(raw)
        name = python_identifier(wire_name, taken)
        annotation = annotation_for(prop, root=schema)
        description = _text(prop.get("description"))
        if wire_name in required_names:
            required.append(StubParameter(name, wire_name, annotation, True, None, description))
            continue
        # Without a usable schema default the server applies its own: send nothing for None.
        # A null default means the same, and stays valid where the type does not admit null.
        default = _default_repr(prop) or "None"
        omit = default == "None"
        if omit:
            annotation = optional_annotation(annotation)
        optional.append(
            StubParameter(name, wire_name, annotation, False, default, description, omit)
        )
    return required + optional


def return_annotation(tool: MCPToolInfo) -> str:
    """What the stub returns: from the output schema, else ``str`` (the tool's text).

    An object schema whose only property is ``result`` is the SDK's wrapping of a primitive
    return value, which the host unwraps: the annotation is that property's.
    """
    schema = tool.output_schema
    if schema is None:
        return "str"
    properties = _mapping(schema.get("properties"))
    if list(properties) == ["result"]:
        return annotation_for(_mapping(properties["result"]), root=schema)
    if schema.get("type") == "object" or properties:
        return "dict[str, Any]"
    return annotation_for(schema)


def return_fields(tool: MCPToolInfo) -> list[tuple[str, str, bool, str]]:
    """``(key, annotation, required, description)`` of each key of an object result, else []."""
    schema = tool.output_schema
    if schema is None:
        return []
    properties = _mapping(schema.get("properties"))
    if list(properties) == ["result"]:
        return []
    required = set(cast("list[Any]", schema.get("required") or []))
    return [
        (
            key,
            annotation_for(_mapping(raw), root=schema),
            key in required,
            _text(_mapping(raw).get("description")),
        )
        for key, raw in properties.items()
    ]


def return_description(tool: MCPToolInfo) -> str:
    """What the output schema says about the result (empty when it says nothing)."""
    schema = tool.output_schema
    if schema is None:
        return ""
    properties = _mapping(schema.get("properties"))
    if list(properties) == ["result"]:
        return _text(_mapping(properties["result"]).get("description"))
    return _text(schema.get("description"))


def tool_signature(tool: MCPToolInfo, call_name: str) -> str:
    """``call_name(*, a: int, b: str | None = None) -> str`` (no ``*`` without parameters)."""
    params = [_parameter_text(param) for param in stub_parameters(tool)]
    inside = f"*, {', '.join(params)}" if params else ""
    return f"{call_name}({inside}) -> {return_annotation(tool)}"


def tool_documentation(tool: MCPToolInfo, *, returns: bool) -> list[str]:
    """The description, an ``Args:`` block and (with ``returns``) a ``Returns:`` block, as lines.

    Unindented; the stub docstrings and the ``full`` listing indent them.
    """
    description = _text(tool.description) or _text(tool.title)
    lines = description.splitlines()
    params = stub_parameters(tool)
    if params:
        lines += ["", "Args:"]
        for param in params:
            lines += _entry(param.name, param.description)
    fields = return_fields(tool)
    if returns or fields:
        about = return_description(tool)
        returned = return_annotation(tool) + (f": {about}" if about else "")
        lines += ["", "Returns:", f"    {returned}"]
        for key, annotation, required, text in fields:
            label = f"{key} ({annotation}{'' if required else ', optional'})"
            lines += [f"    {line}" if line else "" for line in _entry(label, text)]
    while lines and not lines[0]:
        lines.pop(0)
    return lines


def render_listing(
    tools: Sequence[MCPToolInfo],
    *,
    detail: ListingDetail,
    call_name: Callable[[MCPToolInfo], str],
) -> str:
    """The tools as a model reads them, in the order given.

    ``names``: one call name per line. ``signatures``: one signature per line, with the first
    line of the description as a comment. ``full``: per tool the signature, then its indented
    description, ``Args:`` and (for object results) ``Returns:``, with a blank line between tools.
    """
    if detail == "names":
        return "\n".join(call_name(tool) for tool in tools)
    if detail == "signatures":
        lines: list[str] = []
        for tool in tools:
            line = tool_signature(tool, call_name(tool))
            about = _summary(tool)
            lines.append(f"{line}  # {about}" if about else line)
        return "\n".join(lines)
    if detail != "full":
        raise ValueError(f"detail must be 'names', 'signatures' or 'full', got {detail!r}")
    blocks: list[str] = []
    for tool in tools:
        body = tool_documentation(tool, returns=False)
        block = [tool_signature(tool, call_name(tool))]
        block += [f"    {line}" if line else "" for line in body]
        blocks.append("\n".join(block))
    return "\n\n".join(blocks)


def _parameter_text(param: StubParameter) -> str:
    text = f"{param.name}: {param.annotation}"
    return text if param.default_repr is None else f"{text} = {param.default_repr}"


def _entry(label: str, description: str) -> list[str]:
    """``label: first line`` with the further lines indented below it."""
    first, *rest = description.splitlines() or [""]
    lines = [f"    {label}: {first}" if first else f"    {label}"]
    return lines + [f"        {line}" if line else "" for line in rest]


def _summary(tool: MCPToolInfo) -> str:
    """The first line of the description (or title), at most ``_SUMMARY_CHARS`` characters."""
    text = _text(tool.description) or _text(tool.title)
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    if len(first) <= _SUMMARY_CHARS:
        return first
    return first[: _SUMMARY_CHARS - 3].rstrip() + "..."


def _default_repr(prop: Mapping[str, Any]) -> str | None:
    """Python source of the schema default, when it is a JSON value a literal can spell."""
    if "default" not in prop:
        return None
    value = prop["default"]
    try:
        json.dumps(value, allow_nan=False)
        text = repr(value)
        if ast.literal_eval(text) != value:
            return None
    except (TypeError, ValueError, SyntaxError, RecursionError):
        return None
    return text if len(text) <= _MAX_DEFAULT_CHARS else None


def _text(value: object) -> str:
    """A description as clean lines: docstring indentation removed, line ends stripped."""
    if not isinstance(value, str):
        return ""
    return "\n".join(line.rstrip() for line in inspect.cleandoc(value).splitlines()).strip("\n")


def _mapping(value: object) -> Mapping[str, Any]:
    return cast("Mapping[str, Any]", value) if isinstance(value, Mapping) else {}
