"""Push notification configuration and its Create/Get/List/Delete messages."""

from __future__ import annotations

from typing import Any

from pydantic import Field, model_validator

from ._base import A2AModel, Int32

__all__ = [
    "AuthenticationInfo",
    "DeleteTaskPushNotificationConfigRequest",
    "Empty",
    "GetTaskPushNotificationConfigRequest",
    "ListTaskPushNotificationConfigsRequest",
    "ListTaskPushNotificationConfigsResponse",
    "TaskPushNotificationConfig",
]


class AuthenticationInfo(A2AModel):
    """Authentication details for push notifications: an HTTP auth scheme and credentials.

    The agent sends ``Authorization: {scheme} {credentials}`` with each notification.
    """

    scheme: str
    credentials: str | None = None


class TaskPushNotificationConfig(A2AModel):
    """A push notification configuration associated with a specific task.

    Also the params and result of CreateTaskPushNotificationConfig. Inside
    ``SendMessageConfiguration`` the ``task_id`` should be left empty.
    """

    tenant: str | None = None
    id: str | None = None
    task_id: str | None = None
    url: str
    token: str | None = None
    authentication: AuthenticationInfo | None = None


class GetTaskPushNotificationConfigRequest(A2AModel):
    """Represents a request for the `GetTaskPushNotificationConfig` method."""

    tenant: str | None = None
    task_id: str
    id: str


class DeleteTaskPushNotificationConfigRequest(A2AModel):
    """Represents a request for the `DeleteTaskPushNotificationConfig` method."""

    tenant: str | None = None
    task_id: str
    id: str


class ListTaskPushNotificationConfigsRequest(A2AModel):
    """Represents a request for the `ListTaskPushNotificationConfigs` method."""

    tenant: str | None = None
    task_id: str
    page_size: Int32 | None = Field(default=None, ge=0)
    page_token: str | None = None


class ListTaskPushNotificationConfigsResponse(A2AModel):
    """The response of `ListTaskPushNotificationConfigs`: configs and a next-page token."""

    configs: list[TaskPushNotificationConfig] = Field(default_factory=list)
    next_page_token: str | None = None


class Empty(A2AModel):
    """``google.protobuf.Empty``: ``{}`` on the wire (DeleteTaskPushNotificationConfig).

    Reading also accepts ``null``, which 0.3 servers return for a delete.
    """

    @model_validator(mode="before")
    @classmethod
    def _null_is_empty(cls, value: Any) -> Any:
        return {} if value is None else value
