"""Formatting of figures and GitHub-flavoured Markdown tables (no measuring here)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

__all__ = [
    "format_latency",
    "format_mib",
    "format_ms",
    "format_rate",
    "format_ratio",
    "one_line",
    "render_table",
]


def format_rate(rate: float) -> str:
    """Requests per second with thousands separators."""
    return f"{rate:,.0f}" if math.isfinite(rate) else "n/a"


def format_latency(seconds: float) -> str:
    """A latency in microseconds (or milliseconds once it is large)."""
    if not math.isfinite(seconds):
        return "n/a"
    micros = seconds * 1e6
    return f"{micros:,.0f} µs" if micros < 10_000 else f"{micros / 1000:,.1f} ms"


def format_ratio(ratio: float) -> str:
    """A throughput ratio with three decimals (so a near miss does not print as the target)."""
    return f"{ratio:.3f}" if math.isfinite(ratio) else "n/a"


def one_line(exc: BaseException, limit: int = 300) -> str:
    """``exc`` as one table-safe line of at most ``limit`` characters."""
    text = " ".join(str(exc).split()).replace("|", "/")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def format_ms(seconds: float) -> str:
    """Milliseconds, no decimals."""
    return f"{seconds * 1000:,.0f} ms"


def format_mib(kib: float) -> str:
    """KiB as MiB, one decimal."""
    return f"{kib / 1024:,.1f} MiB"


def render_table(
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    *,
    align: Mapping[int, str] | None = None,
) -> str:
    """A GitHub-flavoured Markdown table with padded columns.

    ``align`` maps a column index to ``"l"``, ``"r"`` or ``"c"`` (default left).
    """
    align = align or {}
    width = len(headers)
    for row in rows:
        if len(row) != width:
            raise ValueError(f"row has {len(row)} cells, expected {width}: {row!r}")
    sizes = [max([3, len(h), *(len(row[i]) for row in rows)]) for i, h in enumerate(headers)]

    def line(cells: Sequence[str]) -> str:
        padded = []
        for i, cell in enumerate(cells):
            padded.append(cell.rjust(sizes[i]) if align.get(i) == "r" else cell.ljust(sizes[i]))
        return "| " + " | ".join(padded) + " |"

    rules = []
    for i, size in enumerate(sizes):
        kind = align.get(i, "l")
        if kind == "r":
            rules.append("-" * (size - 1) + ":")
        elif kind == "c":
            rules.append(":" + "-" * (size - 2) + ":")
        else:
            rules.append("-" * size)
    return "\n".join([line(headers), "| " + " | ".join(rules) + " |", *(line(r) for r in rows)])
