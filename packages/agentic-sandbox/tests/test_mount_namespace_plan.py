"""The run's own mount namespace, planned: the setup's arguments, the jail's fstab and skeleton,
and the helpers' environment (pure planning, nothing runs)."""

from __future__ import annotations

import struct
from pathlib import Path, PurePosixPath

from agentic_sandbox._isolation import (
    SECCOMP_FD,
    BwrapOptions,
    bwrap_argv,
    env_argv,
    setpriv_argv,
    unshare_argv,
)
from agentic_sandbox._mount_namespace import (
    SETUP_SCRIPT,
    EntryKind,
    FstabEntry,
    JailLayout,
    SetupPlan,
    SkeletonEntry,
    disk_options,
    fstab_text,
    mount_namespace_argv,
    plan_jail,
    setup_argv,
)
from agentic_sandbox._seccomp import user_namespace_filter

RUN = Path("/tmp/run")
TOOLS = {name: f"/usr/bin/{name}" for name in ("sh", "mount", "umount", "cp", "pivot_root")}


def layout(**overrides: object) -> JailLayout:
    values: dict[str, object] = {
        "etc_files": ("/etc/ld.so.cache", "/etc/ssl"),
        "generated_etc": RUN / "etc",
        "generated_names": ("passwd", "group", "hosts"),
        "read_only_paths": (),
        "tmp_source": RUN / "disk" / "tmp",
        "work_source": RUN / "disk" / "work",
    }
    values.update(overrides)
    return JailLayout(**values)  # pyright: ignore[reportArgumentType]


HOST = {
    "/lib64": True,
    "/dev/null": False,
    "/dev/urandom": False,
    "/etc/ld.so.cache": False,
    "/etc/ssl": True,
}
LINKS = {"/bin": "usr/bin", "/lib": "usr/lib"}


def targets(entries: list[FstabEntry]) -> list[str]:
    return [entry.target for entry in entries]


def test_the_disk_is_sized_with_an_inode_cap_and_not_listable() -> None:
    options = disk_options(8 * 1024 * 1024).split(",")
    assert options[:3] == ["size=8388608", "nr_inodes=8192", "mode=0711"]
    assert {"nosuid", "nodev"} <= set(options)


def test_the_setup_gets_its_values_as_arguments_never_as_code() -> None:
    plan = SetupPlan(
        tools=TOOLS,
        disk=RUN / "disk",
        disk_bytes=1024 * 1024,
        stage=RUN / "stage",
        handshake=(RUN / "ready", RUN / "go"),
    )
    argv = setup_argv(plan)
    assert argv[:4] == ["/usr/bin/sh", "-c", SETUP_SCRIPT, "agentic-sandbox-setup"]
    assert argv[4:] == [
        "/usr/bin/mount", "/usr/bin/umount", "/usr/bin/cp", "/usr/bin/pivot_root",
        "/tmp/run/disk", disk_options(1024 * 1024), "/tmp/run/stage",
        "/tmp/run/ready", "/tmp/run/go", "", "", "",
    ]  # fmt: skip
    assert "/tmp/run" not in SETUP_SCRIPT


def test_bwrap_gets_a_private_mount_namespace_mapping_a_user_to_root() -> None:
    assert mount_namespace_argv("unshare", as_root=True) == [
        "unshare", "--mount", "--propagation", "private", "--",
    ]  # fmt: skip
    assert "--map-root-user" in mount_namespace_argv("unshare", as_root=False)


def test_unshare_gives_mount_ipc_and_uts_namespaces_too() -> None:
    argv = unshare_argv("unshare", network=False, as_root=True)
    assert {"--mount", "--ipc", "--uts", "--net", "--pid"} <= set(argv)
    assert argv[argv.index("--propagation") + 1] == "private"


def test_the_jail_mounts_tmp_before_read_only_paths_and_the_work_dir_last() -> None:
    plan = plan_jail(
        layout(read_only_paths=("/tmp/clone/.venv", "/opt/python")), host_paths=HOST, links=LINKS
    )
    order = targets(plan.fstab)
    assert order[0] == "/usr"
    assert order.index("/tmp") < order.index("/tmp/clone/.venv")
    assert order[-1] == "/sandbox"
    sources = {entry.target: entry.source for entry in plan.fstab}
    assert sources["/tmp"] == "/tmp/run/disk/tmp"
    assert sources["/sandbox"] == "/tmp/run/disk/work"
    assert sources["/etc/passwd"] == "/tmp/run/etc/passwd"


def test_the_jail_binds_system_files_read_only_and_devices_without_nodev() -> None:
    plan = plan_jail(layout(), host_paths=HOST, links=LINKS)
    options = {entry.target: entry.options.split(",") for entry in plan.fstab}
    for path in ("/usr", "/lib64", "/etc/ssl", "/etc/ld.so.cache", "/etc/passwd"):
        assert "ro" in options[path], path
    assert "nodev" not in options["/dev/null"]
    assert "ro" not in options["/tmp"]
    assert "ro" not in options["/sandbox"]
    assert ("proc", "proc") in [(e.source, e.fstype) for e in plan.fstab if e.target == "/proc"]


