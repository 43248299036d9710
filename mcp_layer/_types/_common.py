"""Small objects shared by many features: annotations, icons, names and titles."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ._base import MCPModel, Role

__all__ = ["Annotations", "BaseMetadata", "Icon"]


class Annotations(MCPModel):
    """Optional annotations that inform how the client uses or displays an object."""

    audience: list[Role] | None = None
    """Who the intended audience of this object or data is."""
    priority: float | None = Field(default=None, ge=0, le=1)
    """How important this data is for operating the server: 1 most, 0 least important."""
    last_modified: str | None = None
    """When the resource was last modified, as an ISO 8601 string."""


class Icon(MCPModel):
    """An optionally-sized icon that can be displayed in a user interface."""

    src: str
    """An HTTP/HTTPS URL or a ``data:`` URI pointing to the icon."""
    mime_type: str | None = None
    """MIME type override if the source MIME type is missing or generic."""
    sizes: list[str] | None = None
    """Sizes at which the icon can be used, e.g. ``"48x48"`` or ``"any"``."""
    theme: Literal["light", "dark"] | None = None
    """The background theme this icon is designed for."""


class BaseMetadata(MCPModel):
    """Base of objects with a programmatic ``name`` and a display ``title``."""

    name: str
    """For programmatic use; the display name when no ``title`` is given."""
    title: str | None = None
    """Human-readable display name for UI and end-user contexts."""
