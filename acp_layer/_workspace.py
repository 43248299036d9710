"""Confining file-system access to a session's workspace.

Rule: a path is accepted only if it is absolute and its *real* location (``..`` collapsed,
every symbolic link followed, for a path that does not exist yet: its deepest existing
ancestor's real location plus the rest) lies inside the real location of one of the roots.
Callers then use the returned real path, never the path they were given, and open it with
`open_confined`, which walks down from the root's descriptor without following any
symbolic link: a directory swapped for a link between the check and the access is refused,
not followed.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Sequence
from pathlib import Path

from jsonrpc_core import InvalidParams

__all__ = ["OutsideWorkspace", "confine", "open_confined"]

# Linux's PATH_MAX: longer paths are refused before any file-system call.
_PATH_MAX = 4096
_DIRECTORY_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


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
    if "\x00" in path:
        raise OutsideWorkspace(f"Invalid params: path contains a NUL byte: {path!r}")
    if len(os.fsencode(path)) >= _PATH_MAX:
        raise OutsideWorkspace(f"Invalid params: path is too long ({len(path)} characters)")
    if not os.path.isabs(path):
        raise OutsideWorkspace(f"Invalid params: path must be absolute: {path!r}")
    real = _real(os.path.normpath(path))
    for root in roots:
        if _inside(real, os.path.realpath(root)):
            return Path(real)
    raise OutsideWorkspace(f"Invalid params: path is outside the session's workspace: {path!r}")


def open_confined(real: Path, roots: Sequence[str], *, shown: str, write: bool) -> int:
    """Open ``real`` (a path `confine` returned) and return the file descriptor.

    The walk starts at the descriptor of the root holding ``real`` and opens one name at a
    time with ``O_NOFOLLOW``, so nothing outside the root is reached even if a directory
    on the way was replaced by a symbolic link after `confine` ran. For a write, missing
    directories are created and the file is created or truncated. The descriptor is opened
    non-blocking (a FIFO does not hang the caller) and returned blocking only if it is a
    regular file; anything else is refused.
    Raises `OutsideWorkspace` when a symbolic link is met, `FileNotFoundError` for a
    missing file or directory on a read, and `InvalidParams` naming ``shown`` for any other
    refusal of the operating system.
    """
    target = str(real)
    for root in roots:
        root_real = os.path.realpath(root)
        if _inside(target, root_real):
            break
    else:
        raise OutsideWorkspace(
            f"Invalid params: path is outside the session's workspace: {shown!r}"
        )
    names = [name for name in os.path.relpath(target, root_real).split(os.sep) if name != "."]
    if not names:
        raise InvalidParams(
            f"Invalid params: {'is a directory' if write else 'not a file'}: {shown!r}"
        )
    final = (os.O_WRONLY | os.O_CREAT | os.O_TRUNC if write else os.O_RDONLY) | os.O_NONBLOCK
    try:
        dir_fd = os.open(root_real, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            for name in names[:-1]:
                try:
                    next_fd = os.open(name, _DIRECTORY_FLAGS, dir_fd=dir_fd)
                except FileNotFoundError:
                    if not write:
                        raise
                    try:
                        os.mkdir(name, dir_fd=dir_fd)
                    except FileExistsError:
                        pass
                    next_fd = os.open(name, _DIRECTORY_FLAGS, dir_fd=dir_fd)
                os.close(dir_fd)
                dir_fd = next_fd
            fd = os.open(names[-1], final | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666, dir_fd=dir_fd)
        finally:
            os.close(dir_fd)
    except FileNotFoundError:
        if write:
            raise InvalidParams(
                f"Invalid params: cannot write {shown!r}: no such directory"
            ) from None
        raise
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise OutsideWorkspace(
                f"Invalid params: {shown!r} leads through a symbolic link that changed"
                " after the workspace check"
            ) from None
        if exc.errno == errno.EISDIR:
            raise InvalidParams(f"Invalid params: is a directory: {shown!r}") from None
        verb = "write" if write else "read"
        raise InvalidParams(
            f"Invalid params: cannot {verb} {shown!r}: {exc.strerror or exc}"
        ) from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise InvalidParams(f"Invalid params: not a file: {shown!r}")
    os.set_blocking(fd, True)
    return fd
