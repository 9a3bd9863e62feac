"""The command lines that jail a program: bubblewrap or ``unshare``, ``setpriv``, ``prlimit``.

Pure planning: these functions only build argv lists (unit-testable without running anything);
``_process_sandbox.py`` decides which mode works here and runs them.

The chain, outermost first::

    [unshare --mount -- sh -c SETUP]      (the run's disk, a sized tmpfs: _mount_namespace)
    bwrap <namespaces, mounts> --          (or: unshare <namespaces> -- sh -c SETUP, or nothing)
      setpriv --reuid 65534 ... --         (as root: so RLIMIT_NPROC holds; else drops caps)
        prlimit --as= --cpu= ... --        (rlimits, set by prlimit on itself before exec)
          env -i PATH=... HOME=... --      (the program's environment, and only its)
            <interpreter> main.<ext>

Limits are applied by exec'd helpers from util-linux rather than in ``preexec_fn``: that hook
runs Python between fork and exec, which is unsafe while other threads hold locks (asyncio's
default executor, logging), and forbidden in subinterpreters. ``setpriv`` and ``prlimit`` add
about a millisecond each, ship with every Linux distribution (util-linux is Essential on
Debian) and treat every language the same. The helpers before ``env -i`` run with a fixed,
minimal environment: the caller's variables (``LD_PRELOAD`` naming a file of the run, say)
reach the program only, never a helper that still runs as root.
"""

from __future__ import annotations

import resource
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

SANDBOX_UID = 65534
"""The unprivileged uid (``nobody``) a program runs as when the sandbox itself runs as root."""
SANDBOX_GID = 65534
SANDBOX_WORKDIR = "/sandbox"
"""Where bwrap mounts the work directory inside the jail (also ``HOME`` and the cwd)."""
SECCOMP_FD = "{seccomp_fd}"
"""Stands for the descriptor bwrap reads the filter from; ``RunningProgram.launch`` makes it."""

SYSTEM_DIRS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# The few files of /etc a program needs (dynamic loader, time zone, name service switch, TLS
# roots, service names); never passwd/shadow/group: those are generated per run.
ETC_FILES = (
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/alternatives",
    "/etc/localtime",
    "/etc/nsswitch.conf",
    "/etc/protocols",
    "/etc/services",
    "/etc/ssl",
    "/etc/ca-certificates",
)
ETC_NETWORK_FILES = ("/etc/resolv.conf", "/etc/hosts", "/etc/host.conf", "/etc/gai.conf")


class IsolationMode(StrEnum):
    """How a program is jailed, strongest first."""

    BWRAP = "bwrap"
    """bubblewrap: new mount, PID, IPC, UTS, network namespaces; only system dirs visible."""
    UNSHARE = "unshare"
    """``unshare``: new mount, PID, IPC, UTS, network namespaces and a minimal root like bwrap's,
    built by ``_mount_namespace.SETUP_SCRIPT``."""
    NONE = "none"
    """Process group and rlimits only (only with ``network=True`` and ``max_disk_mb=None``)."""


@dataclass(frozen=True)
class Limits:
    """The rlimits of one run, in the units ``prlimit`` takes (bytes, seconds, counts)."""

    address_space_bytes: int
    data_bytes: int
    cpu_s: int
    file_bytes: int
    open_files: int
    processes: int


def clamp_to_hard_limit(value: int, limit: int) -> int:
    """``value``, lowered to this process's hard limit: an unprivileged process cannot raise it."""
    _soft, hard = resource.getrlimit(limit)
    if hard == resource.RLIM_INFINITY:
        return value
    return min(value, hard)


