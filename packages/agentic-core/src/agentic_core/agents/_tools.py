"""Function tools: turn a typed Python function into a ``Tool`` a model can call.

The JSON schema of a tool's parameters comes from the function's signature through pydantic;
its description from the docstring. ``invoke`` validates the model's arguments against the same
pydantic model before the function runs, so a bad call becomes a readable ``ToolError``.
"""

from __future__ import annotations

import asyncio
import copy
import functools
import inspect
import re
from collections.abc import Awaitable, Callable, Mapping
from types import CoroutineType
from typing import (
    Annotated,
    Any,
    Generic,
    NamedTuple,
    ParamSpec,
    TypeVar,
    cast,
    get_args,
    get_origin,
    overload,
)

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model
from pydantic.errors import PydanticSchemaGenerationError, PydanticUserError
from pydantic.fields import FieldInfo
from pydantic_core import ErrorDetails

from agentic_core._errors import ToolError
from agentic_core.agents._tool_approval import APPROVAL_MODES
from agentic_core.protocols._tool_approval import ToolApprovalMode

P = ParamSpec("P")
R = TypeVar("R")

# What OpenAI, Anthropic and Gemini all accept as a function name.
_TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_GOOGLE_ARGS_HEADERS = frozenset({"Args:", "Arguments:", "Parameters:", "Params:"})
_GOOGLE_SECTION = re.compile(
    r"^(Args|Arguments|Parameters|Params|Returns?|Yields?|Raises|Examples?|Notes?|"
    r"Attributes|Warnings?|See Also|Todo):\s*$"
)
_DOC_ARG = re.compile(r"^\*{0,2}(?P<name>\w+)\s*(\([^)]*\))?\s*:\s*(?P<text>.*)$")
_MAX_INPUT_REPR = 80


class FunctionTool(Generic[P, R]):
    """A ``Tool`` backed by a Python function (sync or async); build one with ``tool``.

    ``parameters`` is a JSON object schema derived from the signature: one property per
    parameter, ``required`` for those without a default, ``additionalProperties: false``,
    definitions of nested models and enums inlined (only recursive types keep ``$defs``).

    ``invoke`` validates and converts the arguments first (a dict becomes the pydantic model the
    parameter asks for), then calls the function; a sync function runs in a worker thread so the
    event loop is never blocked. Exceptions the function raises propagate unchanged. Calling the
    tool directly calls the function, so decorated functions keep working as before.
    """

    def __init__(
        self,
        fn: Callable[P, R],
        *,
        name: str | None = None,
        description: str | None = None,
        approval_mode: ToolApprovalMode | None = None,
    ) -> None:
        """Describe ``fn`` as a tool; raises ``ToolError`` if it cannot be one.

        Args:
            fn: The function to expose; every parameter must be JSON-describable.
            name: The name the model sees; defaults to the function's ``__name__``.
            description: What the tool does; defaults to the docstring's first paragraph.
            approval_mode: ``"always_require"``: a call waits for a person's approval
                (``ToolApprovalRequest``) before it runs; ``"never_require"``: it runs at
                once. None (the default) leaves it to the agent's ``tool_approval_mode``,
                itself ``"never_require"`` by default.
        """
        functools.update_wrapper(self, fn, updated=())
        self._fn = fn
        self._untyped_fn: Callable[..., Any] = fn  # invoke calls with validated, untyped values
        self._name = _tool_name(fn, name)
        doc = inspect.getdoc(_underlying_function(fn)) or ""
        self._description = description if description is not None else _summary(doc)
        self._is_async = _is_async_callable(fn)
        self._arguments = _ToolArguments.from_function(fn, self._name, _arg_descriptions(doc))
        self._parameters = self._arguments.json_schema()
        self._approval_mode: ToolApprovalMode | None = _checked_approval_mode(
            approval_mode, self._name
        )

    @property
    def name(self) -> str:
        """The name the model calls the tool by."""
        return self._name

    @property
    def description(self) -> str:
        """What the tool does, for the model."""
        return self._description

    @property
    def parameters(self) -> dict[str, Any]:
        """The JSON object schema of the arguments (a fresh copy; safe to change)."""
        return copy.deepcopy(self._parameters)

    @property
    def approval_mode(self) -> ToolApprovalMode | None:
        """Whether calls wait for approval; None: the agent's ``tool_approval_mode`` decides."""
        return self._approval_mode

    @property
    def fn(self) -> Callable[P, R]:
        """The wrapped function."""
        return self._fn

    async def invoke(self, arguments: Mapping[str, Any]) -> Any:
        """Validate ``arguments``, call the function with them and return its result.

        Raises:
            ToolError: an argument is missing, has the wrong type or is not a parameter; the
                message names the tool and every bad argument.
        """
        args, kwargs = self._arguments.validate(arguments)
        result: Any
        if self._is_async:
            result = self._untyped_fn(*args, **kwargs)
        else:
            result = await asyncio.to_thread(self._untyped_fn, *args, **kwargs)
        # A coroutine (an async function's result) is told apart by its type first: the
        # general check costs more.
        is_coroutine = type(result) is CoroutineType
        if is_coroutine or inspect.isawaitable(result):
            return await cast("Awaitable[Any]", result)
        return result

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        """Call the wrapped function directly, bypassing validation."""
        return self._fn(*args, **kwargs)

    def __repr__(self) -> str:
        if self._approval_mode is None:
            return f"FunctionTool(name={self._name!r})"
        return f"FunctionTool(name={self._name!r}, approval_mode={self._approval_mode!r})"


