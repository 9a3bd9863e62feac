# pyright: strict
"""Code Mode's view of a tool: schema -> annotation, names -> identifiers, signatures, listings."""

from __future__ import annotations

import keyword
from typing import Any

import pytest

from agentic_mcp import MCPToolInfo
from agentic_mcp._schema_types import annotation_for, optional_annotation, python_identifier
from agentic_mcp._signatures import (
    StubParameter,
    render_listing,
    return_annotation,
    stub_parameters,
    tool_signature,
)

# As mcp-server-git and mcp-server-time (2026.10.19) list them.
GIT_LOG = MCPToolInfo(
    server="git",
    name="git_log",
    qualified_name="git__git_log",
    description="Shows the commit logs",
    input_schema={
        "type": "object",
        "properties": {
            "repo_path": {"title": "Repo Path", "type": "string"},
            "max_count": {"default": 10, "title": "Max Count", "type": "integer"},
            "start_timestamp": {
                "anyOf": [{"type": "string"}, {"type": "null"}],
                "default": None,
                "description": "Start timestamp for filtering commits. Accepts: ISO 8601 format",
                "title": "Start Timestamp",
            },
        },
        "required": ["repo_path"],
        "title": "logArguments",
    },
)
GET_CURRENT_TIME = MCPToolInfo(
    server="time",
    name="get_current_time",
    qualified_name="time__get_current_time",
    description="Get current time in a specific timezone",
    input_schema={
        "type": "object",
        "properties": {
            "timezone": {
                "description": "IANA timezone name.",
                "title": "Timezone",
                "type": "string",
            }
        },
        "required": ["timezone"],
    },
    output_schema={
        "properties": {
            "timezone": {"title": "Timezone", "type": "string"},
            "is_dst": {"title": "Is Dst", "type": "boolean"},
        },
        "required": ["timezone", "is_dst"],
        "title": "TimeResult",
        "type": "object",
    },
)
NOW = MCPToolInfo(server="time", name="now", qualified_name="time__now")

# What MCPServer (mcp 2.3.0) lists for `def draw(shape: Shape, scale: float = 1.0, ...) -> int`
# with pydantic models Shape (recursive through `parent`) and Point.
DRAW_SCHEMA: dict[str, Any] = {
    "$defs": {
        "Point": {
            "properties": {"x": {"type": "integer"}, "y": {"default": 0, "type": "integer"}},
            "required": ["x"],
            "title": "Point",
            "type": "object",
        },
        "Shape": {
            "properties": {
                "name": {"type": "string"},
                "points": {"items": {"$ref": "#/$defs/Point"}, "type": "array"},
                "kind": {"default": "a", "enum": ["a", "b"], "type": "string"},
                "parent": {"anyOf": [{"$ref": "#/$defs/Shape"}, {"type": "null"}], "default": None},
            },
            "required": ["name", "points"],
            "title": "Shape",
            "type": "object",
        },
        "Kind": {"enum": ["line", "dot"], "type": "string"},
        "Tree": {"type": "array", "items": {"$ref": "#/$defs/Tree"}},
    },
    "properties": {
        "scale": {"default": 1.0, "title": "Scale", "type": "number"},
        "shape": {"$ref": "#/$defs/Shape"},
        "kinds": {"type": "array", "items": {"$ref": "#/$defs/Kind"}},
        "tags": {
            "anyOf": [{"items": {"type": "string"}, "type": "array"}, {"type": "null"}],
            "default": None,
        },
    },
    "required": ["shape"],
    "title": "drawArguments",
    "type": "object",
}
DRAW = MCPToolInfo(
    server="paint",
    name="draw",
    qualified_name="paint__draw",
    description="Draw a shape.\n\n    Scaled by `scale`.",
    input_schema=DRAW_SCHEMA,
    output_schema={
        "properties": {"result": {"title": "Result", "type": "integer"}},
        "required": ["result"],
        "title": "drawOutput",
        "type": "object",
    },
)


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ({"type": "string"}, "str"),
        ({"type": "integer"}, "int"),
        ({"type": "number"}, "float"),
        ({"type": "boolean"}, "bool"),
        ({"type": "null"}, "None"),
        ({"type": "object", "properties": {"a": {}}}, "dict[str, Any]"),
        ({"properties": {"a": {}}}, "dict[str, Any]"),
        ({"type": "array", "items": {"type": "integer"}}, "list[int]"),
        ({"type": "array"}, "list[Any]"),
        ({"type": "array", "items": {"type": "object"}}, "list[dict[str, Any]]"),
        ({"type": "array", "items": {"type": "array", "items": {}}}, "list[list[Any]]"),
        ({"enum": ["a", "b", 3]}, "Literal['a', 'b', 3]"),
        ({"type": "string", "enum": ["it's", 'say "hi"']}, 'Literal["it\'s", \'say "hi"\']'),
        ({"enum": ["a", None]}, "Literal['a'] | None"),
        ({"type": "number", "enum": [0.5, 1.5]}, "float"),  # floats cannot be literals
        ({"enum": [True, 1]}, "Literal[True, 1]"),  # equal, yet distinct literals
        ({"const": "x"}, "Literal['x']"),
        ({"const": None}, "None"),
        ({"anyOf": [{"type": "null"}, {"type": "string"}]}, "str | None"),
        ({"oneOf": [{"type": "integer"}, {"type": "string"}, {"type": "integer"}]}, "int | str"),
        ({"anyOf": [{"const": "a"}, {"const": "b"}, {"type": "null"}]}, "Literal['a', 'b'] | None"),
        ({"type": ["null", "integer", "string"]}, "int | str | None"),
        ({"type": ["array", "null"], "items": {"type": "string"}}, "list[str] | None"),
        ({"anyOf": [{"type": "string"}, {}]}, "Any"),
        ({"type": "string", "nullable": True}, "str | None"),
        ({"allOf": [{"type": "integer"}]}, "int"),
        ({"type": "file"}, "Any"),
        ({"$ref": "#/$defs/Missing"}, "dict[str, Any]"),
        ({"$ref": "https://example.com/schema.json"}, "dict[str, Any]"),
        ({}, "Any"),
    ],
)
def test_schema_annotations(schema: dict[str, Any], expected: str) -> None:
    assert annotation_for(schema) == expected


