"""The files of a Code Mode run: the stub package ``mcp/`` and the runner that hosts the program.

``mcp/<server>.py`` holds one keyword-only function per tool; each call travels as one JSON line
to the host through ``mcp/_runtime.py``. The runner (``runner_source``) keeps that channel apart
from everything the program prints or reads. Both run inside the sandbox, on whatever Python 3.9+
it has, with the standard library only; their sources are ``_codemode_programs/runtime.py`` and
``_codemode_programs/runner.py``, linted and type-checked with the package.

Frames, one compact JSON object per line (UTF-8), at most ``max_frame_bytes`` bytes each:

- program -> host (its stdout): ``{"t": "call", "id": n, "server": s, "tool": t, "args": {...}}``
  (ids increase from 1), ``{"t": "out", "data": text}`` (its prints), and last
  ``{"t": "done", "error": null | text}``;
- host -> program (its stdin), one line per call: ``{"id": n, "result": value}`` or
  ``{"id": n, "error": {"type": kind, "message": text}}``.
"""

from __future__ import annotations

import functools
import keyword
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources

from agentic_mcp import _codemode_programs as _programs
from agentic_mcp._models import MCPToolInfo
from agentic_mcp._schema_types import python_identifier
from agentic_mcp._signatures import return_annotation, stub_parameters, tool_documentation

PROGRAM_FILE = "program.py"
"""The model's code, in the runner's working directory next to the stub package."""
RUNNER_FILE = "_agentic_runner.py"
"""The name the runner takes when it is written out as a file."""

_MIN_FRAME_BYTES = 1024
# The lines of the runner that runner_source replaces with the run's values.
_SETTINGS = re.compile(r"^# <settings>.*?\n(.*?)^# </settings>$", re.MULTILINE | re.DOTALL)
# Names the package and the server modules bind themselves: no server or tool may take them.
_PACKAGE_NAMES = frozenset({"_runtime", "call_tool", "ToolError", "annotations", "__init__"})
_MODULE_NAMES = frozenset(
    {"Any", "Literal", "annotations", "_runtime", "__all__", "__doc__", "__name__", "__file__"}
)


def server_module_names(servers: Sequence[str]) -> dict[str, str]:
    """Server name -> its module in the stub package (``my-git`` -> ``my_git``), unique.

    Lower case, so that two servers never differ only by case (one file on case-insensitive
    file systems).
    """
    taken = set(_PACKAGE_NAMES)
    return {server: python_identifier(server.lower(), taken) for server in dict.fromkeys(servers)}


def stub_call_names(
    tools: Sequence[MCPToolInfo], *, module_name: str = "mcp"
) -> dict[tuple[str, str], str]:
    """``(server, tool)`` -> how a program calls it, e.g. ``mcp.git.git_log``."""
    layout = _Layout.of(tools)
    return {
        key: f"{module_name}.{layout.modules[key[0]]}.{function}"
        for key, function in layout.functions.items()
    }


def build_stub_files(tools: Sequence[MCPToolInfo], *, module_name: str = "mcp") -> dict[str, str]:
    """Relative path -> text of the package ``module_name/`` that calls these tools.

    ``__init__.py`` (imports every server module, exports ``ToolError`` and ``call_tool``),
    ``_runtime.py`` (the channel to the host) and one ``<server>.py`` per server in ``tools``.
    """
    _check_module_name(module_name)
    layout = _Layout.of(tools)
    files = {f"{module_name}/_runtime.py": _program("runtime.py")}
    for server, module in layout.modules.items():
        files[f"{module_name}/{module}.py"] = _server_module(
            server, layout.by_server[server], layout, module_name
        )
    files[f"{module_name}/__init__.py"] = _package_init(layout, module_name)
    return files


def runner_source(
    *,
    module_name: str = "mcp",
    program_file: str = PROGRAM_FILE,
    max_frame_bytes: int = 16 << 20,
) -> str:
    """The runner a sandbox runs as the program, in the directory that holds ``program_file``
    and the stub package: it sets up the channel, runs the program and reports how it ended."""
    _check_module_name(module_name)
    if max_frame_bytes < _MIN_FRAME_BYTES:
        raise ValueError(f"max_frame_bytes must be at least {_MIN_FRAME_BYTES}")
    settings = (
        f"MODULE = {module_name!r}\n"
        f"PROGRAM = {program_file!r}\n"
        f"MAX_FRAME_BYTES = {max_frame_bytes!r}\n"
    )
    source = _program("runner.py")
    found = _SETTINGS.search(source)
    if found is None:
        raise RuntimeError("the Code Mode runner has lost its '# <settings>' block")
    return source[: found.start(1)] + settings + source[found.end(1) :]


@functools.cache
def _program(name: str) -> str:
    """The text of ``_codemode_programs/<name>``: it runs in the sandbox, never in this process."""
    return resources.files(_programs).joinpath(name).read_text(encoding="utf-8")


