"""Executors: typed handlers read once from annotations, dispatch by the message's type."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import (
    TYPE_CHECKING,
    Any,
    ClassVar,
    Never,
    get_args,
    get_origin,
    get_type_hints,
    overload,
)

from agentic_core._errors import ExecutorError, GraphValidationError
from agentic_core.graph._typing import (
    Matcher,
    describe,
    is_type_determined,
    matcher_for,
    union_members,
)

if TYPE_CHECKING:
    from agentic_core.graph._context import WorkflowContext
    from agentic_core.graph._retry import RetryPolicy

_HANDLER_MARK = "__agentic_handler__"
_RESPONSE_MARK = "__agentic_response_handler__"


class ExecutorKind(StrEnum):
    """The role of an executor in a graph."""

    WORKER = "worker"
    VALIDATOR = "validator"
    ORCHESTRATOR = "orchestrator"


HandlerFn = Callable[..., Awaitable[Any]]


def handler(fn: HandlerFn) -> HandlerFn:
    """Mark ``async def m(self, message: T, ctx: WorkflowContext[TMessage, TOutput])`` a handler.

    The message annotation decides which messages reach it (isinstance; unions, ``list[T]``,
    pydantic models and ``Any`` work); the context annotation declares what it sends and yields.
    """
    if not inspect.iscoroutinefunction(fn):
        raise TypeError(f"@handler {fn.__qualname__} must be an async def")
    setattr(fn, _HANDLER_MARK, True)
    return fn


def response_handler(fn: HandlerFn) -> HandlerFn:
    """Mark ``async def m(self, request: Req, response: Resp, ctx)`` as the answer handler.

    It receives the answer to a ``ctx.request_info(request, Resp)`` of the same executor.
    """
    if not inspect.iscoroutinefunction(fn):
        raise TypeError(f"@response_handler {fn.__qualname__} must be an async def")
    setattr(fn, _RESPONSE_MARK, True)
    return fn


@dataclass(frozen=True, slots=True)
class HandlerSpec:
    """One resolved handler: what it accepts and what it declares it sends and yields."""

    name: str
    fn: HandlerFn  # unbound: called as fn(self, message, ctx) (class handlers)
    message_type: Any
    accepts: Matcher
    type_determined: bool
    sends: tuple[Any, ...] | None  # None: context not annotated (unknown)
    yields: tuple[Any, ...] | None


@dataclass(frozen=True, slots=True)
class ResponseHandlerSpec:
    """One resolved response handler: the request and response types it takes."""

    name: str
    fn: HandlerFn
    accepts_request: Matcher
    accepts_response: Matcher
    request_type: Any
    response_type: Any
    sends: tuple[Any, ...] | None
    yields: tuple[Any, ...] | None


def _context_types(annotation: Any) -> tuple[tuple[Any, ...] | None, tuple[Any, ...] | None]:
    """(sent types, yielded types) from a ``WorkflowContext[TMessage, TOutput]`` annotation."""
    from agentic_core.graph._context import WorkflowContext

    if annotation is inspect.Parameter.empty:
        return None, None
    origin = get_origin(annotation) or annotation
    if origin is not WorkflowContext:
        raise TypeError(
            f"the context parameter must be annotated WorkflowContext[...], not {annotation!r}"
        )
    args = get_args(annotation)
    sends = () if not args or args[0] is Never else union_members(args[0])
    yields = () if len(args) < 2 or args[1] is Never else union_members(args[1])
    return sends, yields


def _hints(
    fn: Callable[..., Any], owner: str, localns: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    try:
        return get_type_hints(fn, localns=dict(localns) if localns else None)
    except NameError as exc:
        raise GraphValidationError(
            f"cannot resolve the annotations of {owner}.{fn.__name__}: {exc}"
        ) from exc


def resolve_handler(
    fn: HandlerFn, owner: str, *, bound: bool, localns: Mapping[str, Any] | None = None
) -> HandlerSpec:
    """Read a handler's annotations once (``bound``: the function takes ``self`` first)."""
    params = list(inspect.signature(fn).parameters.values())[1 if bound else 0 :]
    if len(params) != 2:
        raise GraphValidationError(
            f"handler {owner}.{fn.__name__} must take (message, ctx), got {len(params)} parameters"
        )
    hints = _hints(fn, owner, localns)
    message_param, ctx_param = params
    if message_param.name not in hints:
        raise GraphValidationError(
            f"handler {owner}.{fn.__name__} needs a type annotation on '{message_param.name}'"
        )
    message_type = hints[message_param.name]
    try:
        sends, yields = _context_types(hints.get(ctx_param.name, inspect.Parameter.empty))
        accepts = matcher_for(message_type)
    except TypeError as exc:
        raise GraphValidationError(f"handler {owner}.{fn.__name__}: {exc}") from exc
    return HandlerSpec(
        fn.__name__, fn, message_type, accepts, is_type_determined(message_type), sends, yields
    )


