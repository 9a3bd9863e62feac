# pyright: reportUnknownVariableType=false, reportUnknownArgumentType=false, reportUnknownMemberType=false
# (a boundary module: it walks arbitrary user data)
"""JSON encoding of messages, outputs and state through an explicit type registry.

No pickle and no importing a class named by the data: a tagged value decodes only to a class
the registry holds (the types the graph's handlers declare, plus types seen while running),
a workflow event, or one of core's own message and agent payload types (``ChatMessage``,
``AgentResponse``, ``AgentResponseUpdate``, ``AgentExecutorResponse``, ...).
"""

from __future__ import annotations

import base64
import dataclasses
import functools
import json
import types
from datetime import date, datetime
from enum import Enum
from typing import Any, Union, get_args, get_origin
from uuid import UUID

from pydantic import BaseModel

from agentic_core._errors import SerializationError

_TAG = "$t"
_UNIONS: tuple[Any, ...] = (Union, types.UnionType)
_VALUE = "v"
_SCALARS: frozenset[type] = frozenset({str, int, float, bool, type(None)})


def type_tag(cls: type) -> str:
    """The registry tag of a class: ``module.QualName``.

    A class of an agentic package is tagged ``package.QualName`` (``agentic_core.ChatMessage``):
    its private module may move between releases, its tag in saved checkpoints must not.
    """
    module = cls.__module__
    if module.startswith("agentic_") and "._" in module:
        module = module.partition(".")[0]
    return f"{module}.{cls.__qualname__}"


def _stable_tag(tag: str) -> str | None:
    """The tag an older release wrote with a private module path (``agentic_core.graph._x.C``)."""
    if tag.startswith("agentic_") and "._" in tag:
        package, _, rest = tag.partition(".")
        return f"{package}.{rest.rpartition('.')[2]}"
    return None


def _is_registrable(cls: type) -> bool:
    return issubclass(cls, BaseModel | Enum) or dataclasses.is_dataclass(cls)


def _is_dataclass_instance(value: Any) -> bool:
    return dataclasses.is_dataclass(value) and not isinstance(value, type)


