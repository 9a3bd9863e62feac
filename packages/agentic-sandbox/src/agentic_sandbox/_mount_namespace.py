"""A run's own mount namespace: its disk (a sized tmpfs) and, without bwrap, its minimal root.

Pure planning (the setup command line, the ``fstab`` of the jail, the skeleton of mount
points) plus ``create_skeleton``, which makes that skeleton on disk. ``SETUP_SCRIPT`` runs
first in the new mount namespace, as root there (the real root, or the caller mapped to root
in a user namespace of its own), before any privilege is dropped:

1. it mounts the run's disk, a tmpfs of ``max_disk_mb`` with a cap on inodes, on
   ``<run>/disk`` and copies ``<run>/stage`` (``work/`` with the input files, ``tmp/``) into
   it: the program's work directory and ``/tmp`` are that tmpfs, so what it writes is bounded
   and never reaches the host's disk;
2. when the work directory is in that tmpfs, which vanishes with the namespace, it writes
   ``r`` to the ``ready`` FIFO and waits on the ``go`` FIFO until the host has opened
   ``<run>/disk`` through ``/proc/<pid>/root``: that file descriptor keeps the tmpfs readable
   after every process of the run is gone, so artifacts are read as before;
3. without bwrap, it binds ``<run>/jail`` (a skeleton of empty mount points) onto itself,
   mounts what the jail's fstab lists in one ``mount --all`` call (``/usr`` and a few files
   of ``/etc`` read-only, a fresh ``/proc``, device nodes, ``/tmp`` and ``/sandbox`` from the
   disk), pivots into it, detaches the host's root and makes the new root read-only: host
   paths outside the jail — unix sockets under ``/tmp`` or ``/run``, ``/dev/shm``, home
   directories — are gone;
4. it execs the rest of the chain (bwrap); without bwrap it runs it (setpriv, prlimit, env
   and the interpreter) as its child and exits with its status: the shell stays the PID
   namespace's first process, which dies — and the kernel kills the namespace — when
   ``unshare`` does (``--kill-child``), so also when the Python process that started the run
   is killed (``setpriv --pdeathsig``).

Every value reaches the script as an argument, never as code.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path, PurePosixPath

from agentic_sandbox._isolation import SANDBOX_WORKDIR, SYSTEM_DIRS

SETUP_SCRIPT = r"""set -eu
mount=$1 umount=$2 cp=$3 pivot_root=$4 disk=$5 disk_options=$6 stage=$7 ready=$8 go=$9
shift 9
jail=$1 fstab=$2 forbid_userns=$3
shift 3
"$mount" -t tmpfs -o "$disk_options" agentic-sandbox "$disk"
"$cp" -a "$stage/." "$disk/"
if [ -n "$ready" ]; then
    # go is opened before ready is written: we close our end of go once we have the disk.
    { printf r >"$ready"; read -r _ <&3 || :; } 3<"$go"
fi
if [ -n "$jail" ]; then
    "$mount" --bind "$jail" "$jail"
    "$mount" --all --fstab "$fstab"
    printf sandbox 2>/dev/null >/proc/sys/kernel/hostname || :
    cd "$jail"
    "$pivot_root" . .old
    cd /
    "$umount" --lazy /.old
    "$mount" -o remount,bind,ro /
    if [ -n "$forbid_userns" ]; then
        printf 0 >/proc/sys/user/max_user_namespaces
    fi
    cd /sandbox
    # Not exec: this shell stays the PID namespace's first process, root, and so keeps the
    # parent-death signal `unshare --kill-child` gave it (dropping to uid 65534 clears it).
    "$@"
    exit
fi
exec "$@"
"""
"""Stage one of a jailed run (see the module docstring); ``setup_argv`` gives its arguments."""

SETUP_TOOLS = ("sh", "mount", "umount", "cp", "pivot_root")
"""What ``SETUP_SCRIPT`` needs besides the shell's own builtins."""

INODES_PER_MIB = 1024
"""Inode cap of the run's disk per MiB of it: empty files use no blocks, but kernel memory."""

_DEVICES = ("null", "zero", "full", "random", "urandom", "tty")
_DEVICE_LINKS = {
    "fd": "/proc/self/fd",
    "stdin": "/proc/self/fd/0",
    "stdout": "/proc/self/fd/1",
    "stderr": "/proc/self/fd/2",
}
_PIVOT_DIR = ".old"
_TMP = PurePosixPath("/tmp")  # noqa: S108 - the jail's own /tmp


