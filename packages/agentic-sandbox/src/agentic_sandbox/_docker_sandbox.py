"""DockerSandbox: run untrusted code in a throwaway container of any Docker-API engine.

See the package README for the threat model. ``container_settings`` (pure) turns the sandbox's
options into the engine's container and host configuration; ``_container_run`` runs one
container to its end and removes it; ``_container_files`` packs files in and artifacts out.
"""

from __future__ import annotations

import asyncio
import functools
import uuid
from collections.abc import AsyncGenerator, Iterable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from docker.errors import DockerException
from docker.types import DriverConfig, LogConfig, Mount, Ulimit

from agentic_sandbox._base import (
    SandboxBase,
    allowed_language,
    check_file_names,
    on_its_loop,
    run_timeout,
)
from agentic_sandbox._container_files import input_archive
from agentic_sandbox._container_run import ContainerPlan, ContainerProgram
from agentic_sandbox._engine import EngineAPI, connect, is_podman
from agentic_sandbox._errors import SandboxError, SandboxNotReadyError
from agentic_sandbox._languages import (
    BASH,
    JAVASCRIPT,
    PYTHON,
    SHELL,
    canonical_languages,
)

VOLUME_DIR = "/sandbox"
"""Where each run's disk, a tmpfs of ``max_disk_mb``, is mounted."""
_WORK_SUBDIR = "work"
WORK_DIR = f"{VOLUME_DIR}/{_WORK_SUBDIR}"
"""The program's work directory (cwd and ``HOME``), a directory of the run's disk.

Not the disk's root: that is owned by root, and the engines never apply an archive's owner to
the directory they extract into, so the program's user could not write there. The archive
creates ``work/`` owned by that user.
"""
DEFAULT_USER = "65534:65534"
LABEL = "agentic-sandbox"
"""Every container we create carries this label (value ``"1"``), so leftovers can be found."""
_MIB = 1024 * 1024
_NOFILE = 1024
_NPROC = 4096
"""Per uid on the whole host (the container's own count is ``pids_limit``): a backstop only."""
_INODES_PER_MIB = 1024


@dataclass(frozen=True)
class _Program:
    """How a language runs: its file, the command before it, and the container's first process."""

    file_name: str
    command: tuple[str, ...]
    holder: tuple[str, ...]
    """PID 1, which only waits: it keeps the container (and its tmpfs disk) up while the
    program runs as an ``exec`` of the engine, and after, until the artifacts are read. The
    language's own interpreter, the one tool every image that runs it has."""


_PROGRAMS: dict[str, _Program] = {
    PYTHON: _Program(
        "main.py", ("python3", "-u"), ("python3", "-c", "import time\nwhile 1: time.sleep(1e6)")
    ),
    SHELL: _Program("main.sh", ("sh",), ("sh", "-c", "while :; do sleep 1000000; done")),
    BASH: _Program("main.sh", ("bash",), ("bash", "-c", "while :; do sleep 1000000; done")),
    JAVASCRIPT: _Program("main.js", ("node",), ("node", "-e", "setInterval(() => {}, 1 << 30)")),
}


@dataclass(frozen=True)
class ContainerSettings:
    """The limits and isolation of every container of one ``DockerSandbox``."""

    image: str
    memory_mb: int
    cpus: float
    pids_limit: int
    network: bool
    read_only: bool
    user: str | None
    max_file_mb: int
    max_disk_mb: int = 256
    podman: bool = False
    """The engine is Podman: the disk is a tmpfs mount, which its archive API reaches in a
    running container; Docker Engine's reaches volumes only, so there it is a tmpfs volume."""


