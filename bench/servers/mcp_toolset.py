"""The tool set both benchmark servers expose, with no MCP SDK imported.

``echo(text: str) -> str`` is the tool the ``tools/call`` workloads call. ``FILLERS``
are 99 more tools (three shapes, each with a docstring that documents its arguments)
so that ``tools/list`` returns 100 tools from either server.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["FILLERS", "TOOL_COUNT", "echo"]

TOOL_COUNT = 100
"""Tools per server: ``echo`` plus ``TOOL_COUNT - 1`` fillers."""


def echo(text: str) -> str:
    """Return the text unchanged.

    Args:
        text: The text to send back.
    """
    return text


def _search(index: int) -> Callable[..., Any]:
    def tool(query: str, limit: int = 10) -> str:
        """Search a corpus and return the best matches as text.

        Args:
            query: What to look for.
            limit: The largest number of matches to return.
        """
        return f"{index}:{query}:{limit}"

    return tool


def _arithmetic(index: int) -> Callable[..., Any]:
    def tool(a: float, b: float) -> float:
        """Combine two numbers.

        Args:
            a: The first operand.
            b: The second operand.
        """
        return a + b + index

    return tool


def _tally(index: int) -> Callable[..., Any]:
    def tool(items: list[str], case_sensitive: bool = False) -> dict[str, int]:
        """Count how often each item occurs.

        Args:
            items: The items to count.
            case_sensitive: Whether "A" and "a" are different items.
        """
        counts: dict[str, int] = {}
        for item in items:
            key = item if case_sensitive else item.lower()
            counts[key] = counts.get(key, 0) + 1
        return counts

    return tool


def _fillers() -> list[tuple[str, Callable[..., Any]]]:
    makers = (_search, _arithmetic, _tally)
    tools: list[tuple[str, Callable[..., Any]]] = []
    for index in range(TOOL_COUNT - 1):
        func = makers[index % len(makers)](index)
        name = f"{func.__name__}_{index:03d}"
        func.__name__ = func.__qualname__ = name
        tools.append((name, func))
    return tools


FILLERS: list[tuple[str, Callable[..., Any]]] = _fillers()
"""``(name, function)`` for each filler tool, in a fixed order."""