def resolve_response_handler(
    fn: HandlerFn, owner: str, localns: Mapping[str, Any] | None = None
) -> ResponseHandlerSpec:
    """Read a response handler's annotations once: ``(self, request, response, ctx)``."""
    params = list(inspect.signature(fn).parameters.values())[1:]
    if len(params) != 3:
        raise GraphValidationError(
            f"response handler {owner}.{fn.__name__} must take (request, response, ctx)"
        )
    hints = _hints(fn, owner, localns)
    request_type = hints.get(params[0].name, Any)
    response_type = hints.get(params[1].name, Any)
    try:
        sends, yields = _context_types(hints.get(params[2].name, inspect.Parameter.empty))
        return ResponseHandlerSpec(
            fn.__name__,
            fn,
            matcher_for(request_type),
            matcher_for(response_type),
            request_type,
            response_type,
            sends,
            yields,
        )
    except TypeError as exc:
        raise GraphValidationError(f"response handler {owner}.{fn.__name__}: {exc}") from exc


class Executor:
    """A node of a workflow graph. Subclass it and mark async methods with ``@handler``.

    Example::

        class Upper(Executor):
            @handler
            async def run(self, text: str, ctx: WorkflowContext[str]) -> None:
                await ctx.send_message(text.upper())

    Instances hold configuration only: one executor serves every concurrent run of a workflow.
    State that must live through a run (and its checkpoints) goes through ``snapshot_state`` /
    ``restore_state``: each invocation runs on a copy restored from the run's last snapshot.
    """

    _class_handlers: ClassVar[tuple[HandlerSpec, ...] | None] = None
    _class_response_handlers: ClassVar[tuple[ResponseHandlerSpec, ...] | None] = None
    _localns: ClassVar[dict[str, Any] | None] = None

    id: str
    kind: ExecutorKind
    retry: RetryPolicy | None

    def __init__(
        self,
        id: str,  # noqa: A002 - the API's name
        *,
        kind: ExecutorKind = ExecutorKind.WORKER,
        retry: RetryPolicy | None = None,
    ) -> None:
        if not isinstance(id, str) or not id:  # pyright: ignore[reportUnnecessaryIsInstance]
            raise ValueError(f"an executor id must be a non-empty string, got {id!r}")
        self.id = id
        self.kind = ExecutorKind(kind)
        self.retry = retry
        cls = type(self)
        if cls.__dict__.get("_class_handlers") is None:
            cls._resolve_class_handlers()
        self._handlers: tuple[HandlerSpec, ...] = cls._class_handlers or ()
        self._response_handlers: tuple[ResponseHandlerSpec, ...] = (
            cls._class_response_handlers or ()
        )
        self._bound = True
        self._dispatch_cache: dict[type, HandlerSpec] = {}
        self._direct_handlers: dict[type, Callable[[Any, Any], Awaitable[Any]]] = {}
        """Message type -> the handler as ``f(message, ctx)`` (bound to this instance): the
        engine's direct path calls it without ``_handle``. Never used on a copy (stateful
        executors run on copies and take the full path)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # Names local to the function defining the class (with postponed annotations).
        cls._localns = dict(_caller_locals(2))
        try:
            cls._resolve_class_handlers()
        except GraphValidationError as exc:
            if not isinstance(exc.__cause__, NameError):
                raise
            # A forward reference not defined yet: resolved at the first instantiation instead.
            cls._class_handlers = None

    @classmethod
    def _resolve_class_handlers(cls) -> None:
        """Resolve this class's handlers once (at its first instantiation, when names exist)."""
        handlers: list[HandlerSpec] = []
        responses: list[ResponseHandlerSpec] = []
        seen: set[str] = set()
        for klass in cls.__mro__:
            for name, member in vars(klass).items():
                if name in seen:
                    continue
                seen.add(name)
                if getattr(member, _HANDLER_MARK, False):
                    handlers.append(
                        resolve_handler(member, cls.__qualname__, bound=True, localns=cls._localns)
                    )
                elif getattr(member, _RESPONSE_MARK, False):
                    responses.append(
                        resolve_response_handler(member, cls.__qualname__, cls._localns)
                    )
        cls._class_handlers = tuple(handlers)
        cls._class_response_handlers = tuple(responses)

    # -- what the graph sees ------------------------------------------------------------------

    @property
    def handlers(self) -> tuple[HandlerSpec, ...]:
        """The resolved message handlers, in definition order."""
        return self._handlers

    @property
    def response_handlers(self) -> tuple[ResponseHandlerSpec, ...]:
        """The resolved response handlers."""
        return self._response_handlers

    @property
    def input_types(self) -> tuple[Any, ...]:
        """The message types the handlers accept (from their annotations)."""
        return tuple(spec.message_type for spec in self._handlers)

    @property
    def output_types(self) -> tuple[Any, ...]:
        """The message types the handlers declare they send (``WorkflowContext[TMessage]``)."""
        return _union_of(spec.sends for spec in (*self._handlers, *self._response_handlers))

    @property
    def workflow_output_types(self) -> tuple[Any, ...]:
        """The output types the handlers declare they yield (``WorkflowContext[_, TOutput]``)."""
        return _union_of(spec.yields for spec in (*self._handlers, *self._response_handlers))

    @property
    def is_stateful(self) -> bool:
        """True when the class overrides ``snapshot_state`` (its state is kept per run)."""
        return type(self).snapshot_state is not Executor.snapshot_state

    def snapshot_state(self) -> Any:
        """JSON-able state of this executor for the current run (saved in checkpoints)."""
        return None

    def restore_state(self, state: Any) -> None:
        """Set this executor's state from a ``snapshot_state()`` value."""
        del state

    # -- dispatch -------------------------------------------------------------------------------

    def find_handler(self, message: Any) -> HandlerSpec:
        """The first handler whose annotation accepts ``message``, else ``ExecutorError``."""
        message_type: type[Any] = type(message)  # pyright: ignore[reportUnknownVariableType]
        spec = self._dispatch_cache.get(message_type)
        if spec is not None:
            return spec
        for spec in self._handlers:
            if spec.accepts(message):
                if spec.type_determined:
                    self._dispatch_cache[message_type] = spec
                return spec
        accepted = ", ".join(describe(spec.message_type) for spec in self._handlers) or "nothing"
        raise ExecutorError(
            f"executor '{self.id}' has no handler for a message of type "
            f"{type(message).__qualname__} (its handlers accept: {accepted})",
            executor_id=self.id,
        )

    def _direct_handler(self, message: Any) -> Callable[[Any, Any], Awaitable[Any]]:
        """The handler of ``message`` as ``f(message, ctx)``, cached by type when the type
        decides it (raises ``ExecutorError`` like ``find_handler``)."""
        spec = self.find_handler(message)
        fn = spec.fn.__get__(self) if self._bound else spec.fn
        if spec.type_determined:
            self._direct_handlers[type(message)] = fn  # pyright: ignore[reportUnknownArgumentType]
        return fn

    async def _handle(self, message: Any, ctx: WorkflowContext[Any, Any]) -> None:
        spec = self.find_handler(message)
        if self._bound:
            await spec.fn(self, message, ctx)
        else:
            await spec.fn(message, ctx)

    def find_response_handler(self, request: Any, response: Any) -> ResponseHandlerSpec:
        """The response handler taking (``request``, ``response``), else ``ExecutorError``."""
        for spec in self._response_handlers:
            if spec.accepts_request(request) and spec.accepts_response(response):
                return spec
        raise ExecutorError(
            f"executor '{self.id}' has no @response_handler for request "
            f"{type(request).__qualname__} with response {type(response).__qualname__}",
            executor_id=self.id,
        )

    async def _handle_response(
        self, request_id: str, request: Any, response: Any, ctx: WorkflowContext[Any, Any]
    ) -> None:
        del request_id
        spec = self.find_response_handler(request, response)
        await spec.fn(self, request, response, ctx)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(id={self.id!r}, kind={self.kind.value!r})"


