"""The jail's command lines (pure planning) and the network=False promise."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from agentic_sandbox import ProcessSandbox, SandboxNotReadyError
from agentic_sandbox._isolation import (
    SANDBOX_WORKDIR,
    BwrapOptions,
    Limits,
    bwrap_argv,
    prlimit_argv,
    setpriv_argv,
    unshare_argv,
)
from agentic_sandbox._workdir import safe_relative_path


def options(**overrides: object) -> BwrapOptions:
    values: dict[str, object] = {
        "bwrap": "/usr/bin/bwrap",
        "work_dir": Path("/tmp/run/work"),
        "etc_dir": Path("/tmp/run/etc"),
        "read_only_dirs": ("/opt/python",),
        "network": False,
        "as_root": True,
        "tmp_bytes": 1024,
        "can_disable_userns": True,
    }
    values.update(overrides)
    return BwrapOptions(**values)  # pyright: ignore[reportArgumentType]


def pairs(argv: list[str], flag: str) -> list[tuple[str, str]]:
    return [(argv[i + 1], argv[i + 2]) for i, arg in enumerate(argv) if arg == flag]


def test_bwrap_as_root_cuts_the_network_without_a_user_namespace() -> None:
    argv = bwrap_argv(options())
    assert argv[0] == "/usr/bin/bwrap"
    assert "--unshare-net" in argv
    assert "--unshare-pid" in argv
    assert "--die-with-parent" in argv
    assert "--new-session" in argv
    assert "--unshare-all" not in argv  # its user namespace would map the program to uid 0
    assert argv[-1] == "--"


def test_bwrap_with_network_keeps_the_host_network() -> None:
    argv = bwrap_argv(options(network=True))
    assert "--unshare-net" not in argv
    assert ("/etc/resolv.conf", "/etc/resolv.conf") in pairs(argv, "--ro-bind-try")


def test_bwrap_as_a_user_unshares_all_and_forbids_nested_user_namespaces() -> None:
    argv = bwrap_argv(options(as_root=False))
    assert "--unshare-all" in argv
    assert "--share-net" not in argv
    assert "--disable-userns" in argv
    assert "--share-net" in bwrap_argv(options(as_root=False, network=True))


def test_bwrap_binds_the_system_read_only_and_only_the_work_dir_writable() -> None:
    argv = bwrap_argv(options())
    assert ("/usr", "/usr") in pairs(argv, "--ro-bind")
    assert ("/opt/python", "/opt/python") in pairs(argv, "--ro-bind")
    assert ("/tmp/run/etc/passwd", "/etc/passwd") in pairs(argv, "--ro-bind")
    assert pairs(argv, "--bind") == [("/tmp/run/work", SANDBOX_WORKDIR)]
    assert ("/etc/shadow", "/etc/shadow") not in pairs(argv, "--ro-bind-try")
    assert argv[argv.index("--tmpfs") - 4 : argv.index("--tmpfs") + 2] == [
        "--size",
        "1024",
        "--perms",
        "1777",
        "--tmpfs",
        "/tmp",
    ]


def test_bwrap_binds_an_interpreter_under_tmp_after_the_private_tmp() -> None:
    # Mounted before the tmpfs, a checkout or virtualenv under /tmp would be hidden by it.
    argv = bwrap_argv(options(read_only_dirs=("/tmp/clone/.venv/nodejs",)))
    tmpfs = argv.index("--tmpfs")
    bind = argv.index("/tmp/clone/.venv/nodejs")
    assert argv[bind - 1] == "--ro-bind"
    assert tmpfs < bind
    assert created_dirs(argv) == ["/etc", "/tmp/clone", "/tmp/clone/.venv"]  # never /tmp
    assert argv.index("--dir") > tmpfs


def test_bwrap_creates_mount_point_parents_world_searchable() -> None:
    argv = bwrap_argv(options(read_only_dirs=("/root/.pyenv/versions/3.11.7",)))
    assert created_dirs(argv) == ["/etc", "/root", "/root/.pyenv", "/root/.pyenv/versions"]


def created_dirs(argv: list[str]) -> list[str]:
    """The directories bwrap is told to create (``--perms MODE --dir PATH``)."""
    return [argv[i + 1] for i, arg in enumerate(argv) if arg == "--dir"]


def test_setpriv_drops_to_nobody_with_no_capabilities() -> None:
    argv = setpriv_argv("/usr/bin/setpriv")
    assert argv == [
        "/usr/bin/setpriv",
        "--reuid=65534",
        "--regid=65534",
        "--clear-groups",
        "--no-new-privs",
        "--bounding-set=-all",
        "--inh-caps=-all",
        "--",
    ]


def test_prlimit_sets_every_limit() -> None:
    limits = Limits(
        address_space_bytes=100,
        data_bytes=50,
        cpu_s=3,
        file_bytes=10,
        open_files=16,
        processes=8,
    )
    argv = prlimit_argv("/usr/bin/prlimit", limits)
    assert argv[0] == "/usr/bin/prlimit"
    assert argv[-1] == "--"
    assert "--as=100:100" in argv
    assert "--data=50:50" in argv
    assert "--cpu=3:4" in argv  # SIGXCPU at 3 s, SIGKILL at 4 s
    assert "--fsize=10:10" in argv
    assert "--nofile=16:16" in argv
    assert "--nproc=8:8" in argv
    assert "--core=0:0" in argv


def test_unshare_cuts_the_network_unless_asked_not_to() -> None:
    assert "--net" in unshare_argv("unshare", network=False, as_root=True)
    assert "--net" not in unshare_argv("unshare", network=True, as_root=True)
    assert "--map-root-user" in unshare_argv("unshare", network=False, as_root=False)
    assert {"--pid", "--fork", "--kill-child"} <= set(
        unshare_argv("unshare", network=True, as_root=True)
    )


@pytest.mark.parametrize("name", ["a.txt", "dir/b.txt", "./c.txt"])
def test_relative_file_names_are_accepted(name: str) -> None:
    assert not safe_relative_path(name).is_absolute()


@pytest.fixture
def no_namespace_tools(monkeypatch: pytest.MonkeyPatch) -> None:
    """Hide bwrap and unshare from ProcessSandbox, as on a machine without them."""
    real_which = shutil.which

    def which(name: str, mode: int = os.F_OK | os.X_OK, path: str | None = None) -> str | None:
        if name in ("bwrap", "unshare"):
            return None
        return real_which(name, mode, path)

    monkeypatch.setattr(shutil, "which", which)


@pytest.mark.usefixtures("no_namespace_tools")
async def test_without_namespaces_network_false_refuses_to_run() -> None:
    box = ProcessSandbox()
    assert not await box.is_ready()
    with pytest.raises(SandboxNotReadyError, match=r"network=False.*apt-get install bubblewrap"):
        await box.execute("print(1)")


@pytest.mark.usefixtures("no_namespace_tools")
async def test_use_bwrap_true_without_bwrap_says_how_to_install_it() -> None:
    with pytest.raises(SandboxNotReadyError, match="apt-get install bubblewrap"):
        await ProcessSandbox(use_bwrap=True, network=True).execute("print(1)")


@pytest.mark.usefixtures("no_namespace_tools")
async def test_without_namespaces_max_disk_mb_refuses_to_run() -> None:
    box = ProcessSandbox(network=True)
    assert not await box.is_ready()
    with pytest.raises(SandboxNotReadyError, match=r"max_disk_mb needs a mount namespace.*None"):
        await box.execute("print(1)")


@pytest.mark.usefixtures("no_namespace_tools")
async def test_without_namespaces_network_true_still_runs_with_limits() -> None:
    async with ProcessSandbox(network=True, max_disk_mb=None, timeout_s=5) as box:
        result = await box.execute(
            "import resource\nprint(resource.getrlimit(resource.RLIMIT_NPROC))"
        )
        assert box.isolation == "none"
    assert result.stdout == "(64, 64)\n", result.stderr
