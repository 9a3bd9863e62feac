"""ProcessSandbox: run untrusted code as a local process, jailed by bubblewrap where present.

See the package README for the threat model. The moving parts: ``_isolation`` builds the
command lines, ``_mount_namespace`` the setup of the run's own mount namespace (its disk, and
without bwrap its root), ``_seccomp`` the filter against new user namespaces, ``_jail`` puts
them together per isolation mode, ``_languages`` finds the interpreters, ``_workdir`` prepares
and empties the run directory, ``_running`` runs one program and kills its tree.
"""

from __future__ import annotations

import asyncio
import math
import os
import platform
import shutil
import stat
import sys
import tempfile
from collections.abc import AsyncGenerator, Iterable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

from agentic_sandbox._base import (
    SandboxBase,
    allowed_language,
    check_file_names,
    on_its_loop,
    run_timeout,
)
from agentic_sandbox._errors import SandboxError, SandboxNotReadyError
from agentic_sandbox._isolation import (
    SANDBOX_GID,
    SANDBOX_UID,
    SANDBOX_WORKDIR,
    IsolationMode,
    Limits,
    env_argv,
    identity_files,
    prlimit_argv,
)
from agentic_sandbox._jail import JailOptions, jail_argv, prepare_jail
from agentic_sandbox._languages import (
    SHELL,
    Language,
    canonical_languages,
    find_languages,
    shell_language,
    world_accessible,
)
from agentic_sandbox._mount_namespace import SETUP_TOOLS
from agentic_sandbox._running import LaunchPlan, RunningProgram
from agentic_sandbox._seccomp import user_namespace_filter
from agentic_sandbox._workdir import create_run_directory, remove_run_directory

_MIB = 1024 * 1024
_PROBE_TIMEOUT_S = 15.0
_INSTALL_HINT = "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap)"
_TOOLS = ("bwrap", "unshare", "setpriv", "prlimit", "env", *SETUP_TOOLS)
_TOOL_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
_HELPER_ENV = {"PATH": _TOOL_PATH}
"""The whole environment of the helpers (some run as root); ``env -i`` sets the program's."""
DISK_FULL_MESSAGE = (
    "[agentic-sandbox] no space left: the run's disk (the work directory and /tmp together) "
    "is full at max_disk_mb={max_disk_mb}\n"
)


@dataclass(frozen=True)
class _Setup:
    """What this machine offers, found once per sandbox: the jail and the interpreters."""

    mode: IsolationMode
    tools: dict[str, str]
    languages: dict[str, Language | str]
    bwrap_help: str

    @property
    def seccomp(self) -> bytes | None:
        """The filter forbidding user namespaces, when this jail can load it here."""
        can_load = {
            IsolationMode.BWRAP: "--seccomp" in self.bwrap_help,
            IsolationMode.UNSHARE: "python" in self.tools,
            IsolationMode.NONE: False,
        }[self.mode]
        return user_namespace_filter(platform.machine()) if can_load else None


