"""The ``task`` member a task-augmentable request may carry (tasks, 2025-11-25).

A module of its own, re-exported by `._tasks`: ``tools/call`` params are task-augmentable,
so every server needs these two models, and not the rest of the tasks models.
"""

from __future__ import annotations

from ._base import MCPModel, RequestParams

__all__ = ["TaskAugmentedRequestParams", "TaskMetadata"]


class TaskMetadata(MCPModel):
    """Metadata for augmenting a request with task execution."""

    ttl: int | None = None
    """Requested duration in milliseconds to retain the task from creation."""


class TaskAugmentedRequestParams(RequestParams):
    """Common params for any request that may be task-augmented."""

    task: TaskMetadata | None = None
    """If given, the caller asks for task-augmented execution of this request."""
