"""A run's private directory: input files in, artifacts out, everything removed afterwards.

Layout of one run (a fresh ``agentic-sandbox-*`` directory; which parts exist depends on its
``RunLayout``)::

    <run>/work/            the work directory on the host's disk (max_disk_mb=None):
    <run>/work/out/        cwd and HOME; what the program writes to out/ comes back as artifacts
    <run>/stage/work/      or, with max_disk_mb, the work directory to copy into the run's disk
    <run>/stage/tmp/       the jail's /tmp to copy into the run's disk
    <run>/disk/            mount point of the run's disk (a sized tmpfs, in the run's own mount
                           namespace only): disk/work is mounted at /sandbox, disk/tmp at /tmp
    <run>/ready, <run>/go  FIFOs: the setup says it mounted the disk; we say we opened it
    <run>/etc/             passwd, group, hosts for the jail
    <run>/jail/, fstab     the skeleton of the jail's root and its mounts (without bwrap)

Artifacts are read after every process of the run is dead, without following symbolic links
(``O_NOFOLLOW`` at every level, from directory file descriptors): a program that leaves
``out/x -> /etc/shadow`` gets nothing back. A work directory on the run's disk is read through
a descriptor opened before the program started (see ``_mount_namespace``).
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import stat
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from agentic_core import Artifact
from agentic_sandbox._errors import SandboxError

logger = logging.getLogger("agentic_sandbox")

OUT_DIR = "out"
MAX_ARTIFACT_FILES = 1000
MAX_ARTIFACT_DEPTH = 32
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


def safe_relative_path(name: str) -> PurePosixPath:
    """``name`` as a path inside the work directory; SandboxError if it could leave it."""
    path = PurePosixPath(name)
    if (
        not name
        or "\x00" in name
        or path.is_absolute()
        or ".." in path.parts
        or path.parts in ((), (".",))
    ):
        raise SandboxError(
            f"invalid file name {name!r}: files are relative paths inside the work directory, "
            "without '..'"
        )
    return path


@dataclass(frozen=True)
class RunLayout:
    """Which parts a run directory has (see the module docstring)."""

    disk: bool = False
    """The setup mounts a tmpfs on ``disk/`` holding the jail's ``/tmp`` (copied from stage)."""
    work_on_disk: bool = False
    """The work directory lives on that tmpfs too (``max_disk_mb``)."""
    jail: bool = False
    """The jail's root is built from ``jail/`` (without bwrap)."""


@dataclass(frozen=True)
class RunDirectory:
    """The directories of one run (see the module docstring)."""

    root: Path
    owner: tuple[int, int] | None
    """uid and gid that must own what the program may write (when we drop to another uid)."""
    layout: RunLayout = RunLayout()

    @property
    def work(self) -> Path:
        """The work directory on the host's disk (only without ``work_on_disk``)."""
        return self.root / "work"

    @property
    def out(self) -> Path:
        return self.work / OUT_DIR

    @property
    def stage(self) -> Path:
        return self.root / "stage"

    @property
    def disk(self) -> Path:
        return self.root / "disk"

    @property
    def etc(self) -> Path:
        return self.root / "etc"

    @property
    def jail(self) -> Path:
        return self.root / "jail"

    @property
    def fstab(self) -> Path:
        return self.root / "fstab"

    @property
    def ready(self) -> Path:
        return self.root / "ready"

    @property
    def go(self) -> Path:
        return self.root / "go"

    @property
    def input_dir(self) -> Path:
        """Where the input files are written before the run."""
        return self.stage / "work" if self.layout.work_on_disk else self.work

    @property
    def work_source(self) -> Path:
        """The path the jail's work directory is mounted from, in the run's mount namespace."""
        return self.disk / "work" if self.layout.work_on_disk else self.work

    @property
    def tmp_source(self) -> Path:
        """The path the jail's ``/tmp`` is mounted from (only with ``disk``)."""
        return self.disk / "tmp"


def _chown(path: Path, owner: tuple[int, int] | None) -> None:
    if owner is not None:
        os.chown(path, *owner, follow_symlinks=False)


def create_run_directory(
    parent: str | None,
    *,
    owner: tuple[int, int] | None,
    files: Mapping[str, str | bytes],
    etc_files: Mapping[str, str],
    layout: RunLayout = RunLayout(),
) -> RunDirectory:
    """A fresh run directory holding ``files`` (already checked with ``safe_relative_path``)."""
    root = Path(tempfile.mkdtemp(prefix="agentic-sandbox-", dir=parent))
    try:
        # Traversable but not listable by the program's uid; the work dir is its own.
        root.chmod(0o711)
        run = RunDirectory(root=root, owner=owner, layout=layout)
        if layout.disk:
            run.stage.mkdir(mode=0o711)
            (run.stage / "tmp").mkdir()
            (run.stage / "tmp").chmod(0o1777)
            run.disk.mkdir(mode=0o700)
        if layout.work_on_disk:
            os.mkfifo(run.ready, 0o600)
            os.mkfifo(run.go, 0o600)
        run.input_dir.mkdir(mode=0o755)
        (run.input_dir / OUT_DIR).mkdir(mode=0o755)
        _chown(run.input_dir, owner)
        _chown(run.input_dir / OUT_DIR, owner)
        for name, content in files.items():
            try:
                _write_file(run.input_dir, safe_relative_path(name), content, owner)
            except OSError as exc:
                raise SandboxError(f"cannot write file {name!r} into the work dir: {exc}") from exc
        if etc_files:
            run.etc.mkdir(mode=0o755)
            for name, text in etc_files.items():
                (run.etc / name).write_text(text)
                (run.etc / name).chmod(0o644)
        if layout.jail:
            run.jail.mkdir(mode=0o755)
            run.jail.chmod(0o755)
    except BaseException:
        remove_run_directory(root)
        raise
    return run


