"""Prompts and completion on the client side, and the two settings a host sends the
server: its log level and a change of its roots."""

from __future__ import annotations

from typing import Any

from ._client_era import ClientEra
from ._methods import (
    COMPLETION_COMPLETE,
    LOGGING_SET_LEVEL,
    NOTIFICATIONS_ROOTS_LIST_CHANGED,
    PROMPTS_GET,
    PROMPTS_LIST,
)
from .types import CompleteResult, GetPromptResult, ListPromptsResult, LoggingLevel, Prompt

__all__ = ["PromptMethods"]


class PromptMethods(ClientEra):
    """``prompts/list``, ``prompts/get``, ``completion/complete``, the log level and
    ``notifications/roots/list_changed``."""

    async def list_prompts(self, cursor: str | None = None) -> ListPromptsResult:
        """One page of prompts."""
        params = {"cursor": cursor} if cursor else {}
        result: ListPromptsResult = await self._cached(PROMPTS_LIST, cursor or "", params)
        return result

    async def list_all_prompts(self) -> list[Prompt]:
        """Every prompt, following ``nextCursor``."""
        prompts: list[Prompt] = []
        cursor: str | None = None
        while True:
            page = await self.list_prompts(cursor)
            prompts.extend(page.prompts)
            cursor = page.next_cursor
            if not cursor:
                return prompts

    async def get_prompt(
        self, name: str, arguments: dict[str, str] | None = None
    ) -> GetPromptResult:
        """Render a prompt."""
        params: dict[str, Any] = {"name": name}
        if arguments:
            params["arguments"] = arguments
        result: GetPromptResult = await self._request(PROMPTS_GET, params)
        return result

    async def complete(
        self,
        ref: dict[str, Any],
        argument: dict[str, str],
        context: dict[str, Any] | None = None,
    ) -> CompleteResult:
        """Ask for completions of an argument of a prompt or resource template."""
        params: dict[str, Any] = {"ref": ref, "argument": argument}
        if context is not None:
            params["context"] = context
        result: CompleteResult = await self._request(COMPLETION_COMPLETE, params)
        return result

    async def set_logging_level(self, level: LoggingLevel) -> None:
        """Ask the server to send log messages of ``level`` and above (2026 era: on
        every later request, through ``_meta``)."""
        self.log_level = level
        if not self.modern:
            await self.peer.request(LOGGING_SET_LEVEL, {"level": level})

    async def send_roots_list_changed(self) -> None:
        """Tell the server our roots changed (handshake era; 2026-07-28 has no such
        notification: the server asks for the roots when it needs them)."""
        if not self.modern:
            await self.peer.notify(NOTIFICATIONS_ROOTS_LIST_CHANGED, {})
