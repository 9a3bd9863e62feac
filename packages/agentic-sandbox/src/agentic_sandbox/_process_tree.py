"""Kill a whole process tree: the launcher, its process group and every descendant.

A descendant that calls ``setsid`` leaves the process group, and one whose parent dies is
re-parented away from the tree. So the tree is first frozen (``SIGSTOP``, which no process can
catch or ignore) level by level until a scan of ``/proc`` finds nothing new — a frozen process
cannot fork — and only then killed. Inside a PID namespace (bwrap, ``unshare --pid``) killing the
namespace's first process is already enough; the walk is what keeps the no-namespace fallback
tidy, and it costs a read of ``/proc`` per round.
"""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path

_PROC = Path("/proc")
_MAX_ROUNDS = 50


def parent_pids() -> dict[int, int]:
    """Every visible process as ``pid -> parent pid`` (empty where ``/proc`` is missing)."""
    parents: dict[int, int] = {}
    try:
        entries = list(os.scandir(_PROC))
    except OSError:
        return parents
    for entry in entries:
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_bytes()
        except OSError:
            continue  # exited meanwhile
        # "pid (comm) state ppid ...": comm may hold spaces and parentheses, so split after the
        # last ")".
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 1:
            parents[int(entry.name)] = int(fields[1])
    return parents


def descendants(root_pid: int) -> set[int]:
    """The pids of every live descendant of ``root_pid`` (not ``root_pid`` itself)."""
    children: dict[int, list[int]] = {}
    for pid, ppid in parent_pids().items():
        children.setdefault(ppid, []).append(pid)
    found: set[int] = set()
    pending = [root_pid]
    while pending:
        for child in children.get(pending.pop(), ()):
            if child not in found:
                found.add(child)
                pending.append(child)
    return found


def _signal(pid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, signum)


def kill_process_tree(root_pid: int, *, process_group: bool) -> set[int]:
    """SIGKILL ``root_pid``, every descendant and (with ``process_group``) its process group.

    Call it only while ``root_pid`` has not been reaped, so the pid cannot name another process.
    Returns the pids signalled (wait for them with ``still_running``).
    """
    _signal(root_pid, signal.SIGSTOP)
    frozen: set[int] = set()
    for _ in range(_MAX_ROUNDS):
        new = descendants(root_pid) - frozen
        if not new:
            break
        for pid in new:
            _signal(pid, signal.SIGSTOP)
        frozen |= new
    if process_group:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(root_pid, signal.SIGKILL)
    _signal(root_pid, signal.SIGKILL)
    for pid in frozen:
        _signal(pid, signal.SIGKILL)
    return frozen | {root_pid}


def still_running(pids: set[int]) -> set[int]:
    """Those of ``pids`` that still run (a zombie has finished: only its exit status is left)."""
    running: set[int] = set()
    for pid in pids:
        try:
            stat = (_PROC / str(pid) / "stat").read_bytes()
        except OSError:
            continue
        state = stat[stat.rfind(b")") + 2 : stat.rfind(b")") + 3]
        if state not in (b"Z", b"X"):
            running.add(pid)
    return running
