"""Methods declared once, as data, and the registry that maps names to handlers.

A descriptor names a method and the types of its params and result::

    ADD = Request("add", AddParams, float)
    registry.on(ADD, add_handler)          # server side: typed params in, result out
    await peer.request(ADD, AddParams(...))  # client side: result validated as float

The same descriptor drives dispatch, typed calls and the layers' capability tables.
Types are validated with a pydantic ``TypeAdapter`` built once per descriptor (for a
model class, with the model's own validator: the same checks and errors).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic

import pydantic
from pydantic_core import SchemaValidator
from typing_extensions import TypeVar

from ._errors import InvalidParams

if TYPE_CHECKING:
    from ._context import RequestContext

__all__ = [
    "Handler",
    "MethodRegistry",
    "NotificationHandler",
    "NotificationType",
    "RequestType",
    "format_validation_error",
]

# Untyped descriptors (``RequestType("name")``) take and give plain JSON values.
P = TypeVar("P", default=Any)
R = TypeVar("R", default=Any)

Handler = Callable[[Any, "RequestContext"], Awaitable[Any] | Any]
NotificationHandler = Callable[[Any, "RequestContext"], Awaitable[None] | None]


_MAX_LOC = 200
_MAX_MSG = 300


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def format_validation_error(exc: pydantic.ValidationError, what: str = "params") -> str:
    """One line naming each offending field, e.g. ``params.b: Input should be a valid number``.

    Field paths and messages are clipped: pydantic quotes some inputs in its messages (a
    discriminator tag, a dict key), and an error must not echo a megabyte-long value.
    """
    parts = []
    for err in exc.errors(include_url=False)[:8]:
        loc = _clip(".".join(str(p) for p in err["loc"]), _MAX_LOC)
        msg = _clip(err["msg"], _MAX_MSG)
        parts.append(f"{what}.{loc}: {msg}" if loc else f"{what}: {msg}")
    return "Invalid params: " + "; ".join(parts)


class _Typed:
    """Lazily built validators for the params and result types of a method."""

    __slots__ = ("_params_validate", "_result_validate", "params_type", "result_type")

    def __init__(self, params_type: Any, result_type: Any) -> None:
        self.params_type = params_type
        self.result_type = result_type
        self._params_validate: Callable[[Any], Any] | None = None
        self._result_validate: Callable[[Any], Any] | None = None

    def validate_params(self, raw: Any) -> Any:
        """Validate received params; raises `InvalidParams` naming the field."""
        if self.params_type is None:
            return raw
        validate = self._params_validate
        if validate is None:
            validate = self._params_validate = _validator_for(self.params_type)
        try:
            return validate({} if raw is None else raw)
        except pydantic.ValidationError as exc:
            raise InvalidParams(format_validation_error(exc)) from None

    def validate_result(self, raw: Any) -> Any:
        """Validate a received result; raises `pydantic.ValidationError` when it does not fit."""
        if self.result_type is None:
            return raw
        validate = self._result_validate
        if validate is None:
            validate = self._result_validate = _validator_for(self.result_type)
        return validate(raw)


def _validator_for(tp: Any) -> Callable[[Any], Any]:
    """``validate_python`` for ``tp``: a model's own validator when it has a complete one
    (the same checks and errors as a TypeAdapter's, one call less), else a TypeAdapter's.
    A model whose build is deferred (``defer_build``) is built here, at first use."""
    if isinstance(tp, type) and issubclass(tp, pydantic.BaseModel):
        if not tp.__pydantic_complete__:
            tp.model_rebuild(raise_errors=False)
        validator = tp.__pydantic_validator__
        if isinstance(validator, SchemaValidator):
            return validator.validate_python
    return pydantic.TypeAdapter(tp).validate_python


class RequestType(_Typed, Generic[P, R]):
    """A request method: its name, params type and result type (``None`` = untyped JSON)."""

    __slots__ = ("method",)

    def __init__(self, method: str, params: type[P] | None = None, result: type[R] | None = None):
        super().__init__(params, result)
        self.method = method

    def __repr__(self) -> str:
        return f"RequestType({self.method!r})"


class NotificationType(_Typed, Generic[P]):
    """A notification method: its name and params type."""

    __slots__ = ("method",)

    def __init__(self, method: str, params: type[P] | None = None):
        super().__init__(params, None)
        self.method = method

    def __repr__(self) -> str:
        return f"NotificationType({self.method!r})"


@dataclass(slots=True)
class _Entry:
    descriptor: _Typed
    handler: Callable[..., Any]
    is_async: bool


@dataclass
class MethodRegistry:
    """Maps method names to handlers; shared by any number of peers.

    ``fallback`` answers methods with no registered handler (it receives the raw
    params and the context, and may raise `MethodNotFound`); ACP uses it for
    ``_``-prefixed extension methods.
    """

    requests: dict[str, _Entry] = field(default_factory=dict)
    notifications: dict[str, _Entry] = field(default_factory=dict)
    fallback: Handler | None = None
    notification_fallback: NotificationHandler | None = None

    def on(
        self,
        descriptor: RequestType[P, R] | NotificationType[P] | str,
        handler: Callable[[P, RequestContext], Awaitable[R] | R],
    ) -> None:
        """Register ``handler`` for a method (a plain name registers an untyped request)."""
        if isinstance(descriptor, str):
            descriptor = RequestType(descriptor)
        entry = _Entry(descriptor, handler, _is_async(handler))
        if isinstance(descriptor, NotificationType):
            self.notifications[descriptor.method] = entry
        else:
            self.requests[descriptor.method] = entry

    def method(
        self, descriptor: RequestType[P, R] | NotificationType[P] | str
    ) -> Callable[[Callable[[P, RequestContext], Any]], Callable[[P, RequestContext], Any]]:
        """Decorator form of `on`."""

        def register(
            func: Callable[[P, RequestContext], Any],
        ) -> Callable[[P, RequestContext], Any]:
            self.on(descriptor, func)
            return func

        return register

    def remove(self, method: str) -> None:
        """Unregister a method of either kind (no error if absent)."""
        self.requests.pop(method, None)
        self.notifications.pop(method, None)


def _is_async(func: Callable[..., Any]) -> bool:
    return inspect.iscoroutinefunction(func) or inspect.iscoroutinefunction(
        getattr(func, "__call__", None)  # noqa: B004 - callable objects with async __call__
    )
