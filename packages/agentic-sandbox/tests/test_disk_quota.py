"""ProcessSandbox(max_disk_mb=...): what a run writes is bounded, and never reaches the host's disk.

Each test runs in both jails (``[bwrap]`` and ``[unshare]``): the work directory and ``/tmp`` are
one tmpfs of ``max_disk_mb`` in the run's own mount namespace.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agentic_sandbox import ProcessSandbox, SandboxError
from tests.fixtures.sandbox_attacks import EMPTY_FILES_UNTIL_REFUSED, fill_disk_code
from tests.fixtures.system_tools import require_tools

QUOTA_MB = 16
DISK_FULL = f"no space left: the run's disk (the work directory and /tmp together) is full at max_disk_mb={QUOTA_MB}"  # noqa: E501


def small_disk_sandbox(mode: str, workdir: Path, **options: object) -> ProcessSandbox:
    use_bwrap = mode == "bwrap"
    require_tools("bwrap" if use_bwrap else "unshare")
    settings: dict[str, object] = {"max_disk_mb": QUOTA_MB, "max_file_mb": 4, "timeout_s": 10}
    settings.update(options)
    return ProcessSandbox(workdir=workdir, use_bwrap=use_bwrap, **settings)  # pyright: ignore[reportArgumentType]


@pytest.fixture(params=["bwrap", "unshare"])
async def disk_sandbox(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[ProcessSandbox]:
    """A sandbox with a 16 MiB disk and 4 MiB files, in each jail in turn."""
    async with small_disk_sandbox(request.param, tmp_path) as box:
        yield box
        assert box.isolation == request.param


def host_bytes_under(directory: Path) -> int:
    """Bytes of the regular files under ``directory`` on the host."""
    total = 0
    for parent, _dirs, files in os.walk(directory):
        for name in files:
            path = Path(parent, name)
            if path.is_file() and not path.is_symlink():
                total += path.stat().st_size
    return total


async def test_many_files_past_max_disk_mb_get_enospc_and_the_result_names_the_quota(
    disk_sandbox: ProcessSandbox,
) -> None:
    # max_file_mb bounds each file (4 MiB), never how many: max_disk_mb bounds them together.
    result = await disk_sandbox.execute(fill_disk_code("many"))
    written, error = result.stdout.split()
    assert error == "ENOSPC", result.stderr
    assert 8 <= int(written) < QUOTA_MB
    assert result.exit_code == 0
    assert result.stderr.endswith(f"[agentic-sandbox] {DISK_FULL}\n")


async def test_the_host_disk_never_holds_what_the_program_writes(
    disk_sandbox: ProcessSandbox, tmp_path: Path
) -> None:
    async with disk_sandbox.start(fill_disk_code("many", then_wait=True)) as program:
        line = await program.readline(limit=64)
        assert line.split()[1] == b"ENOSPC"
        assert host_bytes_under(tmp_path) < 64 * 1024  # the program, skeleton, fstab: no data
        await program.write(b"done\n")
        result = await program.wait()
    assert result.exit_code == 0


async def test_tmp_and_the_work_dir_share_the_quota(disk_sandbox: ProcessSandbox) -> None:
    code = fill_disk_code("/tmp/fill") + "open('after.txt', 'w').write('x' * 8192)\n"
    result = await disk_sandbox.execute(code)
    assert result.stdout.split()[1] == "ENOSPC"
    assert "No space left on device" in result.stderr  # the work dir's write failed too


async def test_empty_files_stop_at_the_inode_cap(tmp_path: Path) -> None:
    # Empty files use inodes (kernel memory) and no blocks: the disk caps those too.
    for mode in ("bwrap", "unshare"):
        async with small_disk_sandbox(mode, tmp_path, max_disk_mb=1) as box:
            result = await box.execute(EMPTY_FILES_UNTIL_REFUSED)
        count, error = result.stdout.split()
        assert error == "ENOSPC", (mode, result.stderr)
        assert int(count) < 1024, mode


async def test_artifacts_written_before_a_timeout_come_back(disk_sandbox: ProcessSandbox) -> None:
    # The disk dies with the run's namespace; its artifacts are read through a descriptor.
    code = "import time\nopen('out/partial.txt', 'w').write('so far')\ntime.sleep(60)"
    result = await disk_sandbox.execute(code, timeout_s=1)
    assert result.timed_out
    assert [(a.path, a.content) for a in result.artifacts] == [("partial.txt", b"so far")]


async def test_the_input_files_are_in_the_work_dir_as_the_programs_own(
    disk_sandbox: ProcessSandbox,
) -> None:
    code = (
        "import os\n"
        "print(open('data/in.txt').read(), os.stat('data/in.txt').st_uid == os.getuid(),"
        " os.stat('.').st_uid == os.getuid(), os.access('.', os.W_OK))\n"
    )
    result = await disk_sandbox.execute(code, files={"data/in.txt": "hello"})
    assert result.stdout == "hello True True True\n", result.stderr


async def test_input_files_larger_than_the_quota_are_refused(
    disk_sandbox: ProcessSandbox,
) -> None:
    with pytest.raises(SandboxError, match=f"more than max_disk_mb={QUOTA_MB}"):
        await disk_sandbox.execute("pass", files={"big.bin": b"\0" * (QUOTA_MB + 1) * 2**20})


@pytest.mark.parametrize("mode", ["bwrap", "unshare"])
async def test_max_disk_mb_none_keeps_the_work_dir_on_the_host_disk(
    mode: str, tmp_path: Path
) -> None:
    async with small_disk_sandbox(mode, tmp_path, max_disk_mb=None) as box:
        code = "open('data.bin', 'wb').write(b'x' * 3_000_000)\nprint('written', flush=True)\n"
        code += "input()"
        async with box.start(code) as program:
            assert await program.readline(limit=64) == b"written\n"
            assert host_bytes_under(tmp_path) >= 3_000_000
            await program.write(b"done\n")
            result = await program.wait()
    assert result.exit_code == 0
    assert "no space left" not in result.stderr
