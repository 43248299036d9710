"""0.3 <-> 1.0 for the core objects: enums, parts, messages, artifacts, statuses, tasks."""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any

from ..types import Artifact, Message, Part, Role, Task, TaskState, TaskStatus

__all__ = [
    "artifact_from_v03",
    "artifact_to_v03",
    "message_from_v03",
    "message_to_v03",
    "part_from_v03",
    "part_to_v03",
    "role_to_v03",
    "state_from_v03",
    "state_to_v03",
    "status_from_v03",
    "status_to_v03",
    "task_from_v03",
    "task_to_v03",
]

_COMPAT_FLAG = "data_part_compat"


def _drop_none(obj: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in obj.items() if v is not None}


def _strip(obj: Mapping[str, Any], *names: str) -> dict[str, Any]:
    return {k: v for k, v in obj.items() if k not in names}


# -- enums ---------------------------------------------------------------------------------

_STATE_TO_V03 = {
    TaskState.UNSPECIFIED: "unknown",
    TaskState.SUBMITTED: "submitted",
    TaskState.WORKING: "working",
    TaskState.COMPLETED: "completed",
    TaskState.FAILED: "failed",
    TaskState.CANCELED: "canceled",
    TaskState.INPUT_REQUIRED: "input-required",
    TaskState.REJECTED: "rejected",
    TaskState.AUTH_REQUIRED: "auth-required",
}


def state_from_v03(value: str) -> TaskState:
    """The 1.0 state for a 0.3 state name (``"input-required"`` -> ``INPUT_REQUIRED``)."""
    return TaskState(value)


def state_to_v03(state: TaskState) -> str:
    """The 0.3 name of a state (``UNSPECIFIED`` -> ``"unknown"``)."""
    return _STATE_TO_V03[state]


def role_to_v03(role: Role) -> str:
    """``"user"`` or ``"agent"``; 0.3 has no unspecified role, which is sent as user."""
    return "agent" if role is Role.AGENT else "user"


# -- parts, messages, artifacts ------------------------------------------------------------


def _part_in(obj: Any) -> Any:
    if not isinstance(obj, Mapping):
        return obj
    kind = obj.get("kind")
    if kind is None:  # tolerate a missing discriminator: tell by the members present
        kind = "file" if "file" in obj else "data" if "data" in obj else "text"
    if kind == "text":
        return _drop_none({"text": obj.get("text"), "metadata": obj.get("metadata")})
    if kind == "file":
        file = obj.get("file")
        if not isinstance(file, Mapping):
            return {"file": file}  # no content member: validation reports it
        out: dict[str, Any] = {
            "mediaType": file.get("mimeType"),
            "filename": file.get("name"),
            "metadata": obj.get("metadata"),
        }
        # "fileWithBytes"/"fileWithUri" is how spec 1.0 A.2.1 spells the 0.3 members.
        raw = file.get("bytes", file.get("fileWithBytes"))
        url = file.get("uri", file.get("fileWithUri"))
        if raw is not None:
            out["raw"] = raw
        if url is not None:
            out["url"] = url
        return _drop_none(out)
    if kind == "data":
        data = obj.get("data")
        metadata = obj.get("metadata")
        if isinstance(metadata, Mapping) and metadata.get(_COMPAT_FLAG):
            metadata = _strip(metadata, _COMPAT_FLAG) or None
            if isinstance(data, Mapping):
                data = data.get("value")
        return {"data": data, **_drop_none({"metadata": metadata})}
    raise ValueError(f"unknown 0.3 part kind {kind!r}")


def part_from_v03(obj: Mapping[str, Any]) -> Part:
    """A 1.0 `Part` from a 0.3 text, file or data part."""
    return Part.model_validate(_part_in(obj))


def part_to_v03(part: Part) -> dict[str, Any]:
    """The 0.3 form (``kind`` text/file/data) of ``part``."""
    metadata = part.metadata
    kind = part.kind
    if kind == "text":
        return _drop_none({"kind": "text", "text": part.text, "metadata": metadata})
    if kind in ("raw", "url"):
        file: dict[str, Any] = {"mimeType": part.media_type, "name": part.filename}
        if part.raw is not None:
            file["bytes"] = base64.b64encode(part.raw).decode("ascii")
        else:
            file["uri"] = part.url
        return _drop_none({"kind": "file", "file": _drop_none(file), "metadata": metadata})
    data = part.data
    if not isinstance(data, dict):  # 0.3 data parts hold objects only
        data = {"value": data}
        metadata = {**(metadata or {}), _COMPAT_FLAG: True}
    return _drop_none({"kind": "data", "data": data, "metadata": metadata})