def _caller_locals(depth: int) -> dict[str, Any]:
    """Local names of a calling frame, to resolve annotations of locally defined types."""
    frame = inspect.currentframe()
    for _ in range(depth):
        if frame is None:
            return {}
        frame = frame.f_back
    return dict(frame.f_locals) if frame is not None else {}


def _union_of(groups: Any) -> tuple[Any, ...]:
    out: list[Any] = []
    for group in groups:
        if group is None:
            continue
        for tp in group:
            if tp not in out:
                out.append(tp)
    return tuple(out)


class FunctionExecutor(Executor):
    """An executor around one ``async def f(message: T, ctx: WorkflowContext[...])``."""

    def __init__(
        self,
        fn: HandlerFn,
        *,
        id: str | None = None,  # noqa: A002
        kind: ExecutorKind = ExecutorKind.WORKER,
        retry: RetryPolicy | None = None,
        localns: Mapping[str, Any] | None = None,
    ) -> None:
        if not inspect.iscoroutinefunction(fn):
            raise TypeError(f"@executor {getattr(fn, '__qualname__', fn)!r} must be an async def")
        super().__init__(id or fn.__name__, kind=kind, retry=retry)
        if localns is None:
            localns = _caller_locals(2)
        self._handlers = (resolve_handler(fn, "executor", bound=False, localns=localns),)
        self._bound = False
        self.fn = fn


