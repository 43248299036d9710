"""The parts of a benchmark's Markdown report: result cells and tables of pairs, the
"where the time goes" table, the machine-load note, the report itself.

Nothing here asserts on time: a target that is missed is reported, not raised.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

from ._measure import Summary, verdict
from ._pairs import OFFICIAL, OURS, RPCWEAVE, THEIRS, Pair
from ._tables import format_latency, format_rate, format_ratio, render_table

__all__ = [
    "attribution_cells",
    "load_average",
    "load_note",
    "render_attribution",
    "render_pair_table",
    "render_report",
    "run_report",
    "summary_cells",
    "summary_headers",
    "target_cells",
]


def summary_headers(count: str, rate: str) -> list[str]:
    """The headers of `summary_cells`, e.g. ``("calls", "req/s")``."""
    return [f"runs x {count}", f"median {rate}", f"range {rate}", "p50 latency", "p99 latency"]


def summary_cells(summary: Summary) -> list[str]:
    """``runs x calls``, median rate, rate range, p50 and p99 latency of one contender."""
    return [
        f"{summary.runs} x {summary.calls:,}",
        format_rate(summary.median_rate),
        f"{format_rate(summary.min_rate)} - {format_rate(summary.max_rate)}",
        format_latency(summary.p50_latency),
        format_latency(summary.p99_latency),
    ]


def target_cells(pair: Pair, ratio: float, target: float | None) -> list[str]:
    """The ``target`` and ``result`` cells: filled for rpcweave → rpcweave when the row
    group has a target (``≥ <target>x`` and the `verdict` of ``ratio``), else dashes."""
    if pair == OURS and target is not None:
        return [f"≥ {target:g}x", verdict(ratio, target)]
    return ["—", "—"]


def render_pair_table(
    group: str,
    server: str,
    units: tuple[str, str],
    extra: Sequence[str],
    rows: Sequence[Sequence[str]],
) -> str:
    """The results table of client → server pairs: ``group`` (the row group's header),
    ``client → <server>``, `summary_headers` of ``units``, the ``extra`` columns, then
    ``vs official``, ``vs floor``, ``target``, ``result``; all but the first two and the
    last two right-aligned."""
    headers = [
        group,
        f"client → {server}",
        *summary_headers(*units),
        *extra,
        "vs official",
        "vs floor",
        "target",
        "result",
    ]
    return render_table(headers, rows, align={i: "r" for i in range(2, len(headers) - 2)})


def attribution_cells(score: Callable[[Pair], float]) -> list[str]:
    """``score`` (bigger is better) of official → rpcweave, rpcweave → official and
    rpcweave → rpcweave, each ÷ official → official's."""
    base = score(THEIRS)
    return [
        format_ratio(score(Pair(OFFICIAL, RPCWEAVE)) / base),
        format_ratio(score(Pair(RPCWEAVE, OFFICIAL)) / base),
        format_ratio(score(OURS) / base),
    ]


def render_attribution(row_header: str, rows: Sequence[Sequence[str]], *, server: str) -> str:
    """The "where the time goes" table: a row label, then `attribution_cells`."""
    return render_table(
        [
            row_header,
            f"rpcweave {server} only (official → rpcweave)",
            "rpcweave client only (rpcweave → official)",
            "both (rpcweave → rpcweave)",
        ],
        rows,
        align={1: "r", 2: "r", 3: "r"},
    )


def load_average() -> str:
    """The machine's 1- and 5-minute load averages, for the notes."""
    try:
        one, five, _ = os.getloadavg()
    except OSError:
        return "n/a"
    return f"{one:.1f} (1 min) / {five:.1f} (5 min)"


def load_note(before: str, after: str, *, server: str = "server", when: str = "") -> str:
    """The note on machine load (`load_average` before and after the runs); ``when``
    goes after "before / after" (e.g. ``" the run"``)."""
    return (
        f"Machine load average before / after{when}: {before}; {after} "
        f"({os.cpu_count()} CPUs). Client and {server} share these CPUs, so other work on "
        "the machine moves the absolute figures; alternating runs keep the ratios fair."
    )


def render_report(name: str, title: str, sections: Sequence[str], notes: Sequence[str]) -> str:
    """A benchmark's Markdown: heading, ``sections`` (lines), then ``notes`` as a list."""
    bullets = [f"- {note}" for note in notes]
    return "\n".join([f"## {name}: {title}", "", *sections, "", "### Notes", "", *bullets])


def run_report(
    name: str,
    title: str,
    sections: Callable[[], Sequence[str]],
    notes: Callable[[str, str], Sequence[str]],
) -> str:
    """Build ``sections()`` (the runs), then `render_report` with ``notes(load before,
    load after)``, the `load_average` read just before and just after the sections."""
    before = load_average()
    lines = sections()
    return render_report(name, title, lines, notes(before, load_average()))