@overload
def tool(
    fn: Callable[P, R],
    *,
    name: str | None = None,
    description: str | None = None,
    approval_mode: ToolApprovalMode | None = None,
) -> FunctionTool[P, R]: ...


@overload
def tool(
    fn: None = None,
    *,
    name: str | None = None,
    description: str | None = None,
    approval_mode: ToolApprovalMode | None = None,
) -> Callable[[Callable[P, R]], FunctionTool[P, R]]: ...


def tool(
    fn: Callable[P, R] | None = None,
    *,
    name: str | None = None,
    description: str | None = None,
    approval_mode: ToolApprovalMode | None = None,
) -> FunctionTool[P, R] | Callable[[Callable[P, R]], FunctionTool[P, R]]:
    """Make a function a tool; use bare (``@tool``) or with options (``@tool(name=...)``).

    The schema comes from the type hints (``Annotated[int, Field(description=...)]`` or
    ``Annotated[str, "a description"]`` describe a parameter, as does a Google-style ``Args:``
    section of the docstring); the description from the docstring's first paragraph.

    Example:
        ```python
        @tool
        async def get_weather(city: str, unit: Literal["c", "f"] = "c") -> str:
            '''Current weather in a city.

            Args:
                city: The city name, e.g. "Paris".
                unit: Temperature unit.
            '''
            ...


        result = await get_weather.invoke({"city": "Paris"})


        @tool(approval_mode="always_require")  # each call waits for a person's approval
        def delete_file(path: str) -> str: ...
        ```

    Raises:
        ToolError: the function cannot be a tool (``*args``/``**kwargs``, a type without a JSON
            schema, an unresolvable annotation, a name providers reject).
    """

    def decorate(function: Callable[P, R]) -> FunctionTool[P, R]:
        return FunctionTool(
            function, name=name, description=description, approval_mode=approval_mode
        )

    return decorate if fn is None else decorate(fn)


