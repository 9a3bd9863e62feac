"""Type annotations turned into fast runtime checks and build-time compatibility tests.

Everything here runs once per handler, when an executor class is created, never per message.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any, Literal, Union, get_args, get_origin

Matcher = Callable[[Any], bool]

_UNION_ORIGINS: tuple[Any, ...] = (Union, types.UnionType)


def _always(_: Any) -> bool:
    return True


def is_any(tp: Any) -> bool:
    """True for ``Any`` and ``object``: annotations that accept everything."""
    return tp is Any or tp is object


def union_members(tp: Any) -> tuple[Any, ...]:
    """The members of a union annotation, or ``(tp,)`` for anything else."""
    if get_origin(tp) in _UNION_ORIGINS:
        members: list[Any] = []
        for arg in get_args(tp):
            members.extend(union_members(arg))
        return tuple(members)
    return (tp,)


def matcher_for(tp: Any) -> Matcher:
    """A predicate telling whether a runtime value fits the annotation ``tp``.

    Supports classes (isinstance, so pydantic models and dataclasses too), ``Any``/``object``,
    ``None``, unions, ``Literal``, ``list[T]``/``set[T]``/``tuple[T, ...]`` (elements checked),
    ``dict[K, V]`` and other generics (checked by their origin).
    """
    if is_any(tp):
        return _always
    if tp is None or tp is type(None):
        return lambda value: value is None
    origin = get_origin(tp)
    if origin in _UNION_ORIGINS:
        parts = tuple(matcher_for(arg) for arg in get_args(tp))
        plain = tuple(arg for arg in get_args(tp) if isinstance(arg, type) and not get_args(arg))
        if len(plain) == len(parts):
            return lambda value: isinstance(value, plain)
        return lambda value: any(part(value) for part in parts)
    if origin is Literal:
        allowed = get_args(tp)
        return lambda value: any(value == a and type(value) is type(a) for a in allowed)
    if origin in (list, set, frozenset) or (origin is tuple and get_args(tp)[1:] == (...,)):
        container: type = origin
        element = matcher_for(get_args(tp)[0]) if get_args(tp) else _always
        if element is _always:
            return lambda value: isinstance(value, container)
        return lambda value: isinstance(value, container) and all(element(v) for v in value)
    if origin is dict:
        key_tp, value_tp = get_args(tp) or (Any, Any)
        key_ok, value_ok = matcher_for(key_tp), matcher_for(value_tp)
        return lambda value: (
            isinstance(value, dict)
            and all(
                key_ok(k) and value_ok(v)
                for k, v in value.items()  # pyright: ignore[reportUnknownVariableType]
            )
        )
    if origin is not None and isinstance(origin, type):
        return lambda value: isinstance(value, origin)
    if isinstance(tp, type):
        return lambda value: isinstance(value, tp)
    raise TypeError(f"unsupported handler annotation {describe(tp)}")


def is_type_determined(tp: Any) -> bool:
    """True when whether a value fits ``tp`` depends on ``type(value)`` alone (cacheable)."""
    if is_any(tp):
        return True
    origin = get_origin(tp)
    if origin in _UNION_ORIGINS:
        return all(is_type_determined(arg) for arg in get_args(tp))
    if origin is Literal:
        return False
    if origin is not None:
        return not get_args(tp) or all(is_any(arg) for arg in get_args(tp))
    return isinstance(tp, type) or tp is None


def describe(tp: Any) -> str:
    """A short readable name for an annotation: ``int``, ``list[Report]``, ``str | None``."""
    if tp is Any:
        return "Any"
    if tp is None or tp is type(None):
        return "None"
    origin = get_origin(tp)
    if origin in _UNION_ORIGINS:
        return " | ".join(describe(arg) for arg in get_args(tp))
    if origin is not None:
        args = ", ".join("..." if a is ... else describe(a) for a in get_args(tp))
        name = getattr(origin, "__name__", str(origin))
        return f"{name}[{args}]" if args else name
    return getattr(tp, "__qualname__", None) or getattr(tp, "__name__", None) or repr(tp)


def is_concrete(tp: Any) -> bool:
    """True when ``tp`` says something checkable (not ``Any``, not a bare TypeVar)."""
    if is_any(tp):
        return False
    origin = get_origin(tp)
    if origin in _UNION_ORIGINS:
        return all(is_concrete(arg) for arg in get_args(tp))
    return origin is not None or isinstance(tp, type) or tp is None


def can_accept(handler_tp: Any, produced_tp: Any) -> bool:
    """Whether a value declared as ``produced_tp`` may be accepted by a handler of ``handler_tp``.

    Permissive where unsure: only a combination proven incompatible returns False.
    """
    if is_any(handler_tp) or not is_concrete(produced_tp) or not is_concrete(handler_tp):
        return True
    produced = union_members(produced_tp)
    if len(produced) > 1:
        return all(can_accept(handler_tp, member) for member in produced)
    handlers = union_members(handler_tp)
    if len(handlers) > 1:
        return any(can_accept(member, produced_tp) for member in handlers)
    return _single_accepts(handler_tp, produced_tp)


def _single_accepts(handler_tp: Any, produced_tp: Any) -> bool:
    if handler_tp is None or handler_tp is type(None):
        return produced_tp is None or produced_tp is type(None)
    h_origin, p_origin = get_origin(handler_tp), get_origin(produced_tp)
    if h_origin is Literal or p_origin is Literal:
        if p_origin is Literal and h_origin is not Literal:
            return all(can_accept(handler_tp, type(v)) for v in get_args(produced_tp))
        return (
            h_origin is Literal
            and p_origin is Literal
            and (set(get_args(produced_tp)) <= set(get_args(handler_tp)))
        )
    h_class = h_origin or handler_tp
    p_class = p_origin or produced_tp
    if not (isinstance(h_class, type) and isinstance(p_class, type)):
        return True
    if not issubclass(p_class, h_class):
        return False
    h_args, p_args = get_args(handler_tp), get_args(produced_tp)
    if not h_args or not p_args or len(h_args) != len(p_args):
        return True
    return all(can_accept(h, p) for h, p in zip(h_args, p_args, strict=True) if h is not ...)


def accepts_list(tp: Any) -> bool:
    """Whether a handler annotated ``tp`` can take a ``list`` (the fan-in delivery)."""
    return any(
        is_any(member) or (get_origin(member) or member) is list for member in union_members(tp)
    )


def list_element(tp: Any) -> Any:
    """The element annotation of the list member of ``tp`` (``Any`` when unknown)."""
    for member in union_members(tp):
        if (get_origin(member) or member) is list:
            args = get_args(member)
            return args[0] if args else Any
    return Any