class TypeRegistry:
    """The classes a workflow may encode and decode, by tag."""

    __slots__ = ("_by_tag", "_known")

    def __init__(self, types_: Any = ()) -> None:
        self._by_tag: dict[str, type] = {}
        self._known: set[type] = set(_SCALARS)
        for tp in types_:
            self.register_annotation(tp)

    def register(self, cls: type) -> None:
        """Allow ``cls`` (a pydantic model, dataclass or Enum) to be encoded and decoded."""
        if cls in self._known:
            return
        if not _is_registrable(cls):
            return
        tag = type_tag(cls)
        other = self._by_tag.get(tag)
        if other is not None and other is not cls:
            raise SerializationError(
                f"two different classes share the tag {tag!r}; rename one of them"
            )
        self._by_tag[tag] = cls
        self._known.add(cls)
        if dataclasses.is_dataclass(cls):
            for field in dataclasses.fields(cls):
                self.register_annotation(field.type)

    def register_annotation(self, tp: Any) -> None:
        """Register every class mentioned in an annotation (unions, generics, nested)."""
        if isinstance(tp, str):
            return
        if isinstance(tp, type) and get_origin(tp) is None:
            self.register(tp)
            if issubclass(tp, BaseModel):
                for field in tp.model_fields.values():
                    self.register_annotation(field.annotation)
            return
        for arg in get_args(tp):
            self.register_annotation(arg)

    def lookup(self, tag: str) -> type:
        """The class of ``tag``, else ``SerializationError`` saying how to register it."""
        cls = self._by_tag.get(tag)
        if cls is None and (stable := _stable_tag(tag)) is not None:
            cls = self._by_tag.get(stable)
            tag = stable
        if cls is None:
            # Types every process knows without a handler declaring them: an agent's streamed
            # AgentResponseUpdate (in AgentRunUpdateEvent.update: Any) is encoded by a worker's
            # registry and decoded by a coordinator's that never saw one.
            cls = _event_classes().get(tag) or self._builtin_classes().get(tag)
            if cls is not None:
                self.register(cls)
                return cls
            raise SerializationError(
                f"cannot decode a value of type {tag!r}: no handler of this workflow declares "
                "it, so it is not in the type registry (annotate a handler or its "
                "WorkflowContext with it)"
            )
        return cls

    @staticmethod
    @functools.cache
    def _builtin_classes() -> dict[str, type]:
        """Core's message, chat and agent payload types and the types their fields name."""
        # Imported here: these modules import the graph package, which imports this one.
        from agentic_core.agents._agent_executor import AgentExecutorResponse
        from agentic_core.protocols._agent import AgentResponseUpdate
        from agentic_core.protocols._chat import ChatResponse, ChatResponseUpdate

        roots = (AgentResponseUpdate, AgentExecutorResponse, ChatResponse, ChatResponseUpdate)
        return dict(TypeRegistry(roots)._by_tag)

    # -- checking -------------------------------------------------------------------------------

    def check(self, value: Any) -> str | None:
        """None when ``value`` can be encoded, else the name of the offending type.

        Classes seen here are registered, so what one executor sends, another can decode.
        """
        cls = type(value)
        if cls in self._known:
            if cls is list or cls is tuple or cls is set or cls is frozenset:
                return next((bad for v in value if (bad := self.check(v))), None)
            if cls is dict:
                return next(
                    (bad for k, v in value.items() if (bad := self.check(k) or self.check(v))),
                    None,
                )
            return None
        if cls in (list, tuple, set, frozenset, dict):
            self._known.add(cls)
            return self.check(value)
        if cls in (bytes, datetime, date, UUID):
            self._known.add(cls)
            return None
        if _is_registrable(cls):
            self.register(cls)
            if _is_dataclass_instance(value):
                for field in dataclasses.fields(value):
                    bad = self.check(getattr(value, field.name))
                    if bad:
                        return bad
            return None
        return cls.__qualname__

    # -- encoding -------------------------------------------------------------------------------

    def encode(self, value: Any) -> Any:
        """``value`` as JSON-able data with type tags."""
        cls = type(value)
        if cls in _SCALARS:
            return value
        # Scalars inside containers are kept without a call: the common case, at every message
        # and checkpoint.
        if cls is list:
            return [v if type(v) in _SCALARS else self.encode(v) for v in value]
        if cls is dict:
            if all(type(k) is str for k in value) and _TAG not in value:
                return {k: v if type(v) in _SCALARS else self.encode(v) for k, v in value.items()}
            return {
                _TAG: "dict",
                _VALUE: [[self.encode(k), self.encode(v)] for k, v in value.items()],
            }
        if isinstance(value, BaseModel):
            # Field by field, so values in Any-typed fields keep their own types too.
            self.register(cls)
            fields = {name: self.encode(getattr(value, name)) for name in cls.model_fields}
            return {_TAG: type_tag(cls), _VALUE: fields}
        if isinstance(value, Enum):
            self.register(cls)
            return {_TAG: type_tag(cls), _VALUE: self.encode(value.value)}
        if _is_dataclass_instance(value):
            self.register(cls)
            fields = {
                f.name: self.encode(getattr(value, f.name)) for f in dataclasses.fields(value)
            }
            return {_TAG: type_tag(cls), _VALUE: fields}
        if cls is tuple:
            return {_TAG: "tuple", _VALUE: [self.encode(v) for v in value]}
        if cls in (set, frozenset):
            return {_TAG: "set", _VALUE: [self.encode(v) for v in value]}
        if cls is bytes:
            return {_TAG: "bytes", _VALUE: base64.b64encode(value).decode()}
        if cls is datetime or cls is date:
            return {_TAG: cls.__name__, _VALUE: value.isoformat()}
        if cls is UUID:
            return {_TAG: "uuid", _VALUE: str(value)}
        if isinstance(value, type):
            self.register(value)
            return {_TAG: "type", _VALUE: _type_name(value)}
        if value is Any or get_origin(value) is not None:
            # A typing construct (list[str], A | B, Any): kept as the plainest class it names.
            origin = get_origin(value)
            plain = origin if isinstance(origin, type) and origin not in _UNIONS else object
            return {_TAG: "type", _VALUE: _type_name(plain)}
        raise SerializationError(
            f"a value of type {cls.__qualname__} cannot be serialized: use pydantic models, "
            "dataclasses, enums, primitives, or lists and dicts of those"
        )

    def decode(self, data: Any) -> Any:
        """The value that ``encode`` turned into ``data``.

        Raises:
            SerializationError: ``data`` is not something ``encode`` makes (a tag of an unknown
                type, a tagged value of the wrong shape), naming what is wrong. Nothing else:
                a tampered message is refused as such, never mistaken for a crash.
        """
        try:
            return self._decode(data)
        except RecursionError:
            raise _malformed("nested too deeply") from None

    def _decode(self, data: Any) -> Any:
        cls = type(data)
        if cls is list:
            return [self._decode(v) for v in data]
        if cls is not dict:
            return data
        if _TAG not in data:
            return {k: self._decode(v) for k, v in data.items()}
        tag, raw = _tagged(data)
        match tag:
            case "dict":
                return self._decode_dict(raw)
            case "tuple":
                return tuple(self._decode(v) for v in _items(tag, raw))
            case "set":
                return _built(tag, set, [self._decode(v) for v in _items(tag, raw)])
            case "bytes":
                return _built(
                    tag, functools.partial(base64.b64decode, validate=True), _text(tag, raw)
                )
            case "datetime":
                return _built(tag, datetime.fromisoformat, _text(tag, raw))
            case "date":
                return _built(tag, date.fromisoformat, _text(tag, raw))
            case "uuid":
                return _built(tag, UUID, _text(tag, raw))
            case "type":
                return self._decode_type(_text(tag, raw))
            case _:
                return self._decode_registered(tag, raw)

    def _decode_dict(self, raw: Any) -> dict[Any, Any]:
        pairs = _items("dict", raw)
        if not all(type(p) is list and len(p) == 2 for p in pairs):
            raise _malformed(f"a 'dict' value must be [key, value] pairs, got {_brief(raw)}")
        items = [(self._decode(k), self._decode(v)) for k, v in pairs]
        return _built("dict", dict, items)

    def _decode_registered(self, tag: str, raw: Any) -> Any:
        cls = self.lookup(tag)
        if issubclass(cls, Enum):
            value = self._decode(raw)
        elif type(raw) is dict:
            value = {k: self._decode(v) for k, v in raw.items()}
        else:
            raise _malformed(f"the fields of a {tag!r} must be an object, got {_brief(raw)}")
        try:
            if issubclass(cls, Enum):
                return cls(value)
            if issubclass(cls, BaseModel):
                return cls.model_validate(value, by_name=True)
            return cls(**value)
        except Exception as exc:  # a user class may refuse the data any way it likes
            raise SerializationError(f"cannot decode a {tag!r}: {exc}") from exc

    def _decode_type(self, name: str) -> type:
        builtin = _NAMED_TYPES.get(name)
        if builtin is not None:
            return builtin
        return self.lookup(name)

    def dumps(self, value: Any) -> str:
        """``value`` encoded as JSON text."""
        return json.dumps(self.encode(value), separators=(",", ":"))

    def loads(self, text: str | bytes) -> Any:
        """The value of JSON text made by ``dumps``."""
        return self.decode(json.loads(text))


