"""Roots: the directories and files the client lets the server operate on."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from ._base import MCPModel, Result

__all__ = ["ListRootsResult", "Root"]


class Root(MCPModel):
    """A root directory or file that the server can operate on."""

    uri: str
    """The URI identifying the root; it must start with ``file://`` for now."""
    name: str | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class ListRootsResult(Result):
    """The client's response to a ``roots/list`` request."""

    roots: list[Root]
