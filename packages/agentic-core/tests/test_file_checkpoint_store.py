"""FileCheckpointStore: file layout, atomic writes, strict reads and id validation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentic_core._errors import CheckpointError
from agentic_core.stores import FileCheckpointStore
from agentic_core.testing.conformance import make_checkpoint

UNSAFE_IDS = [
    "../escape",
    "..",
    ".",
    "a/b",
    "/etc/passwd",
    "a\\b",
    "",
    ".hidden",
    "nul\0byte",
    "x" * 201,
    "*",
]


def all_files(directory: Path) -> list[str]:
    return sorted(str(p.relative_to(directory)) for p in directory.rglob("*") if p.is_file())


@pytest.fixture
def directory(tmp_path: Path) -> Path:
    return tmp_path / "checkpoints"


@pytest.fixture
def store(directory: Path) -> FileCheckpointStore:
    return FileCheckpointStore(directory)


# --- layout ---------------------------------------------------------------------------------------


async def test_each_checkpoint_is_one_json_file_in_its_run_folder(
    store: FileCheckpointStore, directory: Path
) -> None:
    checkpoint = make_checkpoint(run_id="run-1", superstep=12)

    await store.save(checkpoint)

    path = directory / "run-1" / "00000012_run-1-step-12.json"
    assert all_files(directory) == ["run-1/00000012_run-1-step-12.json"]
    assert json.loads(path.read_text()) == checkpoint.model_dump(mode="json")


async def test_a_second_store_object_reads_what_the_first_wrote(directory: Path) -> None:
    checkpoint = make_checkpoint(superstep=4)
    await FileCheckpointStore(directory).save(checkpoint)

    reader = FileCheckpointStore(directory)

    assert await reader.load(checkpoint.id) == checkpoint
    assert await reader.latest(checkpoint.run_id) == checkpoint
    assert await reader.delete(checkpoint.id) is True
    assert all_files(directory) == []


async def test_a_missing_directory_is_an_empty_store(store: FileCheckpointStore) -> None:
    assert await store.load("anything") is None
    assert await store.list() == []
    assert await store.latest("run-1") is None
    assert await store.delete_all("run-1") == 0


async def test_foreign_files_and_folders_are_ignored(
    store: FileCheckpointStore, directory: Path
) -> None:
    checkpoint = make_checkpoint()
    await store.save(checkpoint)
    (directory / "README.txt").write_text("not a checkpoint")
    (directory / "run-1" / "notes.json").write_text("{}")
    (directory / ".cache").mkdir()

    assert [m.id for m in await store.list()] == [checkpoint.id]
    assert await store.latest("run-1") == checkpoint


async def test_delete_all_removes_the_run_folder(
    store: FileCheckpointStore, directory: Path
) -> None:
    await store.save(make_checkpoint(run_id="run-1"))

    assert await store.delete_all("run-1") == 1
    assert not (directory / "run-1").exists()


async def test_a_negative_superstep_is_stored_and_ordered(store: FileCheckpointStore) -> None:
    await store.save(make_checkpoint(superstep=0))
    await store.save(make_checkpoint(superstep=-1))

    assert [m.superstep for m in await store.list()] == [-1, 0]
    assert await store.load("run-1-step--1") == make_checkpoint(superstep=-1)


# --- atomic writes --------------------------------------------------------------------------------


async def test_saves_leave_no_temporary_files(store: FileCheckpointStore, directory: Path) -> None:
    for superstep in range(5):
        await store.save(make_checkpoint(superstep=superstep))
    await store.save(make_checkpoint(superstep=4))

    assert all(name.endswith(".json") for name in all_files(directory))
    assert not [name for name in all_files(directory) if "/." in name or name.startswith(".")]
    assert len(all_files(directory)) == 5


async def test_a_failed_write_keeps_the_old_file_and_removes_its_temp_file(
    store: FileCheckpointStore, directory: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    old = make_checkpoint(shared_state={"version": 1})
    await store.save(old)

    def fail_rename(self: Path, target: Path) -> Path:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Path, "replace", fail_rename)
    with pytest.raises(CheckpointError, match="No space left on device"):
        await store.save(make_checkpoint(shared_state={"version": 2}))
    monkeypatch.undo()

    assert all_files(directory) == ["run-1/00000000_run-1-step-0.json"]
    assert await store.load(old.id) == old


async def test_an_unserializable_checkpoint_writes_nothing(
    store: FileCheckpointStore, directory: Path
) -> None:
    with pytest.raises(CheckpointError, match="not JSON-able"):
        await store.save(make_checkpoint(shared_state={"bad": object()}))

    assert all_files(directory) == []


# --- strict reads ---------------------------------------------------------------------------------

CORRUPTIONS = {
    "truncated": None,  # filled from the real file below
    "garbage": b"\x00\xff not json at all",
    "empty": b"",
    "wrong-schema": json.dumps({"id": "run-1-step-0", "hello": "world"}).encode(),
    "wrong-type": json.dumps([1, 2, 3]).encode(),
}


async def corrupt_saved_checkpoint(store: FileCheckpointStore, directory: Path, kind: str) -> Path:
    checkpoint = make_checkpoint()
    await store.save(checkpoint)
    path = directory / "run-1" / "00000000_run-1-step-0.json"
    data = CORRUPTIONS[kind]
    path.write_bytes(path.read_bytes()[:-25] if data is None else data)
    return path


@pytest.mark.parametrize("kind", list(CORRUPTIONS))
async def test_load_of_a_corrupt_file_raises_naming_the_file(
    store: FileCheckpointStore, directory: Path, kind: str
) -> None:
    path = await corrupt_saved_checkpoint(store, directory, kind)

    with pytest.raises(CheckpointError, match="not a valid checkpoint") as caught:
        await store.load("run-1-step-0")

    assert str(path) in str(caught.value)


@pytest.mark.parametrize("kind", list(CORRUPTIONS))
async def test_latest_of_a_corrupt_file_raises_naming_the_file(
    store: FileCheckpointStore, directory: Path, kind: str
) -> None:
    path = await corrupt_saved_checkpoint(store, directory, kind)

    with pytest.raises(CheckpointError) as caught:
        await store.latest("run-1")

    assert str(path) in str(caught.value)


@pytest.mark.parametrize("kind", list(CORRUPTIONS))
async def test_list_of_a_corrupt_file_raises_naming_the_file(
    store: FileCheckpointStore, directory: Path, kind: str
) -> None:
    path = await corrupt_saved_checkpoint(store, directory, kind)

    with pytest.raises(CheckpointError) as caught:
        await store.list()

    assert str(path) in str(caught.value)


async def test_a_corrupt_file_can_still_be_deleted(
    store: FileCheckpointStore, directory: Path
) -> None:
    await corrupt_saved_checkpoint(store, directory, "garbage")

    assert await store.delete("run-1-step-0") is True
    assert all_files(directory) == []


async def test_a_file_renamed_to_another_id_raises_naming_it(
    store: FileCheckpointStore, directory: Path
) -> None:
    await store.save(make_checkpoint())
    renamed = directory / "run-1" / "00000000_other-id.json"
    (directory / "run-1" / "00000000_run-1-step-0.json").rename(renamed)

    with pytest.raises(CheckpointError, match="does not match its file name") as caught:
        await FileCheckpointStore(directory).load("other-id")

    assert str(renamed) in str(caught.value)


# --- id validation --------------------------------------------------------------------------------


@pytest.mark.parametrize("bad_id", UNSAFE_IDS)
async def test_a_checkpoint_with_an_unsafe_id_is_refused_and_writes_nothing(
    store: FileCheckpointStore, tmp_path: Path, bad_id: str
) -> None:
    with pytest.raises(CheckpointError, match="cannot name a checkpoint file"):
        await store.save(make_checkpoint(checkpoint_id=bad_id or "placeholder", run_id=bad_id))
    with pytest.raises(CheckpointError, match="cannot name a checkpoint file"):
        await store.save(make_checkpoint(checkpoint_id=bad_id, run_id="run-1"))

    assert all_files(tmp_path) == []


@pytest.mark.parametrize("bad_id", UNSAFE_IDS)
async def test_every_method_refuses_an_unsafe_id(store: FileCheckpointStore, bad_id: str) -> None:
    with pytest.raises(CheckpointError):
        await store.load(bad_id)
    with pytest.raises(CheckpointError):
        await store.delete(bad_id)
    with pytest.raises(CheckpointError):
        await store.latest(bad_id)
    with pytest.raises(CheckpointError):
        await store.list(run_id=bad_id)
    with pytest.raises(CheckpointError):
        await store.delete_all(bad_id)
    with pytest.raises(CheckpointError):
        await store.cleanup_keep_last(bad_id, 1)


async def test_uuid_and_dotted_ids_are_accepted(store: FileCheckpointStore) -> None:
    checkpoint = make_checkpoint(
        run_id="0b8e8f7e-6a53-4f0e-9a6e-1c2d3e4f5a6b", checkpoint_id="v1.2_step-3"
    )

    await store.save(checkpoint)

    assert await store.load("v1.2_step-3") == checkpoint
