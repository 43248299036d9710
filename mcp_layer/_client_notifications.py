"""What a server tells the client unasked: its notifications, and in the 2026 era the
``subscriptions/listen`` stream that carries them.

A list-changed or resource-updated notification invalidates the cached results it
concerns before the host's callback hears of it; one that names a subscription
(``_meta``) also goes to that `Subscription`.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio

from jsonrpc_core import LocalError, RequestContext, RequestId

from ._client_era import ClientEra, dump
from ._client_host import run_callback
from ._listen import Subscription
from ._methods import (
    NOTIFICATIONS_PROMPTS_LIST_CHANGED,
    NOTIFICATIONS_RESOURCES_LIST_CHANGED,
    NOTIFICATIONS_RESOURCES_UPDATED,
    NOTIFICATIONS_TASKS,
    NOTIFICATIONS_TOOLS_LIST_CHANGED,
    PROMPTS_LIST,
    RESOURCES_LIST,
    RESOURCES_READ,
    RESOURCES_TEMPLATES_LIST,
    SUBSCRIPTIONS_LISTEN,
    TOOLS_LIST,
)
from .types import (
    SUBSCRIPTION_ID_META_KEY,
    LoggingMessageNotificationParams,
    SubscriptionFilter,
)

__all__ = ["NotificationCallback", "NotificationMethods"]

logger = logging.getLogger("mcp_layer.client")

NotificationCallback = Callable[[Any], Awaitable[None] | None]


class NotificationMethods(ClientEra):
    """`listen`, and the handlers of the server's notifications (log messages, list and
    resource changes, task status in the 2026 era, cancellations)."""

    on_log: NotificationCallback | None
    on_resource_updated: NotificationCallback | None
    on_list_changed: Callable[[str], Awaitable[None] | None] | None
    on_elicitation_complete: NotificationCallback | None
    _subscriptions: dict[RequestId, Subscription]
    """The open ``subscriptions/listen`` streams, by their request id."""

    # -- subscriptions (2026 era) -------------------------------------------------------

    @asynccontextmanager
    async def listen(
        self,
        *,
        tools: bool = False,
        prompts: bool = False,
        resources: bool = False,
        resource_uris: list[str] | None = None,
        task_ids: list[str] | None = None,
        max_buffered: int = 64,
    ) -> AsyncIterator[Subscription]:
        """Open a ``subscriptions/listen`` stream (2026 era) for the changes named.

        Yields a `Subscription` once the server acknowledged it: iterate it for the
        notifications (``(method, params)``); its ``agreed`` filter says what the server
        will send. Leaving the block cancels the subscription.
        """
        if not self.modern:
            raise LocalError("subscriptions/listen exists in 2026-07-28 only")
        wanted = SubscriptionFilter(
            tools_list_changed=tools or None,
            prompts_list_changed=prompts or None,
            resources_list_changed=resources or None,
            resource_subscriptions=resource_uris,
            task_ids=task_ids,
        )
        request_id = self.peer.new_request_id()
        subscription = Subscription(request_id, max_buffered)
        self._subscriptions[request_id] = subscription
        params = {"_meta": self.envelope(), "notifications": dump(wanted)}
        try:
            async with anyio.create_task_group() as task_group:

                async def run() -> None:
                    try:
                        await self.peer.request(
                            SUBSCRIPTIONS_LISTEN.method, params, request_id=request_id, timeout=None
                        )
                        subscription.end(None)
                    except Exception as exc:
                        subscription.end(exc)

                task_group.start_soon(run)
                await subscription.wait_acknowledged()
                try:
                    yield subscription
                finally:
                    task_group.cancel_scope.cancel()
        finally:
            self._subscriptions.pop(request_id, None)

    def _subscription_for(self, params: Any) -> Subscription | None:
        meta = getattr(params, "meta", None)
        if meta is None and isinstance(params, dict):
            meta = params.get("_meta")
        if not isinstance(meta, dict) or SUBSCRIPTION_ID_META_KEY not in meta:
            return None
        return self._subscriptions.get(meta[SUBSCRIPTION_ID_META_KEY])

    def _acknowledged(self, params: Any, ctx: RequestContext) -> None:
        subscription = self._subscription_for(params)
        if subscription is not None:
            subscription.acknowledge(params.notifications)

    async def _deliver(self, method: str, params: Any) -> None:
        subscription = self._subscription_for(params)
        if subscription is not None:
            await subscription.deliver(method, params)

    async def _task_status(self, params: Any, ctx: RequestContext) -> None:
        await self._deliver(NOTIFICATIONS_TASKS.method, params)

    # -- the server's notifications ----------------------------------------------------

    async def _log(self, params: LoggingMessageNotificationParams, ctx: RequestContext) -> None:
        if self.on_log is not None:
            await run_callback(self.on_log, params)
        else:
            logger.info("server log [%s] %s: %s", params.level, params.logger or "-", params.data)

    async def _resource_updated(self, params: Any, ctx: RequestContext) -> None:
        if self.cache is not None:
            self.cache.invalidate(RESOURCES_READ.method, params.uri)
        await self._deliver(NOTIFICATIONS_RESOURCES_UPDATED.method, params)
        if self.on_resource_updated is not None:
            await run_callback(self.on_resource_updated, params)

    async def _elicitation_complete(self, params: Any, ctx: RequestContext) -> None:
        if self.on_elicitation_complete is not None:
            await run_callback(self.on_elicitation_complete, params)

    def _cancelled(self, params: Any, ctx: RequestContext) -> None:
        if params.request_id is not None:
            self.peer.cancel_incoming(params.request_id)

    def _list_changed_handler(self, kind: str) -> Callable[[Any, RequestContext], Awaitable[None]]:
        methods = {
            "tools": (TOOLS_LIST.method, NOTIFICATIONS_TOOLS_LIST_CHANGED.method),
            "resources": (
                RESOURCES_LIST.method,
                NOTIFICATIONS_RESOURCES_LIST_CHANGED.method,
            ),
            "prompts": (PROMPTS_LIST.method, NOTIFICATIONS_PROMPTS_LIST_CHANGED.method),
        }
        list_method, notification = methods[kind]

        async def handle(params: Any, ctx: RequestContext) -> None:
            if self.cache is not None:
                self.cache.invalidate(list_method)
                if kind == "resources":
                    self.cache.invalidate(RESOURCES_TEMPLATES_LIST.method)
            await self._deliver(notification, params)
            if self.on_list_changed is not None:
                await run_callback(self.on_list_changed, kind)

        return handle
