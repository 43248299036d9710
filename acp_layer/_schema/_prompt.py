"""``session/prompt`` and ``session/cancel``: one prompt turn (docs/prompt-turn.mdx).

The client sends the user's message as content blocks; the agent streams ``session/update``
notifications and finally answers with a `StopReason`. ``session/cancel`` asks the agent to
stop: it must then answer the pending prompt with stop reason ``cancelled``.
"""

from typing import Literal

from ._base import ACPModel, SessionId
from ._content import ContentBlock

__all__ = [
    "CancelNotification",
    "PromptRequest",
    "PromptResponse",
    "StopReason",
]

StopReason = Literal["end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"]
"""Reasons why an agent stops processing a prompt turn."""


class PromptRequest(ACPModel):
    """Request parameters for sending a user prompt to the agent.

    Text and resource links are always allowed; image, audio and embedded resources only
    with the matching `PromptCapabilities`.
    """

    session_id: SessionId
    prompt: list[ContentBlock]


class PromptResponse(ACPModel):
    """Response from processing a user prompt."""

    stop_reason: StopReason


class CancelNotification(ACPModel):
    """Params of ``session/cancel``: cancel ongoing operations for a session."""

    session_id: SessionId
