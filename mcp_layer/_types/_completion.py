"""Completion: argument autocompletion for prompts and resource templates."""

from __future__ import annotations

from typing import Annotated, Literal, TypeAlias

from pydantic import Field

from ._base import MCPModel, RequestParams, Result
from ._common import BaseMetadata

__all__ = [
    "CompleteRequestParams",
    "CompleteResult",
    "Completion",
    "CompletionArgument",
    "CompletionContext",
    "CompletionReference",
    "PromptReference",
    "ResourceReference",
    "ResourceTemplateReference",
]


class PromptReference(BaseMetadata):
    """Identifies a prompt."""

    type: Literal["ref/prompt"] = "ref/prompt"


class ResourceTemplateReference(MCPModel):
    """A reference to a resource or resource template definition."""

    type: Literal["ref/resource"] = "ref/resource"
    uri: str
    """The URI or URI template of the resource."""


ResourceReference = ResourceTemplateReference
"""The 2024-11-05 name of `ResourceTemplateReference` (same wire shape)."""

CompletionReference: TypeAlias = Annotated[
    PromptReference | ResourceTemplateReference, Field(discriminator="type")
]
"""What a ``completion/complete`` request completes an argument of."""


class CompletionArgument(MCPModel):
    """The argument being completed: its name and the value typed so far."""

    name: str
    value: str


class CompletionContext(MCPModel):
    """Additional context for completions (since 2025-06-18)."""

    arguments: dict[str, str] | None = None
    """Already-resolved variables of the URI template or prompt."""


class CompleteRequestParams(RequestParams):
    """Parameters for a ``completion/complete`` request."""

    ref: CompletionReference
    argument: CompletionArgument
    context: CompletionContext | None = None


class Completion(MCPModel):
    """Completion values (at most 100) and whether more exist."""

    values: list[str]
    total: int | None = None
    """The total number of options available, which may exceed ``len(values)``."""
    has_more: bool | None = None


class CompleteResult(Result):
    """The server's response to a ``completion/complete`` request."""

    completion: Completion
