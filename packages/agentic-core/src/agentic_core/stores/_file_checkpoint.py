"""``FileCheckpointStore``: one JSON file per checkpoint, written atomically, read strictly.

Layout: ``<directory>/<run_id>/<superstep:08d>_<checkpoint_id>.json``. The superstep in the name
orders a run's checkpoints without opening them (only checkpoints sharing a superstep are read to
order them by creation time). Ids are restricted to a file-name-safe alphabet, so no id can name a
path outside the directory.
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

import structlog
from pydantic import ValidationError

from agentic_core._errors import CheckpointError
from agentic_core.protocols._checkpoint import Checkpoint, CheckpointMetadata
from agentic_core.stores._checkpoint_rules import (
    check_keep_last,
    checkpoint_order,
    describe_validation_error,
    dump_checkpoint_json,
)

__all__ = ["FileCheckpointStore"]

_log = structlog.get_logger(__name__)

_ID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,199}")
"""A run or checkpoint id usable as a file name: no separators, never ``.`` or ``..``."""
_FILE_NAME = re.compile(r"(-?\d+)_([A-Za-z0-9_][A-Za-z0-9._-]*)\.json")
"""``<superstep>_<checkpoint_id>.json``; the superstep holds no ``_``, so the split is exact."""


@dataclass(frozen=True, slots=True)
class _CheckpointFile:
    path: Path
    superstep: int
    checkpoint_id: str


class FileCheckpointStore:
    """A ``CheckpointStore`` keeping each checkpoint as a JSON file under ``directory``.

    Files live at ``<directory>/<run_id>/<superstep:08d>_<checkpoint_id>.json``. A save writes a
    temporary file in the same folder, fsyncs it and renames it over the final name, so a crash
    leaves the old file or the new one, never a mix. All file I/O runs in a worker thread.

    Run and checkpoint ids must be 1-200 characters of letters, digits, ``_``, ``-`` and ``.``,
    not starting with ``.`` (uuid4 strings fit); any other id raises ``CheckpointError``, which
    keeps every path inside ``directory``. A truncated, corrupt or foreign file raises
    ``CheckpointError`` naming the file, from ``load``, ``latest`` and ``list`` alike.

    Example:
        ```python
        store = FileCheckpointStore("./checkpoints")
        await store.save(checkpoint)
        resumed_from = await store.latest(checkpoint.run_id)
        ```
    """

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self._directory = Path(directory)
        self._known_paths: dict[str, Path] = {}
        """Checkpoint id -> file, for files this store wrote or found (a hint, checked on use)."""

    @property
    def directory(self) -> Path:
        """The folder holding one sub-folder per run."""
        return self._directory

    def __repr__(self) -> str:
        return f"FileCheckpointStore({str(self._directory)!r})"

    async def save(self, checkpoint: Checkpoint) -> str:
        """Write ``checkpoint`` atomically to its file; returns its id.

        Saving an id again replaces the checkpoint (the old file is removed if it was written by
        this store object under another run or superstep).

        Raises:
            CheckpointError: an id is not file-name-safe, a value is not JSON-able, or the write
                failed.
        """
        _check_id(checkpoint.id, "checkpoint id")
        path = self._run_dir(checkpoint.run_id) / f"{checkpoint.superstep:08d}_{checkpoint.id}.json"
        stale = self._known_paths.get(checkpoint.id)
        await asyncio.to_thread(_write_checkpoint, checkpoint, path, stale)
        self._known_paths[checkpoint.id] = path
        return checkpoint.id

    async def load(self, checkpoint_id: str) -> Checkpoint | None:
        """The checkpoint with this id, or None if no file holds it.

        Raises:
            CheckpointError: the id is not file-name-safe, or its file is unreadable or invalid.
        """
        _check_id(checkpoint_id, "checkpoint id")
        hint = self._known_paths.get(checkpoint_id)
        found = await asyncio.to_thread(_load_by_id, self._directory, checkpoint_id, hint)
        if found is None:
            self._known_paths.pop(checkpoint_id, None)
            return None
        self._known_paths[checkpoint_id] = found.path
        return found.checkpoint

    async def list(
        self, *, workflow_id: str | None = None, run_id: str | None = None
    ) -> builtins.list[CheckpointMetadata]:
        """Metadata of the matching checkpoints, ordered by superstep, then creation time.

        Every candidate file is read and validated. Without ``run_id`` that is every file.

        Raises:
            CheckpointError: a file is unreadable or invalid (the message names it).
        """
        run_dirs = None if run_id is None else [self._run_dir(run_id)]
        return await asyncio.to_thread(_list_metadata, self._directory, run_dirs, workflow_id)

    async def latest(self, run_id: str) -> Checkpoint | None:
        """The run's checkpoint with the highest superstep (newest on ties), or None.

        Raises:
            CheckpointError: the run id is not file-name-safe, or the newest file is invalid.
        """
        return await asyncio.to_thread(_latest_in, self._run_dir(run_id))

    async def delete(self, checkpoint_id: str) -> bool:
        """Remove one checkpoint's file; True if it existed."""
        _check_id(checkpoint_id, "checkpoint id")
        hint = self._known_paths.pop(checkpoint_id, None)
        return await asyncio.to_thread(_delete_by_id, self._directory, checkpoint_id, hint)

    async def delete_all(self, run_id: str) -> int:
        """Remove every checkpoint file of the run (and its folder); returns how many there were."""
        run_dir = self._run_dir(run_id)
        deleted = await asyncio.to_thread(_delete_run, run_dir)
        self._forget(deleted)
        return len(deleted)

    async def cleanup_keep_last(self, run_id: str, n: int) -> int:
        """Keep the run's ``n`` newest checkpoints, delete the others; returns how many went.

        Raises:
            ValueError: ``n`` is negative.
            CheckpointError: the run id is not file-name-safe, or a file needed for ordering is
                invalid.
        """
        check_keep_last(n)
        deleted = await asyncio.to_thread(_delete_all_but_last, self._run_dir(run_id), n)
        self._forget(deleted)
        return len(deleted)

    def _run_dir(self, run_id: str) -> Path:
        _check_id(run_id, "run id")
        return self._directory / run_id

    def _forget(self, files: builtins.list[_CheckpointFile]) -> None:
        for file in files:
            if self._known_paths.get(file.checkpoint_id) == file.path:
                del self._known_paths[file.checkpoint_id]


