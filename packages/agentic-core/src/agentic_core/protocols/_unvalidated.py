"""Pydantic models built without validation, from values the engine itself built right.

``Model(**fields)`` validates every field, and ``Model.model_construct`` walks the fields (and
their default factories) on every call: both cost more than the hot paths that build a model per
superstep can pay. ``unvalidated`` sets the four attributes a validated instance has and nothing
else, so the object is indistinguishable from the validated one (equal, same fields set, same
serialization) for a model that allows no extra fields, has no private attributes and no
``model_post_init``. The tests compare both for every model built this way, against the pydantic
version in the lock.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar

from pydantic import BaseModel

__all__ = ["unvalidated"]

_M = TypeVar("_M", bound=BaseModel)

_new = object.__new__
_set = object.__setattr__  # frozen models refuse their own __setattr__


def unvalidated(cls: type[_M], fields: Mapping[str, object], fields_set: set[str]) -> _M:
    """An instance of ``cls`` holding ``fields`` as they are: no validation, no copies.

    ``fields`` must be a ``dict`` (a ``TypedDict`` is one) holding every field of ``cls``, in
    declaration order, each already of its declared type (defaults included); ``fields_set``
    names those the caller "passed" (what ``model_fields_set`` reports). The instance owns
    both: the caller must not keep them.
    """
    model = _new(cls)
    _set(model, "__dict__", fields)
    _set(model, "__pydantic_fields_set__", fields_set)
    _set(model, "__pydantic_extra__", None)
    _set(model, "__pydantic_private__", None)
    return model