def prlimit_argv(prlimit: str, limits: Limits) -> list[str]:
    """``prlimit`` setting ``limits`` (soft = hard, CPU hard one second later) then exec'ing."""
    cpu_hard = limits.cpu_s + 1

    def pair(value: int, limit: int, hard: int | None = None) -> str:
        soft = clamp_to_hard_limit(value, limit)
        return f"{soft}:{clamp_to_hard_limit(hard if hard is not None else value, limit)}"

    return [
        prlimit,
        f"--as={pair(limits.address_space_bytes, resource.RLIMIT_AS)}",
        f"--data={pair(limits.data_bytes, resource.RLIMIT_DATA)}",
        f"--cpu={pair(limits.cpu_s, resource.RLIMIT_CPU, cpu_hard)}",
        f"--fsize={pair(limits.file_bytes, resource.RLIMIT_FSIZE)}",
        f"--nofile={pair(limits.open_files, resource.RLIMIT_NOFILE)}",
        f"--nproc={pair(limits.processes, resource.RLIMIT_NPROC)}",
        "--core=0:0",
        "--",
    ]


def setpriv_argv(setpriv: str, *, change_user: bool = True) -> list[str]:
    """``setpriv`` becoming uid/gid 65534 with no groups, no capabilities, no new privileges.

    ``change_user=False`` keeps the uid (root of a user namespace of the caller's, where no
    other uid exists) and only drops every capability and sets ``no_new_privs``.
    """
    user = [f"--reuid={SANDBOX_UID}", f"--regid={SANDBOX_GID}", "--clear-groups"]
    return [
        setpriv,
        *(user if change_user else []),
        "--no-new-privs",
        "--bounding-set=-all",
        "--inh-caps=-all",
        "--",
    ]


def parent_death_argv(setpriv: str) -> list[str]:
    """``setpriv`` making the chain die (SIGKILL) with the Python process that started it, as
    bwrap's ``--die-with-parent`` does: the setup (and ``unshare --kill-child``, the jail) too."""
    return [setpriv, "--pdeathsig", "KILL", "--"]


def unshare_argv(unshare: str, *, network: bool, as_root: bool) -> list[str]:
    """``unshare`` with new mount, PID, IPC and UTS namespaces (and network unless ``network``).

    The setup script it runs becomes the PID namespace's first process, then execs the
    program: when that exits, or is killed, the kernel kills every process left in the
    namespace, daemons included.
    """
    argv = [unshare]
    if not as_root:
        argv.append("--map-root-user")  # a user namespace, so the others need no privilege
    argv += ["--mount", "--propagation", "private", "--ipc", "--uts"]
    if not network:
        argv.append("--net")
    argv += ["--pid", "--fork", "--kill-child", "--"]
    return argv


def env_argv(env_tool: str, env: Mapping[str, str]) -> list[str]:
    """``env -i`` starting the program with exactly ``env`` (names already checked)."""
    return [env_tool, "-i", "--", *(f"{key}={value}" for key, value in env.items())]


@dataclass(frozen=True)
class BwrapOptions:
    """What bwrap needs to know about one run and this machine."""

    bwrap: str
    work_dir: Path
    """Host path of the run's work directory (bound read-write at ``SANDBOX_WORKDIR``)."""
    etc_dir: Path
    """Host directory with the generated ``passwd``, ``group`` and ``hosts``."""
    read_only_dirs: Sequence[str]
    """Interpreter prefixes outside /usr to bind read-only at the same path."""
    network: bool
    as_root: bool
    tmp_bytes: int | None
    """Size of the private /tmp (a tmpfs, so RAM); ``None`` where bwrap lacks ``--size``."""
    can_disable_userns: bool
    tmp_dir: Path | None = None
    """Host directory bound at /tmp instead (the run's disk, shared with the work dir)."""
    sandbox_ids: tuple[int, int] | None = None
    """bwrap runs as root of a user namespace mapping the caller (for the run's disk): the
    program's uid and gid in the jail's own user namespace, the caller's."""
    seccomp_fd: str | None = None
    """File descriptor (number) bwrap reads a seccomp filter from (``_seccomp``)."""


