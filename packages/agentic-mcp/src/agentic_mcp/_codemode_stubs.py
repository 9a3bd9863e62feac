"""The files of a Code Mode run: the stub package ``mcp/`` and the runner that hosts the program.

``mcp/<server>.py`` holds one keyword-only function per tool; each call travels as one JSON line
to the host through ``mcp/_runtime.py``. The runner (``runner_source``) keeps that channel apart
from everything the program prints or reads. Both run inside the sandbox, on whatever Python 3.9+
it has, with the standard library only.

Frames, one compact JSON object per line (UTF-8), at most ``max_frame_bytes`` bytes each:

- program -> host (its stdout): ``{"t": "call", "id": n, "server": s, "tool": t, "args": {...}}``
  (ids increase from 1), ``{"t": "out", "data": text}`` (its prints), and last
  ``{"t": "done", "error": null | text}``;
- host -> program (its stdin), one line per call: ``{"id": n, "result": value}`` or
  ``{"id": n, "error": {"type": kind, "message": text}}``.
"""

from __future__ import annotations

import keyword
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field

from agentic_mcp._models import MCPToolInfo
from agentic_mcp._schema_types import python_identifier
from agentic_mcp._signatures import return_annotation, stub_parameters, tool_documentation

PROGRAM_FILE = "program.py"
"""The model's code, in the runner's working directory next to the stub package."""
RUNNER_FILE = "_agentic_runner.py"
"""The name the runner takes when it is written out as a file."""

_MIN_FRAME_BYTES = 1024
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
    files = {f"{module_name}/_runtime.py": _RUNTIME_SOURCE}
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
    return _RUNNER_SOURCE.replace("# <settings>\n", settings, 1)


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
    return header + "".join(bodies) + "\n\n_runtime._plain_annotations(globals())\n"


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


# -- the files that run inside the sandbox (Python 3.9+, standard library only) -----------------

_RUNTIME_SOURCE = r'''"""The channel from these stubs to the host (generated by agentic-mcp).

Each tool call is one JSON line to the host and one JSON line back, one call at a time. The
runner connects the channel before the program starts.
"""

import json
import threading

__all__ = ["ToolError", "call_tool"]

KINDS = ("ToolError", "NotAllowed", "Timeout", "Budget", "Invalid", "TooLarge", "Protocol")


class ToolError(Exception):
    """A tool call failed or was refused; ``kind`` says how.

    ToolError: the tool reported an error. NotAllowed: not an allowed tool, or not approved.
    Timeout: the call took too long. Budget: too many calls in this run. Invalid: the arguments
    do not match the tool's schema. TooLarge: the result or the arguments are over the size
    limit. Protocol: the channel to the host broke.
    """

    def __init__(self, server, tool, kind, message):
        super().__init__(server, tool, kind, message)
        self.server = server
        self.tool = tool
        self.kind = kind
        self.message = message

    def __str__(self):
        return "%s from %s.%s: %s" % (self.kind, self.server, self.tool, self.message)


# Tracebacks say `mcp.ToolError` (where programs find it), not `mcp._runtime.ToolError`.
ToolError.__module__ = __name__.rpartition(".")[0] or __name__


class _Annotation(str):
    """Annotation text that help() and inspect show bare: `x: str`, not `x: 'str'`."""

    __slots__ = ()

    def __repr__(self):
        return str(self)


def _plain_annotations(namespace):
    """Called by each server module: its functions' annotations read as written, unevaluated."""
    for name in namespace["__all__"]:
        function = namespace[name]
        function.__annotations__ = {
            key: _Annotation(value) if isinstance(value, str) else value
            for key, value in function.__annotations__.items()
        }


def _encode(value):
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.encode("utf-8")


class _Channel:
    """One call at a time: a "call" frame out, its reply line back."""

    def __init__(self, reader, send_line, max_frame_bytes, before_call):
        self.reader = reader
        self.send_line = send_line
        self.max_frame_bytes = max_frame_bytes
        self.before_call = before_call
        self.lock = threading.RLock()
        self.last_id = 0
        self.broken = None

    def close(self, reason):
        with self.lock:
            self.broken = reason

    def call(self, server, tool, args):
        frame = {"t": "call", "id": 0, "server": server, "tool": tool, "args": args}
        with self.lock:
            frame["id"] = call_id = self.last_id + 1
            line = _encode(frame)
            if len(line) > self.max_frame_bytes:
                problem = "the arguments take %d bytes as JSON, over the limit of %d" % (
                    len(line), self.max_frame_bytes)
                raise ToolError(server, tool, "TooLarge", problem)
            if self.broken is not None:
                raise ToolError(server, tool, "Protocol", self.broken)
            self.last_id = call_id
            if self.before_call is not None:
                self.before_call()  # the prints so far reach the host before the call does
            reply = self._exchange(line, call_id)
            if isinstance(reply, str):
                self.broken = reply  # out of step with the host: no later call can be trusted
                raise ToolError(server, tool, "Protocol", reply)
        error = reply.get("error")
        if error is not None:
            kind, message = "ToolError", str(error)
            if isinstance(error, dict):
                kind, message = str(error.get("type", "ToolError")), str(error.get("message", ""))
            if kind not in KINDS:
                kind, message = "ToolError", "%s: %s" % (kind, message)
            raise ToolError(server, tool, kind, message)
        return reply["result"]

    def _exchange(self, line, call_id):
        """Send one call, read its reply: the reply dict, or why the channel broke (a str)."""
        try:
            self.send_line(line)
            reply_line = self.reader.readline(self.max_frame_bytes + 1)
        except OSError:
            reply_line = b""
        if not reply_line.endswith(b"\n"):
            if len(reply_line) > self.max_frame_bytes:
                return "a reply over the frame limit of %d bytes" % self.max_frame_bytes
            return "the host closed the channel"
        try:
            reply = json.loads(reply_line)
        except ValueError:
            return "a reply that is not JSON"
        if not isinstance(reply, dict) or ("result" not in reply and "error" not in reply):
            return "a reply without a result or an error"
        if reply.get("id") != call_id:
            return "a reply to call %r, not to call %d" % (reply.get("id"), call_id)
        return reply


_channel = None


def _connect(reader, send_line, max_frame_bytes, before_call=None):
    """Called by the runner: replies come from ``reader``, frames go to ``send_line(bytes)``."""
    global _channel
    _channel = _Channel(reader, send_line, max_frame_bytes, before_call)


def _close(reason):
    """Called by the runner when the program has finished: later calls fail with ``reason``."""
    if _channel is not None:
        _channel.close(reason)


def call_tool(server, tool, args=None):
    """Call ``tool`` of MCP server ``server`` with ``args`` (a dict of JSON values).

    Returns the tool's result; raises ToolError when the call fails or is refused, TypeError
    (before anything is sent) when ``args`` is not JSON.
    """
    if _channel is None:
        raise RuntimeError("these MCP stubs work only inside a Code Mode run")
    if not isinstance(server, str) or not isinstance(tool, str):
        raise TypeError("server and tool must be str")
    args = {} if args is None else args
    if not isinstance(args, dict):
        raise TypeError("args must be a dict, not %s" % type(args).__name__)
    try:
        _encode(args)
    except (TypeError, ValueError) as exc:
        problem = "the arguments of %s.%s are not JSON: %s" % (server, tool, exc)
        raise TypeError(problem) from None
    return _channel.call(server, tool, args)
'''

