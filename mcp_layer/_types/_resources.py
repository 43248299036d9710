"""Resources: listing, templates, reading, subscriptions and update notifications."""

from __future__ import annotations

from typing import Annotated, Any, TypeAlias

from pydantic import Discriminator, Field, Tag

from ._base import (
    CacheableResult,
    MCPModel,
    NotificationParams,
    PaginatedResult,
    RequestParams,
)
from ._common import Annotations, BaseMetadata, Icon

__all__ = [
    "BlobResourceContents",
    "ListResourceTemplatesResult",
    "ListResourcesResult",
    "ReadResourceRequestParams",
    "ReadResourceResult",
    "Resource",
    "ResourceContents",
    "ResourceContentsBlock",
    "ResourceRequestParams",
    "ResourceTemplate",
    "ResourceUpdatedNotificationParams",
    "SubscribeRequestParams",
    "TextResourceContents",
    "UnsubscribeRequestParams",
]


class Resource(BaseMetadata):
    """A known resource that the server is capable of reading."""

    uri: str
    description: str | None = None
    mime_type: str | None = None
    annotations: Annotations | None = None
    size: int | None = None
    """Size of the raw content in bytes (before base64 encoding), if known."""
    icons: list[Icon] | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class ResourceTemplate(BaseMetadata):
    """A template description for resources available on the server."""

    uri_template: str
    """An RFC 6570 URI template from which resource URIs can be constructed."""
    description: str | None = None
    mime_type: str | None = None
    """The MIME type of every resource matching this template, if they all share one."""
    annotations: Annotations | None = None
    icons: list[Icon] | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class ResourceContents(MCPModel):
    """The contents of a specific resource or sub-resource."""

    uri: str
    mime_type: str | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class TextResourceContents(ResourceContents):
    """Resource contents that can be represented as text."""

    text: str


class BlobResourceContents(ResourceContents):
    """Binary resource contents, base64-encoded."""

    blob: str


def _contents_tag(value: Any) -> str:
    if isinstance(value, dict):
        return "blob" if "blob" in value and "text" not in value else "text"
    return "blob" if isinstance(value, BlobResourceContents) else "text"


ResourceContentsBlock: TypeAlias = Annotated[
    Annotated[TextResourceContents, Tag("text")] | Annotated[BlobResourceContents, Tag("blob")],
    Discriminator(_contents_tag),
]
"""Text or blob contents, told apart by which of ``text``/``blob`` is present."""


class ListResourcesResult(PaginatedResult):
    """The server's response to a ``resources/list`` request."""

    resources: list[Resource]


class ListResourceTemplatesResult(PaginatedResult):
    """The server's response to a ``resources/templates/list`` request."""

    resource_templates: list[ResourceTemplate]


class ResourceRequestParams(RequestParams):
    """Common parameters of requests about one resource."""

    uri: str


class ReadResourceRequestParams(ResourceRequestParams):
    """Parameters for a ``resources/read`` request."""


class ReadResourceResult(CacheableResult):
    """The server's response to a ``resources/read`` request."""

    contents: list[ResourceContentsBlock]


class SubscribeRequestParams(ResourceRequestParams):
    """Parameters for a ``resources/subscribe`` request."""


class UnsubscribeRequestParams(ResourceRequestParams):
    """Parameters for a ``resources/unsubscribe`` request."""


class ResourceUpdatedNotificationParams(NotificationParams):
    """Parameters for ``notifications/resources/updated``."""

    uri: str
    """The URI of the updated resource (possibly a sub-resource of the subscribed one)."""