def bwrap_argv(options: BwrapOptions) -> list[str]:
    """The bubblewrap command line jailing one run (see the package README's threat model)."""
    argv = [options.bwrap, "--die-with-parent", "--new-session"]
    if options.as_root:
        # No user namespace: the program must be a real non-root uid (set by setpriv) for
        # RLIMIT_NPROC to count, and a user namespace created by root maps uid 0. bwrap keeps
        # only the two capabilities setpriv needs, and setpriv drops them.
        argv += ["--unshare-ipc", "--unshare-pid", "--unshare-uts", "--unshare-cgroup-try"]
        if not options.network:
            argv.append("--unshare-net")
        argv += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    else:
        argv.append("--unshare-all")
        if options.network:
            argv.append("--share-net")
        if options.can_disable_userns or options.sandbox_ids is not None:
            argv.append("--unshare-user")
        if options.can_disable_userns:
            argv.append("--disable-userns")
        if options.sandbox_ids is not None:
            # bwrap is root of our own user namespace: it would keep every capability for the
            # program and map it to uid 0 there; the caller's ids, and no capability, instead.
            uid, gid = options.sandbox_ids
            argv += ["--uid", str(uid), "--gid", str(gid), "--cap-drop", "ALL"]
    argv += ["--hostname", "sandbox", "--ro-bind", "/usr", "/usr"]
    for path in map(Path, SYSTEM_DIRS):
        if path.is_symlink():
            argv += ["--symlink", str(path.readlink()), str(path)]
        elif path.is_dir():
            argv += ["--ro-bind", str(path), str(path)]
    argv += ["--proc", "/proc", "--dev", "/dev"]
    # The private /tmp comes before the binds below: an interpreter installed under /tmp (a
    # checkout or virtualenv there) is bound into it instead of being hidden by it.
    if options.tmp_dir is not None:
        argv += ["--bind", str(options.tmp_dir), "/tmp"]  # noqa: S108 - the jail's own /tmp
    else:
        if options.tmp_bytes is not None:
            argv += ["--size", str(options.tmp_bytes)]
        argv += ["--perms", "1777", "--tmpfs", "/tmp"]  # noqa: S108 - the jail's own /tmp
    # bwrap run by root creates missing parents of a mount point with mode 0700, which the
    # program's uid could not cross: create them world-searchable first.
    argv += _parent_dirs(["/etc/x", *options.read_only_dirs])
    for path in ETC_FILES:
        argv += ["--ro-bind-try", path, path]
    generated = ["passwd", "group"]
    if options.network:
        for path in ETC_NETWORK_FILES:
            argv += ["--ro-bind-try", path, path]
    else:
        generated.append("hosts")
    for name in generated:
        argv += ["--ro-bind", str(options.etc_dir / name), f"/etc/{name}"]
    for path in options.read_only_dirs:
        argv += ["--ro-bind", path, path]
    argv += ["--bind", str(options.work_dir), SANDBOX_WORKDIR, "--chdir", SANDBOX_WORKDIR]
    if options.seccomp_fd is not None:
        argv += ["--seccomp", options.seccomp_fd]
    return [*argv, "--"]


_EXISTING_DIRS = frozenset(map(Path, ("/", "/tmp")))  # noqa: S108 - already in the jail


def _parent_dirs(paths: Sequence[str]) -> list[str]:
    """``--perms 0755 --dir`` for each missing parent directory of ``paths``, shallowest first."""
    parents: dict[str, None] = {}
    for path in paths:
        for parent in reversed(Path(path).parents):
            if parent not in _EXISTING_DIRS and not parent.is_relative_to("/usr"):
                parents[str(parent)] = None
    argv: list[str] = []
    for parent in parents:
        argv += ["--perms", "0755", "--dir", parent]
    return argv


def identity_files(uid: int, gid: int) -> dict[str, str]:
    """``passwd``, ``group`` and ``hosts`` for the jail: the program's own user and nothing else."""
    return {
        "passwd": (
            "root:x:0:0:root:/root:/usr/sbin/nologin\n"
            f"sandbox:x:{uid}:{gid}:sandbox:{SANDBOX_WORKDIR}:/usr/sbin/nologin\n"
        ),
        "group": f"root:x:0:\nsandbox:x:{gid}:\n",
        "hosts": "127.0.0.1 localhost\n::1 localhost\n",
    }