def test_annotations_of_a_boolean_schema_and_of_missing_items_are_any() -> None:
    assert annotation_for(True) == "Any"  # pyright: ignore[reportArgumentType]
    assert annotation_for({"type": "array", "items": True}) == "list[Any]"


def test_refs_resolve_against_the_root_as_mcpserver_emits_them() -> None:
    properties = DRAW_SCHEMA["properties"]
    assert annotation_for(properties["shape"], root=DRAW_SCHEMA) == "dict[str, Any]"
    assert annotation_for(properties["kinds"], root=DRAW_SCHEMA) == "list[Literal['line', 'dot']]"
    assert annotation_for(properties["tags"], root=DRAW_SCHEMA) == "list[str] | None"
    shape = DRAW_SCHEMA["$defs"]["Shape"]["properties"]
    assert annotation_for(shape["points"], root=DRAW_SCHEMA) == "list[dict[str, Any]]"
    assert annotation_for(shape["parent"], root=DRAW_SCHEMA) == "dict[str, Any] | None"
    legacy = {"definitions": {"N": {"type": "integer"}}, "$ref": "#/definitions/N"}
    assert annotation_for(legacy) == "int"


def test_a_recursive_ref_stops_at_the_first_repetition() -> None:
    tree = {"$ref": "#/$defs/Tree"}
    assert annotation_for(tree, root=DRAW_SCHEMA) == "list[dict[str, Any]]"


def test_optional_annotation_adds_none_once() -> None:
    assert optional_annotation("str") == "str | None"
    assert optional_annotation("str | None") == "str | None"
    assert optional_annotation("list[str | None]") == "list[str | None] | None"
    assert optional_annotation("Any") == "Any"


def test_identifiers_are_sanitized() -> None:
    taken: set[str] = set()
    names = [
        python_identifier(name, taken)
        for name in ["repo-path", "2x", "from", "class", "match", "type", "a b.c", "", "ﬁle"]
    ]
    # Only hard keywords get "_": soft keywords and builtins are valid names.
    assert names == ["repo_path", "_2x", "from_", "class_", "match", "type", "a_b_c", "_", "file"]
    assert all(name.isidentifier() and not keyword.iskeyword(name) for name in names)
    assert taken == set(names)


def test_identifiers_are_unique_within_taken() -> None:
    taken = {"a"}
    names = [python_identifier(name, taken) for name in ["a", "a", "a-2", "class", "class", "_"]]
    assert names == ["a_2", "a_3", "a_2_2", "class_", "class_2", "_"]
    assert python_identifier("", taken) == "_2"


def test_parameters_keep_wire_names_required_first() -> None:
    tool = MCPToolInfo(
        server="s",
        name="t",
        qualified_name="s__t",
        input_schema={
            "type": "object",
            "properties": {
                "max-count": {"type": "integer", "default": 5, "description": "At most."},
                "from": {"type": "string"},
                "_args": {"type": "integer"},
                "tz": {"type": "string", "default": None},
                "big": {"type": "number", "default": float("nan")},
            },
            "required": ["from"],
        },
    )
    assert stub_parameters(tool) == [
        StubParameter("from_", "from", "str", True, None, ""),
        StubParameter("max_count", "max-count", "int", False, "5", "At most."),
        # `_args` is what a stub's body builds: a parameter never takes that name.
        StubParameter("_args_2", "_args", "int | None", False, "None", "", omit_when_none=True),
        StubParameter("tz", "tz", "str | None", False, "None", "", omit_when_none=True),
        StubParameter("big", "big", "float | None", False, "None", "", omit_when_none=True),
    ]


