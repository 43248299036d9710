"""`Message` (one unit of communication) and `Artifact` (a task output)."""

from __future__ import annotations

from pydantic import Field

from ._base import A2AModel, Struct
from ._enums import Role
from ._parts import Part

__all__ = ["Artifact", "Message"]


class Message(A2AModel):
    """One unit of communication between client and server.

    For server messages ``context_id`` must be set, and ``task_id`` only if a task was
    created. If a client sets only ``task_id``, the server infers ``context_id`` from it.
    """

    message_id: str
    context_id: str | None = None
    task_id: str | None = None
    role: Role
    # REQUIRED repeated: "At least one part is required" (spec 9.5 example).
    parts: list[Part] = Field(min_length=1)
    metadata: Struct | None = None
    extensions: list[str] | None = None
    reference_task_ids: list[str] | None = None


class Artifact(A2AModel):
    """Artifacts represent task outputs."""

    artifact_id: str
    name: str | None = None
    description: str | None = None
    # "The content of the artifact. Must contain at least one part."
    parts: list[Part] = Field(min_length=1)
    metadata: Struct | None = None
    extensions: list[str] | None = None
