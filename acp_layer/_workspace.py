"""Confining file-system access to a session's workspace.

Rules:

1. A path is accepted only if it is absolute and its *real* location (``..`` collapsed,
   every symbolic link followed, for a path that does not exist yet: its deepest existing
   ancestor's real location plus the rest) lies inside the real location of one of the
   roots. Callers then use the returned real path, never the path they were given, and
   reach it by walking down from the root's descriptor one name at a time with
   ``O_NOFOLLOW``: a directory swapped for a link between the check and the access is
   refused, not followed.
2. Only a regular file with no other hard link (``st_nlink == 1``, from ``fstat`` of the
   descriptor the walk opened) is read or replaced: a hard link is a name inside the
   workspace for an inode that may also live outside it, and no path check can tell.
3. A write never opens the existing file for writing: the data go to a new temporary file
   in the same directory (``O_EXCL``, so nothing planted there is reused), renamed over
   the name. An inode shared with anything else is never truncated, a reader never sees
   half a file, and the temporary file is removed on any failure. The new file keeps the
   old one's permission bits (not its owner, ACLs or extended attributes), and a file we
   may not write stays refused.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Sequence
from pathlib import Path

from jsonrpc_core import InvalidParams

__all__ = ["OutsideWorkspace", "confine", "open_confined", "write_confined"]

# Linux's PATH_MAX: longer paths are refused before any file-system call.
_PATH_MAX = 4096
_DIRECTORY_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# Opens the name itself, without reading it, blocking on a FIFO or following a link (Linux's
# O_PATH; elsewhere a non-blocking read-only open).
_PROBE_FLAGS = getattr(os, "O_PATH", os.O_RDONLY | os.O_NONBLOCK) | os.O_NOFOLLOW | os.O_CLOEXEC


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


def _root_of(target: str, roots: Sequence[str], shown: str) -> tuple[str, list[str]]:
    """The real root holding ``target`` and the names leading from it to ``target``."""
    for root in roots:
        root_real = os.path.realpath(root)
        if _inside(target, root_real):
            names = os.path.relpath(target, root_real).split(os.sep)
            return root_real, [name for name in names if name != "."]
    raise OutsideWorkspace(f"Invalid params: path is outside the session's workspace: {shown!r}")


def _walk(root_real: str, names: Sequence[str], *, create: bool) -> int:
    """The descriptor of the directory ``root_real/names...``, opened one name at a time
    with ``O_NOFOLLOW`` (missing directories are made when ``create``)."""
    dir_fd = os.open(root_real, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for name in names:
            try:
                next_fd = os.open(name, _DIRECTORY_FLAGS, dir_fd=dir_fd)
            except FileNotFoundError:
                if not create:
                    raise
                with contextlib.suppress(FileExistsError):
                    os.mkdir(name, dir_fd=dir_fd)
                next_fd = os.open(name, _DIRECTORY_FLAGS, dir_fd=dir_fd)
            os.close(dir_fd)
            dir_fd = next_fd
    except BaseException:
        os.close(dir_fd)
        raise
    return dir_fd


def _refusal(exc: OSError, shown: str, verb: str) -> InvalidParams:
    """The -32602 error for an operating-system refusal met while opening ``shown``."""
    if exc.errno == errno.ELOOP:
        return OutsideWorkspace(
            f"Invalid params: {shown!r} leads through a symbolic link that changed"
            " after the workspace check"
        )
    if exc.errno == errno.EISDIR:
        return InvalidParams(f"Invalid params: is a directory: {shown!r}")
    return InvalidParams(f"Invalid params: cannot {verb} {shown!r}: {exc.strerror or exc}")


def _check_file(info: os.stat_result, shown: str, *, write: bool) -> None:
    """Refuse anything but a regular file with no other hard link (rule 2)."""
    if stat.S_ISLNK(info.st_mode):
        raise OutsideWorkspace(
            f"Invalid params: {shown!r} is a symbolic link that appeared after the workspace check"
        )
    if write and stat.S_ISDIR(info.st_mode):
        raise InvalidParams(f"Invalid params: is a directory: {shown!r}")
    if not stat.S_ISREG(info.st_mode):
        raise InvalidParams(f"Invalid params: not a file: {shown!r}")
    if info.st_nlink > 1:
        raise OutsideWorkspace(
            f"Invalid params: {shown!r} has other hard links (it may be a file outside the"
            " workspace)"
        )


def open_confined(real: Path, roots: Sequence[str], *, shown: str) -> int:
    """Open ``real`` (a path `confine` returned) for reading and return the descriptor.

    The walk starts at the descriptor of the root holding ``real`` and opens one name at a
    time with ``O_NOFOLLOW`` (rule 1). The file is opened non-blocking (a FIFO does not
    hang the caller) and returned blocking only if it is a regular file with no other hard
    link, as ``fstat`` of that very descriptor says; anything else is refused (rule 2).
    Raises `OutsideWorkspace` for a symbolic link met or a file with other hard links,
    `FileNotFoundError` for a missing file or directory, and `InvalidParams` naming
    ``shown`` for any other refusal of the operating system.
    """
    root_real, names = _root_of(str(real), roots, shown)
    if not names:
        raise InvalidParams(f"Invalid params: not a file: {shown!r}")
    try:
        dir_fd = _walk(root_real, names[:-1], create=False)
        try:
            flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC
            fd = os.open(names[-1], flags, dir_fd=dir_fd)
        finally:
            os.close(dir_fd)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise _refusal(exc, shown, "read") from None
    try:
        _check_file(os.fstat(fd), shown, write=False)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def write_confined(real: Path, roots: Sequence[str], *, shown: str, data: bytes) -> None:
    """Write ``data`` to ``real`` (a path `confine` returned), creating missing directories.

    The directory is reached as in `open_confined`. An existing file must be a regular
    file with no other hard link (checked on a descriptor of it, rule 2); the data go to a
    new temporary file in the same directory (``O_EXCL``, the old file's mode) that is then
    renamed over the name (rule 3), so no inode that anything else shares is truncated.
    The temporary file is removed on any failure.
    """
    root_real, names = _root_of(str(real), roots, shown)
    if not names:
        raise InvalidParams(f"Invalid params: is a directory: {shown!r}")
    name = names[-1]
    try:
        dir_fd = _walk(root_real, names[:-1], create=True)
    except FileNotFoundError:
        raise InvalidParams(f"Invalid params: cannot write {shown!r}: no such directory") from None
    except OSError as exc:
        raise _refusal(exc, shown, "write") from None
    try:
        mode = _existing_mode(dir_fd, name, shown)
        _replace(dir_fd, name, data, mode, shown)
    finally:
        os.close(dir_fd)


def _existing_mode(dir_fd: int, name: str, shown: str) -> int | None:
    """The permission bits of the file ``name`` to be replaced, ``None`` if there is none."""
    try:
        fd = os.open(name, _PROBE_FLAGS, dir_fd=dir_fd)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise _refusal(exc, shown, "write") from None
    try:
        info = os.fstat(fd)
    finally:
        os.close(fd)
    _check_file(info, shown, write=True)
    # Replacing is not writing: a file its mode keeps from us stays refused, as the
    # open for writing a replacement avoids would have been.
    if not os.access(name, os.W_OK, dir_fd=dir_fd, follow_symlinks=False):
        raise InvalidParams(f"Invalid params: cannot write {shown!r}: Permission denied")
    # The permission bits only: set-id bits are dropped, as a write by another user would.
    return stat.S_IMODE(info.st_mode) & 0o777


def _replace(dir_fd: int, name: str, data: bytes, mode: int | None, shown: str) -> None:
    temporary = f".rpcweave-{secrets.token_hex(8)}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(temporary, flags, 0o666 if mode is None else mode, dir_fd=dir_fd)
    except OSError as exc:
        raise _refusal(exc, shown, "write") from None
    try:
        try:
            with os.fdopen(fd, "wb") as file:
                if mode is not None:
                    os.fchmod(file.fileno(), mode)  # the umask left out of the create
                file.write(data)
            os.rename(temporary, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except OSError as exc:
            raise _refusal(exc, shown, "write") from None
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary, dir_fd=dir_fd)
        raise
