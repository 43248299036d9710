"""The benches' dependency-stack table (bench/_harness/_footprint.py) reads memory and CPU
from real fresh interpreters: each step's CPU since launch adds to the step above, and the
note says what the stack leaves of the cold-start target."""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # `bench` is no installed package: it runs from a checkout
    sys.path.insert(0, str(ROOT))

from bench._harness import STACK_STEPS, stack_footprint_section  # noqa: E402


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def test_the_stack_table_has_each_steps_memory_and_cumulative_cpu() -> None:
    lines = "\n".join(stack_footprint_section(1, server_kib=[40_000.0])).splitlines()
    table = [line for line in lines if line.startswith("|")]
    header, body = _cells(table[0]), [_cells(line) for line in table[2:]]
    assert header == [
        "process",
        "VmRSS (median)",
        "added",
        "CPU since launch (median)",
        "added CPU",
    ]
    assert [row[0] for row in body] == [label for label, _ in STACK_STEPS] + [
        "rpcweave server after its first call"
    ]
    cpu_ms = [float(row[3].removesuffix(" ms").replace(",", "")) for row in body[:-1]]
    assert cpu_ms[0] > 0
    assert cpu_ms == sorted(cpu_ms)  # each step's reading includes the steps above
    under = re.search(r"Its CPU leaves ([\d,]+) ms of the 300 ms cold-start target", lines[-1])
    over = re.search(r"Its CPU alone is ([\d,]+) ms over the 300 ms cold-start target", lines[-1])
    assert (under is None) != (over is None)  # one of the two, whichever this machine is
    # Within a millisecond: the table rounds the stack's CPU, the note rounds what is left.
    if under is not None:
        assert abs(int(under.group(1).replace(",", "")) - (300 - cpu_ms[-1])) <= 1
    if over is not None:
        assert abs(int(over.group(1).replace(",", "")) - (cpu_ms[-1] - 300)) <= 1
