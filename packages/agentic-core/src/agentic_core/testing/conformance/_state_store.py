"""The state store conformance suite: what every ``StateStore`` must do.

Subclass ``StateStoreConformance`` as ``Test...`` and provide the store as a fixture named
``state_store`` (a fresh, empty store for every test). Back-ends whose expiry is coarse raise the
``ttl_s`` and ``ttl_wait_s`` class attributes:

```python
class TestRedisStateStore(StateStoreConformance):
    ttl_s, ttl_wait_s = 0.2, 1.0

    @pytest_asyncio.fixture
    async def state_store(self, redis_url: str) -> AsyncIterator[StateStore]:
        store = RedisStateStore(redis_url, prefix=uuid.uuid4().hex)
        yield store
        await store.close()
```
"""

# ruff: noqa: S101  (a test suite: plain asserts are how pytest reports failures)

from __future__ import annotations

import asyncio
import re
from datetime import UTC, datetime
from typing import Any, ClassVar, cast

import pytest

from agentic_core._errors import SerializationError
from agentic_core.protocols._state import StateStore

__all__ = ["StateStoreConformance"]


_JSON_VALUES: list[Any] = [
    None,
    True,
    False,
    0,
    -7,
    2**40,
    1.0,
    0.1,
    -2.5e-300,
    "",
    'héllo ✓ "quoted" \\ / \n',
    [],
    {},
    [1, "two", 3.0, None, True, [], {}],
    {"nested": {"list": [{"deep": [1, 2, {"x": None}]}], "flag": False}, "n": 1.5},
]


def _same_json(got: object, expected: object) -> bool:
    """Equal, and of the same JSON type at every level (``1`` is not ``1.0``, nor ``True``)."""
    if type(got) is not type(expected):
        return False
    if isinstance(expected, list):
        got_items, expected_items = cast("list[object]", got), cast("list[object]", expected)
        return len(got_items) == len(expected_items) and all(
            map(_same_json, got_items, expected_items)
        )
    if isinstance(expected, dict):
        got_map, expected_map = cast("dict[str, object]", got), cast("dict[str, object]", expected)
        return got_map.keys() == expected_map.keys() and all(
            _same_json(got_map[key], value) for key, value in expected_map.items()
        )
    return got == expected