@dataclass
class _Layout:
    """Where each tool lands: its server's module and its function name there."""

    modules: dict[str, str]
    by_server: dict[str, list[MCPToolInfo]] = field(default_factory=dict[str, list[MCPToolInfo]])
    functions: dict[tuple[str, str], str] = field(default_factory=dict[tuple[str, str], str])

    @classmethod
    def of(cls, tools: Sequence[MCPToolInfo]) -> _Layout:
        layout = cls(server_module_names([tool.server for tool in tools]))
        taken: dict[str, set[str]] = {}
        for tool in tools:
            key = (tool.server, tool.name)
            if key in layout.functions:
                continue  # listed twice: the first one counts
            names = taken.setdefault(tool.server, set(_MODULE_NAMES))
            layout.functions[key] = python_identifier(tool.name, names)
            layout.by_server.setdefault(tool.server, []).append(tool)
        return layout


def _check_module_name(module_name: str) -> None:
    if not module_name.isidentifier() or keyword.iskeyword(module_name):
        raise ValueError(f"module_name must be a Python identifier, got {module_name!r}")


def _package_init(layout: _Layout, module_name: str) -> str:
    modules = list(layout.modules.values())
    listed = ", ".join(f"{module_name}.{module}" for module in modules) or "(none)"
    doc = [
        "MCP tools as Python functions, one module per server (generated by agentic-mcp).",
        "",
        f"Servers: {listed}. Call a tool with keyword arguments; help() on a module or function",
        f"tells its parameters. A failing call raises {module_name}.ToolError.",
    ]
    imports = "".join(f"from . import {module}\n" for module in modules)
    exported = ["ToolError", "call_tool", *modules]
    return (
        f"{_docstring(doc, '')}\n\n"
        "from __future__ import annotations\n\n"
        "from ._runtime import ToolError, call_tool\n"
        f"{imports}\n"
        f"__all__ = {exported!r}\n"
    )


def _server_module(server: str, tools: list[MCPToolInfo], layout: _Layout, module_name: str) -> str:
    functions = [layout.functions[(tool.server, tool.name)] for tool in tools]
    doc = [
        f"Tools of the MCP server {server} (generated by agentic-mcp).",
        "",
        f"Call them with keyword arguments; a failing call raises {module_name}.ToolError.",
    ]
    header = (
        f"{_docstring(doc, '')}\n\n"
        "from __future__ import annotations\n\n"
        "from typing import Any, Literal\n\n"
        "from . import _runtime\n\n"
        f"__all__ = {functions!r}\n"
    )
    bodies = [_function(tool, name) for tool, name in zip(tools, functions, strict=True)]
    return header + "".join(bodies) + "\n\n_runtime.plain_annotations(globals())\n"


def _function(tool: MCPToolInfo, name: str) -> str:
    params = stub_parameters(tool)
    signature = ", ".join(
        f"{p.name}: {p.annotation}" + ("" if p.default_repr is None else f" = {p.default_repr}")
        for p in params
    )
    doc = tool_documentation(tool, returns=True)
    if not (tool.description or tool.title or "").strip():
        doc = [f"The tool {tool.name} of the MCP server {tool.server}.", "", *doc]
    sent = ", ".join(f"{p.wire_name!r}: {p.name}" for p in params if not p.omit_when_none)
    body = [f"    _args: dict[str, Any] = {{{sent}}}"]
    for p in params:
        if p.omit_when_none:  # left at None: the server applies its own default
            body += [f"    if {p.name} is not None:", f"        _args[{p.wire_name!r}] = {p.name}"]
    body.append(f"    return _runtime.call_tool({tool.server!r}, {tool.name!r}, _args)")
    return (
        f"\n\ndef {name}({'*, ' + signature if params else ''}) -> {return_annotation(tool)}:\n"
        f"{_docstring(doc, '    ')}\n" + "\n".join(body) + "\n"
    )


def _docstring(lines: list[str], indent: str) -> str:
    """A docstring literal whose value is ``lines`` (escaped: any text is safe in it)."""
    escaped = [_escape(line) for line in lines]
    if len(escaped) == 1:
        text = escaped[0]
        if text.endswith('"'):
            text = text[:-1] + '\\"'  # a closing quote would merge with the delimiter
        return f'{indent}"""{text}"""'
    rest = "".join(f"{indent}{line}\n" if line else "\n" for line in escaped[1:])
    return f'{indent}"""{escaped[0]}\n{rest}{indent}"""'


def _escape(line: str) -> str:
    line = line.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    # Control characters and lone surrogates cannot stand raw in a source file.
    return "".join(
        ch if ch == "\t" or unicodedata.category(ch) not in ("Cc", "Cs") else repr(ch)[1:-1]
        for ch in line
    )
