"""``elicitation/create`` and ``elicitation/complete``: the agent asks the user for input.

A request is a form (``mode="form"``, a `ElicitationSchema`) or a URL to open
(``mode="url"``), scoped to a session (``session_id``, optionally ``tool_call_id``) or to a
JSON-RPC request outside a session (``request_id``). Modes and response actions are open
unions as in the schema: unknown ones parse as ``Unknown*`` models that keep the raw data
and must not be treated as a known mode or action.
"""

from typing import TYPE_CHECKING, Literal, TypeAlias

from pydantic import model_validator
from typing_extensions import Self

from ._base import ACPModel, ElicitationId, RequestId, SessionId, ToolCallId
from ._elicitation_schema import ElicitationSchema
from ._lenient import OrDefault, tagged_union

__all__ = [
    "CompleteElicitationNotification",
    "CreateElicitationRequest",
    "CreateElicitationResponse",
    "ElicitationAcceptAction",
    "ElicitationCancelAction",
    "ElicitationContentValue",
    "ElicitationDeclineAction",
    "FormElicitationRequest",
    "UnknownElicitationAction",
    "UnknownElicitationRequest",
    "UrlElicitationRequest",
]

ElicitationContentValue: TypeAlias = str | int | float | bool | list[str]
"""A value in an accepted elicitation's ``content``."""


class _ElicitationRequestFields(ACPModel):
    """``message`` plus the flattened scope (``ElicitationSessionScope`` or ``...RequestScope``)."""

    message: str
    """What input is needed and why."""
    session_id: SessionId | None = None
    tool_call_id: OrDefault[ToolCallId | None] = None
    request_id: RequestId = None

    @model_validator(mode="after")
    def _check_scope(self) -> Self:
        if self.session_id is None and self.request_id is None:
            raise ValueError("an elicitation needs a sessionId or a requestId scope")
        return self


class FormElicitationRequest(_ElicitationRequestFields):
    """Form-based elicitation: the client renders a form from ``requested_schema``."""

    mode: Literal["form"] = "form"
    requested_schema: ElicitationSchema


class UrlElicitationRequest(_ElicitationRequestFields):
    """URL-based elicitation: the client directs the user to ``url`` (after consent)."""

    mode: Literal["url"] = "url"
    elicitation_id: ElicitationId
    url: str


class UnknownElicitationRequest(_ElicitationRequestFields):
    """Custom or future elicitation mode; the raw payload is kept."""

    mode: str


if TYPE_CHECKING:
    CreateElicitationRequest: TypeAlias = (
        FormElicitationRequest | UrlElicitationRequest | UnknownElicitationRequest
    )
else:
    CreateElicitationRequest = tagged_union(
        "mode", FormElicitationRequest, UrlElicitationRequest, unknown=UnknownElicitationRequest
    )
"""Request from the agent to elicit structured user input, told apart by ``mode``."""


class ElicitationAcceptAction(ACPModel):
    """The user accepted the elicitation and provided content (if any)."""

    action: Literal["accept"] = "accept"
    content: dict[str, ElicitationContentValue] | None = None


class ElicitationDeclineAction(ACPModel):
    """The user declined the elicitation."""

    action: Literal["decline"] = "decline"


class ElicitationCancelAction(ACPModel):
    """The elicitation was cancelled (dismissed without a choice)."""

    action: Literal["cancel"] = "cancel"


class UnknownElicitationAction(ACPModel):
    """Custom or future elicitation action; the raw payload is kept."""

    action: str


if TYPE_CHECKING:
    CreateElicitationResponse: TypeAlias = (
        ElicitationAcceptAction
        | ElicitationDeclineAction
        | ElicitationCancelAction
        | UnknownElicitationAction
    )
else:
    CreateElicitationResponse = tagged_union(
        "action",
        ElicitationAcceptAction,
        ElicitationDeclineAction,
        ElicitationCancelAction,
        unknown=UnknownElicitationAction,
    )
"""Response from the client to an elicitation request, told apart by ``action``."""


class CompleteElicitationNotification(ACPModel):
    """Params of ``elicitation/complete``: a URL-based elicitation has finished."""

    elicitation_id: ElicitationId