def test_the_jail_binds_only_what_exists_on_the_host() -> None:
    plan = plan_jail(layout(etc_files=("/etc/missing",)), host_paths=HOST, links=LINKS)
    assert "/etc/missing" not in targets(plan.fstab)
    assert "/dev/zero" not in targets(plan.fstab)  # not in HOST
    assert "/lib" not in targets(plan.fstab)  # a symbolic link, made in the skeleton


def test_the_skeleton_holds_mount_points_links_and_the_pivot_directory() -> None:
    plan = plan_jail(
        layout(read_only_paths=("/root/.pyenv/versions/3.11", "/tmp/clone/.venv")),
        host_paths={**HOST, "/root/.pyenv/versions/3.11": True, "/tmp/clone/.venv": True},
        links=LINKS,
    )
    root = {entry.path: entry for entry in plan.root_skeleton}
    assert root[PurePosixPath("bin")] == SkeletonEntry(
        PurePosixPath("bin"), EntryKind.SYMLINK, "usr/bin"
    )
    assert root[PurePosixPath("dev/null")].kind is EntryKind.FILE
    assert root[PurePosixPath("etc/ssl")].kind is EntryKind.DIRECTORY
    assert root[PurePosixPath("etc/passwd")].kind is EntryKind.FILE
    assert root[PurePosixPath("root/.pyenv/versions/3.11")].kind is EntryKind.DIRECTORY
    assert PurePosixPath(".old") in root
    paths = [entry.path for entry in plan.root_skeleton]
    assert paths.index(PurePosixPath("root")) < paths.index(PurePosixPath("root/.pyenv"))
    # Under /tmp the mount point is made in the jail's /tmp, which is the run's disk.
    assert [entry.path for entry in plan.tmp_skeleton] == [
        PurePosixPath("clone"),
        PurePosixPath("clone/.venv"),
    ]


def test_fstab_escapes_spaces_and_backslashes_and_roots_targets_in_the_jail() -> None:
    entries = [FstabEntry("/opt/my tools\\x", "/opt/my tools\\x", "none", "bind,ro")]
    assert fstab_text(entries, Path("/run/jail")) == (
        "/opt/my\\040tools\\134x /run/jail/opt/my\\040tools\\134x none bind,ro 0 0\n"
    )


def test_the_program_gets_its_environment_from_env_and_the_helpers_get_none_of_it() -> None:
    argv = env_argv("/usr/bin/env", {"PATH": "/usr/bin", "LD_PRELOAD": "./x.so"})
    assert argv == ["/usr/bin/env", "-i", "--", "PATH=/usr/bin", "LD_PRELOAD=./x.so"]


def test_setpriv_in_a_user_namespace_keeps_the_uid_and_drops_every_capability() -> None:
    argv = setpriv_argv("/usr/bin/setpriv", change_user=False)
    assert not any(arg.startswith(("--reuid", "--regid")) for arg in argv)
    assert {"--no-new-privs", "--bounding-set=-all", "--inh-caps=-all"} <= set(argv)


def test_bwrap_binds_the_disk_at_tmp_and_maps_a_user_to_its_own_ids() -> None:
    options = BwrapOptions(
        bwrap="/usr/bin/bwrap",
        work_dir=RUN / "disk" / "work",
        etc_dir=RUN / "etc",
        read_only_dirs=(),
        network=False,
        as_root=False,
        tmp_bytes=1024,
        can_disable_userns=True,
        tmp_dir=RUN / "disk" / "tmp",
        sandbox_ids=(1000, 1000),
    )
    argv = bwrap_argv(options)
    assert "--tmpfs" not in argv
    binds = [(argv[i + 1], argv[i + 2]) for i, arg in enumerate(argv) if arg == "--bind"]
    assert binds == [("/tmp/run/disk/tmp", "/tmp"), ("/tmp/run/disk/work", "/sandbox")]
    assert argv[argv.index("--uid") + 1] == argv[argv.index("--gid") + 1] == "1000"
    assert argv[argv.index("--cap-drop") + 1] == "ALL"
    assert argv.count("--unshare-user") == 1


def test_the_seccomp_filter_exists_for_x86_64_and_arm64_and_jumps_stay_inside() -> None:
    assert user_namespace_filter("riscv64") is None
    for machine in ("x86_64", "aarch64"):
        code = user_namespace_filter(machine)
        assert code is not None
        program = [struct.unpack("<HBBI", code[i : i + 8]) for i in range(0, len(code), 8)]
        assert program[-1] == (0x06, 0, 0, 0x7FFF0000)  # the last instruction allows
        for index, (op, jump_true, jump_false, _k) in enumerate(program):
            if op & 0x07 == 0x05:  # BPF_JMP: both targets are instructions of the program
                assert index + 1 + max(jump_true, jump_false) < len(program)


def test_bwrap_reads_the_seccomp_filter_from_a_descriptor() -> None:
    options = BwrapOptions(
        bwrap="/usr/bin/bwrap",
        work_dir=RUN / "work",
        etc_dir=RUN / "etc",
        read_only_dirs=(),
        network=False,
        as_root=True,
        tmp_bytes=None,
        can_disable_userns=True,
        seccomp_fd=SECCOMP_FD,
    )
    argv = bwrap_argv(options)
    assert argv[-3:] == ["--seccomp", SECCOMP_FD, "--"]
