"""Python signatures of MCP tools, and the one-line-per-tool listings shown to models."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast

from agentic_mcp._models import MCPToolInfo
from agentic_mcp._schema_types import annotation_for, python_identifier

_SUMMARY_CHARS = 120


@dataclass(frozen=True)
class StubParameter:
    """One keyword-only parameter of a stub function."""

    name: str
    """The Python identifier."""
    wire_name: str
    """The argument's name on the server."""
    annotation: str
    required: bool
    default_repr: str | None
    """Source text of the default (``None`` for a required parameter)."""
    omit_when_none: bool
    """Optional without a schema default: leave it out of the call when it is ``None``."""
    description: str


def stub_parameters(tool: MCPToolInfo) -> list[StubParameter]:
    """The tool's parameters, required first (schema order otherwise)."""
    schema = tool.input_schema
    properties: Mapping[str, Any] = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    taken: set[str] = {"self"}
    required_params: list[StubParameter] = []
    optional_params: list[StubParameter] = []
    for wire_name, property_schema in properties.items():
        prop = cast(
            "Mapping[str, Any]", property_schema if isinstance(property_schema, Mapping) else {}
        )
        name = python_identifier(wire_name, taken)
        annotation = annotation_for(prop, root=schema)
        description = str(prop.get("description") or prop.get("title") or "")
        if wire_name in required:
            required_params.append(
                StubParameter(name, wire_name, annotation, True, None, False, description)
            )
            continue
        default = _default_repr(prop)
        if default is None:
            if annotation != "Any" and "None" not in annotation.split(" | "):
                annotation = f"{annotation} | None"
            optional_params.append(
                StubParameter(name, wire_name, annotation, False, "None", True, description)
            )
        else:
            optional_params.append(
                StubParameter(name, wire_name, annotation, False, default, False, description)
            )
    return required_params + optional_params


def _default_repr(prop: Mapping[str, Any]) -> str | None:
    if "default" not in prop:
        return None
    value = prop["default"]
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return None
    text = repr(value)
    return text if len(text) <= 200 else None


def return_annotation(tool: MCPToolInfo) -> str:
    """What the stub returns: from the output schema, else ``str`` (the text content)."""
    schema = tool.output_schema
    if not schema:
        return "str"
    properties = schema.get("properties")
    if isinstance(properties, Mapping) and set(properties) == {"result"}:  # pyright: ignore[reportUnknownArgumentType]
        return annotation_for(properties["result"], root=schema)  # pyright: ignore[reportUnknownArgumentType]
    return "dict[str, Any]"


def tool_signature(tool: MCPToolInfo, call_name: str) -> str:
    """``call_name(*, a: int, b: str | None = None) -> str``."""
    params = [
        f"{p.name}: {p.annotation}" + (f" = {p.default_repr}" if not p.required else "")
        for p in stub_parameters(tool)
    ]
    inside = f"*, {', '.join(params)}" if params else ""
    return f"{call_name}({inside}) -> {return_annotation(tool)}"


def summary(tool: MCPToolInfo) -> str:
    """The first line of the tool's description (or title), shortened."""
    text = (tool.description or tool.title or "").strip()
    first = text.splitlines()[0].strip() if text else ""
    return first if len(first) <= _SUMMARY_CHARS else first[: _SUMMARY_CHARS - 3] + "..."


def render_listing(
    tools: Sequence[MCPToolInfo],
    *,
    detail: Literal["names", "signatures", "full"],
    call_name: Callable[[MCPToolInfo], str],
) -> str:
    """One line per tool (``names``, ``signatures``) or a documented block each (``full``)."""
    if detail == "names":
        return "\n".join(call_name(tool) for tool in tools)
    if detail == "signatures":
        lines: list[str] = []
        for tool in tools:
            line = tool_signature(tool, call_name(tool))
            about = summary(tool)
            lines.append(f"{line}  # {about}" if about else line)
        return "\n".join(lines)
    if detail != "full":
        raise ValueError(f"detail must be 'names', 'signatures' or 'full', got {detail!r}")
    blocks: list[str] = []
    for tool in tools:
        block = [tool_signature(tool, call_name(tool))]
        description = (tool.description or tool.title or "").strip()
        block += [f"    {line}".rstrip() for line in description.splitlines()]
        params = stub_parameters(tool)
        if params:
            block.append("    Args:")
            for param in params:
                about = " ".join(param.description.split())
                block.append(f"        {param.name}: {about}".rstrip())
        blocks.append("\n".join(block))
    return "\n\n".join(blocks)