_NAMED_TYPES: dict[str, type] = {
    t.__name__: t for t in (str, int, float, bool, list, dict, tuple, bytes, set, type(None))
} | {"Any": object}


def _malformed(what: str) -> SerializationError:
    return SerializationError(f"malformed serialized data: {what}")


def _brief(value: Any) -> str:
    """``repr(value)``, cut short: a message names the bad value, it does not echo a payload."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _tagged(data: dict[str, Any]) -> tuple[str, Any]:
    """The tag and value of a tagged ``{"$t": tag, "v": value}``, checked."""
    tag = data[_TAG]
    if type(tag) is not str:
        raise _malformed(f"a type tag must be a string, got {_brief(tag)}")
    if len(data) != 2 or _VALUE not in data:
        raise _malformed(
            f"a {tag!r} value must have exactly the keys '$t' and 'v', got {_brief(list(data))}"
        )
    return tag, data[_VALUE]


def _items(tag: str, raw: Any) -> list[Any]:
    if type(raw) is not list:
        raise _malformed(f"a {tag!r} value must be a list, got {_brief(raw)}")
    return raw


def _text(tag: str, raw: Any) -> str:
    if type(raw) is not str:
        raise _malformed(f"a {tag!r} value must be a string, got {_brief(raw)}")
    return raw


def _built(tag: str, build: Any, raw: Any) -> Any:
    """``build(raw)``, its ``ValueError`` or ``TypeError`` (unhashable keys) as malformed data."""
    try:
        return build(raw)
    except (ValueError, TypeError) as exc:
        raise _malformed(f"not a valid {tag!r} value ({_brief(raw)}): {exc}") from exc


def _type_name(tp: type) -> str:
    if tp in _NAMED_TYPES.values():
        return "Any" if tp is object else tp.__name__
    return type_tag(tp)


def _event_classes() -> dict[str, type]:
    """Every WorkflowEvent subclass defined in this process, by tag (custom events included)."""
    from agentic_core.protocols._events import WorkflowEvent

    found: dict[str, type] = {}
    stack: list[type] = [WorkflowEvent]
    while stack:
        cls = stack.pop()
        found[type_tag(cls)] = cls
        stack.extend(cls.__subclasses__())
    return found
