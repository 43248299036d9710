"""Prompts: templates the server offers, listed and fetched with arguments."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from ._base import MCPModel, PaginatedResult, RequestParams, Result, Role
from ._common import BaseMetadata, Icon
from ._content import ContentBlock

__all__ = [
    "GetPromptRequestParams",
    "GetPromptResult",
    "ListPromptsResult",
    "Prompt",
    "PromptArgument",
    "PromptMessage",
]


class PromptArgument(BaseMetadata):
    """Describes an argument that a prompt can accept."""

    description: str | None = None
    required: bool | None = None
    """Whether this argument must be provided."""


class Prompt(BaseMetadata):
    """A prompt or prompt template that the server offers."""

    description: str | None = None
    arguments: list[PromptArgument] | None = None
    icons: list[Icon] | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class ListPromptsResult(PaginatedResult):
    """The server's response to a ``prompts/list`` request."""

    prompts: list[Prompt]


class GetPromptRequestParams(RequestParams):
    """Parameters for a ``prompts/get`` request."""

    name: str
    arguments: dict[str, str] | None = None
    """Arguments to use for templating the prompt."""


class PromptMessage(MCPModel):
    """A message returned as part of a prompt."""

    role: Role
    content: ContentBlock


class GetPromptResult(Result):
    """The server's response to a ``prompts/get`` request."""

    description: str | None = None
    messages: list[PromptMessage]
