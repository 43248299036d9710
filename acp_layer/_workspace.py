"""Confining file-system access to a session's workspace.

Rule: a path is accepted only if it is absolute and its *real* location (``..`` collapsed,
every symbolic link followed, for a path that does not exist yet: its deepest existing
ancestor's real location plus the rest) lies inside the real location of one of the roots.
Callers then use the returned real path, never the path they were given, so the check and
the access see the same file.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from jsonrpc_core import InvalidParams

__all__ = ["OutsideWorkspace", "confine"]


class OutsideWorkspace(InvalidParams):
    """-32602: the path is relative, or lies outside the session's workspace."""


def _real(path: str) -> str:
    existing, rest = path, []
    while not os.path.lexists(existing):
        parent, name = os.path.split(existing)
        if parent == existing:
            break
        rest.append(name)
        existing = parent
    return os.path.join(os.path.realpath(existing), *reversed(rest))


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def confine(path: str, roots: Sequence[str]) -> Path:
    """The real location of ``path`` if it lies inside one of ``roots``.

    Raises `OutsideWorkspace` (-32602) for a relative path or one that resolves outside.
    """
    if not os.path.isabs(path):
        raise OutsideWorkspace(f"Invalid params: path must be absolute: {path!r}")
    real = _real(os.path.normpath(path))
    for root in roots:
        if _inside(real, os.path.realpath(root)):
            return Path(real)
    raise OutsideWorkspace(f"Invalid params: path is outside the session's workspace: {path!r}")
