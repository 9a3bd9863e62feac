"""CodeMode: model-written Python that calls MCP tools, run in a sandbox, each call checked here.

The program runs in an ``InteractiveSandbox`` (never anywhere else) next to a generated stub
package (``mcp/<server>.py``: one keyword-only function per tool). Each stub call travels as one
JSON line to this host over the program's stdout, kept apart from its prints by the runner; the
host checks it (allow/deny, approval, argument schema, call budget, timeouts, result size),
calls ``MCPClient.call_tool`` and writes the answer back on the program's stdin. The sandbox
keeps its network off: MCP is reachable only through this channel, and server credentials
(environment, HTTP headers) never enter it.
"""

from __future__ import annotations

import asyncio
import fnmatch
import inspect
import json
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Literal

import jsonschema
import structlog
from jsonschema.validators import validator_for

from agentic_core import InteractiveSandbox, SandboxProcess
from agentic_mcp._client import MCPClient
from agentic_mcp._codemode_output import OutputBuffer
from agentic_mcp._codemode_stubs import (
    PROGRAM_FILE,
    RUNNER_FILE,
    build_stub_files,
    runner_source,
    stub_call_names,
)
from agentic_mcp._errors import MCPClientError, MCPTimeoutError
from agentic_mcp._models import CodeModeResult, MCPToolInfo, ToolCallRecord
from agentic_mcp._signatures import render_listing

_log = structlog.get_logger("agentic_mcp.codemode")

ApprovalCallback = Callable[[str, str, dict[str, Any]], bool | Awaitable[bool]]
"""``(server, tool, arguments) -> allowed?`` for each call that passed allow/deny."""

_HOST_GRACE_S = 5.0
"""How long past the sandbox's own deadline the host keeps serving (the sandbox kills first)."""

_INTRO = """\
Run Python code in an isolated sandbox. The tools below are Python functions in the `{module}`
package (import it: `import {module}`); call them with keyword arguments. Results stay in the
sandbox: only what you print comes back, at most {max_chars:,} characters, so filter and
aggregate in code and print a short answer. A failing tool call raises `{module}.ToolError`.
At most {max_calls} tool calls per run; the run stops after {timeout:g} s.

"""


