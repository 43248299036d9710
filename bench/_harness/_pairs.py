"""The contenders of a benchmark: client → server pairs of implementations, compared by
alternating runs (A, B, A, B, ...), so machine noise that comes and goes hits every
contender alike."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, Protocol, TypeVar

from ._measure import Contender, Sample, Summary, run_alternating, summarize

__all__ = [
    "FLOOR",
    "FLOOR_PAIR",
    "OFFICIAL",
    "OURS",
    "PAIRS",
    "RPCWEAVE",
    "THEIRS",
    "EchoLoad",
    "EchoPlan",
    "Group",
    "Pair",
    "async_contender",
    "compare",
    "compare_groups",
    "compare_pairs",
]

RPCWEAVE = "rpcweave"
OFFICIAL = "official"
FLOOR = "floor"


@dataclass(frozen=True, slots=True)
class Pair:
    """A client implementation talking to a server (or agent) implementation."""

    client: str
    server: str

    @property
    def name(self) -> str:
        """``client → server``, or just ``floor`` for the floor pair."""
        return FLOOR if self.client == FLOOR else f"{self.client} → {self.server}"


OURS = Pair(RPCWEAVE, RPCWEAVE)
THEIRS = Pair(OFFICIAL, OFFICIAL)
FLOOR_PAIR = Pair(FLOOR, FLOOR)
PAIRS = (OURS, THEIRS, Pair(OFFICIAL, RPCWEAVE), Pair(RPCWEAVE, OFFICIAL), FLOOR_PAIR)
"""Ours first, the baseline second, then the cross pairs and the floor."""


def async_contender(name: str, run: Callable[[], Coroutine[Any, Any, Sample]]) -> Contender:
    """A contender whose run is the coroutine ``run()`` on a fresh event loop."""
    return Contender(name, lambda: asyncio.run(run()))


def compare(contenders: Sequence[Contender], runs: int, *, label: str) -> dict[str, Summary]:
    """`run_alternating`, then `summarize` each contender (in the contenders' order)."""
    samples = run_alternating(contenders, runs, label=label)
    return {name: summarize(name, runs) for name, runs in samples.items()}


def compare_pairs(
    pairs: Sequence[Pair],
    run: Callable[[Pair], Coroutine[Any, Any, Sample]],
    runs: int,
    *,
    label: str,
) -> dict[str, Summary]:
    """`compare` the pairs, each run being ``run(pair)`` on a fresh event loop."""
    return compare([async_contender(p.name, partial(run, p)) for p in pairs], runs, label=label)


class Group(Protocol):
    """A row group of a report (a workload, a load): anything with a ``label``."""

    @property
    def label(self) -> str: ...


G = TypeVar("G", bound=Group)


def compare_groups(
    groups: Sequence[G],
    run: Callable[[Pair, G], Coroutine[Any, Any, Sample]],
    runs: int,
    *,
    name: str,
    pairs: Sequence[Pair] = PAIRS,
) -> Iterator[tuple[G, dict[str, Summary]]]:
    """For each group in turn, `compare_pairs` with ``run(pair, group)`` (progress
    labelled ``"<name> <group label>"``) and yield the group and its summaries."""
    for group in groups:
        summaries = compare_pairs(pairs, _bind(run, group), runs, label=f"{name} {group.label}")
        yield group, summaries


def _bind(
    run: Callable[[Pair, G], Coroutine[Any, Any, Sample]], group: G
) -> Callable[[Pair], Coroutine[Any, Any, Sample]]:
    return lambda pair: run(pair, group)


@dataclass(frozen=True, slots=True)
class EchoLoad:
    """For the core echo benches: requests in flight, calls a run times, and the target
    ratio to the floor (``None``: reported, no target)."""

    label: str
    in_flight: int
    calls: int
    target: float | None


@dataclass(frozen=True, slots=True)
class EchoPlan:
    """Everything that differs between a full run and a ``--quick`` smoke run of a core
    echo bench."""

    mode: str
    runs: int
    warmup: int
    loads: tuple[EchoLoad, ...]