@overload
def executor(
    fn: HandlerFn,
    /,
    *,
    id: str | None = None,
    kind: ExecutorKind = ExecutorKind.WORKER,
    retry: RetryPolicy | None = None,
) -> FunctionExecutor: ...
@overload
def executor(
    fn: None = None,
    /,
    *,
    id: str | None = None,
    kind: ExecutorKind = ExecutorKind.WORKER,
    retry: RetryPolicy | None = None,
) -> Callable[[HandlerFn], FunctionExecutor]: ...
def executor(
    fn: HandlerFn | None = None,
    /,
    *,
    id: str | None = None,  # noqa: A002
    kind: ExecutorKind = ExecutorKind.WORKER,
    retry: RetryPolicy | None = None,
) -> FunctionExecutor | Callable[[HandlerFn], FunctionExecutor]:
    """Turn ``async def f(message: T, ctx: WorkflowContext[...])`` into an executor.

    Use bare (``@executor``) or with options (``@executor(id="x", kind=...)``); the id defaults
    to the function's name.
    """
    localns = _caller_locals(2)  # names local to the caller
    if fn is not None:
        return FunctionExecutor(fn, id=id, kind=kind, retry=retry, localns=localns)

    def wrap(f: HandlerFn) -> FunctionExecutor:
        return FunctionExecutor(f, id=id, kind=kind, retry=retry, localns=localns)

    return wrap
