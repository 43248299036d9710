"""What the cycle collector would free: for tests that check a path leaves no reference
cycles behind (their objects would otherwise wait for, and cost, the collector's passes)."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["cyclic_garbage"]


@contextmanager
def cyclic_garbage() -> Iterator[list[Any]]:
    """Everything the cycle collector would free, made during the block (the list is
    filled when the block ends)."""
    gc.collect()
    found: list[Any] = []
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        yield found
        gc.collect()
        found.extend(gc.garbage)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