@dataclass(frozen=True, slots=True)
class _Loaded:
    path: Path
    checkpoint: Checkpoint


def _check_id(value: str, what: str) -> None:
    if not _ID.fullmatch(value):
        raise CheckpointError(
            f"{what} {value!r} cannot name a checkpoint file: use 1-200 letters, digits, '_', "
            f"'-' or '.', not starting with '.' (this keeps every file inside the store's "
            f"directory)"
        )


# --- Blocking helpers: each runs in a worker thread. ---------------------------------------------


def _write_checkpoint(checkpoint: Checkpoint, path: Path, stale: Path | None) -> None:
    data = dump_checkpoint_json(checkpoint).encode()
    try:
        _write_atomically(path, data)
        if stale is not None and stale != path:
            stale.unlink(missing_ok=True)
    except OSError as exc:
        raise CheckpointError(
            f"cannot write checkpoint {checkpoint.id!r} to {path}: {exc}; check that the "
            f"directory is writable and the disk has room"
        ) from exc


def _write_atomically(path: Path, data: bytes) -> None:
    """Write ``data`` to a temp file beside ``path``, fsync it, rename it over ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    temp = Path(temp_name)
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        temp.replace(path)
    except BaseException:
        _remove_temp_file(temp)
        raise
    _fsync_directory(path.parent)


def _remove_temp_file(temp: Path) -> None:
    try:
        temp.unlink(missing_ok=True)
    except OSError as exc:
        # The write error being raised matters more; a stray dot-file is harmless.
        _log.warning("checkpoint_temp_file_not_removed", path=str(temp), error=str(exc))


def _fsync_directory(directory: Path) -> None:
    """Make the rename durable: on POSIX a rename is only on disk once its folder is synced."""
    if os.name != "posix":
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _read_checkpoint(file: _CheckpointFile) -> Checkpoint | None:
    """The checkpoint in ``file``; None if the file vanished; ``CheckpointError`` if invalid."""
    try:
        data = file.path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise CheckpointError(f"cannot read checkpoint file {file.path}: {exc}") from exc
    try:
        checkpoint = Checkpoint.model_validate_json(data)
    except ValidationError as exc:
        raise CheckpointError(
            f"checkpoint file {file.path} is not a valid checkpoint (truncated, corrupt or of "
            f"another schema): {describe_validation_error(exc)}; delete or restore the file"
        ) from exc
    expected = (file.checkpoint_id, file.path.parent.name, file.superstep)
    if (checkpoint.id, checkpoint.run_id, checkpoint.superstep) != expected:
        raise CheckpointError(
            f"checkpoint file {file.path} holds checkpoint {checkpoint.id!r} of run "
            f"{checkpoint.run_id!r} at superstep {checkpoint.superstep}, which does not match "
            f"its file name; was it renamed or moved?"
        )
    return checkpoint


def _checkpoint_files(run_dir: Path, pattern: str = "*.json") -> list[_CheckpointFile]:
    """The checkpoint files in one run folder (none if it does not exist); others are ignored."""
    files: list[_CheckpointFile] = []
    try:
        paths = list(run_dir.glob(pattern))
    except FileNotFoundError:  # pragma: no cover - glob of a missing folder yields nothing
        return files
    for path in paths:
        match = _FILE_NAME.fullmatch(path.name)
        if match is not None:
            files.append(_CheckpointFile(path, int(match.group(1)), match.group(2)))
    return files


def _run_dirs(directory: Path) -> list[Path]:
    if not directory.is_dir():
        return []
    return [path for path in directory.iterdir() if _ID.fullmatch(path.name) and path.is_dir()]


def _find_file(directory: Path, checkpoint_id: str, hint: Path | None) -> _CheckpointFile | None:
    if hint is not None and hint.is_file():
        match = _FILE_NAME.fullmatch(hint.name)
        if match is not None:
            return _CheckpointFile(hint, int(match.group(1)), checkpoint_id)
    found = [
        file
        for run_dir in _run_dirs(directory)
        for file in _checkpoint_files(run_dir, f"*_{checkpoint_id}.json")
        if file.checkpoint_id == checkpoint_id
    ]
    if len(found) > 1:
        paths = ", ".join(sorted(str(file.path) for file in found))
        raise CheckpointError(
            f"checkpoint id {checkpoint_id!r} is stored in several files ({paths}); "
            f"delete the stale ones"
        )
    return found[0] if found else None


def _load_by_id(directory: Path, checkpoint_id: str, hint: Path | None) -> _Loaded | None:
    file = _find_file(directory, checkpoint_id, hint)
    if file is None:
        return None
    checkpoint = _read_checkpoint(file)
    return None if checkpoint is None else _Loaded(file.path, checkpoint)


def _list_metadata(
    directory: Path, run_dirs: list[Path] | None, workflow_id: str | None
) -> list[CheckpointMetadata]:
    found: list[CheckpointMetadata] = []
    for run_dir in _run_dirs(directory) if run_dirs is None else run_dirs:
        for file in _checkpoint_files(run_dir):
            checkpoint = _read_checkpoint(file)
            if checkpoint is not None and workflow_id in (None, checkpoint.workflow_id):
                found.append(checkpoint.to_metadata())
    found.sort(key=checkpoint_order)
    return found


def _ordered_run_files(run_dir: Path) -> list[_CheckpointFile]:
    """A run's files oldest first: by superstep from the names, opening only files that tie."""
    by_superstep: dict[int, list[_CheckpointFile]] = {}
    for file in _checkpoint_files(run_dir):
        by_superstep.setdefault(file.superstep, []).append(file)
    ordered: list[_CheckpointFile] = []
    for superstep in sorted(by_superstep):
        group = by_superstep[superstep]
        if len(group) == 1:
            ordered.extend(group)
            continue
        read = [(file, _read_checkpoint(file)) for file in group]
        present = [(file, checkpoint) for file, checkpoint in read if checkpoint is not None]
        present.sort(key=lambda pair: checkpoint_order(pair[1].to_metadata()))
        ordered.extend(file for file, _ in present)
    return ordered


def _latest_in(run_dir: Path) -> Checkpoint | None:
    for file in reversed(_ordered_run_files(run_dir)):
        checkpoint = _read_checkpoint(file)
        if checkpoint is not None:
            return checkpoint
    return None


def _unlink(file: _CheckpointFile) -> bool:
    try:
        file.path.unlink()
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise CheckpointError(f"cannot delete checkpoint file {file.path}: {exc}") from exc
    return True


def _delete_by_id(directory: Path, checkpoint_id: str, hint: Path | None) -> bool:
    file = _find_file(directory, checkpoint_id, hint)
    return file is not None and _unlink(file)


def _delete_run(run_dir: Path) -> list[_CheckpointFile]:
    deleted = [file for file in _checkpoint_files(run_dir) if _unlink(file)]
    # Not empty (foreign files, a concurrent save) or already gone: leave it.
    with contextlib.suppress(OSError):
        run_dir.rmdir()
    return deleted


def _delete_all_but_last(run_dir: Path, n: int) -> list[_CheckpointFile]:
    ordered = _ordered_run_files(run_dir)
    doomed = ordered[: max(len(ordered) - n, 0)]
    return [file for file in doomed if _unlink(file)]