def container_settings(
    settings: ContainerSettings,
    *,
    language: str,
    env: Mapping[str, str],
    interactive: bool,
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """The ``create_container``, ``create_host_config`` and ``exec_create`` arguments of one
    run (pure)."""
    program = _PROGRAMS[language]
    config: dict[str, Any] = {
        "image": settings.image,
        "entrypoint": list(program.holder),
        "working_dir": WORK_DIR,
        "user": settings.user,
        "environment": {"HOME": WORK_DIR, "LANG": "C.UTF-8"},
        "hostname": "sandbox",
        "labels": {LABEL: "1"},
        "tty": False,
    }
    exec_config: dict[str, Any] = {
        "cmd": [*program.command, program.file_name],
        "stdout": True,
        "stderr": True,
        "stdin": interactive,
        "tty": False,
        "user": settings.user or "",
        "environment": program_env(env),
        "workdir": WORK_DIR,
    }
    file_bytes = settings.max_file_mb * _MIB
    disk_bytes = settings.max_disk_mb * _MIB
    inodes = settings.max_disk_mb * _INODES_PER_MIB
    tmpfs = {"/tmp": f"rw,nosuid,nodev,size={settings.memory_mb}m"}  # noqa: S108 - in the container
    if settings.podman:
        # (Podman takes no nr_inodes: the inodes' kernel memory counts in the memory limit.)
        tmpfs[VOLUME_DIR] = f"rw,nosuid,nodev,size={disk_bytes},mode=0755,notmpcopyup"
        mounts: list[Mount] = []
    else:
        # An anonymous volume on a tmpfs: mounted on the engine's host while the container
        # runs (where the archive API reads it), removed with the container.
        volume = DriverConfig(
            "local",
            {
                "type": "tmpfs",
                "device": "tmpfs",
                "o": f"size={disk_bytes},nr_inodes={inodes},mode=0755,nosuid,nodev",
            },
        )
        mounts = [Mount(target=VOLUME_DIR, source=None, type="volume", driver_config=volume)]
    host_config: dict[str, Any] = {
        "network_mode": "bridge" if settings.network else "none",
        "mem_limit": settings.memory_mb * _MIB,
        "memswap_limit": settings.memory_mb * _MIB,  # the same: no swap on top
        "nano_cpus": round(settings.cpus * 1e9),
        "pids_limit": settings.pids_limit,
        "read_only": settings.read_only,
        "privileged": False,
        "cap_drop": ["ALL"],
        "security_opt": ["no-new-privileges"],
        "ipc_mode": "private",
        "mounts": mounts,
        "tmpfs": tmpfs,
        # Podman replaces all its default limits by ours and its own defaults (a million open
        # files and processes, more than many hosts allow): name every limit it would set.
        "ulimits": [
            Ulimit(name="fsize", soft=file_bytes, hard=file_bytes),
            Ulimit(name="nofile", soft=_NOFILE, hard=_NOFILE),
            Ulimit(name="nproc", soft=_NPROC, hard=_NPROC),
            Ulimit(name="core", soft=0, hard=0),
        ],
        # Output reaches us over the attach stream; the engine keeps no log of it on its disk.
        "log_config": LogConfig(type="none"),
    }
    return config, host_config, exec_config


def program_env(extra: Mapping[str, str]) -> dict[str, str]:
    """``HOME``, ``LANG`` and the caller's variables; the image supplies ``PATH``."""
    env = {"HOME": WORK_DIR, "LANG": "C.UTF-8"}
    for key, value in extra.items():
        if not key or "=" in key or "\x00" in key or "\x00" in value:
            raise SandboxError(f"invalid environment variable {key!r}")
        env[key] = value
    return env


async def _kill_and_close(program: ContainerProgram) -> None:
    """Kill first, so whoever waits for the program gets its result, then remove it."""
    await program.kill()
    await program.settled()
    await program.close()


async def _settle(task: asyncio.Task[None]) -> None:
    """Wait for ``task`` to end, whatever its outcome (a failed removal is logged already)."""
    await asyncio.wait([task])


def _owner(user: str | None) -> tuple[int, int] | None:
    """``(uid, gid)`` of a numeric ``"uid:gid"`` user, else ``None`` (files writable by all)."""
    if user is None:
        return None
    uid, _, gid = user.partition(":")
    if uid.isdigit() and gid.isdigit():
        return int(uid), int(gid)
    return None


class DockerSandbox(SandboxBase):
    """Runs code in a fresh container per execution, on any Docker-API engine (Docker, Podman).

    Each run creates a container from ``image`` with no network (``network_mode="none"``),
    memory (no swap), CPU and process limits, a read-only root file system, every capability
    dropped, ``no-new-privileges``, a non-root user (``user``, default ``"65534:65534"``), a
    private ``/tmp`` (tmpfs) and a work directory ``/sandbox/work`` holding ``files``, on the
    run's disk: a tmpfs of ``max_disk_mb`` (RAM, counted in the memory limit), so what the
    program writes is bounded and never reaches the engine's disk. What the program writes to
    ``/sandbox/work/out`` comes back as artifacts. The container and its disk are removed after
    every run, also on timeout, errors and cancellation.

    ``base_url`` is the engine (``"unix:///run/podman/podman.sock"``, ``"tcp://host:2376"``);
    ``None`` reads ``DOCKER_HOST`` and the other ``DOCKER_*`` variables, like the docker CLI.
    The image is never pulled: it must be on the engine. Languages: ``"python"``
    (``python3``), ``"shell"`` (``sh``), ``"bash"`` and ``"javascript"`` (``node``), when the
    image has the interpreter.

    Example::

        async with DockerSandbox("python:3.12-slim", timeout_s=10) as sandbox:
            result = await sandbox.execute("print(6 * 7)")
            assert result.stdout == "42\\n"
    """

    def __init__(
        self,
        image: str,
        *,
        memory_mb: int = 512,
        cpus: float = 1.0,
        pids_limit: int = 128,
        network: bool = False,
        timeout_s: float = 30,
        read_only: bool = True,
        base_url: str | None = None,
        max_output_bytes: int = 1_000_000,
        max_artifact_bytes: int = 10_000_000,
        max_file_mb: int = 64,
        user: str | None = DEFAULT_USER,
        languages: Iterable[str] | None = None,
        max_disk_mb: int = 256,
    ) -> None:
        for name, value in (
            ("max_disk_mb", max_disk_mb),
            ("memory_mb", memory_mb),
            ("cpus", cpus),
            ("pids_limit", pids_limit),
            ("timeout_s", timeout_s),
            ("max_output_bytes", max_output_bytes),
            ("max_file_mb", max_file_mb),
        ):
            if value <= 0:
                raise ValueError(f"{name} must be positive, got {value!r}")
        if max_artifact_bytes < 0:
            raise ValueError(f"max_artifact_bytes must be >= 0, got {max_artifact_bytes!r}")
        if not image:
            raise ValueError("image must name an image on the engine")
        self.image = image
        self.memory_mb = memory_mb
        self.cpus = cpus
        self.pids_limit = pids_limit
        self.network = network
        self.timeout_s = float(timeout_s)
        self.read_only = read_only
        self.base_url = base_url
        self.max_output_bytes = max_output_bytes
        self.max_artifact_bytes = max_artifact_bytes
        self.max_file_mb = max_file_mb
        self.max_disk_mb = max_disk_mb
        """Size of each run's disk (the work directory), a tmpfs."""
        self.user = user
        self._allowed_languages = canonical_languages(languages) & set(_PROGRAMS)
        self._api: EngineAPI | None = None
        self._podman = False
        self._running: set[ContainerProgram] = set()
        self._removals: set[asyncio.Task[None]] = set()
        self._stopped = False

    @property
    def settings(self) -> ContainerSettings:
        """The container settings of every run."""
        return ContainerSettings(
            image=self.image,
            memory_mb=self.memory_mb,
            cpus=self.cpus,
            pids_limit=self.pids_limit,
            network=self.network,
            read_only=self.read_only,
            user=self.user,
            max_file_mb=self.max_file_mb,
            max_disk_mb=self.max_disk_mb,
            podman=self._podman,
        )

    # -- Sandbox --------------------------------------------------------------------------------

    async def is_ready(self) -> bool:
        """True when the engine answers and has the image."""
        try:
            api = await self._client()
            await asyncio.to_thread(api.ping)
            await asyncio.to_thread(api.inspect_image, self.image)
        except (SandboxError, DockerException, OSError):
            return False
        return True

    async def stop(self) -> None:
        """Remove every container still running; further runs raise SandboxNotReadyError.

        Programs and removals of other event loops are finished on their loop (or, when that
        loop no longer runs, the containers are removed from here).
        """
        self._stopped = True
        await asyncio.gather(
            *(
                on_its_loop(
                    program.loop, functools.partial(_kill_and_close, program), program.remove_now
                )
                for program in list(self._running)
            )
        )
        if self._removals:
            await asyncio.gather(
                *(
                    on_its_loop(removal.get_loop(), functools.partial(_settle, removal))
                    for removal in list(self._removals)
                ),
                return_exceptions=True,
            )
        if self._api is not None:
            api, self._api = self._api, None
            api.close()

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
    ) -> AsyncGenerator[ContainerProgram]:
        language = self._language(language)
        api = await self._client()  # first: the engine decides how the disk is mounted
        plan = self._plan(
            code,
            language=language,
            timeout_s=timeout_s,
            files=files or {},
            env=env or {},
            interactive=interactive,
        )
        program = await ContainerProgram.launch(api, plan, self._track_removal)
        self._running.add(program)
        try:
            yield program
        finally:
            self._running.discard(program)
            await program.close()

    def _language(self, language: str) -> str:
        return allowed_language(language, self._allowed_languages, "this DockerSandbox")

    def _plan(
        self,
        code: str,
        *,
        language: str,
        timeout_s: float | None,
        files: Mapping[str, str | bytes],
        env: Mapping[str, str],
        interactive: bool,
    ) -> ContainerPlan:
        timeout = run_timeout(timeout_s, self.timeout_s)
        file_name = _PROGRAMS[language].file_name
        check_file_names(files, file_name, language)
        config, host_config, exec_config = container_settings(
            self.settings, language=language, env=env, interactive=interactive
        )
        files_archive = input_archive(
            {**files, file_name: code}, owner=_owner(self.user), directory=_WORK_SUBDIR
        )
        if len(files_archive) > self.max_disk_mb * _MIB:
            raise SandboxError(
                f"the program and its files take {len(files_archive) / _MIB:.1f} MiB, more "
                f"than max_disk_mb={self.max_disk_mb}: raise max_disk_mb or pass smaller files"
            )
        return ContainerPlan(
            name=f"agentic-sandbox-{uuid.uuid4().hex[:16]}",
            config=config,
            host_config=host_config,
            exec_config=exec_config,
            volume_dir=VOLUME_DIR,
            work_dir=WORK_DIR,
            files_archive=files_archive,
            timeout_s=timeout,
            max_output_bytes=self.max_output_bytes,
            max_artifact_bytes=self.max_artifact_bytes,
            memory_mb=self.memory_mb,
            max_disk_mb=self.max_disk_mb,
            interactive=interactive,
            language=language,
        )

    def _track_removal(self, removal: asyncio.Task[None]) -> None:
        self._removals.add(removal)
        removal.add_done_callback(self._removals.discard)

    # -- the engine -----------------------------------------------------------------------------

    async def _client(self) -> EngineAPI:
        if self._stopped:
            raise SandboxNotReadyError("this DockerSandbox was stopped; create a new one")
        if self._api is None:
            # Two first runs at once both connect: the second client is closed, no lock needed.
            api = await asyncio.to_thread(connect, self.base_url, self.image)
            try:
                podman = await asyncio.to_thread(is_podman, api)
            except (DockerException, OSError) as exc:
                api.close()
                raise SandboxNotReadyError(f"the container engine failed: {exc}") from exc
            if self._api is None:
                self._api, self._podman = api, podman
            else:
                api.close()
        return self._api