class _ToolArguments:
    """The pydantic model of a function's parameters, and how to call the function with it.

    Fields get neutral names (``p0``, ``p1``...) with the parameter name as alias, so that a
    parameter may be called ``json``, ``copy`` or ``_private`` without clashing with pydantic.
    """

    def __init__(
        self,
        tool_name: str,
        model: type[BaseModel],
        parameters: list[inspect.Parameter],
    ) -> None:
        self._tool_name = tool_name
        self._model = model
        self._parameters = parameters
        # How each validated field reaches the function, read once from the signature
        # (inspect.Parameter's attributes are properties, too slow to read on every call).
        self._passing = tuple(
            _Passing(
                field=_field_name(index),
                name=param.name,
                positional=param.kind is inspect.Parameter.POSITIONAL_ONLY,
                required=param.default is inspect.Parameter.empty,
            )
            for index, param in enumerate(parameters)
        )

    @classmethod
    def from_function(
        cls, fn: Callable[..., Any], tool_name: str, doc_descriptions: Mapping[str, str]
    ) -> _ToolArguments:
        parameters = list(_signature(fn, tool_name).parameters.values())
        for param in parameters:
            _check_parameter_kind(param, tool_name)
        fields: dict[str, Any] = {
            _field_name(index): _field_definition(param, doc_descriptions.get(param.name))
            for index, param in enumerate(parameters)
        }
        try:
            model = create_model(
                f"{tool_name}_arguments",
                __config__=ConfigDict(extra="forbid"),
                **fields,
            )
        except (PydanticSchemaGenerationError, PydanticUserError, TypeError) as exc:
            raise ToolError(f"tool {tool_name!r}: cannot validate its parameters: {exc}") from exc
        return cls(tool_name, model, parameters)

    def json_schema(self) -> dict[str, Any]:
        """The provider-ready JSON object schema of the parameters."""
        try:
            raw = self._model.model_json_schema()
        except (PydanticSchemaGenerationError, PydanticUserError) as exc:
            raise ToolError(
                f"tool {self._tool_name!r}: a parameter has no JSON schema: {exc}"
            ) from exc
        return _clean_object_schema(raw)

    def validate(self, arguments: Mapping[str, Any]) -> tuple[list[Any], dict[str, Any]]:
        """Positional and keyword arguments for the function, or ``ToolError``."""
        try:
            validated = self._model.model_validate(dict(arguments))
        except ValidationError as exc:
            raise ToolError(self._describe_errors(exc)) from exc
        args: list[Any] = []
        kwargs: dict[str, Any] = {}
        values = validated.__dict__
        given = validated.model_fields_set
        for passing in self._passing:
            value = values[passing.field]
            if passing.positional:
                args.append(value)
            elif passing.required or passing.field in given:
                # Omitted arguments are left out so the function applies its own defaults.
                kwargs[passing.name] = value
        return args, kwargs

    def _describe_errors(self, error: ValidationError) -> str:
        expected = ", ".join(p.name for p in self._parameters) or "none"
        problems = [_describe_error(e, expected) for e in error.errors(include_url=False)]
        return f"invalid arguments for tool {self._tool_name!r}: " + "; ".join(problems)


class _Passing(NamedTuple):
    """One parameter: its model field, its name, and how the function takes it."""

    field: str
    name: str
    positional: bool
    """Positional-only: passed by position, always (the model has a value for it)."""
    required: bool
    """No default: always passed (validation refuses a call that omits it)."""


def _checked_approval_mode(
    mode: ToolApprovalMode | None, tool_name: str
) -> ToolApprovalMode | None:
    if mode is not None and mode not in APPROVAL_MODES:
        raise ToolError(
            f"tool {tool_name!r}: approval_mode must be 'always_require' or 'never_require', "
            f"got {mode!r}"
        )
    return mode


# -- building the argument model -----------------------------------------------------------------


def _underlying_function(fn: Callable[..., Any]) -> Callable[..., Any]:
    """What a partial or a decorator wraps: its name and docstring describe the tool."""
    target = inspect.unwrap(fn)
    while isinstance(target, functools.partial):
        target = cast("functools.partial[Any]", target).func
    return target


def _tool_name(fn: Callable[..., Any], name: str | None) -> str:
    target = _underlying_function(fn)
    chosen = name if name is not None else getattr(target, "__name__", type(target).__name__)
    if not _TOOL_NAME.fullmatch(chosen):
        raise ToolError(
            f"tool name {chosen!r} is not accepted by model providers: use 1-64 letters, digits, "
            "'_' or '-' (pass name=... to tool())"
        )
    return chosen


def _is_async_callable(fn: Callable[..., Any]) -> bool:
    """Async functions, objects with an async ``__call__``, and wrappers of either."""
    target: object = inspect.unwrap(fn)
    if inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(target):
        return True
    call = getattr(type(target), "__call__", None)  # noqa: B004 - an object with an async __call__
    return inspect.iscoroutinefunction(call)


def _signature(fn: Callable[..., Any], tool_name: str) -> inspect.Signature:
    try:
        return inspect.signature(fn, eval_str=True)
    except NameError as exc:
        raise ToolError(
            f"tool {tool_name!r}: cannot resolve a type annotation ({exc}); define the types it "
            "uses at module level"
        ) from exc
    except (TypeError, ValueError) as exc:
        raise ToolError(f"tool {tool_name!r}: cannot read the signature of {fn!r}: {exc}") from exc


