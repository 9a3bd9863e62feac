"""The payload filter language of every ``VectorStore``, parsed once into typed conditions.

``{"tag": "a", "n": {"gte": 1, "lt": 5}, "lang": ["en", "fr"]}`` means: ``tag`` equals ``"a"``,
``n`` is in [1, 5), and ``lang`` is ``"en"`` or ``"fr"``. Back-ends translate the conditions
(Qdrant: ``FieldCondition``), or evaluate them with ``VectorCondition.matches``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from agentic_core._errors import VectorStoreError

__all__ = ["RANGE_OPERATORS", "VectorCondition", "parse_vector_filter"]

RANGE_OPERATORS = ("gt", "gte", "lt", "lte")
"""The keys of a range condition."""

Scalar = str | int | float | bool


@dataclass(frozen=True, slots=True)
class VectorCondition:
    """One field's condition: equal to any of ``values``, or within the range bounds."""

    field: str
    values: tuple[Scalar, ...] = ()
    """Equality: the field equals one of these (empty for a range condition)."""
    gt: float | None = None
    gte: float | None = None
    lt: float | None = None
    lte: float | None = None

    @property
    def is_range(self) -> bool:
        """Whether this is a range condition (else an equality one)."""
        return not self.values

    def matches(self, payload: Mapping[str, Any]) -> bool:
        """Whether ``payload`` satisfies the condition (a list value: when any item does)."""
        if self.field not in payload:
            return False
        value = payload[self.field]
        items = cast("list[Any]", value) if isinstance(value, list) else [value]
        return any(self._matches_one(item) for item in items)

    def _matches_one(self, value: Any) -> bool:
        if self.values:
            return any(_same(value, wanted) for wanted in self.values)
        if isinstance(value, bool) or not isinstance(value, int | float):
            return False
        return (
            (self.gt is None or value > self.gt)
            and (self.gte is None or value >= self.gte)
            and (self.lt is None or value < self.lt)
            and (self.lte is None or value <= self.lte)
        )


def _same(value: Any, wanted: Scalar) -> bool:
    # ``True == 1`` in Python, but a payload's ``true`` is not the number 1 (nor in Qdrant).
    if isinstance(wanted, bool) or isinstance(value, bool):
        return isinstance(value, bool) and isinstance(wanted, bool) and value is wanted
    if isinstance(wanted, str) or isinstance(value, str):
        return value == wanted
    return isinstance(value, int | float) and value == wanted


def parse_vector_filter(
    collection: str,
    filter: Mapping[str, Any] | None,  # noqa: A002 - the protocol's name
) -> list[VectorCondition]:
    """The conditions of ``filter`` (empty for None), or ``VectorStoreError`` naming the field.

    Raises:
        VectorStoreError: a field name is not a non-empty string without dots, or a condition is
            not a scalar, a non-empty list of scalars, or a dict of finite range bounds.
    """
    if filter is None:
        return []
    if not isinstance(filter, Mapping):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise VectorStoreError(
            f"the filter of a search in collection {collection!r} must be a mapping of field to "
            f"condition, got {type(filter).__name__}"
        )
    return [_condition(collection, field, condition) for field, condition in filter.items()]


def _condition(collection: str, field: object, condition: object) -> VectorCondition:
    def bad(why: str) -> VectorStoreError:
        return VectorStoreError(
            f"filter field {field!r} of a search in collection {collection!r}: {why}"
        )

    if not isinstance(field, str) or not field or "." in field:
        raise bad("field names are non-empty top-level payload keys (no dots)")
    if _is_scalar(condition):
        return VectorCondition(field, values=(cast("Scalar", condition),))
    if isinstance(condition, list | tuple):
        items = cast("Sequence[object]", condition)
        if not items or not all(_is_scalar(item) for item in items):
            raise bad("a list condition must be a non-empty list of str, int, float or bool")
        return VectorCondition(field, values=tuple(cast("Sequence[Scalar]", items)))
    if isinstance(condition, Mapping):
        bounds = cast("Mapping[object, object]", condition)
        unknown = [key for key in bounds if key not in RANGE_OPERATORS]
        if unknown or not bounds:
            raise bad(
                f"a range condition takes {', '.join(RANGE_OPERATORS)} only, got {list(bounds)!r}"
            )
        checked: dict[str, float] = {}
        for key, bound in bounds.items():
            if isinstance(bound, bool) or not isinstance(bound, int | float):
                raise bad(f"range bound {key!r} must be a number, got {bound!r}")
            if not math.isfinite(bound):
                raise bad(f"range bound {key!r} must be finite, got {bound!r}")
            checked[cast("str", key)] = float(bound)
        return VectorCondition(
            field,
            gt=checked.get("gt"),
            gte=checked.get("gte"),
            lt=checked.get("lt"),
            lte=checked.get("lte"),
        )
    raise bad(
        f"a condition is a value, a list of values or a dict of {'/'.join(RANGE_OPERATORS)}, "
        f"got {type(condition).__name__}"
    )


def _is_scalar(value: object) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    return isinstance(value, str | int | bool)
