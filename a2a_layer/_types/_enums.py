"""The two A2A 1.0 enums, written as their proto names (ProtoJSON, spec 5.5)."""

from __future__ import annotations

from ._base import LenientEnum

__all__ = ["INTERRUPTED_STATES", "TERMINAL_STATES", "Role", "TaskState"]


class TaskState(LenientEnum):
    """Defines the possible lifecycle states of a `Task`."""

    # Declaration order is the proto number order (LenientEnum reads numbers by index).
    UNSPECIFIED = "TASK_STATE_UNSPECIFIED"
    SUBMITTED = "TASK_STATE_SUBMITTED"
    WORKING = "TASK_STATE_WORKING"
    COMPLETED = "TASK_STATE_COMPLETED"
    FAILED = "TASK_STATE_FAILED"
    CANCELED = "TASK_STATE_CANCELED"
    INPUT_REQUIRED = "TASK_STATE_INPUT_REQUIRED"
    REJECTED = "TASK_STATE_REJECTED"
    AUTH_REQUIRED = "TASK_STATE_AUTH_REQUIRED"

    @classmethod
    def _prefix(cls) -> str:
        return "TASK_STATE_"

    @classmethod
    def _aliases(cls) -> dict[str, str]:
        # 0.3 spellings that the generic rule does not cover.
        return {"unknown": "TASK_STATE_UNSPECIFIED", "cancelled": "TASK_STATE_CANCELED"}

    @property
    def is_terminal(self) -> bool:
        """Completed, failed, canceled or rejected: the task takes no more messages."""
        return self in TERMINAL_STATES

    @property
    def is_interrupted(self) -> bool:
        """Input-required or auth-required: the task waits for the client."""
        return self in INTERRUPTED_STATES


class Role(LenientEnum):
    """Defines the sender of a message in A2A protocol communication."""

    UNSPECIFIED = "ROLE_UNSPECIFIED"
    USER = "ROLE_USER"
    AGENT = "ROLE_AGENT"

    @classmethod
    def _prefix(cls) -> str:
        return "ROLE_"


TERMINAL_STATES = frozenset(
    {TaskState.COMPLETED, TaskState.FAILED, TaskState.CANCELED, TaskState.REJECTED}
)
"""States after which a stream closes and the task accepts no further messages."""

INTERRUPTED_STATES = frozenset({TaskState.INPUT_REQUIRED, TaskState.AUTH_REQUIRED})
"""States in which the task waits for the client (a blocking send returns)."""