class StateStoreConformance:
    """The behaviour every ``StateStore`` must have; subclass it as ``Test...``.

    The subclass provides the store as a fixture named ``state_store`` (see the module
    docstring); every test must receive a fresh, empty store. Back-ends whose expiry is coarse
    raise ``ttl_s`` and ``ttl_wait_s``.
    """

    pytestmark: ClassVar[list[pytest.MarkDecorator]] = [pytest.mark.asyncio]
    ttl_s: ClassVar[float] = 0.05
    """The short TTL the expiry tests set."""
    ttl_wait_s: ClassVar[float] = 0.3
    """How long the expiry tests wait for ``ttl_s`` to pass (a generous margin over it)."""
    concurrent_sets: ClassVar[int] = 50
    """How many ``set`` calls ``test_concurrent_sets_all_land`` runs at once."""

    # --- get, set, delete, exists ----------------------------------------------------------------

    async def test_store_satisfies_the_protocol(self, state_store: StateStore) -> None:
        assert isinstance(state_store, StateStore)

    async def test_get_of_a_missing_key_returns_none(self, state_store: StateStore) -> None:
        assert await state_store.get("missing") is None
        assert await state_store.exists("missing") is False

    @pytest.mark.parametrize(
        "value", _JSON_VALUES, ids=[f"{type(v).__name__}-{i}" for i, v in enumerate(_JSON_VALUES)]
    )
    async def test_every_json_type_round_trips(self, state_store: StateStore, value: Any) -> None:
        await state_store.set("key", value)

        assert _same_json(await state_store.get("key"), value)

    async def test_a_stored_none_exists(self, state_store: StateStore) -> None:
        await state_store.set("empty", None)

        assert await state_store.exists("empty") is True
        assert await state_store.keys() == ["empty"]

    async def test_set_overwrites_the_previous_value(self, state_store: StateStore) -> None:
        await state_store.set("key", {"version": 1})

        await state_store.set("key", [2])

        assert await state_store.get("key") == [2]

    async def test_exists_reports_a_stored_key(self, state_store: StateStore) -> None:
        await state_store.set("present", 1)

        assert await state_store.exists("present") is True
        assert await state_store.exists("absent") is False

    async def test_delete_removes_a_key_and_returns_true(self, state_store: StateStore) -> None:
        await state_store.set("key", "value")

        assert await state_store.delete("key") is True
        assert await state_store.get("key") is None
        assert await state_store.exists("key") is False

    async def test_delete_of_a_missing_key_returns_false(self, state_store: StateStore) -> None:
        assert await state_store.delete("missing") is False

    async def test_keys_work_with_slashes_colons_and_unicode(self, state_store: StateStore) -> None:
        key = "tenant:1/session/ünïcode ✓"

        await state_store.set(key, "value")

        assert await state_store.get(key) == "value"
        assert await state_store.keys("tenant:1/") == [key]

    # --- keys ------------------------------------------------------------------------------------

    async def test_keys_of_an_empty_store_is_empty(self, state_store: StateStore) -> None:
        assert await state_store.keys() == []

    async def test_keys_lists_every_key_sorted(self, state_store: StateStore) -> None:
        for key in ["b", "a/2", "c", "a/1"]:
            await state_store.set(key, 0)

        assert await state_store.keys() == ["a/1", "a/2", "b", "c"]

    async def test_keys_filters_by_prefix(self, state_store: StateStore) -> None:
        for key in ["runs/1/a", "runs/1/b", "runs/10/a", "runs/2/a", "other"]:
            await state_store.set(key, 0)

        assert await state_store.keys("runs/1/") == ["runs/1/a", "runs/1/b"]
        assert await state_store.keys("runs/1") == ["runs/1/a", "runs/1/b", "runs/10/a"]
        assert await state_store.keys("nothing/") == []

    async def test_keys_treats_the_prefix_literally(self, state_store: StateStore) -> None:
        for key in ["a*b", "a?c", "a[x]", "a%", "ab", "a_"]:
            await state_store.set(key, 0)

        assert await state_store.keys("a*") == ["a*b"]
        assert await state_store.keys("a?") == ["a?c"]
        assert await state_store.keys("a[") == ["a[x]"]
        assert await state_store.keys("a%") == ["a%"]
        assert await state_store.keys("a_") == ["a_"]

    async def test_keys_omits_deleted_keys(self, state_store: StateStore) -> None:
        await state_store.set("a", 1)
        await state_store.set("b", 2)

        await state_store.delete("a")

        assert await state_store.keys() == ["b"]

    # --- TTL -------------------------------------------------------------------------------------

    async def test_a_value_with_a_ttl_is_visible_before_it_expires(
        self, state_store: StateStore
    ) -> None:
        await state_store.set("key", "value", ttl_s=60)

        assert await state_store.get("key") == "value"
        assert await state_store.exists("key") is True
        assert await state_store.keys() == ["key"]

    async def test_a_value_disappears_after_its_ttl(self, state_store: StateStore) -> None:
        await state_store.set("short", "gone soon", ttl_s=self.ttl_s)
        await state_store.set("long", "stays", ttl_s=60)
        await state_store.set("forever", "stays")

        await asyncio.sleep(self.ttl_wait_s)

        assert await state_store.get("short") is None
        assert await state_store.exists("short") is False
        assert await state_store.keys() == ["forever", "long"]
        assert await state_store.get("long") == "stays"

    async def test_delete_of_an_expired_key_returns_false(self, state_store: StateStore) -> None:
        await state_store.set("short", 1, ttl_s=self.ttl_s)

        await asyncio.sleep(self.ttl_wait_s)

        assert await state_store.delete("short") is False

    async def test_set_without_ttl_clears_an_earlier_ttl(self, state_store: StateStore) -> None:
        await state_store.set("key", "first", ttl_s=self.ttl_s)

        await state_store.set("key", "second")
        await asyncio.sleep(self.ttl_wait_s)

        assert await state_store.get("key") == "second"

    async def test_a_key_can_be_set_again_after_it_expired(self, state_store: StateStore) -> None:
        await state_store.set("key", "first", ttl_s=self.ttl_s)
        await asyncio.sleep(self.ttl_wait_s)

        await state_store.set("key", "second")

        assert await state_store.get("key") == "second"

    # --- JSON-ability and independence -----------------------------------------------------------

    @pytest.mark.parametrize(
        "value",
        [object(), {1, 2}, b"bytes", datetime(2025, 1, 1, tzinfo=UTC), {"inner": [object()]}],
        ids=["object", "set", "bytes", "datetime", "nested-object"],
    )
    async def test_a_value_that_is_not_json_able_is_rejected(
        self, state_store: StateStore, value: Any
    ) -> None:
        with pytest.raises(SerializationError, match=re.escape("bad-key")):
            await state_store.set("bad-key", value)

        assert await state_store.exists("bad-key") is False

    async def test_a_rejected_value_keeps_the_previous_one(self, state_store: StateStore) -> None:
        await state_store.set("key", "good")

        with pytest.raises(SerializationError):
            await state_store.set("key", {"bad": object()})

        assert await state_store.get("key") == "good"

    async def test_changing_a_value_after_set_does_not_change_the_store(
        self, state_store: StateStore
    ) -> None:
        value: dict[str, Any] = {"items": [1, 2], "nested": {"x": 1}}
        await state_store.set("key", value)

        value["items"].append(3)
        value["nested"]["x"] = 2
        value["added"] = True

        assert await state_store.get("key") == {"items": [1, 2], "nested": {"x": 1}}

    async def test_changing_a_got_value_does_not_change_the_store(
        self, state_store: StateStore
    ) -> None:
        await state_store.set("key", {"items": [1, 2]})
        got = cast("dict[str, list[int]]", await state_store.get("key"))

        got["items"].append(3)

        assert await state_store.get("key") == {"items": [1, 2]}

    # --- concurrency -----------------------------------------------------------------------------

    async def test_concurrent_sets_all_land(self, state_store: StateStore) -> None:
        count = self.concurrent_sets

        await asyncio.gather(*(state_store.set(f"k/{i:03d}", {"i": i}) for i in range(count)))

        assert await state_store.keys("k/") == [f"k/{i:03d}" for i in range(count)]
        values = await asyncio.gather(*(state_store.get(f"k/{i:03d}") for i in range(count)))
        assert values == [{"i": i} for i in range(count)]
