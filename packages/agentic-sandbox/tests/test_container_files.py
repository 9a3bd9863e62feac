"""Files into a container and artifacts out of it, as tar archives (no engine needed)."""

from __future__ import annotations

import io
import tarfile
from collections.abc import Iterator

import pytest

from agentic_sandbox import SandboxError
from agentic_sandbox._container_files import artifacts_from_archive, input_archive


def out_archive(*members: tuple[str, bytes | str | None]) -> bytes:
    """A tar like ``get_archive`` of ``out/``: ``bytes`` is a file, ``str`` a symlink target."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for name, content in members:
            info = tarfile.TarInfo(name)
            if content is None:
                info.type = tarfile.DIRTYPE
                archive.addfile(info)
            elif isinstance(content, str):
                info.type = tarfile.SYMTYPE
                info.linkname = content
                archive.addfile(info)
            else:
                info.size = len(content)
                archive.addfile(info, io.BytesIO(content))
    return buffer.getvalue()


def chunks(data: bytes, size: int = 1000) -> Iterator[bytes]:
    for start in range(0, len(data), size):
        yield data[start : start + size]


def test_the_input_archive_holds_the_files_owned_by_the_program_user() -> None:
    data = input_archive(
        {"data/in.txt": "text", "raw.bin": b"\x00"}, owner=(65534, 65534), directory="work"
    )
    with tarfile.open(fileobj=io.BytesIO(data)) as archive:
        members = {m.name: m for m in archive.getmembers()}
        assert sorted(members) == [
            "work",
            "work/data",
            "work/data/in.txt",
            "work/out",
            "work/raw.bin",
        ]
        assert {(m.uid, m.gid) for m in members.values()} == {(65534, 65534)}
        assert members["work"].mode == 0o755  # an entry of its own: Docker skips "." entries
        extracted = archive.extractfile(members["work/data/in.txt"])
        assert extracted is not None
        assert extracted.read() == b"text"


def test_without_a_known_user_everything_is_writable_by_all() -> None:
    data = input_archive({"f.txt": "x"}, owner=None, directory="work")
    with tarfile.open(fileobj=io.BytesIO(data)) as archive:
        modes = {m.name: m.mode for m in archive.getmembers()}
    assert modes == {"work": 0o777, "work/out": 0o777, "work/f.txt": 0o666}


def test_the_input_archive_ends_right_after_its_end_blocks() -> None:
    data = input_archive({"f.txt": "x"}, owner=None, directory="work")
    assert len(data) % tarfile.BLOCKSIZE == 0
    assert data.endswith(bytes(2 * tarfile.BLOCKSIZE))
    assert not data.endswith(bytes(3 * tarfile.BLOCKSIZE))  # no record padding (Podman EPIPE)


def test_a_file_name_leaving_the_work_dir_is_refused() -> None:
    with pytest.raises(SandboxError, match="invalid file name"):
        input_archive({"../escape.txt": "x"}, owner=None, directory="work")


def test_artifacts_are_the_regular_files_under_out() -> None:
    data = out_archive(
        ("out", None),
        ("out/b.txt", b"bee"),
        ("out/sub", None),
        ("out/sub/a.bin", b"\x01"),
        ("out/link", "/etc/passwd"),
    )
    artifacts = artifacts_from_archive(chunks(data), max_total_bytes=1000)
    assert [(a.path, a.content, a.size) for a in artifacts] == [
        ("b.txt", b"bee", 3),
        ("sub/a.bin", b"\x01", 1),
    ]


def test_names_that_could_escape_are_ignored() -> None:
    data = out_archive(("out/../etc/x", b"no"), ("/abs", b"no"), ("other/f", b"no"))
    assert artifacts_from_archive(chunks(data), max_total_bytes=1000) == []


def test_artifacts_past_the_byte_limit_are_skipped() -> None:
    data = out_archive(("out/big", b"x" * 600), ("out/small", b"y" * 10))
    artifacts = artifacts_from_archive(chunks(data), max_total_bytes=100)
    assert [a.path for a in artifacts] == ["small"]


def test_a_huge_archive_is_read_only_up_to_its_limit() -> None:
    megabytes_read: list[int] = []

    def endless() -> Iterator[bytes]:
        yield out_archive(("out/a", b"a"))[: 2 * tarfile.BLOCKSIZE]  # header and data of out/a
        huge = tarfile.TarInfo("out/huge")
        huge.size = 10**12  # skipped (past the limit) by reading it: never to the end
        yield huge.tobuf()
        while True:
            megabytes_read.append(1)
            yield bytes(1024 * 1024)

    artifacts = artifacts_from_archive(endless(), max_total_bytes=10)
    assert [a.path for a in artifacts] == ["a"]
    assert len(megabytes_read) < 20  # the limit plus 16 MiB of slack


@pytest.mark.parametrize("chunks", [[], [b"\0" * 100], [b"not a tar archive at all" * 40]])
def test_an_empty_or_broken_archive_gives_no_artifacts(chunks: list[bytes]) -> None:
    # A container that died under us (its disk with it) answers with an empty body.
    assert artifacts_from_archive(chunks, max_total_bytes=1000) == []
