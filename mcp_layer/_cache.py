"""The client's cache of cacheable results (MCP 2026-07-28 caching hints, SEP-2549).

``tools/list``, ``prompts/list``, ``resources/list``, ``resources/templates/list``,
``resources/read`` and ``server/discover`` results say how long they stay fresh
(``ttlMs``) and who may share them (``cacheScope``).

Rules:

1. A result is stored under its method and the parameter that changes it (the cursor of
   a list page, the URI of a read) and served while ``now < received + ttlMs``; a
   missing, zero or negative ``ttlMs`` means not cached at all (older servers send none).
2. The cache belongs to one client, so one authorization context: ``private`` results
   are kept like ``public`` ones.
3. A list-changed notification drops that list's pages (all of them: pages are not
   consistent with each other); ``notifications/resources/updated`` drops that read;
   an invalid cursor drops the list.
4. Results of multi round-trip retries are never stored (they depend on answers that
   are not part of the key): the client only offers final results of first attempts.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio

__all__ = ["ResultCache"]


class ResultCache:
    """Fresh cacheable results by ``(method, key)``; ``clock`` is monotonic seconds."""

    def __init__(self, *, clock: Callable[[], float] | None = None, max_entries: int = 1024):
        self._clock = clock or anyio.current_time
        self._entries: dict[tuple[str, str], tuple[float, Any]] = {}
        self.max_entries = max_entries
        self.hits = 0

    def get(self, method: str, key: str = "") -> Any | None:
        """The stored result if still fresh, else ``None``."""
        entry = self._entries.get((method, key))
        if entry is None:
            return None
        expires, result = entry
        if self._clock() >= expires:
            del self._entries[(method, key)]
            return None
        self.hits += 1
        return result

    def put(self, method: str, key: str, result: Any) -> None:
        """Store ``result`` if it says it may be cached (rule 1)."""
        ttl = getattr(result, "ttl_ms", None)
        if not isinstance(ttl, int) or isinstance(ttl, bool) or ttl <= 0:
            return
        if len(self._entries) >= self.max_entries:
            self._entries.pop(next(iter(self._entries)))
        self._entries[(method, key)] = (self._clock() + ttl / 1000, result)

    def invalidate(self, method: str, key: str | None = None) -> None:
        """Drop ``method``'s entries (only ``key``'s when given)."""
        if key is not None:
            self._entries.pop((method, key), None)
            return
        for entry in [e for e in self._entries if e[0] == method]:
            del self._entries[entry]

    def clear(self) -> None:
        """Drop everything."""
        self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)
