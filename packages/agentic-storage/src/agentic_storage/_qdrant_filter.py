"""Core's payload filter conditions as Qdrant filters (pure: no client, no I/O)."""

from __future__ import annotations

from collections.abc import Sequence

from qdrant_client import models

from agentic_core.stores import VectorCondition

__all__ = ["carried_filter", "qdrant_filter"]

# Integers below this size are exact as floats, so a one-value range matches them exactly (and
# matches a float payload equal to them, as core's rule "means equal" asks).
_EXACT_FLOAT_INT = 2**53


def qdrant_filter(conditions: Sequence[VectorCondition]) -> models.Filter | None:
    """A Qdrant filter that every condition must hold; None for no conditions.

    A string is a ``MatchValue`` (several: one ``MatchAny``), a bool a ``MatchValue``, a number
    a ``Range`` from it to itself: Qdrant's exact match keeps ints and floats apart (``1`` would
    not find ``1.0``) while core's rule compares numbers by value. Integers too large to be
    exact floats keep an exact ``MatchValue``.
    """
    if not conditions:
        return None
    return models.Filter(must=[_condition(condition) for condition in conditions])


def carried_filter(field: str) -> models.Filter:
    """Points whose payload has ``field``: Qdrant's ``is_empty`` also counts a null as missing."""
    # A field whose every value is ``[]`` still counts as missing: Qdrant has no condition for it.
    key = models.PayloadField(key=field)
    return models.Filter(
        should=[
            models.Filter(must_not=[models.IsEmptyCondition(is_empty=key)]),
            models.IsNullCondition(is_null=key),
        ]
    )


def _condition(condition: VectorCondition) -> models.Condition:
    if condition.is_range:
        return models.FieldCondition(
            key=condition.field,
            range=models.Range(
                gt=condition.gt, gte=condition.gte, lt=condition.lt, lte=condition.lte
            ),
        )
    matches = _equal_to_any(condition.field, condition.values)
    return matches[0] if len(matches) == 1 else models.Filter(should=matches)


def _equal_to_any(field: str, values: Sequence[str | int | float | bool]) -> list[models.Condition]:
    texts: list[str] = []
    others: list[models.Condition] = []
    # Repeats dropped by type too: ``True == 1`` in Python, not in a payload.
    for _, value in dict.fromkeys((type(value), value) for value in values):
        if isinstance(value, str):
            texts.append(value)
        elif isinstance(value, bool) or (isinstance(value, int) and abs(value) >= _EXACT_FLOAT_INT):
            others.append(models.FieldCondition(key=field, match=models.MatchValue(value=value)))
        else:
            others.append(
                models.FieldCondition(key=field, range=models.Range(gte=value, lte=value))
            )
    if len(texts) > 1:
        others.insert(0, models.FieldCondition(key=field, match=models.MatchAny(any=texts)))
    elif texts:
        others.insert(0, models.FieldCondition(key=field, match=models.MatchValue(value=texts[0])))
    return others
