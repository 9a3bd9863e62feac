"""Code Mode's generated API: schema types, identifiers, signatures, listings, stub files."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agentic_mcp import MCPToolInfo
from agentic_mcp._codemode_output import OutputBuffer
from agentic_mcp._codemode_stubs import (
    build_stub_files,
    runner_source,
    server_module_names,
    stub_call_names,
)
from agentic_mcp._schema_types import annotation_for, python_identifier
from agentic_mcp._signatures import render_listing, stub_parameters, tool_signature


def info(name: str, schema: dict[str, Any], server: str = "git", **extra: Any) -> MCPToolInfo:
    return MCPToolInfo(
        server=server, name=name, qualified_name=f"{server}__{name}", input_schema=schema, **extra
    )


GIT_LOG = info(
    "git_log",
    {
        "type": "object",
        "properties": {
            "repo_path": {"type": "string", "description": "Path to the repository"},
            "max_count": {"type": "integer", "default": 10},
            "start_timestamp": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        },
        "required": ["repo_path"],
    },
    description="Shows the commit logs\nwith details.",
)
CHOOSE = info(
    "choose",
    {
        "type": "object",
        "properties": {
            "color": {"enum": ["red", "green"]},
            "from": {"type": "integer"},
            "count": {"type": ["integer", "null"]},
        },
        "required": ["color", "from"],
    },
    server="my-probe",
    description="Pick a colour.",
    output_schema={"type": "object", "properties": {"result": {"type": "string"}}},
)
NESTED = info(
    "create",
    {
        "$defs": {
            "Item": {"type": "object", "properties": {"sku": {"type": "string"}}},
            "Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}}},
        },
        "type": "object",
        "properties": {
            "items": {"type": "array", "items": {"$ref": "#/$defs/Item"}},
            "node": {"$ref": "#/$defs/Node"},
            "anything": {},
        },
        "required": ["items"],
    },
    server="shop",
    output_schema={"type": "object", "properties": {"id": {"type": "string"}}},
)


def write_files(root: Path, files: dict[str, str]) -> None:
    for path, source in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(source)


def run_printing_json(cwd: Path, code: str) -> Any:
    """Run ``code`` in a fresh interpreter in ``cwd``; the JSON it printed."""
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout)


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ({"type": "string"}, "str"),
        ({"type": "number"}, "float"),
        ({"type": "array", "items": {"type": "integer"}}, "list[int]"),
        ({"type": "array"}, "list[Any]"),
        ({"type": "object", "properties": {"a": {}}}, "dict[str, Any]"),
        ({"enum": ["a", "b", 3]}, "Literal['a', 'b', 3]"),
        ({"const": "x"}, "Literal['x']"),
        ({"anyOf": [{"type": "null"}, {"type": "string"}]}, "str | None"),
        ({"type": ["null", "integer", "string"]}, "int | str | None"),
        ({"anyOf": [{"type": "string"}, {}]}, "Any"),
        ({}, "Any"),
        (True, "Any"),
        ({"$ref": "#/$defs/Missing"}, "dict[str, Any]"),
    ],
)
def test_schema_annotations(schema: Any, expected: str) -> None:
    assert annotation_for(schema) == expected


def test_refs_resolve_against_the_root_and_stop_at_recursion() -> None:
    root = NESTED.input_schema
    assert annotation_for(root["properties"]["items"], root=root) == "list[dict[str, Any]]"
    assert annotation_for(root["properties"]["node"], root=root) == "dict[str, Any]"


def test_identifiers_are_valid_and_unique() -> None:
    taken: set[str] = set()
    names = [python_identifier(n, taken) for n in ["from", "repo-path", "2x", "a", "a", "match"]]
    assert names == ["from_", "repo_path", "_2x", "a", "a_2", "match"]  # a soft keyword is fine
    assert all(name.isidentifier() for name in names)
    assert server_module_names(["my-git", "my_git", "call_tool"]) == {
        "my-git": "my_git",
        "my_git": "my_git_2",
        "call_tool": "call_tool_2",
    }


def test_parameters_signatures_and_listings() -> None:
    params = stub_parameters(CHOOSE)
    assert [(p.name, p.wire_name, p.required) for p in params] == [
        ("color", "color", True),
        ("from_", "from", True),
        ("count", "count", False),
    ]
    names = stub_call_names([GIT_LOG, CHOOSE])
    assert names[("git", "git_log")] == "mcp.git.git_log"
    assert names[("my-probe", "choose")] == "mcp.my_probe.choose"
    assert tool_signature(GIT_LOG, "mcp.git.git_log") == (
        "mcp.git.git_log(*, repo_path: str, max_count: int = 10, "
        "start_timestamp: str | None = None) -> str"
    )
    assert tool_signature(CHOOSE, "choose") == (
        "choose(*, color: Literal['red', 'green'], from_: int, count: int | None = None) -> str"
    )
    tools = [GIT_LOG, CHOOSE]
    assert render_listing(tools, detail="names", call_name=lambda t: t.qualified_name) == (
        "git__git_log\nmy-probe__choose"
    )
    signatures = render_listing(tools, detail="signatures", call_name=lambda t: t.name)
    assert signatures.splitlines()[0].endswith("-> str  # Shows the commit logs")
    full = render_listing(tools, detail="full", call_name=lambda t: t.name)
    assert "    with details." in full
    assert "        repo_path: Path to the repository" in full
    with pytest.raises(ValueError, match="detail"):
        render_listing(tools, detail="everything", call_name=lambda t: t.name)  # pyright: ignore[reportArgumentType]


def test_stub_files_compile_and_expose_keyword_only_functions(tmp_path: Path) -> None:
    quoted = info("quote", {"type": "object", "properties": {}}, description='Say """hi""" \\o/')
    files = build_stub_files([GIT_LOG, CHOOSE, NESTED, quoted])
    assert set(files) == {
        "mcp/__init__.py",
        "mcp/_runtime.py",
        "mcp/git.py",
        "mcp/my_probe.py",
        "mcp/shop.py",
    }
    for path, source in files.items():
        compile(source, path, "exec")
    write_files(tmp_path, files)
    probe = (
        "import inspect, json, mcp\n"
        "out = {}\n"
        "for fn in (mcp.git.git_log, mcp.my_probe.choose, mcp.shop.create, mcp.git.quote):\n"
        "    sig = inspect.signature(fn)\n"
        "    out[fn.__name__] = {\n"
        "        'kinds': sorted({p.kind.name for p in sig.parameters.values()}),\n"
        "        'defaults': {n: repr(p.default) for n, p in sig.parameters.items()\n"
        "                     if p.default is not p.empty},\n"
        "        'doc': fn.__doc__, 'returns': inspect.formatannotation(sig.return_annotation),\n"
        "        'params': {n: inspect.formatannotation(p.annotation)\n"
        "                   for n, p in sig.parameters.items()}}\n"
        "try:\n"
        "    mcp.git.git_log()\n"
        "except TypeError as error:\n"
        "    out['missing'] = str(error)\n"
        "try:\n"
        "    mcp.git.git_log(repo_path='.')\n"
        "except RuntimeError as error:\n"
        "    out['outside'] = str(error)\n"
        "print(json.dumps(out))\n"
    )
    out = run_printing_json(tmp_path, probe)
    assert out["git_log"]["kinds"] == ["KEYWORD_ONLY"]
    assert out["git_log"]["defaults"] == {"max_count": "10", "start_timestamp": "None"}
    assert out["git_log"]["doc"].startswith("Shows the commit logs")
    assert "repo_path: Path to the repository" in out["git_log"]["doc"]
    assert out["choose"]["returns"] == "str"
    assert out["create"]["returns"] == "dict[str, Any]"
    # Annotations print bare (not quoted) in help() and inspect, on any Python 3.9+.
    assert out["choose"]["params"]["color"] == "Literal['red', 'green']"
    assert out["git_log"]["params"]["start_timestamp"] == "str | None"
    assert out["quote"]["kinds"] == []
    assert '"""hi"""' in out["quote"]["doc"]
    assert "repo_path" in out["missing"]
    assert "only inside a Code Mode run" in out["outside"]


def test_optional_arguments_left_at_none_are_not_sent(tmp_path: Path) -> None:
    write_files(tmp_path, build_stub_files([GIT_LOG]))
    probe = (
        "import json, mcp, mcp._runtime as rt\n"
        "sent = []\n"
        "class Fake:\n"
        "    def call(self, server, tool, args):\n"
        "        sent.append([server, tool, args])\n"
        "rt._channel = Fake()\n"
        "mcp.git.git_log(repo_path='r')\n"
        "mcp.git.git_log(repo_path='r', start_timestamp='2024', max_count=3)\n"
        "try:\n"
        "    mcp.call_tool('git', 'git_log', {'x': object()})\n"
        "except TypeError as error:\n"
        "    sent.append(str(error))\n"
        "print(json.dumps(sent))\n"
    )
    assert run_printing_json(tmp_path, probe) == [
        ["git", "git_log", {"repo_path": "r", "max_count": 10}],
        ["git", "git_log", {"repo_path": "r", "max_count": 3, "start_timestamp": "2024"}],
        "the arguments of git.git_log are not JSON: Object of type object is not JSON serializable",
    ]


def test_the_runner_compiles_with_its_settings() -> None:
    source = runner_source(module_name="tools", program_file="main.py", max_frame_bytes=1024)
    compile(source, "runner.py", "exec")
    assert "MODULE = 'tools'" in source
    assert "PROGRAM = 'main.py'" in source


def test_output_buffer_keeps_head_and_tail() -> None:
    buffer = OutputBuffer(100)
    buffer.append("short")
    assert (buffer.text(), buffer.truncated) == ("short", False)
    buffer = OutputBuffer(90)
    for index in range(1000):
        buffer.append(f"{index:04d}\n")
    text = buffer.text()
    assert buffer.truncated
    assert text.startswith("0000\n0001\n")
    assert text.rstrip().endswith("0999")
    assert "characters of output cut" in text
    assert len(text) < 300