class CodeMode:
    """Runs model-written code against MCP tools inside a sandbox, checking every call.

    Example::

        code_mode = CodeMode(client, ProcessSandbox(), deny=["git.git_commit"])
        agent = ChatAgent(chat_client=..., tools=[code_mode.as_tool()])
        result = await code_mode.execute("import mcp\\nprint(mcp.time.get_current_time(...))")

    ``allow`` / ``deny`` are ``"server.tool"`` globs (default: every tool the client exposes);
    ``approval`` is asked for each call that passed them. ``max_tool_calls``, ``call_timeout_s``
    (one call), ``timeout_s`` (the whole run, enforced by the sandbox, which kills the program
    tree), ``max_result_bytes`` (one tool result sent into the sandbox) and
    ``max_output_chars`` (what the model reads) bound each execution.
    """

    def __init__(
        self,
        client: MCPClient,
        sandbox: InteractiveSandbox,
        *,
        servers: Sequence[str] | None = None,
        allow: Sequence[str] | None = None,
        deny: Sequence[str] = (),
        approval: ApprovalCallback | None = None,
        max_tool_calls: int = 100,
        call_timeout_s: float = 30.0,
        timeout_s: float = 60.0,
        max_output_chars: int = 20_000,
        max_result_bytes: int = 8 << 20,
        max_frame_bytes: int = 16 << 20,
        module_name: str = "mcp",
        detail: Literal["names", "signatures"] = "signatures",
        validate_arguments: bool = True,
        allow_network: bool = False,
    ) -> None:
        if not isinstance(sandbox, InteractiveSandbox):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise TypeError(
                "CodeMode runs model code only in an InteractiveSandbox (ProcessSandbox or "
                f"DockerSandbox from agentic-sandbox); got {type(sandbox).__name__}"
            )
        if getattr(sandbox, "network", False) and not allow_network:
            raise ValueError(
                "CodeMode needs a sandbox with network=False: tools are reached through the "
                "host channel only (pass allow_network=True to accept a networked sandbox)"
            )
        if not module_name.isidentifier():
            raise ValueError(f"module_name must be a Python identifier, got {module_name!r}")
        for label, value in (
            ("max_tool_calls", max_tool_calls),
            ("call_timeout_s", call_timeout_s),
            ("timeout_s", timeout_s),
            ("max_output_chars", max_output_chars),
            ("max_result_bytes", max_result_bytes),
            ("max_frame_bytes", max_frame_bytes),
        ):
            if value <= 0:
                raise ValueError(f"{label} must be positive, got {value}")
        self.client = client
        self.sandbox = sandbox
        self.servers = list(servers) if servers is not None else None
        self.allow = list(allow) if allow is not None else None
        self.deny = list(deny)
        self.approval = approval
        self.max_tool_calls = max_tool_calls
        self.call_timeout_s = call_timeout_s
        self.timeout_s = timeout_s
        self.max_output_chars = max_output_chars
        self.max_result_bytes = max_result_bytes
        self.max_frame_bytes = max(max_frame_bytes, max_result_bytes + 1024)
        self.module_name = module_name
        self.detail: Literal["names", "signatures"] = detail
        self.validate_arguments = validate_arguments

    # -- what the model sees ----------------------------------------------------------------------

    def tools(self) -> list[MCPToolInfo]:
        """The tools the program may call (the client's listing through allow and deny)."""
        return [info for info in self.client.tool_infos(self.servers) if self._permitted(info)]

    def api_listing(self) -> str:
        """One line per tool, as Python signatures (or names only with ``detail="names"``)."""
        tools = self.tools()
        names = stub_call_names(tools, module_name=self.module_name)
        return render_listing(
            tools, detail=self.detail, call_name=lambda info: names[(info.server, info.name)]
        )

    def stub_files(self) -> dict[str, str]:
        """The files each execution gets: the stub package and the runner (inspectable)."""
        files = build_stub_files(self.tools(), module_name=self.module_name)
        files[RUNNER_FILE] = self._runner()
        return files

    def describe(self) -> str:
        """The ``execute_python`` tool's description: how to use it, then the API listing."""
        intro = _INTRO.format(
            module=self.module_name,
            max_chars=self.max_output_chars,
            max_calls=self.max_tool_calls,
            timeout=self.timeout_s,
        )
        if self.detail == "names":
            intro += "Call help(<function>) in the sandbox for a tool's parameters.\n\n"
        return intro + self.api_listing()

    def as_tool(self, name: str = "execute_python") -> CodeModeTool:
        """One tool for an agent: ``code`` in, the program's output out."""
        return CodeModeTool(self, name)

    # -- running code -----------------------------------------------------------------------------

    async def execute(
        self,
        code: str,
        *,
        files: Mapping[str, str | bytes] | None = None,
        env: Mapping[str, str] | None = None,
    ) -> CodeModeResult:
        """Run ``code`` in the sandbox, serving its tool calls; how it went, never raises for
        the program's own failures (they are in ``error``, ``exit_code``, ``timed_out``)."""
        tools = {(info.server, info.name): info for info in self.tools()}
        program_files: dict[str, str | bytes] = dict(files or {})
        program_files.update(build_stub_files(list(tools.values()), module_name=self.module_name))
        program_files[PROGRAM_FILE] = code
        session = _Session(self, tools)
        started = time.perf_counter()
        async with self.sandbox.start(
            self._runner(),
            language="python",
            timeout_s=self.timeout_s,
            files=program_files,
            env=env,
        ) as process:
            try:
                async with asyncio.timeout(self.timeout_s + _HOST_GRACE_S):
                    await session.serve(process)
            except TimeoutError:
                session.protocol_error = "the program did not end by its deadline"
            if session.protocol_error is not None:
                await process.kill()
            ended = await process.wait()
        error = session.protocol_error or session.program_error
        if ended.timed_out and error is None:
            error = f"the program was stopped after {self.timeout_s:g} s (timeout)"
        return CodeModeResult(
            stdout=session.output.text(),
            stderr=ended.stderr,
            exit_code=ended.exit_code,
            error=error,
            timed_out=ended.timed_out,
            truncated=session.output.truncated or ended.truncated,
            tool_calls=session.records,
            duration_s=time.perf_counter() - started,
        )

    # -- internals --------------------------------------------------------------------------------

    def _runner(self) -> str:
        return runner_source(
            module_name=self.module_name,
            program_file=PROGRAM_FILE,
            max_frame_bytes=self.max_frame_bytes,
        )

    def _permitted(self, info: MCPToolInfo) -> bool:
        dotted = f"{info.server}.{info.name}"
        if self.allow is not None and not any(
            fnmatch.fnmatchcase(dotted, pattern) for pattern in self.allow
        ):
            return False
        return not any(fnmatch.fnmatchcase(dotted, pattern) for pattern in self.deny)


