"""The languages a ProcessSandbox runs and how: interpreter, file name, flags, prefixes to bind.

``find_languages`` looks at this machine once (which tools exist, whether Node strips TypeScript
types) and returns a ``Language`` per supported name or the reason it is unsupported.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import shutil
import stat
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from agentic_sandbox._errors import SandboxError

PYTHON = "python"
SHELL = "shell"
BASH = "bash"
JAVASCRIPT = "javascript"
TYPESCRIPT = "typescript"
ALL_LANGUAGES = (PYTHON, SHELL, BASH, JAVASCRIPT, TYPESCRIPT)

_ALIASES = {
    "python": PYTHON,
    "python3": PYTHON,
    "py": PYTHON,
    "shell": SHELL,
    "sh": SHELL,
    "bash": BASH,
    "javascript": JAVASCRIPT,
    "js": JAVASCRIPT,
    "node": JAVASCRIPT,
    "typescript": TYPESCRIPT,
    "ts": TYPESCRIPT,
}
# V8 reserves about 800 MiB of address space at start (code range, heap cages) that it never
# backs with memory, so under a plain RLIMIT_AS of 512 MiB Node cannot even start. Node gets
# this much more address space; its real memory stays bounded by RLIMIT_DATA and the V8 heap
# limit (--max-old-space-size=memory_mb).
NODE_RESERVED_ADDRESS_SPACE_MB = 1024
# Newer V8 (Node 24) reserves its 512 MiB code range readable, writable and executable, which
# Linux counts against RLIMIT_DATA although it is never filled: Node 24 dies at start
# (std::bad_alloc) below about 570 MiB of RLIMIT_DATA. Node's data limit gets this much more.
NODE_RESERVED_DATA_MB = 640
_PROBE_TIMEOUT_S = 10.0
_SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"


@dataclass(frozen=True)
class Language:
    """How to run a program of one language; ``{memory_mb}`` in ``argv`` is filled per run."""

    name: str
    file_name: str
    argv: tuple[str, ...]
    """The command before the program's file name."""
    bind_dirs: tuple[str, ...] = ()
    """Host directories outside /usr that hold the interpreter (bound read-only by bwrap)."""
    path_dirs: tuple[str, ...] = ()
    """Prepended to ``PATH``, so ``python3`` in shell code is the sandbox's interpreter."""
    extra_address_space_mb: int = 0
    """Added to ``memory_mb`` for RLIMIT_AS: address space reserved but never backed."""
    extra_data_mb: int = 0
    """Added to ``memory_mb`` for RLIMIT_DATA: writable reservations the runtime never fills."""


def canonical_language(name: str) -> str:
    """The canonical name for ``name`` ("py" -> "python"); SandboxError for an unknown one."""
    canonical = _ALIASES.get(name.strip().lower())
    if canonical is None:
        known = ", ".join(sorted(_ALIASES))
        raise SandboxError(f"unknown language {name!r}: use one of {known}")
    return canonical


def canonical_languages(names: Iterable[str] | None) -> frozenset[str]:
    """The canonical names of ``names`` (every language when ``None``)."""
    if names is None:
        return frozenset(ALL_LANGUAGES)
    if isinstance(names, str):
        names = [names]
    return frozenset(canonical_language(name) for name in names)


def _outside_usr(path: Path) -> bool:
    return not path.is_relative_to("/usr")


def world_accessible(path: Path) -> bool:
    """True when any user can reach ``path`` (every directory above it is world-searchable)."""
    real = path.resolve()
    try:
        return all(part.stat().st_mode & stat.S_IXOTH for part in (real, *real.parents))
    except OSError:
        return False


