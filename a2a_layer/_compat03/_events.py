"""0.3 <-> 1.0 for stream events, send results, push configs and ``message/send`` params."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..types import (
    AuthenticationInfo,
    SendMessageRequest,
    SendMessageResponse,
    StreamResponse,
    TaskPushNotificationConfig,
)
from ._objects import (
    _artifact_in,
    _drop_none,
    _message_in,
    _status_in,
    _strip,
    _task_in,
    artifact_to_v03,
    message_to_v03,
    status_to_v03,
    task_to_v03,
)

__all__ = [
    "event_from_v03",
    "event_to_v03",
    "push_config_from_v03",
    "push_config_to_v03",
    "send_params_from_v03",
    "send_params_to_v03",
    "send_result_from_v03",
    "send_result_to_v03",
]


# -- stream events -------------------------------------------------------------------------


def _event_in(obj: Any) -> Any:
    """A 1.0 StreamResponse dict from a 0.3 streamed result."""
    if not isinstance(obj, Mapping):
        return obj
    kind = obj.get("kind")
    if kind is None:  # no discriminator: tell by the members present
        if "artifact" in obj:
            kind = "artifact-update"
        elif "messageId" in obj:
            kind = "message"
        elif "taskId" in obj and "status" in obj:
            kind = "status-update"
        else:
            kind = "task"
    if kind == "task":
        return {"task": _task_in(obj)}
    if kind == "message":
        return {"message": _message_in(obj)}
    if kind == "status-update":
        return {
            "statusUpdate": {
                **_strip(obj, "kind", "final"),
                "status": _status_in(obj.get("status")),
            }
        }
    if kind == "artifact-update":
        return {
            "artifactUpdate": {**_strip(obj, "kind"), "artifact": _artifact_in(obj.get("artifact"))}
        }
    raise ValueError(f"unknown 0.3 event kind {kind!r}")


def event_from_v03(obj: Mapping[str, Any]) -> StreamResponse:
    """A 1.0 `StreamResponse` from a 0.3 streamed result (task/message/status/artifact)."""
    return StreamResponse.model_validate(_event_in(obj))


def event_to_v03(event: StreamResponse, final: bool | None = None) -> dict[str, Any]:
    """The 0.3 form of a streamed event.

    ``final`` applies to status updates; when not given it is true for terminal and
    interrupted states, where a 1.0 stream closes (spec 3.1.2, 11.7).
    """
    if event.task is not None:
        return task_to_v03(event.task)
    if event.message is not None:
        return message_to_v03(event.message)
    if event.status_update is not None:
        s = event.status_update
        if final is None:
            final = s.status.state.is_terminal or s.status.state.is_interrupted
        return _drop_none(
            {
                "kind": "status-update",
                "taskId": s.task_id,
                "contextId": s.context_id,
                "status": status_to_v03(s.status),
                "final": final,
                "metadata": s.metadata,
            }
        )
    a = event.artifact_update
    assert a is not None  # StreamResponse holds exactly one member
    return _drop_none(
        {
            "kind": "artifact-update",
            "taskId": a.task_id,
            "contextId": a.context_id,
            "artifact": artifact_to_v03(a.artifact),
            "append": a.append,
            "lastChunk": a.last_chunk,
            "metadata": a.metadata,
        }
    )


def send_result_from_v03(obj: Mapping[str, Any]) -> SendMessageResponse:
    """A 1.0 `SendMessageResponse` from a 0.3 ``message/send`` result (Task or Message)."""
    wrapped = _event_in(obj)
    return SendMessageResponse.model_validate(wrapped)


def send_result_to_v03(result: SendMessageResponse) -> dict[str, Any]:
    """The 0.3 ``message/send`` result: the bare Task or Message with its ``kind``."""
    if result.task is not None:
        return task_to_v03(result.task)
    assert result.message is not None
    return message_to_v03(result.message)


# -- push notification configs -------------------------------------------------------------


def _auth_in(auth: Any) -> Any:
    if not isinstance(auth, Mapping) or "scheme" in auth:
        return auth
    schemes = auth.get("schemes")
    scheme = schemes[0] if isinstance(schemes, list) and schemes else ""
    return _drop_none({"scheme": scheme, "credentials": auth.get("credentials")})


def _auth_out(auth: AuthenticationInfo | None) -> dict[str, Any] | None:
    if auth is None:
        return None
    return _drop_none({"schemes": [auth.scheme], "credentials": auth.credentials})


def _pnc_in(pnc: Any, task_id: Any = None) -> Any:
    """1.0 TaskPushNotificationConfig JSON from a 0.3 PushNotificationConfig."""
    if not isinstance(pnc, Mapping):
        return pnc
    out = _strip(pnc, "authentication")
    if pnc.get("authentication") is not None:
        out["authentication"] = _auth_in(pnc["authentication"])
    if task_id is not None:
        out["taskId"] = task_id
    return out


def _pnc_out(config: TaskPushNotificationConfig) -> dict[str, Any]:
    return _drop_none(
        {
            "id": config.id,
            "url": config.url,
            "token": config.token,
            "authentication": _auth_out(config.authentication),
        }
    )


def _push_config_in(obj: Any) -> Any:
    if not isinstance(obj, Mapping) or "pushNotificationConfig" not in obj:
        return obj
    return _pnc_in(obj["pushNotificationConfig"], obj.get("taskId"))


def push_config_from_v03(obj: Mapping[str, Any]) -> TaskPushNotificationConfig:
    """A 1.0 `TaskPushNotificationConfig` from a 0.3 one (``{taskId, pushNotificationConfig}``)."""
    return TaskPushNotificationConfig.model_validate(_push_config_in(obj))


def push_config_to_v03(config: TaskPushNotificationConfig) -> dict[str, Any]:
    """The 0.3 ``TaskPushNotificationConfig``: ``{taskId, pushNotificationConfig}``."""
    return {"taskId": config.task_id or "", "pushNotificationConfig": _pnc_out(config)}


# -- message/send params -------------------------------------------------------------------


def _send_params_in(obj: Any) -> Any:
    if not isinstance(obj, Mapping):
        return obj
    out = dict(obj)
    out["message"] = _message_in(obj.get("message"))
    config = obj.get("configuration")
    if isinstance(config, Mapping):
        cfg = _strip(config, "blocking", "pushNotificationConfig")
        blocking = config.get("blocking")
        if blocking is not None:  # unset: wait, as 0.3 servers did by default
            if not isinstance(blocking, bool):
                raise ValueError("configuration.blocking: Input should be a valid boolean")
            cfg["returnImmediately"] = not blocking
        if config.get("pushNotificationConfig") is not None:
            cfg["taskPushNotificationConfig"] = _pnc_in(config["pushNotificationConfig"])
        out["configuration"] = cfg
    return out


def send_params_from_v03(obj: Mapping[str, Any]) -> SendMessageRequest:
    """A 1.0 `SendMessageRequest` from 0.3 ``message/send`` params (``MessageSendParams``)."""
    return SendMessageRequest.model_validate(_send_params_in(obj))


def send_params_to_v03(request: SendMessageRequest) -> dict[str, Any]:
    """The 0.3 ``MessageSendParams`` for ``request`` (``tenant`` is dropped)."""
    config = request.configuration
    return _drop_none(
        {
            "message": message_to_v03(request.message),
            "configuration": _drop_none(
                {
                    "acceptedOutputModes": config.accepted_output_modes,
                    "historyLength": config.history_length,
                    "blocking": not config.return_immediately,
                    "pushNotificationConfig": _pnc_out(config.task_push_notification_config)
                    if config.task_push_notification_config
                    else None,
                }
            )
            if config is not None
            else None,
            "metadata": request.metadata,
        }
    )