def _check_parameter_kind(param: inspect.Parameter, tool_name: str) -> None:
    if param.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
        raise ToolError(
            f"tool {tool_name!r}: parameter {param} is not supported; a tool needs named, "
            "typed parameters so that it has a JSON schema"
        )
    if param.name in ("self", "cls"):
        raise ToolError(
            f"tool {tool_name!r}: parameter {param.name!r} looks like an unbound method; "
            "make a tool of the bound method instead (tool(instance.method))"
        )


def _field_name(index: int) -> str:
    return f"p{index}"


def _field_definition(param: inspect.Parameter, doc_description: str | None) -> tuple[Any, Any]:
    annotation: Any = Any if param.annotation is inspect.Parameter.empty else param.annotation
    default: Any = ... if param.default is inspect.Parameter.empty else param.default
    options: dict[str, Any] = {"alias": param.name}
    description = _parameter_description(annotation, doc_description)
    if description is not None:
        options["description"] = description
    return annotation, Field(default, **options)


def _parameter_description(annotation: Any, doc_description: str | None) -> str | None:
    """``Field(description=...)`` wins (left to pydantic), then ``Annotated`` text, then docs."""
    if get_origin(annotation) is not Annotated:
        return doc_description
    metadata = get_args(annotation)[1:]
    if any(isinstance(m, FieldInfo) and m.description for m in metadata):
        return None
    texts = [m for m in metadata if isinstance(m, str)]
    return texts[0] if texts else doc_description


# -- docstrings ----------------------------------------------------------------------------------


def _summary(doc: str) -> str:
    """The first paragraph of a docstring, as one line."""
    lines: list[str] = []
    for line in doc.strip().splitlines():
        stripped = line.strip()
        if not stripped or _GOOGLE_SECTION.match(stripped):
            break
        lines.append(stripped)
    return " ".join(lines)


def _arg_descriptions(doc: str) -> dict[str, str]:
    """Parameter descriptions from a Google-style ``Args:`` section (empty if there is none)."""
    lines = doc.splitlines()
    start = next((i for i, line in enumerate(lines) if line.strip() in _GOOGLE_ARGS_HEADERS), None)
    if start is None:
        return {}
    header_indent = _indent(lines[start])
    descriptions: dict[str, list[str]] = {}
    entry_indent: int | None = None
    current: list[str] | None = None
    for line in lines[start + 1 :]:
        if not line.strip():
            continue
        indent = _indent(line)
        if indent <= header_indent:
            break
        if entry_indent is None:
            entry_indent = indent
        match = _DOC_ARG.match(line.strip()) if indent == entry_indent else None
        if match:
            current = descriptions.setdefault(match["name"], [])
            current.append(match["text"].strip())
        elif current is not None and indent > entry_indent:
            current.append(line.strip())
    return {name: " ".join(t for t in texts if t) for name, texts in descriptions.items()}


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


# -- schema cleaning -----------------------------------------------------------------------------

_SCHEMA_MAPS = frozenset({"properties", "patternProperties", "$defs", "definitions"})
_SCHEMA_LISTS = frozenset({"anyOf", "allOf", "oneOf", "prefixItems"})
_SCHEMA_VALUES = frozenset(
    {"items", "additionalProperties", "not", "contains", "propertyNames", "if", "then", "else"}
)
# Dropped: titles are noise to a model; a discriminator's mapping points into removed $defs.
_DROPPED_KEYWORDS = frozenset({"title", "discriminator"})


def _clean_object_schema(raw: dict[str, Any]) -> dict[str, Any]:
    """``{"type": "object", "properties", "required", "additionalProperties": false}``.

    Every ``$ref`` is replaced by its definition, except references to recursive types, which
    cannot be inlined: those stay ``$ref``s into a top-level ``$defs``.
    """
    inliner = _RefInliner(raw.get("$defs", {}))
    properties = {name: inliner.clean(schema) for name, schema in raw.get("properties", {}).items()}
    schema: dict[str, Any] = {
        "type": "object",
        "properties": properties,
        "required": list(raw.get("required", [])),
        "additionalProperties": False,
    }
    kept = inliner.kept_definitions()
    if kept:
        schema["$defs"] = kept
    return schema


