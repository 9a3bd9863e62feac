"""Checkpoints built without validation are the checkpoints pydantic would build.

The engine builds one per superstep with ``trusted_checkpoint`` and the in-memory store rebuilds
one per ``load`` the same way (``protocols._trusted.trusted``): equal to the validated
checkpoint, with the same fields set, extra and private attributes, ``__dict__`` order, JSON and
repr, with the pydantic version in the lock. Should pydantic change what a validated instance
holds, these fail before anything else does.
"""

from __future__ import annotations

import gc
from datetime import UTC, datetime
from typing import Any, Never

from pydantic import RootModel

from agentic_core import (
    Checkpoint,
    Executor,
    InMemoryCheckpointStore,
    Runtime,
    WorkflowBuilder,
    WorkflowContext,
    handler,
    response_handler,
)
from agentic_core.protocols._checkpoint import (
    CHECKPOINT_SCHEMA_VERSION,
    CheckpointFields,
    trusted_checkpoint,
)
from agentic_core.testing.conformance import make_checkpoint


def every_field() -> CheckpointFields:
    """A checkpoint's fields with a value in each, as the engine encodes them."""
    return {
        "id": "c-1",
        "workflow_id": "w-1",
        "workflow_name": "construction",
        "run_id": "r-1",
        "superstep": 4,
        "workflow_fingerprint": "f" * 64,
        "schema_version": CHECKPOINT_SCHEMA_VERSION,
        "created_at": datetime(2025, 1, 1, 12, 0, 0, 123, tzinfo=UTC),
        "pending_messages": {"join": [{"$t": "tests.Note", "v": {"text": "héllo"}}, 3]},
        "fan_in_buffers": {"a,b->join": {"a": [1.5, None]}},
        "shared_state": {"round": 2, "nested": {"items": [1, 2]}},
        "pending_requests": [{"$t": "agentic_core.RequestInfoEvent", "v": {"request_id": "q"}}],
        "executor_states": {"join": {"seen": [True]}},
        "outputs_so_far": 7,
        "outputs": [1, "two"],
        "metadata": {"errors": {"join": []}},
        "parent_checkpoint_id": "c-0",
    }


def same_model(built: Checkpoint, validated: Checkpoint) -> None:
    assert built == validated
    assert built.model_fields_set == validated.model_fields_set
    assert built.__pydantic_extra__ == validated.__pydantic_extra__
    assert built.__pydantic_private__ == validated.__pydantic_private__
    assert list(vars(built)) == list(vars(validated))
    assert built.model_dump_json() == validated.model_dump_json()
    assert built.model_dump() == validated.model_dump()
    assert repr(built) == repr(validated)
    assert built.to_metadata() == validated.to_metadata()


def test_a_trusted_checkpoint_is_the_validated_checkpoint() -> None:
    validated = Checkpoint(**every_field())

    built = trusted_checkpoint(every_field())

    same_model(built, validated)
    assert Checkpoint.model_validate_json(built.model_dump_json()) == built
    assert built.model_copy(update={"superstep": 5}).superstep == 5


def test_checkpoint_fields_names_every_field_of_a_checkpoint_in_order() -> None:
    assert list(CheckpointFields.__annotations__) == list(Checkpoint.model_fields)


def test_a_checkpoint_is_a_model_that_can_be_built_without_validation() -> None:
    # What ``trusted`` leaves out must not exist on the model: extra fields kept, private
    # attributes, a model_post_init hook, a root model.
    assert Checkpoint.model_config.get("extra") in (None, "ignore", "forbid")
    assert Checkpoint.__private_attributes__ == {}
    assert Checkpoint.__pydantic_post_init__ is None
    assert not issubclass(Checkpoint, RootModel)


class Note(Executor):
    """Writes shared state, keeps per-run state, asks once: a checkpoint with every part."""

    def __init__(self) -> None:
        super().__init__("note")
        self.seen: list[str] = []

    def snapshot_state(self) -> Any:
        return list(self.seen)

    def restore_state(self, state: Any) -> None:
        self.seen = list(state or [])

    @handler
    async def on(self, text: str, ctx: WorkflowContext[str, str]) -> None:
        self.seen.append(text)
        await ctx.set_shared_state("last", {"text": text, "at": len(self.seen)})
        await ctx.yield_output(text)
        if len(self.seen) < 3:
            await ctx.send_message(text + "!")
        else:
            await ctx.request_info(text, str)

    @response_handler
    async def answered(self, text: str, answer: str, ctx: WorkflowContext[Never, str]) -> None:
        await ctx.yield_output(f"{text} {answer}")


class KeepingStore(InMemoryCheckpointStore):
    """Keeps the very objects the engine saves."""

    def __init__(self) -> None:
        super().__init__()
        self.given: list[Checkpoint] = []

    async def save(self, checkpoint: Checkpoint) -> str:
        self.given.append(checkpoint)
        return await super().save(checkpoint)


async def test_every_checkpoint_the_engine_builds_validates_to_itself(runtime: Runtime) -> None:
    note = Note()
    workflow = WorkflowBuilder("notes").set_start_executor(note).add_edge(note, note).build()
    store = KeepingStore()
    paused = await workflow.run("hi", checkpoint_store=store, runtime=runtime)
    await workflow.run(
        responses={paused.pending_requests[0].request_id: "ok"},
        checkpoint_store=store,
        runtime=runtime,
    )

    assert len(store.given) == 4
    for built in store.given:
        same_model(built, Checkpoint.model_validate(built.model_dump()))
        assert built.created_at.tzinfo is UTC
        assert len(built.id) == 32  # 16 random bytes in hex, as random as a uuid4 hex
        assert int(built.id, 16) >= 0
    assert len({c.id for c in store.given}) == 4


async def test_the_memory_store_loads_what_a_json_round_trip_of_the_saved_checkpoint_gives() -> (
    None
):
    saved = make_checkpoint(
        shared_state={"pair": (1, 2), "when": datetime(2025, 1, 1, tzinfo=UTC), "n": {"x": [1.5]}}
    )
    store = InMemoryCheckpointStore()
    await store.save(saved)

    loaded = await store.load(saved.id)

    assert loaded is not None
    round_trip = Checkpoint.model_validate_json(saved.model_dump_json())
    assert loaded == round_trip
    assert loaded.model_fields_set == round_trip.model_fields_set
    assert list(vars(loaded)) == list(vars(round_trip))
    assert loaded.model_dump_json() == round_trip.model_dump_json()
    assert loaded.shared_state == {
        "pair": [1, 2],
        "when": "2025-01-01T00:00:00Z",
        "n": {"x": [1.5]},
    }
    assert loaded.created_at == saved.created_at


async def test_checkpoints_kept_by_the_memory_store_cost_the_garbage_collector_nothing() -> None:
    store = InMemoryCheckpointStore()
    await store.save(make_checkpoint(superstep=0))
    gc.collect()
    tracked_before = len(gc.get_objects())

    for superstep in range(1, 1_001):
        await store.save(make_checkpoint(superstep=superstep))
    gc.collect()

    # Each checkpoint is one tuple of immutable values, which the collector stops tracking: the
    # store's dicts grow, the objects it walks do not (a model per checkpoint would add 1,000+).
    assert len(gc.get_objects()) - tracked_before < 100
    assert len(await store.list(run_id="run-1")) == 1_001
