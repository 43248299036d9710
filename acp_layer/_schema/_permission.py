"""``session/request_permission``: the agent asks the user to authorise a tool call.

The client shows the options and answers with the one the user selected, or with
``cancelled`` when the prompt turn was cancelled first (a client must answer pending
permission requests that way after ``session/cancel``).
"""

from typing import TYPE_CHECKING, Literal, TypeAlias

from ._base import ACPModel, PermissionOptionId, SessionId
from ._lenient import tagged_union
from ._tool_calls import ToolCallUpdate

__all__ = [
    "CancelledPermissionOutcome",
    "PermissionOption",
    "PermissionOptionKind",
    "RequestPermissionOutcome",
    "RequestPermissionRequest",
    "RequestPermissionResponse",
    "SelectedPermissionOutcome",
]

PermissionOptionKind = Literal["allow_once", "allow_always", "reject_once", "reject_always"]
"""The type of permission option being presented to the user (a hint for icons and UI)."""


class PermissionOption(ACPModel):
    """An option presented to the user when requesting permission."""

    option_id: PermissionOptionId
    name: str
    kind: PermissionOptionKind


class RequestPermissionRequest(ACPModel):
    """Request for user permission to execute a tool call."""

    session_id: SessionId
    tool_call: ToolCallUpdate
    options: list[PermissionOption]


class CancelledPermissionOutcome(ACPModel):
    """The prompt turn was cancelled before the user responded."""

    outcome: Literal["cancelled"] = "cancelled"


class SelectedPermissionOutcome(ACPModel):
    """The user selected one of the provided options."""

    outcome: Literal["selected"] = "selected"
    option_id: PermissionOptionId


if TYPE_CHECKING:
    RequestPermissionOutcome: TypeAlias = CancelledPermissionOutcome | SelectedPermissionOutcome
else:
    RequestPermissionOutcome = tagged_union(
        "outcome", CancelledPermissionOutcome, SelectedPermissionOutcome
    )
"""The outcome of a permission request, told apart by ``outcome``."""


class RequestPermissionResponse(ACPModel):
    """Response to a permission request."""

    outcome: RequestPermissionOutcome