_RUNNER_SOURCE = r'''"""Runs a Code Mode program beside its tool channel (generated by agentic-mcp).

The host reads frames from this process's stdout and answers tool calls on its stdin; the
program reaches neither. Its prints become "out" frames, raw writes to fd 1 (C code, child
processes) land in stderr, and fd 0 reads /dev/null.
"""

import codecs
import importlib
import io
import json
import os
import runpy
import sys
import threading
import time
import traceback

# <settings>
FLUSH_CHARS = 4096  # a newline-ended print flushes once this much waits
FLUSH_AFTER_S = 0.5  # ... or once the last frame is this old (partial output survives a kill)
HARD_FLUSH_CHARS = 1 << 20  # flushes whatever waits, newline or not
MAX_ERROR_CHARS = min(1 << 16, MAX_FRAME_BYTES // 8)  # the "done" frame must fit in one frame


def _encode(frame):
    text = json.dumps(frame, ensure_ascii=False, separators=(",", ":"))
    return text.encode("utf-8")


def _out_lines(data):
    """The "out" frames of ``data``, each at most MAX_FRAME_BYTES."""
    try:
        data.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates: show them escaped
        data = data.encode("utf-8", "backslashreplace").decode("utf-8")
    start = 0
    while start < len(data):
        size = min(len(data) - start, MAX_FRAME_BYTES)
        while True:
            line = _encode({"t": "out", "data": data[start:start + size]})
            if len(line) <= MAX_FRAME_BYTES or size == 1:
                break
            size = max(1, size * MAX_FRAME_BYTES // len(line) - 8)  # escapes grow the text
        yield line
        start += size


class _FrameWriter(io.TextIOBase):
    """sys.stdout: buffers the program's prints and sends them as "out" frames."""

    encoding = "utf-8"
    errors = "strict"
    line_buffering = False

    def __init__(self, send_line):
        super().__init__()
        self._send_line = send_line
        self._parts = []
        self._size = 0
        self._last = time.monotonic()
        self._lock = threading.RLock()
        self._buffer = _BytesWriter(self)

    @property
    def buffer(self):
        return self._buffer

    def writable(self):
        return True

    def isatty(self):
        return False

    def reconfigure(self, **settings):
        """Accepted and ignored: the channel is always UTF-8."""

    def write(self, text):
        if not isinstance(text, str):
            raise TypeError("write() argument must be str, not %s" % type(text).__name__)
        with self._lock:
            self._parts.append(text)
            self._size += len(text)
            if self._size >= HARD_FLUSH_CHARS or (text.endswith("\n") and (
                self._size > FLUSH_CHARS or time.monotonic() - self._last > FLUSH_AFTER_S
            )):
                self.flush()
        return len(text)

    def flush(self):
        with self._lock:
            self._last = time.monotonic()
            if not self._parts:
                return
            data = "".join(self._parts)
            self._parts, self._size = [], 0
            for line in _out_lines(data):
                self._send_line(line)


class _BytesWriter(io.BufferedIOBase):
    """sys.stdout.buffer: bytes are decoded as UTF-8 and printed."""

    def __init__(self, text):
        super().__init__()
        self._text = text
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")

    def writable(self):
        return True

    def write(self, data):
        data = bytes(data)
        self._text.write(self._decoder.decode(data))
        return len(data)

    def flush(self):
        self._text.flush()


def _take_channel():
    """Private copies of fds 0 and 1 for the channel; the program gets /dev/null and stderr."""
    proto_in, proto_out = os.dup(0), os.dup(1)
    os.set_inheritable(proto_in, False)
    os.set_inheritable(proto_out, False)
    os.dup2(2, 1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    return os.fdopen(proto_in, "rb"), os.fdopen(proto_out, "wb")


def _describe(exc, keep, cwd):
    """The traceback text of ``exc`` with only the frames ``keep`` accepts (program, stubs),
    their file names relative to ``cwd``."""
    described = traceback.TracebackException.from_exception(exc)
    pending, seen = [described], set()
    while pending:
        current = pending.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        frames = [frame for frame in current.stack if keep(frame.filename)]
        for frame in frames:
            frame.line  # read the source line while the file name still finds it
            if os.path.isabs(frame.filename):
                frame.filename = os.path.relpath(frame.filename, cwd)
        current.stack = traceback.StackSummary.from_list(frames)
        pending += [current.__cause__, current.__context__]
        pending += list(getattr(current, "exceptions", None) or ())
    return "".join(described.format())


def _capped(text):
    """``text`` within MAX_ERROR_CHARS: its head (the frames) and tail (the exception) kept."""
    if text is None or len(text) <= MAX_ERROR_CHARS:
        return text
    half = MAX_ERROR_CHARS // 2
    return "%s\n... %d characters cut ...\n%s" % (text[:half], len(text) - 2 * half, text[-half:])


def _wait_for_threads():
    """Join the program's non-daemon threads, as the interpreter does before it exits."""
    current = threading.current_thread()
    for thread in threading.enumerate():
        if thread is not current and not thread.daemon:
            thread.join()


def main():
    reader, writer = _take_channel()
    write_lock = threading.RLock()

    def send_line(line):
        with write_lock:
            writer.write(line + b"\n")
            writer.flush()

    cwd = os.getcwd()
    program_path = os.path.abspath(PROGRAM)
    package_dir = os.path.join(cwd, MODULE) + os.sep

    def keep(filename):
        path = os.path.abspath(os.path.join(cwd, filename))
        return filename == PROGRAM or path == program_path or path.startswith(package_dir)

    out = _FrameWriter(send_line)
    sys.stdout = out
    sys.stdin = io.StringIO("")
    sys.argv = [PROGRAM]
    # The stubs shadow any installed package of the same name (the real MCP SDK, say).
    sys.path.insert(0, cwd)
    for name in [name for name in sys.modules if name.split(".")[0] == MODULE]:
        del sys.modules[name]
    runtime = None
    exit_code, error = 0, None
    try:
        runtime = importlib.import_module(MODULE + "._runtime")
        runtime._connect(reader, send_line, MAX_FRAME_BYTES, out.flush)
        runpy.run_path(PROGRAM, run_name="__main__")
    except SystemExit as exc:
        code = exc.code
        if code is not None and code != 0:
            exit_code = code if isinstance(code, int) else 1
            error = "SystemExit: %s" % (code,)
            if not isinstance(code, int):
                sys.stderr.write("%s\n" % (code,))
    except BaseException as exc:  # the program's own failure, reported to the host
        exit_code, error = 1, _describe(exc, keep, cwd)
        sys.stderr.write(error)
    try:
        _wait_for_threads()
        import atexit
        getattr(atexit, "_run_exitfuncs", lambda: None)()  # now, while prints still reach the host
    except BaseException as exc:
        sys.stderr.write("".join(traceback.format_exception_only(type(exc), exc)))
    sys.stdout = sys.__stdout__  # what is written later goes to stderr (fd 1)
    if runtime is not None:
        runtime._close("the program has finished")
    try:
        out.flush()
        send_line(_encode({"t": "done", "error": _capped(error)}))
        writer.close()
    except OSError:
        pass  # the host has gone: nobody left to tell
    sys.stderr.flush()
    sys.exit(exit_code)


if __name__ == "__main__":
    main()
'''
