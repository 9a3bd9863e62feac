"""Files into a container and artifacts out of it, as the tar archives of the Docker API.

``input_archive`` packs the program and its files for ``put_archive`` (owned by the uid that
runs the program); ``artifacts_from_archive`` reads what ``get_archive`` returns for ``out/``
under the same rules as ``ProcessSandbox`` (``_workdir``): regular files only, never a link,
within the byte and file-count limits. The archive is read as a stream and abandoned past
its limit, so a program that leaves gigabytes in ``out/`` costs only what we read.
"""

from __future__ import annotations

import io
import logging
import tarfile
import time
from collections.abc import Iterable, Iterator, Mapping
from pathlib import PurePosixPath

from agentic_core import Artifact
from agentic_sandbox._errors import SandboxError
from agentic_sandbox._workdir import MAX_ARTIFACT_DEPTH, MAX_ARTIFACT_FILES, safe_relative_path

logger = logging.getLogger("agentic_sandbox")

_ARCHIVE_SLACK_BYTES = 16 * 1024 * 1024
"""How much more than the artifact limit we read of ``out/``'s archive (headers, skipped files)."""


def input_archive(
    files: Mapping[str, str | bytes], *, owner: tuple[int, int] | None, directory: str
) -> bytes:
    """A tar of the work directory ``directory`` holding ``files`` (relative paths) and ``out/``.

    ``owner``: the uid and gid that run the program, who must be able to write there; ``None``
    (the image's own user, unknown here) makes everything writable by anyone instead. The work
    directory is an entry of its own, extracted into the volume above it, because Docker never
    applies the owner of an archive's root entry (``.``) to the directory it extracts into.
    """
    now = int(time.time())
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.GNU_FORMAT) as archive:
        directories: set[PurePosixPath] = set()

        root = safe_relative_path(directory)

        def add_directory(path: PurePosixPath) -> None:
            if path in directories:
                return
            if path != root:
                add_directory(path.parent)
            directories.add(path)
            archive.addfile(_entry(str(path), tarfile.DIRTYPE, owner, now))

        add_directory(root)
        add_directory(root / "out")
        for name, content in files.items():
            path = root / safe_relative_path(name)
            add_directory(path.parent)
            data = content.encode() if isinstance(content, str) else content
            info = _entry(str(path), tarfile.REGTYPE, owner, now)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
        end = archive.offset + 2 * tarfile.BLOCKSIZE
    # Without the zero padding tarfile adds up to a 10 KiB record: Podman's copier stops
    # reading at the end-of-archive blocks and the rest fails with EPIPE (buildah#6573).
    return buffer.getvalue()[:end]


def _entry(name: str, kind: bytes, owner: tuple[int, int] | None, mtime: int) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.mtime = mtime
    is_directory = kind == tarfile.DIRTYPE
    if owner is None:
        info.mode = 0o777 if is_directory else 0o666
    else:
        info.uid, info.gid = owner
        info.mode = 0o755 if is_directory else 0o644
    return info


class _ReadLimitError(Exception):
    """The archive went on past what we read of it."""


class _ChunkReader(io.RawIOBase):
    """A read-only file over an iterator of byte chunks, refusing to go past ``limit`` bytes."""

    def __init__(self, chunks: Iterable[bytes], limit: int) -> None:
        self._chunks: Iterator[bytes] = iter(chunks)
        self._pending = memoryview(b"")
        self._remaining = limit

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview | bytearray) -> int:  # type: ignore[override]
        while not self._pending:
            chunk = next(self._chunks, None)
            if chunk is None:
                return 0
            self._pending = memoryview(chunk)
        if self._remaining <= 0:
            # An exception, not an end of file: tarfile skips a member by reading to its end,
            # and would loop over empty reads for as long as a forged size says.
            raise _ReadLimitError
        count = min(len(buffer), len(self._pending), self._remaining)
        buffer[:count] = self._pending[:count]
        self._pending = self._pending[count:]  # a view: no copy of the rest
        self._remaining -= count
        return count


def artifacts_from_archive(chunks: Iterable[bytes], *, max_total_bytes: int) -> list[Artifact]:
    """The regular files of ``out/``'s archive (its first path part is ``out``), by path."""
    reader = _ChunkReader(chunks, max_total_bytes + _ARCHIVE_SLACK_BYTES)
    artifacts: list[Artifact] = []
    remaining = max_total_bytes
    files_seen = 0
    try:
        with tarfile.open(fileobj=io.BufferedReader(reader), mode="r|") as archive:
            for member in archive:
                path = _artifact_path(member.name)
                if path is None or not member.isreg():
                    continue  # directories, links, devices: never followed, never returned
                files_seen += 1
                if files_seen > MAX_ARTIFACT_FILES:
                    logger.warning(
                        "more than %d sandbox artifacts: the rest ignored", MAX_ARTIFACT_FILES
                    )
                    break
                if member.size > remaining:
                    logger.warning(
                        "sandbox artifact %s (%d bytes) ignored: past the %d-byte artifact limit",
                        path,
                        member.size,
                        remaining,
                    )
                    continue
                extracted = archive.extractfile(member)
                if extracted is None:
                    continue
                content = extracted.read()
                remaining -= len(content)
                artifacts.append(Artifact(path=path, content=content, size=len(content)))
    except _ReadLimitError:
        logger.warning(
            "sandbox artifacts past %d bytes of archive ignored",
            max_total_bytes + _ARCHIVE_SLACK_BYTES,
        )
    except tarfile.TarError as exc:
        # An empty or cut archive: the container died under us (its first process too, say
        # OOM-killed), and its disk with it. What was read is all there is.
        logger.warning("sandbox artifacts archive unreadable (%s): %d read", exc, len(artifacts))
    return sorted(artifacts, key=lambda artifact: artifact.path)


def _artifact_path(name: str) -> str | None:
    """``out/a/b.txt`` -> ``a/b.txt``; ``None`` for ``out`` itself or a name that could escape."""
    parts = PurePosixPath(name).parts
    if len(parts) < 2 or len(parts) > MAX_ARTIFACT_DEPTH + 2 or parts[0] != "out":
        return None
    relative = "/".join(parts[1:])
    try:
        safe_relative_path(relative)
    except SandboxError:
        return None
    return relative
