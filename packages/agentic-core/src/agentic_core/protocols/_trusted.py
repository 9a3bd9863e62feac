"""Pydantic models built from data already known valid, without validating it again.

The agent loop makes a few models per turn from values it has just built or read from other
validated models (a user message from a ``str``, a tool result, the response). Validating them
again costs more than the rest of the turn's bookkeeping; these helpers set the fields directly,
as ``model_construct`` and ``model_copy`` do, minus their generic per-field work.

Only for the models of this package that have no ``extra="allow"``, no private attributes and
no ``model_post_init`` (tests check that each model built here qualifies, and that what these
helpers build equals the validated construction, ``model_fields_set`` included).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel

__all__ = ["new_id", "replaced", "trusted"]

M = TypeVar("M", bound=BaseModel)

_set = object.__setattr__
# BaseModel's slots, set through their descriptors (cheaper than object.__setattr__ by name).
_set_fields_set = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_set_extra = BaseModel.__dict__["__pydantic_extra__"].__set__
_set_private = BaseModel.__dict__["__pydantic_private__"].__set__

# Ids are drawn from os.urandom 256 at a time (one system call and one hex conversion per batch
# instead of per id) and handed out with list.pop(), which is atomic: threads never get the same
# id. A forked child drops the ids its parent drew (it would hand out the same ones).
_PER_BATCH = 256
_ids: list[str] = []
os.register_at_fork(after_in_child=_ids.clear)
# Per 16 bytes: keep all but the version nibble and the variant's two bits, then set them (4, 10).
_CLEAR = int.from_bytes(bytes.fromhex("ffffffffffff0fff3fffffffffffffff") * _PER_BATCH)
_SET = int.from_bytes(bytes.fromhex("00000000000040008000000000000000") * _PER_BATCH)


def new_id() -> str:
    """A new random UUID4 as 32 hex digits: what ``uuid.uuid4().hex`` returns (the same
    randomness, from ``os.urandom``), at a tenth of its cost: ids are made for every run,
    checkpoint and message."""
    try:
        return _ids.pop()
    except IndexError:
        raw = int.from_bytes(os.urandom(16 * _PER_BATCH)) & _CLEAR | _SET
        digits = raw.to_bytes(16 * _PER_BATCH).hex()
        _ids.extend([digits[i : i + 32] for i in range(0, len(digits), 32)])
        return _ids.pop()


def trusted(cls: type[M], fields: Mapping[str, object], fields_set: set[str]) -> M:
    """An instance of ``cls`` holding ``fields`` (every field of the model, valid values).

    ``fields`` must be a ``dict`` (a ``TypedDict`` is one) in the model's field order; it
    becomes the instance's ``__dict__`` as it is (not copied). ``fields_set`` is what the
    validated construction would report as explicitly set: the fields the equivalent
    ``cls(**kwargs)`` call passes. The instance owns both: the caller must not keep them.
    """
    model = cls.__new__(cls)
    _set(model, "__dict__", fields)
    _set_fields_set(model, fields_set)
    _set_extra(model, None)
    _set_private(model, None)
    return model


def replaced(model: M, changes: Mapping[str, Any]) -> M:
    """``model.model_copy(update=changes)`` (a shallow copy with ``changes`` applied, marked as
    set), without its generic copying of extra and private attributes, which these models lack.
    A model that has some is copied by ``model_copy`` itself."""
    if model.__pydantic_extra__ is not None or model.__pydantic_private__ is not None:
        return model.model_copy(update=changes)
    return trusted(
        type(model),
        {**model.__dict__, **changes},
        model.__pydantic_fields_set__ | changes.keys(),
    )
