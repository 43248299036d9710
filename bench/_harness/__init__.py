"""Shared benchmark machinery: closed-loop drivers, alternating runs, summaries, Markdown.

Rules this package keeps:

1. Contenders run alternately in one process (A, B, A, B, ...), so machine noise that
   comes and goes hits every contender alike.
2. Every loop is bounded by a count, never by the clock; the clock only measures.
3. Nothing here asserts on time. A target that is missed is reported, not raised.

Its parts: `_measure` (drivers, samples, summaries, CPU per call), `_pairs` (client →
server pairs and their alternating comparison), `_tables` (figures and Markdown tables),
`_report` (result cells, report and notes), `_processes` (server processes, the NDJSON
floor client, bytecode caches) and `_footprint` (cold start, peak RSS, the dependency
stack's memory).
"""

from __future__ import annotations

from ._footprint import (
    COLD_PAIRS,
    COLD_START_TARGET_SECONDS,
    PEAK_RSS_TARGET_KIB,
    STACK_STEPS,
    ColdStart,
    PeakRss,
    cold_start_section,
    peak_rss_kib,
    peak_rss_section,
    stack_footprint_section,
)
from ._measure import (
    Call,
    Contender,
    CpuPerCall,
    Sample,
    Summary,
    measure,
    measure_with_cpu,
    percentile,
    process_cpu_seconds,
    run_alternating,
    summarize,
    verdict,
    warm_up,
)
from ._pairs import (
    FLOOR,
    FLOOR_PAIR,
    OFFICIAL,
    OURS,
    PAIRS,
    RPCWEAVE,
    THEIRS,
    EchoLoad,
    EchoPlan,
    Group,
    Pair,
    async_contender,
    compare,
    compare_groups,
    compare_pairs,
)
from ._processes import (
    REPO_ROOT,
    SERVERS_DIR,
    NdjsonClient,
    bytecode_caches,
    import_seconds,
    listening_process,
    log_tail,
    scratch_log,
)
from ._report import (
    attribution_cells,
    load_average,
    load_note,
    render_attribution,
    render_pair_table,
    render_report,
    run_report,
    summary_cells,
    summary_headers,
    target_cells,
)
from ._tables import (
    format_latency,
    format_mib,
    format_ms,
    format_rate,
    format_ratio,
    one_line,
    render_table,
)

__all__ = [
    "COLD_PAIRS",
    "COLD_START_TARGET_SECONDS",
    "FLOOR",
    "FLOOR_PAIR",
    "OFFICIAL",
    "OURS",
    "PAIRS",
    "PEAK_RSS_TARGET_KIB",
    "REPO_ROOT",
    "RPCWEAVE",
    "SERVERS_DIR",
    "STACK_STEPS",
    "THEIRS",
    "Call",
    "ColdStart",
    "Contender",
    "CpuPerCall",
    "EchoLoad",
    "EchoPlan",
    "Group",
    "NdjsonClient",
    "Pair",
    "PeakRss",
    "Sample",
    "Summary",
    "async_contender",
    "attribution_cells",
    "bytecode_caches",
    "cold_start_section",
    "compare",
    "compare_groups",
    "compare_pairs",
    "format_latency",
    "format_mib",
    "format_ms",
    "format_rate",
    "format_ratio",
    "import_seconds",
    "listening_process",
    "load_average",
    "load_note",
    "log_tail",
    "measure",
    "measure_with_cpu",
    "one_line",
    "peak_rss_kib",
    "peak_rss_section",
    "percentile",
    "process_cpu_seconds",
    "render_attribution",
    "render_pair_table",
    "render_report",
    "render_table",
    "run_alternating",
    "run_report",
    "scratch_log",
    "stack_footprint_section",
    "summarize",
    "summary_cells",
    "summary_headers",
    "target_cells",
    "verdict",
    "warm_up",
]