def python_language(*, for_other_user: bool) -> Language | str:
    """The Python of this process (its real installation, not a virtualenv's launcher).

    ``for_other_user``: the program runs as another uid without a private mount namespace, so
    the interpreter must be reachable by anyone (a pyenv Python under /root is not); the
    system's ``python3`` is used then.
    """
    base_prefix = Path(sys.base_prefix).resolve()
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    candidates = [
        Path(sys.executable).resolve() if sys.executable else None,
        base_prefix / "bin" / version,
        base_prefix / "bin" / "python3",
        _which("python3"),
    ]
    if for_other_user:
        candidates = [c for c in candidates if c is not None and world_accessible(c)]
        candidates.append(_which("python3", _SYSTEM_PATH))
    executable = next(
        (c.resolve() for c in candidates if c is not None and os.access(c, os.X_OK)), None
    )
    if executable is None:
        if for_other_user:
            return (
                "no Python interpreter that the sandbox user can reach: this Python lives in a "
                "private directory; install bubblewrap (which mounts it into the jail) or python3"
            )
        return "no Python interpreter found (neither sys.executable nor python3 on PATH)"
    prefix = base_prefix if executable.is_relative_to(base_prefix) else executable.parent.parent
    return Language(
        name=PYTHON,
        file_name="main.py",
        argv=(str(executable), "-u"),  # unbuffered: interactive programs' lines arrive at once
        bind_dirs=(str(prefix),) if _outside_usr(prefix) else (),
        path_dirs=(str(executable.parent),),
    )


def _which(name: str, path: str | None = None) -> Path | None:
    found = shutil.which(name, path=path)
    return None if found is None else Path(found)


def shell_language(name: str, shell: str) -> Language | str:
    """``sh`` (POSIX shell) or ``bash``, from the system directories."""
    path = shutil.which(shell, path=_SYSTEM_PATH)
    if path is None:
        return f"{shell} not found in {_SYSTEM_PATH}"
    return Language(name=name, file_name="main.sh", argv=(path,))


async def node_languages(*, for_other_user: bool) -> tuple[Language | str, Language | str]:
    """JavaScript and TypeScript on the installed Node, or why each is unsupported."""
    found = _which("node")
    if found is None:
        reason = "node not found on PATH: install Node.js (apt-get install nodejs)"
        return reason, reason
    node = found.resolve()
    if for_other_user and not world_accessible(node):
        reason = (
            f"{node} is in a private directory the sandbox user cannot reach: install "
            "bubblewrap (which mounts it into the jail) or a system-wide Node.js"
        )
        return reason, reason
    prefix = node.parent.parent
    heap = "--max-old-space-size={memory_mb}"
    javascript = Language(
        name=JAVASCRIPT,
        file_name="main.js",
        argv=(str(node), heap),
        bind_dirs=(str(prefix),) if _outside_usr(prefix) else (),
        path_dirs=(str(node.parent),),
        extra_address_space_mb=NODE_RESERVED_ADDRESS_SPACE_MB,
        extra_data_mb=NODE_RESERVED_DATA_MB,
    )
    strip_types = ("--experimental-strip-types", "--disable-warning=ExperimentalWarning")
    if not await _node_accepts(str(node), strip_types):
        version = await _node_version(str(node))
        return javascript, (
            f"TypeScript needs Node.js >= 22.6 (type stripping); the installed node is {version}"
        )
    typescript = dataclasses.replace(
        javascript, name=TYPESCRIPT, file_name="main.ts", argv=(str(node), heap, *strip_types)
    )
    return javascript, typescript


async def _run_quietly(*argv: str) -> tuple[int, bytes]:
    process = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    try:
        async with asyncio.timeout(_PROBE_TIMEOUT_S):
            stdout, _ = await process.communicate()
    except TimeoutError:
        process.kill()
        await process.wait()
        return -1, b""
    return process.returncode or 0, stdout


async def _node_accepts(node: str, flags: tuple[str, ...]) -> bool:
    # Node rejects an unknown option before it looks at --version.
    returncode, _ = await _run_quietly(node, *flags, "--version")
    return returncode == 0


async def _node_version(node: str) -> str:
    _, stdout = await _run_quietly(node, "--version")
    return stdout.decode(errors="replace").strip() or "of unknown version"


async def find_languages(
    allowed: frozenset[str], *, for_other_user: bool
) -> dict[str, Language | str]:
    """Every language in ``allowed``: how to run it here, or why it cannot run here."""
    found: dict[str, Language | str] = {}
    if PYTHON in allowed:
        found[PYTHON] = python_language(for_other_user=for_other_user)
    if SHELL in allowed:
        found[SHELL] = shell_language(SHELL, "sh")
    if BASH in allowed:
        found[BASH] = shell_language(BASH, "bash")
    if allowed & {JAVASCRIPT, TYPESCRIPT}:
        javascript, typescript = await node_languages(for_other_user=for_other_user)
        if JAVASCRIPT in allowed:
            found[JAVASCRIPT] = javascript
        if TYPESCRIPT in allowed:
            found[TYPESCRIPT] = typescript
    return found
