"""Whole 0.3 calls: a 0.3 method and params in, 1.0 descriptor and model out, and back."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from jsonrpc_core import InvalidParams, MethodNotFound, RequestType

from .._methods import (
    CANCEL_TASK,
    CREATE_TASK_PUSH_NOTIFICATION_CONFIG,
    DELETE_TASK_PUSH_NOTIFICATION_CONFIG,
    GET_EXTENDED_AGENT_CARD,
    GET_TASK,
    GET_TASK_PUSH_NOTIFICATION_CONFIG,
    LIST_TASK_PUSH_NOTIFICATION_CONFIGS,
    METHODS_V03_TO_V10,
    METHODS_V10,
    SEND_MESSAGE,
    SEND_STREAMING_MESSAGE,
    SUBSCRIBE_TO_TASK,
)
from ..types import A2AModel, ListTaskPushNotificationConfigsResponse, StreamResponse
from ._card import _card_in, card_to_v03
from ._events import (
    _event_in,
    _push_config_in,
    _send_params_in,
    event_to_v03,
    push_config_to_v03,
    send_params_to_v03,
    send_result_to_v03,
)
from ._objects import _drop_none, _task_in, task_to_v03

__all__ = ["params_from_v03", "params_to_v03", "result_from_v03", "result_to_v03"]


# -- the other methods' params -------------------------------------------------------------


def _get_push_params_in(obj: Any) -> Any:
    if not isinstance(obj, Mapping):
        return obj
    # 0.3 allowed omitting the config id; 0.3 servers then use the task id as config id.
    return {"taskId": obj.get("id"), "id": obj.get("pushNotificationConfigId", obj.get("id"))}


def _task_params_out(request: A2AModel) -> dict[str, Any]:
    return _drop_none(
        {
            "id": getattr(request, "id", None),
            "historyLength": getattr(request, "history_length", None),
            "metadata": getattr(request, "metadata", None),
        }
    )


def _push_params_out(request: A2AModel) -> dict[str, Any]:
    return _drop_none(
        {
            "id": getattr(request, "task_id", None),
            "pushNotificationConfigId": getattr(request, "id", None),
        }
    )


def _list_push_result_in(obj: Any) -> Any:
    if isinstance(obj, list):
        return {"configs": [_push_config_in(c) for c in obj]}
    return obj


def _list_push_result_out(result: ListTaskPushNotificationConfigsResponse) -> list[dict[str, Any]]:
    return [push_config_to_v03(c) for c in result.configs]


def _same(obj: Any) -> Any:
    return obj


def _card_result_in(obj: Any) -> Any:
    if isinstance(obj, Mapping) and "supportedInterfaces" not in obj and "url" in obj:
        return _card_in(obj)
    return obj


def _empty_params(obj: Any) -> Any:
    return {} if obj is None else obj


@dataclass(frozen=True)
class _Bridge:
    params_in: Callable[[Any], Any]  # 0.3 params JSON -> 1.0 params JSON
    params_out: Callable[[Any], Any]  # 1.0 params model -> 0.3 params JSON
    result_in: Callable[[Any], Any]  # 0.3 result JSON -> 1.0 result JSON
    result_out: Callable[[Any], Any]  # 1.0 result model -> 0.3 result JSON


# The 0.3 conversions of each method that 0.3 JSON-RPC has (`A2AMethod.v03` set).
_BRIDGES: dict[str, _Bridge] = {
    SEND_MESSAGE.method: _Bridge(
        _send_params_in, send_params_to_v03, _event_in, send_result_to_v03
    ),
    SEND_STREAMING_MESSAGE.method: _Bridge(
        _send_params_in, send_params_to_v03, _event_in, event_to_v03
    ),
    GET_TASK.method: _Bridge(_same, _task_params_out, _task_in, task_to_v03),
    CANCEL_TASK.method: _Bridge(_same, _task_params_out, _task_in, task_to_v03),
    SUBSCRIBE_TO_TASK.method: _Bridge(_same, _task_params_out, _event_in, event_to_v03),
    CREATE_TASK_PUSH_NOTIFICATION_CONFIG.method: _Bridge(
        _push_config_in, push_config_to_v03, _push_config_in, push_config_to_v03
    ),
    GET_TASK_PUSH_NOTIFICATION_CONFIG.method: _Bridge(
        _get_push_params_in, _push_params_out, _push_config_in, push_config_to_v03
    ),
    LIST_TASK_PUSH_NOTIFICATION_CONFIGS.method: _Bridge(
        lambda p: {"taskId": p.get("id")} if isinstance(p, Mapping) else p,
        lambda r: {"id": r.task_id},
        _list_push_result_in,
        _list_push_result_out,
    ),
    DELETE_TASK_PUSH_NOTIFICATION_CONFIG.method: _Bridge(
        _get_push_params_in, _push_params_out, _same, lambda _r: None
    ),
    GET_EXTENDED_AGENT_CARD.method: _Bridge(
        _empty_params, lambda _r: None, _card_result_in, card_to_v03
    ),
}


def params_from_v03(method: str, params: Any) -> tuple[RequestType[Any, Any], Any]:
    """The 1.0 descriptor and validated params model for a 0.3 call.

    Raises `MethodNotFound` for a name 0.3 does not define and `InvalidParams` (naming
    the field) for params that do not fit.
    """
    name = METHODS_V03_TO_V10.get(method)
    if name is None:
        raise MethodNotFound(f"Method not found: {method}")
    descriptor = METHODS_V10[name]
    try:
        converted = _BRIDGES[name].params_in(params)
    except ValueError as exc:
        raise InvalidParams(f"Invalid params: {exc}") from None
    return descriptor, descriptor.validate_params(converted)


def params_to_v03(method: str, params: A2AModel) -> tuple[str, Any]:
    """The 0.3 method name and params JSON for calling 1.0 ``method`` on a 0.3 server."""
    record = METHODS_V10.get(method)
    name = record.v03 if record is not None else None
    if name is None:
        raise MethodNotFound(f"A2A 0.3 has no JSON-RPC method for {method}")
    return name, _BRIDGES[method].params_out(params)


def result_to_v03(method: str, result: Any, *, final: bool | None = None) -> Any:
    """The 0.3 result JSON for a 1.0 result (for streaming methods: one event).

    ``final`` is passed to `event_to_v03` for streamed status updates.
    """
    if METHODS_V10[method].streaming:
        if not isinstance(result, StreamResponse):
            result = StreamResponse.wrap(result)
        return event_to_v03(result, final)
    return _BRIDGES[method].result_out(result)


def result_from_v03(method: str, result: Any) -> Any:
    """The validated 1.0 result model for a 0.3 server's result of 1.0 ``method``.

    Raises `pydantic.ValidationError` (or `ValueError`) when the result does not fit.
    """
    descriptor = METHODS_V10[method]
    return descriptor.validate_result(_BRIDGES[method].result_in(result))