class _CallRefusedError(Exception):
    """A call the host will not make; ``kind`` is the error type the program sees."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


class _Session:
    """One execution: reads frames, answers calls, collects output and the call records."""

    def __init__(self, mode: CodeMode, tools: Mapping[tuple[str, str], MCPToolInfo]) -> None:
        self.mode = mode
        self.tools = tools
        self.output = OutputBuffer(mode.max_output_chars)
        self.records: list[ToolCallRecord] = []
        self.program_error: str | None = None
        self.protocol_error: str | None = None
        self._calls = 0
        self._last_id = 0
        self._stdin_closed = False
        self._validators: dict[tuple[str, str], Any] = {}
        self._deadline = time.monotonic() + mode.timeout_s

    async def serve(self, process: SandboxProcess) -> None:
        limit = self.mode.max_frame_bytes + 1
        while True:
            line = await process.readline(limit=limit)
            if not line:
                return
            if not line.endswith(b"\n"):
                if len(line) >= limit:
                    self.protocol_error = (
                        f"the program sent a frame over {self.mode.max_frame_bytes:,} bytes"
                    )
                    return
                line += b"\n"  # the last line before EOF
            try:
                frame = json.loads(line)
            except (json.JSONDecodeError, UnicodeDecodeError):
                self.protocol_error = (
                    f"the program broke the tool channel (not a JSON frame: {line[:80]!r})"
                )
                return
            if not isinstance(frame, dict):
                self.protocol_error = "the program broke the tool channel (a frame not an object)"
                return
            frame_map: dict[str, Any] = frame  # pyright: ignore[reportUnknownVariableType]
            kind = frame_map.get("t")
            if kind == "out":
                data = frame_map.get("data")
                if isinstance(data, str):
                    self.output.append(data)
            elif kind == "call":
                reply = await self._answer(frame_map)
                if not self._stdin_closed:
                    try:
                        await process.write(reply)
                    except Exception:  # noqa: BLE001 - the program exited: read what is left
                        self._stdin_closed = True
            elif kind == "done":
                error = frame_map.get("error")
                self.program_error = str(error) if error is not None else None
            else:
                self.protocol_error = f"the program sent an unknown frame type {kind!r}"
                return

    async def _answer(self, frame: Mapping[str, Any]) -> bytes:
        call_id = frame.get("id")
        server, tool, args = frame.get("server"), frame.get("tool"), frame.get("args")
        started = time.perf_counter()
        args_bytes = len(json.dumps(args, separators=(",", ":"), default=str).encode())
        record = ToolCallRecord(server=str(server), tool=str(tool), arguments_bytes=args_bytes)
        try:
            if not isinstance(call_id, int) or call_id <= self._last_id:
                raise _CallRefusedError("Protocol", f"call id {call_id!r} is not a new id")
            self._last_id = call_id
            if (
                not isinstance(server, str)
                or not isinstance(tool, str)
                or not isinstance(args, dict)
            ):
                raise _CallRefusedError("Invalid", "a call needs server, tool and an args object")
            arguments: dict[str, Any] = args  # pyright: ignore[reportUnknownVariableType]
            result = await self._call(server, tool, arguments)
            reply = _frame({"id": call_id, "result": result})
            if len(reply) > self.mode.max_result_bytes:
                raise _CallRefusedError(
                    "TooLarge",
                    f"the result is {len(reply):,} bytes, over the limit of "
                    f"{self.mode.max_result_bytes:,}; ask the tool for less",
                )
            record.result_bytes = len(reply)
        except _CallRefusedError as refused:
            record.is_error = True
            record.error = f"{refused.kind}: {refused.message}"
            reply = _frame(
                {"id": call_id, "error": {"type": refused.kind, "message": refused.message}}
            )
        record.duration_s = time.perf_counter() - started
        self.records.append(record)
        _log.debug(
            "codemode_tool_call",
            server=record.server,
            tool=record.tool,
            duration_s=round(record.duration_s, 4),
            error=record.error,
        )
        return reply

    async def _call(self, server: str, tool: str, arguments: dict[str, Any]) -> Any:
        mode = self.mode
        self._calls += 1
        if self._calls > mode.max_tool_calls:
            raise _CallRefusedError(
                "Budget", f"the budget of {mode.max_tool_calls} tool calls per run is spent"
            )
        info = self.tools.get((server, tool))
        if info is None:
            raise _CallRefusedError("NotAllowed", f"{server}.{tool} is not an allowed tool")
        if mode.approval is not None:
            verdict = mode.approval(server, tool, dict(arguments))
            if inspect.isawaitable(verdict):
                verdict = await verdict
            if not verdict:
                raise _CallRefusedError("NotAllowed", f"{server}.{tool} was not approved")
        if mode.validate_arguments:
            key = (server, tool)
            if key not in self._validators:
                self._validators[key] = _validator(info)
            _validate(self._validators[key], info, arguments)
        remaining = self._deadline - time.monotonic()
        if remaining <= 0:
            raise _CallRefusedError("Timeout", "the run's time is up")
        try:
            result = await mode.client.call_tool(
                server, tool, arguments, timeout_s=min(mode.call_timeout_s, remaining)
            )
        except MCPTimeoutError as exc:
            raise _CallRefusedError("Timeout", str(exc)) from None
        except MCPClientError as exc:
            raise _CallRefusedError("ToolError", f"{type(exc).__name__}: {exc}") from None
        if result.is_error:
            raise _CallRefusedError("ToolError", result.text or "the tool reported an error")
        return result.value()


def _validator(info: MCPToolInfo) -> Any:
    """A JSON-schema validator of the tool's arguments (None when the schema itself is broken)."""
    schema = info.input_schema or {"type": "object"}
    try:
        validator_class: Any = validator_for(schema)  # pyright: ignore[reportUnknownVariableType]
        validator_class.check_schema(schema)
        return validator_class(schema)
    except jsonschema.SchemaError:  # the server's schema is broken: let the server judge
        return None