def test_return_annotations() -> None:
    assert return_annotation(GIT_LOG) == "str"
    assert return_annotation(DRAW) == "int"  # {"result": int} is MCPServer's primitive wrapping
    assert return_annotation(GET_CURRENT_TIME) == "dict[str, Any]"
    assert return_annotation(NOW.model_copy(update={"output_schema": {"type": "object"}})) == (
        "dict[str, Any]"
    )


def test_signatures() -> None:
    assert tool_signature(GIT_LOG, "mcp.git.git_log") == (
        "mcp.git.git_log(*, repo_path: str, max_count: int = 10, "
        "start_timestamp: str | None = None) -> str"
    )
    assert tool_signature(NOW, "mcp.time.now") == "mcp.time.now() -> str"
    assert tool_signature(DRAW, "mcp.paint.draw") == (
        "mcp.paint.draw(*, shape: dict[str, Any], scale: float = 1.0, "
        "kinds: list[Literal['line', 'dot']] | None = None, tags: list[str] | None = None) -> int"
    )


def call_name(tool: MCPToolInfo) -> str:
    return f"mcp.{tool.server}.{tool.name}"


TOOLS = [GIT_LOG, GET_CURRENT_TIME, NOW]


def test_listing_names() -> None:
    assert render_listing(TOOLS, detail="names", call_name=call_name) == (
        "mcp.git.git_log\nmcp.time.get_current_time\nmcp.time.now"
    )


def test_listing_signatures() -> None:
    assert render_listing(TOOLS, detail="signatures", call_name=call_name) == (
        "mcp.git.git_log(*, repo_path: str, max_count: int = 10, "
        "start_timestamp: str | None = None) -> str  # Shows the commit logs\n"
        "mcp.time.get_current_time(*, timezone: str) -> dict[str, Any]"
        "  # Get current time in a specific timezone\n"
        "mcp.time.now() -> str"
    )


def test_listing_full() -> None:
    assert render_listing(
        [GIT_LOG, GET_CURRENT_TIME, NOW, DRAW], detail="full", call_name=call_name
    ) == (
        "mcp.git.git_log(*, repo_path: str, max_count: int = 10, "
        "start_timestamp: str | None = None) -> str\n"
        "    Shows the commit logs\n"
        "\n"
        "    Args:\n"
        "        repo_path\n"
        "        max_count\n"
        "        start_timestamp: Start timestamp for filtering commits. Accepts: ISO 8601 format\n"
        "\n"
        "mcp.time.get_current_time(*, timezone: str) -> dict[str, Any]\n"
        "    Get current time in a specific timezone\n"
        "\n"
        "    Args:\n"
        "        timezone: IANA timezone name.\n"
        "\n"
        "    Returns:\n"
        "        dict[str, Any]\n"
        "            timezone (str)\n"
        "            is_dst (bool)\n"
        "\n"
        "mcp.time.now() -> str\n"
        "\n"
        "mcp.paint.draw(*, shape: dict[str, Any], scale: float = 1.0, "
        "kinds: list[Literal['line', 'dot']] | None = None, tags: list[str] | None = None) -> int\n"
        "    Draw a shape.\n"
        "\n"
        "    Scaled by `scale`.\n"
        "\n"
        "    Args:\n"
        "        shape\n"
        "        scale\n"
        "        kinds\n"
        "        tags"
    )


def test_listing_summaries_are_one_short_line() -> None:
    long = MCPToolInfo(
        server="s",
        name="t",
        qualified_name="s__t",
        description="\n\n" + "word " * 60 + "\nsecond line",
    )
    [line] = render_listing([long], detail="signatures", call_name=call_name).splitlines()
    comment = line.split("  # ", 1)[1]
    assert comment.endswith("...")
    assert len(comment) <= 120
    titled = MCPToolInfo(server="s", name="t", qualified_name="s__t", title="Title only")
    assert render_listing([titled], detail="signatures", call_name=call_name).endswith(
        "  # Title only"
    )


def test_listing_detail_is_checked() -> None:
    with pytest.raises(ValueError, match="detail"):
        render_listing(TOOLS, detail="everything", call_name=call_name)  # pyright: ignore[reportArgumentType]
    assert render_listing([], detail="full", call_name=call_name) == ""