def _parts_in(parts: Any) -> Any:
    return [_part_in(p) for p in parts] if isinstance(parts, list) else parts


def _message_in(obj: Any) -> Any:
    if not isinstance(obj, Mapping):
        return obj
    out = _strip(obj, "kind")
    out["parts"] = _parts_in(obj.get("parts"))
    return out


def message_from_v03(obj: Mapping[str, Any]) -> Message:
    """A 1.0 `Message` from a 0.3 message (``kind: "message"``, role user/agent)."""
    return Message.model_validate(_message_in(obj))


def message_to_v03(message: Message) -> dict[str, Any]:
    """The 0.3 form of ``message``."""
    return _drop_none(
        {
            "kind": "message",
            "messageId": message.message_id,
            "contextId": message.context_id,
            "taskId": message.task_id,
            "role": role_to_v03(message.role),
            "parts": [part_to_v03(p) for p in message.parts],
            "metadata": message.metadata,
            "extensions": message.extensions,
            "referenceTaskIds": message.reference_task_ids,
        }
    )


def _artifact_in(obj: Any) -> Any:
    if not isinstance(obj, Mapping):
        return obj
    return {**obj, "parts": _parts_in(obj.get("parts"))}


def artifact_from_v03(obj: Mapping[str, Any]) -> Artifact:
    """A 1.0 `Artifact` from a 0.3 artifact."""
    return Artifact.model_validate(_artifact_in(obj))


def artifact_to_v03(artifact: Artifact) -> dict[str, Any]:
    """The 0.3 form of ``artifact``."""
    return _drop_none(
        {
            "artifactId": artifact.artifact_id,
            "name": artifact.name,
            "description": artifact.description,
            "parts": [part_to_v03(p) for p in artifact.parts],
            "metadata": artifact.metadata,
            "extensions": artifact.extensions,
        }
    )


# -- status and task -----------------------------------------------------------------------


def _status_in(obj: Any) -> Any:
    if not isinstance(obj, Mapping):
        return obj
    out = dict(obj)
    if "message" in out and out["message"] is not None:
        out["message"] = _message_in(out["message"])
    return out


def status_from_v03(obj: Mapping[str, Any]) -> TaskStatus:
    """A 1.0 `TaskStatus` from a 0.3 status (lowercase state)."""
    return TaskStatus.model_validate(_status_in(obj))


def status_to_v03(status: TaskStatus) -> dict[str, Any]:
    """The 0.3 form of ``status``."""
    return _drop_none(
        {
            "state": state_to_v03(status.state),
            "message": message_to_v03(status.message) if status.message else None,
            "timestamp": _timestamp(status),
        }
    )


def _timestamp(status: TaskStatus) -> str | None:
    dumped = status.model_dump(mode="json", include={"timestamp"}, exclude_none=True)
    return dumped.get("timestamp")


def _task_in(obj: Any) -> Any:
    if not isinstance(obj, Mapping):
        return obj
    out = _strip(obj, "kind")
    out["status"] = _status_in(obj.get("status"))
    if isinstance(obj.get("artifacts"), list):
        out["artifacts"] = [_artifact_in(a) for a in obj["artifacts"]]
    if isinstance(obj.get("history"), list):
        out["history"] = [_message_in(m) for m in obj["history"]]
    return out


def task_from_v03(obj: Mapping[str, Any]) -> Task:
    """A 1.0 `Task` from a 0.3 task (``kind: "task"``)."""
    return Task.model_validate(_task_in(obj))


def task_to_v03(task: Task) -> dict[str, Any]:
    """The 0.3 form of ``task`` (``contextId`` is required in 0.3: ``""`` when unset)."""
    return _drop_none(
        {
            "kind": "task",
            "id": task.id,
            "contextId": task.context_id or "",
            "status": status_to_v03(task.status),
            "artifacts": [artifact_to_v03(a) for a in task.artifacts]
            if task.artifacts is not None
            else None,
            "history": [message_to_v03(m) for m in task.history]
            if task.history is not None
            else None,
            "metadata": task.metadata,
        }
    )