def _validate(validator: Any, info: MCPToolInfo, arguments: dict[str, Any]) -> None:
    if validator is None:
        return
    errors: list[Any] = sorted(validator.iter_errors(arguments), key=lambda e: list(e.path))
    if errors:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in error.path) or 'arguments'}: {error.message}"
            for error in errors[:5]
        )
        raise _CallRefusedError(
            "Invalid", f"invalid arguments for {info.server}.{info.name}: {problems}"
        )


def _frame(payload: Mapping[str, Any]) -> bytes:
    return (
        json.dumps(payload, separators=(",", ":"), ensure_ascii=False, default=str) + "\n"
    ).encode()


class CodeModeTool:
    """``execute_python``: one tool whose description is the API listing (``CodeMode.as_tool``)."""

    def __init__(self, code_mode: CodeMode, name: str) -> None:
        self.code_mode = code_mode
        self._name = name

    def __repr__(self) -> str:
        return f"CodeModeTool({self._name!r})"

    @property
    def name(self) -> str:
        """The tool's name (default ``execute_python``)."""
        return self._name

    @property
    def description(self) -> str:
        """How to use it, and the Python API of the allowed tools."""
        return self.code_mode.describe()

    @property
    def parameters(self) -> dict[str, Any]:
        """``{"code": str}``."""
        return {
            "type": "object",
            "properties": {
                "code": {
                    "type": "string",
                    "description": "Python 3 code to run; print what you want to see.",
                }
            },
            "required": ["code"],
            "additionalProperties": False,
        }

    async def invoke(self, arguments: Mapping[str, Any]) -> str:
        """Run the code; the program's output (and its error, if any) for the model."""
        code = arguments.get("code")
        if not isinstance(code, str) or not code.strip():
            raise ValueError("execute_python needs a non-empty 'code' string")
        result = await self.code_mode.execute(code)
        return result.for_model()