@dataclass(frozen=True)
class SetupPlan:
    """The arguments of ``SETUP_SCRIPT`` for one run."""

    tools: dict[str, str]
    """Paths of ``SETUP_TOOLS``."""
    disk: Path
    """Mount point of the run's disk (``<run>/disk``)."""
    disk_bytes: int
    stage: Path
    """What is copied into the disk (``work/`` and ``tmp/``)."""
    handshake: tuple[Path, Path] | None = None
    """The ``ready`` and ``go`` FIFOs, when the host must open the disk before the run."""
    jail: Path | None = None
    """The skeleton of the jail's root (``None`` with bwrap, which builds its own)."""
    fstab: Path | None = None
    forbid_user_namespaces: bool = False
    """Set ``max_user_namespaces`` to 0 in the jail (only in a user namespace of its own)."""


def disk_options(size_bytes: int) -> str:
    """``mount -o`` options of a run's disk: its size, inode cap, root-owned and not listable."""
    mib = max(1, size_bytes // (1024 * 1024))
    return f"size={size_bytes},nr_inodes={mib * INODES_PER_MIB},mode=0711,nosuid,nodev"


def setup_argv(plan: SetupPlan) -> list[str]:
    """``sh -c SETUP_SCRIPT`` and its arguments; the chain to exec follows them."""
    ready, go = plan.handshake or ("", "")
    return [
        plan.tools["sh"],
        "-c",
        SETUP_SCRIPT,
        "agentic-sandbox-setup",
        *(plan.tools[name] for name in ("mount", "umount", "cp", "pivot_root")),
        str(plan.disk),
        disk_options(plan.disk_bytes),
        str(plan.stage),
        str(ready),
        str(go),
        str(plan.jail or ""),
        str(plan.fstab or ""),
        "1" if plan.forbid_user_namespaces else "",
    ]


def mount_namespace_argv(unshare: str, *, as_root: bool) -> list[str]:
    """``unshare`` giving the setup (then bwrap) a private mount namespace, no fork."""
    argv = [unshare]
    if not as_root:
        argv.append("--map-root-user")  # a user namespace, so mounting needs no privilege
    return [*argv, "--mount", "--propagation", "private", "--"]


# -- the jail's root without bwrap ----------------------------------------------------------------


class EntryKind(Enum):
    """What a skeleton entry is."""

    DIRECTORY = "directory"
    FILE = "file"
    """An empty file: the mount point of a file bound over it."""
    SYMLINK = "symlink"


@dataclass(frozen=True)
class SkeletonEntry:
    """One entry of a skeleton, relative to its base directory."""

    path: PurePosixPath
    kind: EntryKind
    target: str = ""
    """What a symbolic link points to."""


@dataclass(frozen=True)
class FstabEntry:
    """One line of the jail's fstab: mount ``source`` on ``target`` (inside the jail)."""

    source: str
    target: str
    fstype: str
    options: str


@dataclass(frozen=True)
class JailLayout:
    """What the jail's root holds: host paths to bind and the run's own directories."""

    etc_files: Sequence[str]
    """Host files and directories of ``/etc`` bound read-only (only those that exist)."""
    generated_etc: Path
    """Directory of the generated ``passwd``, ``group`` (and ``hosts``)."""
    generated_names: Sequence[str]
    read_only_paths: Sequence[str]
    """Host paths bound read-only at the same place (interpreters, ``read_only_paths``)."""
    tmp_source: Path
    """Host path (in the setup's namespace) of the jail's ``/tmp``."""
    work_source: Path
    """Host path (in the setup's namespace) of the jail's ``/sandbox``."""


@dataclass(frozen=True)
class JailPlan:
    """The mounts of the jail, in order, and the skeletons they need."""

    fstab: list[FstabEntry]
    root_skeleton: list[SkeletonEntry]
    """Entries of ``<run>/jail`` (the jail's ``/``)."""
    tmp_skeleton: list[SkeletonEntry]
    """Entries of ``<run>/stage/tmp`` (the jail's ``/tmp``): mount points under ``/tmp``."""


_READ_ONLY = "bind,ro,nosuid,nodev"


def plan_jail(
    layout: JailLayout, *, host_paths: Mapping[str, bool], links: Mapping[str, str]
) -> JailPlan:
    """The jail's mounts, in bwrap's order (pure: the caller looks at the host).

    ``host_paths`` maps each host path the jail may bind (system directories, device nodes,
    ``layout``'s paths) that exists to whether it is a directory; ``links`` gives the system
    directories that are symbolic links (``/bin -> usr/bin``) and their targets.
    """
    fstab: list[FstabEntry] = []
    root = _Skeleton()
    tmp = _Skeleton()
    root.add_dirs(["/usr", "/proc", "/dev", str(_TMP), SANDBOX_WORKDIR, f"/{_PIVOT_DIR}", "/etc"])
    fstab.append(FstabEntry("/usr", "/usr", "none", _READ_ONLY))
    for path in SYSTEM_DIRS:
        if path in links:
            root.add(SkeletonEntry(_relative(path), EntryKind.SYMLINK, links[path]))
        elif host_paths.get(path):
            root.add_dirs([path])
            fstab.append(FstabEntry(path, path, "none", _READ_ONLY))
    fstab.append(FstabEntry("proc", "/proc", "proc", "nosuid,nodev,noexec"))
    for device in (f"/dev/{name}" for name in _DEVICES):
        if device in host_paths:
            root.add(SkeletonEntry(_relative(device), EntryKind.FILE))
            fstab.append(FstabEntry(device, device, "none", "bind,nosuid,noexec"))
    for name, target in _DEVICE_LINKS.items():
        root.add(SkeletonEntry(_relative(f"/dev/{name}"), EntryKind.SYMLINK, target))
    root.add_dirs(["/dev/shm"])  # noqa: S108 - like bwrap's: there, not writable by the program
    # /tmp before the read-only paths: one living under the host's /tmp is bound into it.
    fstab.append(FstabEntry(str(layout.tmp_source), str(_TMP), "none", "bind,nosuid,nodev"))
    etc_binds = [(path, path) for path in layout.etc_files if path in host_paths]
    etc_binds += [(str(layout.generated_etc / n), f"/etc/{n}") for n in layout.generated_names]
    for source, target in etc_binds:
        root.add_mount_point(target, directory=host_paths.get(source, False))
        fstab.append(FstabEntry(source, target, "none", _READ_ONLY))
    for path in layout.read_only_paths:
        directory = host_paths.get(path, True)
        pure = PurePosixPath(path)
        if pure.is_relative_to(_TMP):
            tmp.add_mount_point(f"/{pure.relative_to(_TMP)}", directory=directory)
        elif not any(pure.is_relative_to(top) for top in ("/usr", *SYSTEM_DIRS)):
            root.add_mount_point(path, directory=directory)
        # (under /usr or a system directory the mount point exists in the bound tree)
        fstab.append(FstabEntry(path, path, "none", _READ_ONLY))
    fstab.append(FstabEntry(str(layout.work_source), SANDBOX_WORKDIR, "none", "bind,nosuid,nodev"))
    return JailPlan(fstab=fstab, root_skeleton=root.entries, tmp_skeleton=tmp.entries)


def _relative(path: str) -> PurePosixPath:
    return PurePosixPath(path).relative_to("/")


class _Skeleton:
    """Skeleton entries in creation order, parents first, each once."""

    def __init__(self) -> None:
        self.entries: list[SkeletonEntry] = []
        self._seen: set[PurePosixPath] = set()

    def add(self, entry: SkeletonEntry) -> None:
        if entry.path not in self._seen:
            self._seen.add(entry.path)
            self.entries.append(entry)

    def add_dirs(self, paths: Iterable[str]) -> None:
        for path in paths:
            relative = _relative(path)
            for parent in reversed(relative.parents[:-1]):  # without "." itself
                self.add(SkeletonEntry(parent, EntryKind.DIRECTORY))
            self.add(SkeletonEntry(relative, EntryKind.DIRECTORY))

    def add_mount_point(self, path: str, *, directory: bool) -> None:
        relative = _relative(path)
        parent = relative.parent
        if parent != PurePosixPath("."):
            self.add_dirs([f"/{parent}"])
        self.add(SkeletonEntry(relative, EntryKind.DIRECTORY if directory else EntryKind.FILE))


def fstab_text(entries: Iterable[FstabEntry], jail: Path) -> str:
    """``entries`` as fstab lines, targets under ``jail`` (the host path of the jail's root)."""
    lines: list[str] = []
    for entry in entries:
        target = str(jail / _relative(entry.target))
        fields = (_escape(entry.source), _escape(target), entry.fstype, entry.options)
        lines.append(" ".join(fields) + " 0 0\n")
    return "".join(lines)


def _escape(field: str) -> str:
    """An fstab field: space, tab, newline and backslash as octal escapes (libmount's rule)."""
    return "".join(f"\\{ord(c):03o}" if c in " \t\n\\" else c for c in field)


def create_skeleton(base: Path, entries: Iterable[SkeletonEntry]) -> None:
    """Make ``entries`` under ``base``: directories 0755, empty files 0644, symbolic links."""
    for entry in entries:
        path = base / entry.path
        match entry.kind:
            case EntryKind.DIRECTORY:
                path.mkdir(mode=0o755, exist_ok=True)
                path.chmod(0o755)  # whatever the umask
            case EntryKind.FILE:
                path.touch(mode=0o644, exist_ok=True)
            case EntryKind.SYMLINK:
                path.symlink_to(entry.target)
