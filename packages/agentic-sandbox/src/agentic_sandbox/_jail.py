"""The jail of one ProcessSandbox run: its run directory's layout and the helpers before prlimit.

``_isolation`` builds each helper's command line and ``_mount_namespace`` the setup that runs
in the run's own mount namespace; this module puts them together for an isolation mode:

- ``bwrap``: bwrap builds the jail. With ``max_disk_mb``, ``unshare --mount`` and the setup
  come first, to mount the run's disk (bwrap's own ``--size --tmpfs`` would leave nothing for
  us to read the artifacts from, or to copy the input files in as their owner).
- ``unshare``: ``unshare`` gives the namespaces; the setup mounts the run's disk (the size of
  ``max_disk_mb``, else only ``/tmp``, of ``memory_mb``) and builds a root like bwrap's.
- ``none``: no namespace at all (``network=True`` and ``max_disk_mb=None`` only).

In both jails the program runs under ``_seccomp``'s filter (no new user namespaces): bwrap
loads it, and without bwrap ``python -c LOADER`` does, before the setup.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from agentic_sandbox._isolation import (
    ETC_FILES,
    ETC_NETWORK_FILES,
    SECCOMP_FD,
    SYSTEM_DIRS,
    BwrapOptions,
    IsolationMode,
    bwrap_argv,
    parent_death_argv,
    setpriv_argv,
    unshare_argv,
)
from agentic_sandbox._languages import Language
from agentic_sandbox._mount_namespace import (
    JailLayout,
    SetupPlan,
    create_skeleton,
    fstab_text,
    mount_namespace_argv,
    plan_jail,
    setup_argv,
)
from agentic_sandbox._seccomp import LOADER
from agentic_sandbox._workdir import RunDirectory, RunLayout

_MIB = 1024 * 1024
_DEVICES = ("null", "zero", "full", "random", "urandom", "tty")


@dataclass(frozen=True)
class JailOptions:
    """What the jail of a run depends on: the machine (mode, tools) and the sandbox's options."""

    mode: IsolationMode
    tools: Mapping[str, str]
    bwrap_help: str
    as_root: bool
    network: bool
    memory_mb: int
    max_disk_mb: int | None
    read_only_paths: tuple[str, ...]
    seccomp: bytes | None = None
    """The filter forbidding user namespaces (``_seccomp``), where it can be loaded here."""

    @property
    def layout(self) -> RunLayout:
        """The parts of a run directory this jail needs."""
        on_disk = self.max_disk_mb is not None
        match self.mode:
            case IsolationMode.BWRAP:
                return RunLayout(disk=on_disk, work_on_disk=on_disk)
            case IsolationMode.UNSHARE:
                return RunLayout(disk=True, work_on_disk=on_disk, jail=True)
            case IsolationMode.NONE:
                return RunLayout()

    @property
    def disk_bytes(self) -> int:
        """Size of the run's disk: ``max_disk_mb``, else (``/tmp`` alone) ``memory_mb``."""
        return (self.max_disk_mb or self.memory_mb) * _MIB


def jail_argv(options: JailOptions, language: Language, run_dir: RunDirectory) -> list[str]:
    """The helpers before ``prlimit`` (see ``_isolation``'s chain)."""
    tools = options.tools
    layout = run_dir.layout
    setup = SetupPlan(
        tools=dict(tools),
        disk=run_dir.disk,
        disk_bytes=options.disk_bytes,
        stage=run_dir.stage,
        handshake=(run_dir.ready, run_dir.go) if layout.work_on_disk else None,
        jail=run_dir.jail if layout.jail else None,
        fstab=run_dir.fstab if layout.jail else None,
        # In a user namespace of its own (not as root), the jail may forbid nested ones.
        forbid_user_namespaces=layout.jail and not options.as_root,
    )
    argv: list[str] = []
    match options.mode:
        case IsolationMode.BWRAP:
            if layout.disk:
                argv += parent_death_argv(tools["setpriv"])
                argv += mount_namespace_argv(tools["unshare"], as_root=options.as_root)
                argv += setup_argv(setup)
            argv += bwrap_argv(_bwrap_options(options, language, run_dir))
            if options.as_root:
                argv += setpriv_argv(tools["setpriv"])
        case IsolationMode.UNSHARE:
            argv += parent_death_argv(tools["setpriv"])
            argv += unshare_argv(tools["unshare"], network=options.network, as_root=options.as_root)
            if options.seccomp is not None:
                argv += [tools["python"], "-I", "-S", "-c", LOADER, options.seccomp.hex()]
            argv += setup_argv(setup)
            argv += setpriv_argv(tools["setpriv"], change_user=options.as_root)
        case IsolationMode.NONE:
            if options.as_root:
                argv += setpriv_argv(tools["setpriv"])
    return argv


def _bwrap_options(options: JailOptions, language: Language, run_dir: RunDirectory) -> BwrapOptions:
    on_disk = run_dir.layout.disk
    nested = on_disk and not options.as_root  # bwrap runs as root of our user namespace
    return BwrapOptions(
        bwrap=options.tools["bwrap"],
        work_dir=run_dir.work_source,
        etc_dir=run_dir.etc,
        read_only_dirs=_read_only_dirs(options, language),
        network=options.network,
        as_root=options.as_root,
        tmp_bytes=options.memory_mb * _MIB if "--size" in options.bwrap_help else None,
        can_disable_userns="--disable-userns" in options.bwrap_help,
        tmp_dir=run_dir.tmp_source if on_disk else None,
        sandbox_ids=(os.getuid(), os.getgid()) if nested else None,
        seccomp_fd=SECCOMP_FD if options.seccomp is not None else None,
    )


def _read_only_dirs(options: JailOptions, language: Language) -> tuple[str, ...]:
    return tuple(dict.fromkeys((*language.bind_dirs, *options.read_only_paths)))


def prepare_jail(options: JailOptions, language: Language, run_dir: RunDirectory) -> None:
    """Make the skeleton of the jail's root and its fstab (``unshare`` mode; blocking)."""
    generated = ["passwd", "group"] if options.network else ["passwd", "group", "hosts"]
    etc = [*ETC_FILES, *(ETC_NETWORK_FILES if options.network else ())]
    layout = JailLayout(
        etc_files=etc,
        generated_etc=run_dir.etc,
        generated_names=generated,
        read_only_paths=_read_only_dirs(options, language),
        tmp_source=run_dir.tmp_source,
        work_source=run_dir.work_source,
    )
    devices = [f"/dev/{name}" for name in _DEVICES]
    host_paths = _host_paths([*SYSTEM_DIRS, *devices, *etc, *layout.read_only_paths])
    links = {path: str(Path(path).readlink()) for path in SYSTEM_DIRS if Path(path).is_symlink()}
    plan = plan_jail(layout, host_paths=host_paths, links=links)
    create_skeleton(run_dir.jail, plan.root_skeleton)
    create_skeleton(run_dir.stage / "tmp", plan.tmp_skeleton)
    run_dir.fstab.write_text(fstab_text(plan.fstab, run_dir.jail))


def _host_paths(paths: list[str]) -> dict[str, bool]:
    """Those of ``paths`` that exist, each mapped to whether it is a directory."""
    found: dict[str, bool] = {}
    for path in paths:
        if Path(path).exists():
            found[path] = Path(path).is_dir()
    return found
