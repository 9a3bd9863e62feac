"""ProcessSandbox(read_only_paths=...): host paths the program may read, and only read.

The ``sandbox`` fixture's jail is bubblewrap (skipped without it, failed in CI); the read-only
paths are added to a sandbox with the same limits.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from agentic_sandbox import ProcessSandbox, SandboxError
from tests.fixtures.sandbox_attacks import read_each_code, write_each_code
from tests.fixtures.system_tools import require_ready_sandbox, require_tools

pytestmark = pytest.mark.slow

as_root = pytest.mark.skipif(os.geteuid() != 0, reason="the program runs as uid 65534 only as root")


@pytest.fixture
def toolchain_dir() -> Iterator[Path]:
    """A world-readable directory (like an npm ``node_modules``) holding ``lib/tool.txt``."""
    directory = Path(tempfile.mkdtemp(prefix="agentic-toolchain-"))
    directory.chmod(0o755)
    (directory / "lib").mkdir(mode=0o755)
    (directory / "lib" / "tool.txt").write_text("TOOL-1.0")
    try:
        yield directory
    finally:
        shutil.rmtree(directory)


@pytest.fixture
async def bound_sandbox(tmp_path: Path, toolchain_dir: Path) -> AsyncIterator[ProcessSandbox]:
    require_tools("bwrap")
    async with ProcessSandbox(
        workdir=tmp_path,
        timeout_s=10,
        memory_mb=256,
        max_processes=32,
        use_bwrap=True,
        read_only_paths=[toolchain_dir],
    ) as box:
        await require_ready_sandbox(box)
        yield box


async def test_the_program_reads_a_file_from_a_read_only_path(
    bound_sandbox: ProcessSandbox, toolchain_dir: Path
) -> None:
    tool = toolchain_dir / "lib" / "tool.txt"
    result = await bound_sandbox.execute(read_each_code([str(tool)]))
    assert result.stdout == f"{tool} TOOL-1.0\n", result.stderr


async def test_a_read_only_path_cannot_be_written(
    bound_sandbox: ProcessSandbox, toolchain_dir: Path
) -> None:
    targets = [toolchain_dir / "lib" / "tool.txt", toolchain_dir / "new.txt"]
    result = await bound_sandbox.execute(write_each_code([str(t) for t in targets]))
    assert result.stdout.split("\n")[:2] == [f"{t} OSError" for t in targets], result.stderr
    assert (toolchain_dir / "lib" / "tool.txt").read_text() == "TOOL-1.0"
    assert not (toolchain_dir / "new.txt").exists()


async def test_a_sibling_that_is_not_bound_stays_invisible(
    bound_sandbox: ProcessSandbox, outside_dir: Path
) -> None:
    secret = outside_dir / "secret.txt"
    result = await bound_sandbox.execute(read_each_code([str(secret)]))
    assert result.stdout == f"{secret} FileNotFoundError\n"


async def test_the_jail_mounts_the_path_read_only_at_the_same_place(
    bound_sandbox: ProcessSandbox, toolchain_dir: Path
) -> None:
    # /proc/self/mountinfo: "<id> <parent> <dev> <root> <mount point> <options> ..."
    code = (
        "for line in open('/proc/self/mountinfo'):\n"
        "    fields = line.split()\n"
        "    print(fields[4], fields[5])\n"
    )
    result = await bound_sandbox.execute(code)
    mounts = dict(line.split(" ", 1) for line in result.stdout.splitlines())
    assert bound_sandbox.isolation == "bwrap"
    assert str(toolchain_dir) in mounts, result.stdout
    assert mounts[str(toolchain_dir)].split(",")[0] == "ro"


def test_paths_are_resolved_to_absolute(
    toolchain_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(toolchain_dir)
    link = toolchain_dir / "link"
    link.symlink_to(toolchain_dir / "lib")
    sandbox = ProcessSandbox(read_only_paths=["lib", link, "lib/tool.txt"])
    lib = str(toolchain_dir.resolve() / "lib")
    assert sandbox.read_only_paths == (lib, f"{lib}/tool.txt")


def test_one_path_given_as_a_string_is_one_path(toolchain_dir: Path) -> None:
    sandbox = ProcessSandbox(read_only_paths=str(toolchain_dir))  # pyright: ignore[reportArgumentType]
    assert sandbox.read_only_paths == (str(toolchain_dir.resolve()),)


def test_a_missing_path_is_a_value_error_naming_it(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-dir"
    with pytest.raises(ValueError, match="no-such-dir"):
        ProcessSandbox(read_only_paths=[missing])


def test_the_root_directory_is_refused() -> None:
    with pytest.raises(ValueError, match="whole host file system"):
        ProcessSandbox(read_only_paths=["/"])


@as_root
def test_a_path_the_sandbox_user_cannot_read_is_refused(tmp_path: Path) -> None:
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    with pytest.raises(SandboxError, match=f"cannot read {private}"):
        ProcessSandbox(read_only_paths=[private])


@as_root
async def test_without_bwrap_a_path_behind_a_private_directory_is_bound_too(
    unshare_sandbox: ProcessSandbox, tmp_path: Path
) -> None:
    # pytest's tmp_path lies under a directory only root may enter: the unshare jail binds the
    # tools at their path (as root, before dropping to uid 65534), like bwrap.
    # (unshare_sandbox only makes sure the unshare jail itself works here.)
    tools = tmp_path / "tools"
    tools.mkdir(mode=0o755)
    (tools / "tool.txt").write_text("TOOL-2.0")
    (tools / "tool.txt").chmod(0o644)
    async with ProcessSandbox(
        timeout_s=10, memory_mb=256, use_bwrap=False, read_only_paths=[tools]
    ) as sandbox:
        result = await sandbox.execute(read_each_code([str(tools / "tool.txt")]))
    assert result.stdout == f"{tools / 'tool.txt'} TOOL-2.0\n", result.stderr


async def test_without_bwrap_a_world_readable_path_is_read_in_place(
    unshare_sandbox: ProcessSandbox, toolchain_dir: Path
) -> None:
    tool = toolchain_dir / "lib" / "tool.txt"
    async with ProcessSandbox(
        timeout_s=10, memory_mb=256, use_bwrap=False, read_only_paths=[toolchain_dir]
    ) as sandbox:
        result = await sandbox.execute(read_each_code([str(tool)]))
    assert result.stdout == f"{tool} TOOL-1.0\n", result.stderr
    assert sandbox.isolation == unshare_sandbox.isolation == "unshare"