def _write_file(
    work: Path, relative: PurePosixPath, content: str | bytes, owner: tuple[int, int] | None
) -> None:
    directory = work
    for part in relative.parts[:-1]:
        directory = directory / part
        if not directory.is_dir():
            directory.mkdir(mode=0o755)
            _chown(directory, owner)
    target = directory / relative.parts[-1]
    data = content.encode() if isinstance(content, str) else content
    target.write_bytes(data)
    _chown(target, owner)


def remove_run_directory(root: Path) -> None:
    """Remove ``root`` whatever the program did to permissions inside it."""
    shutil.rmtree(root, ignore_errors=True)
    if root.exists():
        # The program made directories unreadable (possible when it runs as our own uid):
        # give them back to us, never following a symbolic link, and try again.
        for directory, names, _files in os.walk(root):
            for name in names:
                path = Path(directory, name)
                with contextlib.suppress(OSError):
                    if stat.S_ISDIR(path.lstat().st_mode):
                        path.chmod(0o700)
        shutil.rmtree(root, ignore_errors=True)
    if root.exists():
        logger.warning("could not remove the sandbox run directory %s", root)


def open_directory(path: Path | str, *, dir_fd: int | None = None) -> int | None:
    """A descriptor of directory ``path`` (relative to ``dir_fd``), never through a symbolic
    link at its last part; ``None`` when it is not (or no longer) a directory."""
    try:
        return os.open(path, _DIR_FLAGS, dir_fd=dir_fd)
    except OSError:
        return None


def collect_artifacts(
    out: Path | str, *, max_total_bytes: int, dir_fd: int | None = None
) -> list[Artifact]:
    """Regular files under ``out`` (never through a symbolic link), within ``max_total_bytes``.

    ``out`` is relative to ``dir_fd`` when given (a single name: no link is followed).
    """
    out_fd = open_directory(out, dir_fd=dir_fd)
    if out_fd is None:
        return []  # no out/, or the program replaced it with something else
    collector = _ArtifactCollector(max_total_bytes)
    try:
        collector.walk(out_fd, (), 0)
    finally:
        os.close(out_fd)
    return collector.artifacts


class _ArtifactCollector:
    def __init__(self, max_total_bytes: int) -> None:
        self.artifacts: list[Artifact] = []
        self.remaining = max_total_bytes
        self.files_seen = 0

    def walk(self, dir_fd: int, prefix: tuple[str, ...], depth: int) -> None:
        if depth > MAX_ARTIFACT_DEPTH:
            logger.warning("sandbox artifacts deeper than %d levels ignored", MAX_ARTIFACT_DEPTH)
            return
        with os.scandir(dir_fd) as scan:
            entries = sorted(scan, key=lambda entry: entry.name)
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                with contextlib.suppress(OSError):
                    child = os.open(entry.name, _DIR_FLAGS, dir_fd=dir_fd)
                    try:
                        self.walk(child, (*prefix, entry.name), depth + 1)
                    finally:
                        os.close(child)
            elif entry.is_file(follow_symlinks=False):
                self.read_file(dir_fd, (*prefix, entry.name))

    def read_file(self, dir_fd: int, parts: tuple[str, ...]) -> None:
        path = "/".join(parts)
        self.files_seen += 1
        if self.files_seen > MAX_ARTIFACT_FILES:
            if self.files_seen == MAX_ARTIFACT_FILES + 1:
                logger.warning(
                    "more than %d sandbox artifacts: the rest ignored", MAX_ARTIFACT_FILES
                )
            return
        try:
            fd = os.open(parts[-1], _FILE_FLAGS, dir_fd=dir_fd)
        except OSError:
            return
        with os.fdopen(fd, "rb") as file:
            info = os.fstat(file.fileno())
            if not stat.S_ISREG(info.st_mode):
                return
            if info.st_size > self.remaining:
                logger.warning(
                    "sandbox artifact %s (%d bytes) ignored: past the %d-byte artifact limit",
                    path,
                    info.st_size,
                    self.remaining,
                )
                return
            content = file.read(self.remaining)
        self.remaining -= len(content)
        self.artifacts.append(Artifact(path=path, content=content, size=len(content)))