class _RefInliner:
    """Cleans schemas: drops titles, inlines ``#/$defs/...`` references to non-recursive types."""

    def __init__(self, definitions: Mapping[str, Any]) -> None:
        self._definitions = definitions
        self._recursive = _recursive_definitions(definitions)
        self._kept: dict[str, Any] = {}
        self._pending: list[str] = []

    def clean(self, node: Any) -> Any:
        """``node`` cleaned; values that are not schemas are returned unchanged."""
        if not isinstance(node, dict):
            return node
        source = cast("dict[str, Any]", node)
        schema = {
            key: self._clean_keyword(key, value)
            for key, value in source.items()
            if key not in _DROPPED_KEYWORDS and key != "$ref"
        }
        ref = source.get("$ref")
        return schema if ref is None else self._resolve(ref, schema)

    def kept_definitions(self) -> dict[str, Any]:
        """The recursive definitions referenced so far (and those they reference), cleaned."""
        while self._pending:
            name = self._pending.pop()
            self._kept[name] = self.clean(self._definitions[name])
        return dict(sorted(self._kept.items()))

    def _clean_keyword(self, key: str, value: Any) -> Any:
        if key in _SCHEMA_MAPS and isinstance(value, dict):
            schemas = cast("dict[str, Any]", value)
            return {name: self.clean(schema) for name, schema in schemas.items()}
        if (key in _SCHEMA_LISTS or key == "items") and isinstance(value, list):
            return [self.clean(schema) for schema in cast("list[Any]", value)]
        if key in _SCHEMA_VALUES:
            return self.clean(value)
        return value

    def _resolve(self, ref: Any, siblings: dict[str, Any]) -> dict[str, Any]:
        name = _definition_name(ref)
        if name is None or name not in self._definitions:
            return {"$ref": ref, **siblings}  # not ours to resolve: leave it as pydantic wrote it
        if name in self._recursive:
            if name not in self._kept and name not in self._pending:
                self._kept[name] = None  # placeholder: cleaned once, in kept_definitions
                self._pending.append(name)
            return {"$ref": ref, **siblings}
        # Keywords beside the $ref (the parameter's description, default) override the type's.
        return {**self.clean(self._definitions[name]), **siblings}


def _definition_name(ref: Any) -> str | None:
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        return ref.removeprefix("#/$defs/")
    return None


def _recursive_definitions(definitions: Mapping[str, Any]) -> frozenset[str]:
    """Names of the definitions that reach themselves through references."""
    references = {name: _references(schema) for name, schema in definitions.items()}

    def reaches_itself(start: str) -> bool:
        seen: set[str] = set()
        todo = list(references[start])
        while todo:
            name = todo.pop()
            if name == start:
                return True
            if name not in seen and name in references:
                seen.add(name)
                todo.extend(references[name])
        return False

    return frozenset(name for name in definitions if reaches_itself(name))


def _references(node: Any) -> set[str]:
    """Every definition name a ``$ref`` anywhere inside ``node`` points to."""
    found: set[str] = set()
    if isinstance(node, list):
        return found.union(*(_references(item) for item in cast("list[Any]", node)))
    if not isinstance(node, dict):
        return found
    source = cast("dict[str, Any]", node)
    found = found.union(*(_references(value) for value in source.values()))
    name = _definition_name(source.get("$ref"))
    return found | {name} if name is not None else found


# -- error messages ------------------------------------------------------------------------------


def _describe_error(error: ErrorDetails, expected: str) -> str:
    where = ".".join(str(part) for part in error["loc"]) or "arguments"
    top_level = len(error["loc"]) == 1
    if error["type"] == "missing":
        return f"{where}: missing required argument" if top_level else f"{where}: field required"
    if error["type"] == "extra_forbidden":
        if top_level:
            return f"{where}: unexpected argument (parameters are: {expected})"
        return f"{where}: unexpected field"
    shown = repr(error["input"])
    if len(shown) > _MAX_INPUT_REPR:
        shown = shown[: _MAX_INPUT_REPR - 3] + "..."
    return f"{where}: {error['msg']} (got {shown})"
