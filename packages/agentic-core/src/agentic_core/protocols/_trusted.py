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

# uuid.uuid4(): 16 random bytes with the version (4) and variant (RFC 4122) bits set.
_UUID4_CLEAR = ~((0xC000 << 48) | (0xF000 << 64))
_UUID4_SET = (0x8000 << 48) | (4 << 76)


def new_id() -> str:
    """A new random UUID4 as 32 hex digits: what ``uuid.uuid4().hex`` returns, without building
    a ``UUID`` object (a third of the cost; ids are made for every message)."""
    return f"{int.from_bytes(os.urandom(16)) & _UUID4_CLEAR | _UUID4_SET:032x}"


def trusted(cls: type[M], fields: dict[str, Any], fields_set: set[str]) -> M:
    """An instance of ``cls`` holding ``fields`` (every field of the model, valid values).

    ``fields_set`` is what the validated construction would report as explicitly set: the
    fields the equivalent ``cls(**kwargs)`` call passes. ``fields`` becomes the instance's
    ``__dict__`` as it is (not copied).
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