class ProcessSandbox(SandboxBase):
    """Runs Python, shell and Node/TypeScript code in a jailed local process.

    Each run gets a fresh work directory (removed afterwards), a scrubbed environment (``PATH``,
    ``HOME``, ``LANG`` and what the caller passes, never this process's variables), its own
    session, and rlimits on address space, CPU seconds, file size, open files and processes.
    It runs in new mount, PID, IPC, UTS and network namespaces where only the system
    directories are visible, read-only, built by bwrap (bubblewrap) or, without it, by
    ``unshare`` and a setup script; as root, under uid 65534.

    ``max_disk_mb`` bounds everything the program writes, the work directory and ``/tmp``
    together: they live on a tmpfs of that size (RAM) in the run's own mount namespace, so a
    program that fills it gets ``ENOSPC`` (the result's stderr ends with a line naming the
    quota) and the host's disk never sees it. ``None`` puts the work directory on the host's
    disk instead, unbounded (``/tmp`` is then a tmpfs of ``memory_mb``).

    ``network=False`` and ``max_disk_mb`` are promises: when no jail that keeps them works here,
    running code raises ``SandboxNotReadyError`` instead of running without them.
    ``use_bwrap``: ``None`` uses bwrap when it works here, ``True`` requires it, ``False``
    never uses it (then ``unshare`` builds a like jail).

    ``read_only_paths``: host directories or files the program may read (a toolchain such as an
    npm ``node_modules``), resolved to absolute paths and mounted read-only at the same path in
    the jail. A missing path is a ``ValueError``. Run as root, the program is uid 65534, which
    must be allowed to read them: a path it cannot read is a ``SandboxError`` naming it (at
    construction; in the ``none`` mode, at the first run, when every directory above it must be
    world-searchable too).

    Example::

        async with ProcessSandbox(timeout_s=10) as sandbox:
            result = await sandbox.execute("print(6 * 7)")
            assert result.stdout == "42\\n"
    """

    def __init__(
        self,
        *,
        workdir: str | os.PathLike[str] | None = None,
        timeout_s: float = 30,
        memory_mb: int = 512,
        cpu_s: int | None = None,
        max_output_bytes: int = 1_000_000,
        network: bool = False,
        languages: Iterable[str] | None = None,
        max_processes: int = 64,
        max_open_files: int = 256,
        max_file_mb: int = 64,
        max_artifact_bytes: int = 10_000_000,
        use_bwrap: bool | None = None,
        read_only_paths: Iterable[str | os.PathLike[str]] = (),
        max_disk_mb: int | None = 256,
    ) -> None:
        for name, value in (
            ("timeout_s", timeout_s),
            ("memory_mb", memory_mb),
            ("max_output_bytes", max_output_bytes),
            ("max_processes", max_processes),
            ("max_open_files", max_open_files),
            ("max_file_mb", max_file_mb),
        ):
            if value <= 0:
                raise ValueError(f"{name} must be positive, got {value!r}")
        for name, optional in (("cpu_s", cpu_s), ("max_disk_mb", max_disk_mb)):
            if optional is not None and optional <= 0:
                raise ValueError(f"{name} must be positive or None, got {optional!r}")
        if max_artifact_bytes < 0:
            raise ValueError(f"max_artifact_bytes must be >= 0, got {max_artifact_bytes!r}")
        self.workdir = os.fspath(workdir) if workdir is not None else None
        """Where run directories are created (default: the system temporary directory)."""
        self.timeout_s = float(timeout_s)
        self.memory_mb = memory_mb
        self.cpu_s = cpu_s
        self.max_output_bytes = max_output_bytes
        self.network = network
        self.max_processes = max_processes
        self.max_open_files = max_open_files
        self.max_file_mb = max_file_mb
        self.max_artifact_bytes = max_artifact_bytes
        self.max_disk_mb = max_disk_mb
        """Size of the run's disk (work directory and /tmp); ``None``: the host's, unbounded."""
        self.use_bwrap = use_bwrap
        self._as_root = os.geteuid() == 0
        self.read_only_paths: tuple[str, ...] = _read_only_paths(
            read_only_paths, as_root=self._as_root
        )
        """Host paths the program may read, at the same path (resolved, symbolic links followed)."""
        self._allowed_languages = canonical_languages(languages)
        self._setup: _Setup | None = None
        self._running: set[RunningProgram] = set()
        self._stopped = False

    @property
    def isolation(self) -> str | None:
        """The jail in use: ``"bwrap"``, ``"unshare"`` or ``"none"``; ``None`` before first use."""
        return None if self._setup is None else self._setup.mode.value

    # -- Sandbox --------------------------------------------------------------------------------

    async def is_ready(self) -> bool:
        """True when code can run here now, with the isolation this sandbox promises."""
        try:
            await self._ensure_setup()
        except SandboxError:
            return False
        return True

    async def stop(self) -> None:
        """Kill every program still running; further runs raise SandboxNotReadyError.

        A program started on another event loop is killed there (or, when that loop no longer
        runs, by signals alone).
        """
        self._stopped = True
        await asyncio.gather(
            *(
                on_its_loop(program.loop, program.kill, program.kill_now)
                for program in list(self._running)
            )
        )

    # -- one run --------------------------------------------------------------------------------

    @asynccontextmanager
    async def _program(
        self,
        code: str,
        *,
        language: str,
        timeout_s: float | None,
        files: Mapping[str, str | bytes] | None,
        env: Mapping[str, str] | None,
        interactive: bool,
    ) -> AsyncGenerator[RunningProgram]:
        name = self._allowed_language(language)
        setup = await self._ensure_setup()
        runnable = self._language(setup, name)
        async with self._run(
            setup,
            runnable,
            code,
            timeout_s=timeout_s,
            files=files,
            env=env,
            interactive=interactive,
        ) as program:
            yield program

    @asynccontextmanager
    async def _run(
        self,
        setup: _Setup,
        language: Language,
        code: str,
        *,
        timeout_s: float | None,
        files: Mapping[str, str | bytes] | None,
        env: Mapping[str, str] | None,
        interactive: bool,
    ) -> AsyncGenerator[RunningProgram]:
        plan = await self._plan(
            setup, language, code, timeout_s=timeout_s, files=files or {}, env=env or {}
        )
        try:
            program = await RunningProgram.launch(plan, interactive=interactive)
        except BaseException:
            await asyncio.to_thread(remove_run_directory, plan.run_dir.root)
            raise
        self._running.add(program)
        try:
            yield program
        finally:
            self._running.discard(program)
            await program.close()

    def _allowed_language(self, language: str) -> str:
        return allowed_language(language, self._allowed_languages, "this ProcessSandbox")

    def _language(self, setup: _Setup, name: str) -> Language:
        found = setup.languages[name]
        if isinstance(found, str):
            raise SandboxNotReadyError(f"cannot run {name} here: {found}")
        return found

    async def _plan(
        self,
        setup: _Setup,
        language: Language,
        code: str,
        *,
        timeout_s: float | None,
        files: Mapping[str, str | bytes],
        env: Mapping[str, str],
    ) -> LaunchPlan:
        timeout = run_timeout(timeout_s, self.timeout_s)
        check_file_names(files, language.file_name, language.name)
        files = {**files, language.file_name: code}
        self._check_disk_room(files)
        jailed = setup.mode is not IsolationMode.NONE
        if self._as_root and not jailed:
            parent = Path(self.workdir or tempfile.gettempdir())
            if not world_accessible(parent):
                raise SandboxNotReadyError(
                    f"workdir {parent} is not reachable by uid {SANDBOX_UID}, which runs the code "
                    "without a jail: choose a world-searchable workdir (such as /tmp) or "
                    + _INSTALL_HINT
                )
            _check_reachable_without_bwrap(self.read_only_paths)
        uid, gid = (SANDBOX_UID, SANDBOX_GID) if self._as_root else (os.getuid(), os.getgid())
        jail = self._jail_options(setup)
        run_dir = await asyncio.to_thread(
            create_run_directory,
            self.workdir,
            owner=(uid, gid) if self._as_root else None,
            files=files,
            etc_files=identity_files(uid, gid) if jailed else {},
            layout=jail.layout,
        )
        try:
            if run_dir.layout.jail:
                await asyncio.to_thread(prepare_jail, jail, language, run_dir)
            home = SANDBOX_WORKDIR if jailed else str(run_dir.work)
            argv = [
                *jail_argv(jail, language, run_dir),
                *self._limits_argv(setup, language, timeout),
                *env_argv(setup.tools["env"], _program_env(language, home, env)),
                *(arg.replace("{memory_mb}", str(self.memory_mb)) for arg in language.argv),
                language.file_name,
            ]
            return LaunchPlan(
                argv=argv,
                env=dict(_HELPER_ENV),
                run_dir=run_dir,
                timeout_s=timeout,
                max_output_bytes=self.max_output_bytes,
                max_artifact_bytes=self.max_artifact_bytes,
                kill_process_group=not jailed,
                cwd=run_dir.root if jailed else run_dir.work,
                seccomp=setup.seccomp if setup.mode is IsolationMode.BWRAP else None,
                disk_bytes=jail.disk_bytes,
                disk_full_message=DISK_FULL_MESSAGE.format(max_disk_mb=self.max_disk_mb),
            )
        except BaseException:
            await asyncio.to_thread(remove_run_directory, run_dir.root)
            raise

    def _jail_options(self, setup: _Setup) -> JailOptions:
        return JailOptions(
            mode=setup.mode,
            tools=setup.tools,
            bwrap_help=setup.bwrap_help,
            as_root=self._as_root,
            network=self.network,
            memory_mb=self.memory_mb,
            max_disk_mb=self.max_disk_mb,
            read_only_paths=self.read_only_paths,
            seccomp=setup.seccomp,
        )

    def _check_disk_room(self, files: Mapping[str, str | bytes]) -> None:
        """SandboxError when the input files alone would not fit on the run's disk."""
        if self.max_disk_mb is None:
            return
        # A tmpfs gives each file whole pages (and the files' directories some more).
        used = (
            sum(
                -(-len(content.encode() if isinstance(content, str) else content) // 4096)
                for content in files.values()
            )
            * 4096
        )
        if used > self.max_disk_mb * _MIB:
            raise SandboxError(
                f"the program and its files take {used / _MIB:.1f} MiB, more than "
                f"max_disk_mb={self.max_disk_mb}: raise max_disk_mb or pass smaller files"
            )

    def _limits_argv(self, setup: _Setup, language: Language, timeout: float) -> list[str]:
        limits = Limits(
            address_space_bytes=(self.memory_mb + language.extra_address_space_mb) * _MIB,
            data_bytes=(self.memory_mb + language.extra_data_mb) * _MIB,
            cpu_s=self.cpu_s if self.cpu_s is not None else math.ceil(timeout) + 1,
            file_bytes=self.max_file_mb * _MIB,
            open_files=self.max_open_files,
            processes=self.max_processes,
        )
        return prlimit_argv(setup.tools["prlimit"], limits)

    # -- what this machine offers ---------------------------------------------------------------

    async def _ensure_setup(self) -> _Setup:
        if self._stopped:
            raise SandboxNotReadyError("this ProcessSandbox was stopped; create a new one")
        if self._setup is None:
            # Two first runs at once both look: harmless, and no lock binds us to one loop.
            self._setup = await self._find_setup()
        return self._setup

    async def _find_setup(self) -> _Setup:
        if not sys.platform.startswith("linux"):
            raise SandboxNotReadyError(
                f"ProcessSandbox needs Linux (namespaces, rlimits, /proc), not {sys.platform}"
            )
        tools = _find_tools()
        for needed in ("prlimit", "env", *(("setpriv",) if self._as_root else ())):
            if needed not in tools:
                package = "coreutils" if needed == "env" else "util-linux"
                raise SandboxNotReadyError(
                    f"{needed} not found on PATH: install {package}, which provides it"
                )
        bwrap_help = await _bwrap_help(tools["bwrap"]) if "bwrap" in tools else ""
        failures: list[str] = []
        for mode, missing in self._candidate_modes(tools):
            if missing:
                failures.append(f"{mode.value}: {', '.join(missing)} not found")
                continue
            probe = _Setup(mode, tools, {}, bwrap_help)
            problem = await self._probe(probe)
            if problem is None:
                languages = await find_languages(
                    self._allowed_languages,
                    for_other_user=self._as_root and mode is IsolationMode.NONE,
                )
                return _Setup(mode, tools, languages, bwrap_help)
            failures.append(f"{mode.value}: {problem}")
        raise SandboxNotReadyError(self._no_isolation_message(tools, failures))

    def _candidate_modes(self, tools: Mapping[str, str]) -> list[tuple[IsolationMode, list[str]]]:
        """The modes to try, strongest first, each with the tools it lacks here."""
        setup = ["unshare", "setpriv", *SETUP_TOOLS]
        modes: list[tuple[IsolationMode, list[str]]] = []
        if self.use_bwrap is not False and "bwrap" in tools:
            needed = setup if self.max_disk_mb is not None else []
            modes.append((IsolationMode.BWRAP, [t for t in needed if t not in tools]))
        if self.use_bwrap is not True:
            if "unshare" in tools:
                needed = setup
                modes.append((IsolationMode.UNSHARE, [t for t in needed if t not in tools]))
            if self.network and self.max_disk_mb is None:
                modes.append((IsolationMode.NONE, []))
        return modes

    def _no_isolation_message(self, tools: Mapping[str, str], failures: list[str]) -> str:
        tried = "; ".join(failures) if failures else "nothing to try"
        if self.use_bwrap and "bwrap" not in tools:
            return f"use_bwrap=True but bwrap is not on PATH: {_INSTALL_HINT}"
        if not self.network:
            return (
                "network=False needs a network namespace, and neither bwrap nor `unshare --net` "
                f"works here ({tried}): {_INSTALL_HINT}, or allow user namespaces "
                "(sysctl kernel.unprivileged_userns_clone=1), or pass network=True to run "
                "without this promise"
            )
        if self.max_disk_mb is not None:
            return (
                "max_disk_mb needs a mount namespace of the run's own, and neither bwrap nor "
                f"`unshare --mount` works here ({tried}): {_INSTALL_HINT}, or allow user "
                "namespaces, or pass max_disk_mb=None to run with the work directory on the "
                "host's disk, unbounded"
            )
        return f"no way to run a jailed process here ({tried}): {_INSTALL_HINT}"

    async def _probe(self, setup: _Setup) -> str | None:
        """None when a trivial shell program runs in ``setup``'s jail, else what went wrong."""
        shell = shell_language(SHELL, "sh")
        if isinstance(shell, str):
            return shell
        try:
            async with self._run(
                setup,
                shell,
                "exit 0",
                timeout_s=_PROBE_TIMEOUT_S,
                files=None,
                env=None,
                interactive=False,
            ) as program:
                result = await program.wait()
        except (OSError, SandboxError) as exc:
            return str(exc)
        if result.exit_code == 0:
            return None
        detail = (result.stderr.strip() or f"exit code {result.exit_code}").splitlines()[-1]
        return detail[:300]


def _find_tools() -> dict[str, str]:
    """Where each helper is: the system directories first (some run as root), then PATH; and
    this Python (it loads the seccomp filter in the unshare jail)."""
    tools: dict[str, str] = {"python": sys.executable} if sys.executable else {}
    for name in _TOOLS:
        path = shutil.which(name, path=_TOOL_PATH) or shutil.which(name)
        if path is not None:
            tools[name] = path
    return tools


async def _bwrap_help(bwrap: str) -> str:
    process = await asyncio.create_subprocess_exec(
        bwrap,
        "--help",
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    try:
        async with asyncio.timeout(_PROBE_TIMEOUT_S):
            output, _ = await process.communicate()
    except TimeoutError:
        process.kill()
        await process.wait()
        return ""
    return output.decode(errors="replace")


def _read_only_paths(paths: Iterable[str | os.PathLike[str]], *, as_root: bool) -> tuple[str, ...]:
    """``paths`` resolved (symbolic links followed), each checked to exist and be bindable."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]  # one path, not its characters
    resolved: dict[str, None] = {}
    for given in paths:
        path = Path(given).expanduser()
        try:
            real = path.resolve(strict=True)
        except (OSError, RuntimeError) as exc:
            raise ValueError(
                f"read_only_paths: {os.fspath(given)!r} does not exist ({exc})"
            ) from exc
        if real == Path("/"):
            raise ValueError(
                "read_only_paths: '/' would put the whole host file system in the jail"
            )
        if as_root and not _others_can_read(real):
            raise SandboxError(
                f"read_only_paths: uid {SANDBOX_UID}, which runs the code, cannot read {real} "
                "(make it readable by others, e.g. chmod o+rX, or choose another path)"
            )
        resolved[str(real)] = None
    return tuple(resolved)


def _others_can_read(path: Path) -> bool:
    """True when "other" users may read ``path`` (and, for a directory, list and enter it)."""
    mode = path.stat().st_mode
    needed = stat.S_IROTH | (stat.S_IXOTH if stat.S_ISDIR(mode) else 0)
    return mode & needed == needed


def _check_reachable_without_bwrap(paths: Iterable[str]) -> None:
    """Without a jail of its own, uid 65534 reaches a path only through world-searchable dirs."""
    for path in paths:
        if not world_accessible(Path(path).parent):
            raise SandboxNotReadyError(
                f"read_only_paths: uid {SANDBOX_UID}, which runs the code without bwrap, cannot "
                f"reach {path} (a directory above it is not world-searchable): "
                f"make them searchable (chmod o+x) or {_INSTALL_HINT}"
            )


def _program_env(language: Language, home: str, extra: Mapping[str, str]) -> dict[str, str]:
    """``PATH``, ``HOME``, ``LANG`` and the caller's variables: nothing of this process's."""
    path_dirs = dict.fromkeys([*language.path_dirs, "/usr/local/bin", "/usr/bin", "/bin"])
    env = {"PATH": ":".join(path_dirs), "HOME": home, "LANG": "C.UTF-8"}
    for key, value in extra.items():
        if not key or "=" in key or "\x00" in key or "\x00" in value:
            raise SandboxError(f"invalid environment variable {key!r}")
        env[key] = value
    return env
