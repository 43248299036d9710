"""The 0.3 gRPC service (package ``a2a.v1``): its ProtoJSON to and from the 0.3 JSON-RPC
shapes, which the ``_compat03`` bridge already turns into 1.0 models and back.

So a 0.3 gRPC call is: protobuf -> ProtoJSON (``MessageToDict``) -> `request_in` ->
``params_from_v03`` -> the same `A2AService` operation -> ``result_to_v03`` ->
`result_out` -> protobuf; a client runs the same steps the other way. Rules:

1. The 0.3 proto differs from 0.3 JSON-RPC in shape only: no ``kind`` discriminators
   (a Part, an event and a send result are told by which member is present), enums are
   ``TASK_STATE_*``/``ROLE_*`` (``TASK_STATE_CANCELLED``, two Ls), a message's parts
   are ``content``, files are ``fileWithUri``/``fileWithBytes``, data parts wrap their
   object once more (``{"data": {"data": ...}}``), tasks and push configs are named by
   resource (``tasks/{id}``, ``tasks/{id}/pushNotificationConfigs/{cid}``).
2. What the 0.3 proto has no field for (part metadata, reference task ids, card
   fields of 1.0) is dropped on the way out.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .._compat03 import params_from_v03, params_to_v03, result_from_v03, result_to_v03
from .._methods import (
    CANCEL_TASK,
    CREATE_TASK_PUSH_NOTIFICATION_CONFIG,
    DELETE_TASK_PUSH_NOTIFICATION_CONFIG,
    GET_EXTENDED_AGENT_CARD,
    GET_TASK,
    GET_TASK_PUSH_NOTIFICATION_CONFIG,
    LIST_TASK_PUSH_NOTIFICATION_CONFIGS,
    SEND_MESSAGE,
    SEND_STREAMING_MESSAGE,
    SUBSCRIBE_TO_TASK,
    A2AMethod,
)
from .._types._base import A2AModel

__all__ = ["answer_out", "params_in", "params_out", "result_in_v10"]

Json = dict[str, Any]

_STATES = {
    "submitted": "TASK_STATE_SUBMITTED",
    "working": "TASK_STATE_WORKING",
    "completed": "TASK_STATE_COMPLETED",
    "failed": "TASK_STATE_FAILED",
    "canceled": "TASK_STATE_CANCELLED",
    "input-required": "TASK_STATE_INPUT_REQUIRED",
    "rejected": "TASK_STATE_REJECTED",
    "auth-required": "TASK_STATE_AUTH_REQUIRED",
    "unknown": "TASK_STATE_UNSPECIFIED",
}
_STATES_IN = {v: k for k, v in _STATES.items()}
_ROLES = {"user": "ROLE_USER", "agent": "ROLE_AGENT"}
_ROLES_IN = {v: k for k, v in _ROLES.items()}
_TASKS = "tasks/"
_CONFIGS = "/pushNotificationConfigs/"


def _some(obj: Mapping[str, Any]) -> Json:
    return {k: v for k, v in obj.items() if v is not None}


def _pick(obj: Mapping[str, Any], *names: str) -> Json:
    return {k: obj[k] for k in names if obj.get(k) is not None}


# -- objects, JSON-RPC 0.3 -> proto 0.3 ------------------------------------------------------


def _part_out(part: Mapping[str, Any]) -> Json:
    kind = part.get("kind")
    if kind == "file":
        file = part.get("file") or {}
        body = (
            {"fileWithBytes": file["bytes"]}
            if "bytes" in file
            else {"fileWithUri": file.get("uri")}
        )
        return {"file": _some({**body, "mimeType": file.get("mimeType")})}
    if kind == "data":
        return {"data": {"data": part.get("data")}}
    return {"text": part.get("text", "")}


def _message_out(message: Mapping[str, Any]) -> Json:
    out = _pick(message, "messageId", "contextId", "taskId", "metadata", "extensions")
    out["role"] = _ROLES.get(message.get("role", ""), "ROLE_UNSPECIFIED")
    out["content"] = [_part_out(p) for p in message.get("parts") or ()]
    return out


def _status_out(status: Mapping[str, Any]) -> Json:
    out = _pick(status, "timestamp")
    out["state"] = _STATES.get(status.get("state", ""), "TASK_STATE_UNSPECIFIED")
    if status.get("message"):
        out["message"] = _message_out(status["message"])
    return out


def _artifact_out(artifact: Mapping[str, Any]) -> Json:
    out = _pick(artifact, "artifactId", "name", "description", "metadata", "extensions")
    out["parts"] = [_part_out(p) for p in artifact.get("parts") or ()]
    return out


def _task_out(task: Mapping[str, Any]) -> Json:
    out = _pick(task, "id", "contextId", "metadata")
    out["status"] = _status_out(task.get("status") or {})
    out["artifacts"] = [_artifact_out(a) for a in task.get("artifacts") or ()]
    out["history"] = [_message_out(m) for m in task.get("history") or ()]
    return out


def _event_out(event: Mapping[str, Any]) -> Json:
    kind = event.get("kind")
    if kind == "message":
        return {"message": _message_out(event)}
    if kind == "status-update":
        body = _pick(event, "taskId", "contextId", "final", "metadata")
        return {"statusUpdate": {**body, "status": _status_out(event.get("status") or {})}}
    if kind == "artifact-update":
        body = _pick(event, "taskId", "contextId", "append", "lastChunk", "metadata")
        return {"artifactUpdate": {**body, "artifact": _artifact_out(event["artifact"])}}
    return {"task": _task_out(event)}


def _push_out(config: Mapping[str, Any]) -> Json:
    pnc = config.get("pushNotificationConfig") or {}
    name = f"{_TASKS}{config.get('taskId', '')}{_CONFIGS}{pnc.get('id', '')}"
    return {"name": name, "pushNotificationConfig": pnc}


def _card_out(card: Mapping[str, Any]) -> Json:
    out = dict(card)
    out.pop("securitySchemes", None)  # a different shape in the 0.3 proto; not carried
    out.pop("security", None)
    out["skills"] = [{**s, "security": None} for s in card.get("skills") or ()]
    out["skills"] = [_some(s) for s in out["skills"]]
    return out


# -- objects, proto 0.3 -> JSON-RPC 0.3 ------------------------------------------------------


def _part_in(part: Mapping[str, Any]) -> Json:
    if "file" in part:
        file = part["file"]
        body = {"bytes": file["fileWithBytes"]} if "fileWithBytes" in file else {}
        if "fileWithUri" in file:
            body = {"uri": file["fileWithUri"]}
        return {"kind": "file", "file": _some({**body, "mimeType": file.get("mimeType")})}
    if "data" in part:
        return {"kind": "data", "data": (part["data"] or {}).get("data", {})}
    return {"kind": "text", "text": part.get("text", "")}


def _message_in(message: Mapping[str, Any]) -> Json:
    out = _pick(message, "messageId", "contextId", "taskId", "metadata", "extensions")
    out.update(kind="message", role=_ROLES_IN.get(message.get("role", ""), "user"))
    out["parts"] = [_part_in(p) for p in message.get("content") or ()]
    return out


def _status_in(status: Mapping[str, Any]) -> Json:
    out = _pick(status, "timestamp")
    out["state"] = _STATES_IN.get(status.get("state", ""), "unknown")
    if status.get("message"):
        out["message"] = _message_in(status["message"])
    return out


def _artifact_in(artifact: Mapping[str, Any]) -> Json:
    out = _pick(artifact, "artifactId", "name", "description", "metadata", "extensions")
    out["parts"] = [_part_in(p) for p in artifact.get("parts") or ()]
    return out


def _task_in(task: Mapping[str, Any]) -> Json:
    out = _pick(task, "id", "contextId", "metadata")
    out.update(kind="task", status=_status_in(task.get("status") or {}))
    out["artifacts"] = [_artifact_in(a) for a in task.get("artifacts") or ()]
    out["history"] = [_message_in(m) for m in task.get("history") or ()]
    return out


def _event_in(event: Mapping[str, Any]) -> Json:
    if "message" in event:
        return _message_in(event["message"])
    if "statusUpdate" in event:
        update = event["statusUpdate"]
        body = _pick(update, "taskId", "contextId", "metadata")
        status = _status_in(update.get("status") or {})
        return {
            **body,
            "kind": "status-update",
            "status": status,
            "final": bool(update.get("final")),
        }
    if "artifactUpdate" in event:
        update = event["artifactUpdate"]
        body = _pick(update, "taskId", "contextId", "append", "lastChunk", "metadata")
        return {**body, "kind": "artifact-update", "artifact": _artifact_in(update["artifact"])}
    return _task_in(event.get("task") or {})


def _ids(name: str) -> tuple[str, str]:
    """(task id, config id) of ``tasks/{id}`` or ``tasks/{id}/pushNotificationConfigs/{cid}``."""
    rest = name[len(_TASKS) :] if name.startswith(_TASKS) else name
    task_id, _, config_id = rest.partition(_CONFIGS)
    return task_id.removesuffix("/pushNotificationConfigs"), config_id


def _push_in(config: Mapping[str, Any]) -> Json:
    task_id, config_id = _ids(config.get("name", ""))
    pnc = dict(config.get("pushNotificationConfig") or {})
    if config_id and not pnc.get("id"):
        pnc["id"] = config_id
    return {"taskId": task_id, "pushNotificationConfig": pnc}


# -- per method: (JSON-RPC 0.3 -> proto, proto -> JSON-RPC 0.3) for params and results ------


def _send_out(params: Mapping[str, Any]) -> Json:
    out = _pick(params, "metadata")
    out["message"] = _message_out(params.get("message") or {})
    config = dict(params.get("configuration") or {})
    if config.get("pushNotificationConfig") is not None:
        config["pushNotification"] = config.pop("pushNotificationConfig")
    if config:
        out["configuration"] = config
    return out


def _send_in(params: Mapping[str, Any]) -> Json:
    out = _pick(params, "metadata")
    out["message"] = _message_in(params.get("message") or {})
    if "configuration" in params:
        config = dict(params["configuration"] or {})
        if config.get("pushNotification") is not None:
            config["pushNotificationConfig"] = config.pop("pushNotification")
        # A sent configuration's blocking is false unless true: proto3 drops the default.
        config.setdefault("blocking", False)
        out["configuration"] = config
    return out


def _named_out(params: Mapping[str, Any]) -> Json:
    return {"name": _TASKS + str(params.get("id", "")), **_pick(params, "historyLength")}


def _named_in(params: Mapping[str, Any]) -> Json:
    return {"id": _ids(params.get("name", ""))[0], **_pick(params, "historyLength")}


def _config_name_out(params: Mapping[str, Any]) -> Json:
    cid = params.get("pushNotificationConfigId", "")
    return {"name": f"{_TASKS}{params.get('id', '')}{_CONFIGS}{cid}"}


def _config_name_in(params: Mapping[str, Any]) -> Json:
    task_id, config_id = _ids(params.get("name", ""))
    return {"id": task_id, "pushNotificationConfigId": config_id or task_id}


def _create_out(params: Mapping[str, Any]) -> Json:
    task_id = params.get("taskId", "")
    config_id = (params.get("pushNotificationConfig") or {}).get("id", "")
    return {"parent": _TASKS + task_id, "configId": config_id, "config": _push_out(params)}


def _create_in(params: Mapping[str, Any]) -> Json:
    config = _push_in(params.get("config") or {})
    config["taskId"] = config["taskId"] or _ids(params.get("parent", ""))[0]
    if params.get("configId") and not config["pushNotificationConfig"].get("id"):
        config["pushNotificationConfig"]["id"] = params["configId"]
    return config


def _send_result_out(result: Any) -> Json:
    event = _event_out(result)
    return event if "message" in event else {"task": event["task"]}


def _same(obj: Any) -> Any:
    return obj


Shape = Callable[[Any], Any]
# 1.0 method -> (params out, params in, result out, result in), JSON-RPC 0.3 <-> proto.
_SHAPES: dict[str, tuple[Shape, Shape, Shape, Shape]] = {
    SEND_MESSAGE.method: (_send_out, _send_in, _send_result_out, _event_in),
    SEND_STREAMING_MESSAGE.method: (_send_out, _send_in, _event_out, _event_in),
    GET_TASK.method: (_named_out, _named_in, _task_out, _task_in),
    CANCEL_TASK.method: (_named_out, _named_in, _task_out, _task_in),
    SUBSCRIBE_TO_TASK.method: (_named_out, _named_in, _event_out, _event_in),
    CREATE_TASK_PUSH_NOTIFICATION_CONFIG.method: (_create_out, _create_in, _push_out, _push_in),
    GET_TASK_PUSH_NOTIFICATION_CONFIG.method: (
        _config_name_out,
        _config_name_in,
        _push_out,
        _push_in,
    ),
    LIST_TASK_PUSH_NOTIFICATION_CONFIGS.method: (
        lambda p: {"parent": _TASKS + str(p.get("id", ""))},
        lambda p: {"id": _ids(p.get("parent", ""))[0]},
        lambda r: {"configs": [_push_out(c) for c in r or ()]},
        lambda r: [_push_in(c) for c in (r or {}).get("configs", ())],
    ),
    DELETE_TASK_PUSH_NOTIFICATION_CONFIG.method: (
        _config_name_out,
        _config_name_in,
        lambda _r: {},
        lambda _r: None,
    ),
    GET_EXTENDED_AGENT_CARD.method: (lambda _p: {}, lambda _p: {}, _card_out, _same),
}


def params_in(record: A2AMethod[Any, Any], wire: Json) -> Any:
    """The validated 1.0 params model of a 0.3 proto request (JSON form)."""
    assert record.v03 is not None  # only methods 0.3 has are in the 0.3 service
    _, model = params_from_v03(record.v03, _SHAPES[record.method][1](wire))
    return model


def answer_out(record: A2AMethod[Any, Any], result: Any) -> Json:
    """The 0.3 proto JSON of a 1.0 result model (one event for streaming methods)."""
    shaped: Json = _SHAPES[record.method][2](result_to_v03(record.method, result))
    return shaped


def params_out(record: A2AMethod[Any, Any], params: A2AModel) -> Json:
    """The 0.3 proto JSON of a 1.0 params model."""
    _, wire = params_to_v03(record.method, params)
    shaped: Json = _SHAPES[record.method][0](wire or {})
    return shaped


def result_in_v10(record: A2AMethod[Any, Any], wire: Json) -> Any:
    """The validated 1.0 result model of a 0.3 proto answer (JSON form)."""
    return result_from_v03(record.method, _SHAPES[record.method][3](wire))
