"""Malformed tagged data (tampered or truncated, never made by ``encode``) decodes to a
``SerializationError`` naming what is wrong, never to a raw ``ValueError``, ``KeyError``...:
a worker refuses such a task at once instead of retrying it as if it had crashed."""

from __future__ import annotations

import contextlib
import dataclasses
from enum import Enum
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from agentic_core import SerializationError, TypeRegistry
from agentic_core.graph._serialization import type_tag


class Point(BaseModel):
    x: int
    y: int


@dataclasses.dataclass
class Box:
    label: str
    points: list[Point]


class Colour(Enum):
    RED = "red"


def _registry() -> TypeRegistry:
    return TypeRegistry([Box, Colour, Point])


@pytest.mark.parametrize(
    ("data", "named"),
    [
        ({"$t": "dict", "v": "xx"}, "'dict' value must be a list"),
        ({"$t": "dict", "v": ["ab"]}, "[key, value] pairs"),
        ({"$t": "dict", "v": [[[1], 2]]}, "unhashable"),
        ({"$t": "x"}, "exactly the keys"),
        ({"$t": "tuple", "v": [], "extra": 1}, "exactly the keys"),
        ({"$t": 5, "v": 1}, "tag must be a string"),
        ({"$t": None, "v": 1}, "tag must be a string"),
        ({"$t": ["dict"], "v": 1}, "tag must be a string"),
        ({"$t": "set", "v": [[1]]}, "unhashable"),
        ({"$t": "set", "v": {}}, "'set' value must be a list"),
        ({"$t": "bytes", "v": "not base64!"}, "'bytes'"),
        ({"$t": "bytes", "v": 3}, "'bytes' value must be a string"),
        ({"$t": "datetime", "v": "yesterday"}, "'datetime'"),
        ({"$t": "date", "v": 20240101}, "'date' value must be a string"),
        ({"$t": "uuid", "v": "not-a-uuid"}, "'uuid'"),
        ({"$t": "type", "v": {}}, "'type' value must be a string"),
        ({"$t": "type", "v": "no.such.Type"}, "cannot decode a value of type 'no.such.Type'"),
        ({"$t": "nowhere.Thing", "v": {}}, "cannot decode a value of type 'nowhere.Thing'"),
        ({"$t": type_tag(Point), "v": "xx"}, "must be an object"),
        ({"$t": type_tag(Point), "v": {"x": "one"}}, "cannot decode a"),
        ({"$t": type_tag(Box), "v": {"nope": 1}}, "cannot decode a"),
        ({"$t": type_tag(Colour), "v": "blue"}, "cannot decode a"),
        ([{"k": {"$t": "tuple", "v": 1}}], "'tuple' value must be a list"),
    ],
)
def test_malformed_tagged_data_raises_serialization_error_naming_it(data: Any, named: str) -> None:
    with pytest.raises(SerializationError) as caught:
        _registry().decode(data)
    assert named in str(caught.value)


def test_a_huge_bad_value_is_named_briefly() -> None:
    with pytest.raises(SerializationError) as caught:
        _registry().decode({"$t": "dict", "v": "x" * 100_000})
    assert len(str(caught.value)) < 200


def test_data_nested_too_deeply_is_malformed() -> None:
    data: Any = "leaf"
    for _ in range(100_000):
        data = [data]
    with pytest.raises(SerializationError, match="nested too deeply"):
        _registry().decode(data)


def test_well_formed_data_still_round_trips() -> None:
    registry = _registry()
    value = {
        "box": Box("b", [Point(x=1, y=2)]),
        (1, 2): {Colour.RED, b"raw"},
        "tagged-looking": {"$t": "dict", "v": "xx"},
    }
    assert registry.decode(registry.encode(value)) == value


_TAGS = st.sampled_from(
    [
        "dict",
        "tuple",
        "set",
        "bytes",
        "datetime",
        "date",
        "uuid",
        "type",
        type_tag(Point),
        type_tag(Box),
        type_tag(Colour),
        "agentic_core.WorkflowOutputEvent",
        "agentic_core.ChatMessage",
        "str",
        "x",
    ]
)
_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.text(max_size=12)
    | st.sampled_from(["red", "2024-01-01", "2024-01-01T10:00:00", "AAEC", "int", "Any"])
    | st.uuids().map(str)
)


def _json_with_tags(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    tag = _TAGS | _SCALARS
    return (
        st.lists(children, max_size=4)
        | st.dictionaries(st.text(max_size=6) | st.sampled_from(["x", "y", "$t", "v"]), children)
        | st.fixed_dictionaries({"$t": tag, "v": children})
        | st.fixed_dictionaries({"$t": tag})
        | st.fixed_dictionaries({"$t": tag, "v": children}, optional={"w": children})
        | st.fixed_dictionaries(
            {"$t": _TAGS, "v": st.dictionaries(st.sampled_from(["x", "y", "label"]), children)}
        )
        | st.fixed_dictionaries({"$t": st.just("dict"), "v": st.lists(st.lists(children))})
    )


JSON_WITH_TAGS = st.recursive(_SCALARS, _json_with_tags, max_leaves=20)


@settings(max_examples=500)
@given(JSON_WITH_TAGS)
def test_decode_returns_or_raises_serialization_error_for_any_json(data: Any) -> None:
    with contextlib.suppress(SerializationError):  # anything else fails the test
        _registry().decode(data)
