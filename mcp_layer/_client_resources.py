"""Resources on the client side: listing, templates, reading (cached in the 2026 era),
and the handshake era's ``resources/subscribe``."""

from __future__ import annotations

from jsonrpc_core import LocalError

from ._client_era import ClientEra
from ._methods import (
    RESOURCES_LIST,
    RESOURCES_READ,
    RESOURCES_SUBSCRIBE,
    RESOURCES_TEMPLATES_LIST,
    RESOURCES_UNSUBSCRIBE,
)
from .types import (
    ListResourcesResult,
    ListResourceTemplatesResult,
    ReadResourceResult,
    Resource,
    ResourceTemplate,
)

__all__ = ["ResourceMethods"]


class ResourceMethods(ClientEra):
    """``resources/list``, ``resources/templates/list``, ``resources/read`` and the
    handshake era's subscriptions (2026 era: `NotificationMethods.listen`)."""

    async def list_resources(self, cursor: str | None = None) -> ListResourcesResult:
        """One page of resources."""
        params = {"cursor": cursor} if cursor else {}
        result: ListResourcesResult = await self._cached(RESOURCES_LIST, cursor or "", params)
        return result

    async def list_all_resources(self) -> list[Resource]:
        """Every resource, following ``nextCursor``."""
        resources: list[Resource] = []
        cursor: str | None = None
        while True:
            page = await self.list_resources(cursor)
            resources.extend(page.resources)
            cursor = page.next_cursor
            if not cursor:
                return resources

    async def list_resource_templates(
        self, cursor: str | None = None
    ) -> ListResourceTemplatesResult:
        """One page of resource templates."""
        params = {"cursor": cursor} if cursor else {}
        result: ListResourceTemplatesResult = await self._cached(
            RESOURCES_TEMPLATES_LIST, cursor or "", params
        )
        return result

    async def list_all_resource_templates(self) -> list[ResourceTemplate]:
        """Every resource template, following ``nextCursor``."""
        templates: list[ResourceTemplate] = []
        cursor: str | None = None
        while True:
            page = await self.list_resource_templates(cursor)
            templates.extend(page.resource_templates)
            cursor = page.next_cursor
            if not cursor:
                return templates

    async def read_resource(self, uri: str, *, timeout: float | None = None) -> ReadResourceResult:
        """Read a resource."""
        cache = self.cache if self.modern else None
        if cache is not None:
            hit = cache.get(RESOURCES_READ.method, uri)
            if hit is not None:
                return hit  # type: ignore[no-any-return]
        result: ReadResourceResult = await self._request(
            RESOURCES_READ, {"uri": uri}, timeout=timeout
        )
        if cache is not None and result.result_type in (None, "complete"):
            cache.put(RESOURCES_READ.method, uri, result)
        return result

    async def subscribe_resource(self, uri: str) -> None:
        """Ask for ``notifications/resources/updated`` about ``uri`` (handshake era;
        in the 2026 era, `listen` with ``resource_uris``)."""
        if self.modern:
            raise LocalError("resources/subscribe does not exist in 2026-07-28: use listen()")
        await self.peer.request(RESOURCES_SUBSCRIBE, {"uri": uri})

    async def unsubscribe_resource(self, uri: str) -> None:
        """Stop updates about ``uri`` (handshake era)."""
        if self.modern:
            raise LocalError("resources/unsubscribe does not exist in 2026-07-28")
        await self.peer.request(RESOURCES_UNSUBSCRIBE, {"uri": uri})
