"""``fs/read_text_file`` and ``fs/write_text_file``: the agent uses the client's file system.

Each needs the matching `FileSystemCapabilities` flag. Reads see the editor's unsaved
state; paths are absolute; ``line`` is 1-based.
"""

from ._base import ACPModel, EmptyResult, SessionId, UInt32
from ._lenient import OrDefault

__all__ = [
    "ReadTextFileRequest",
    "ReadTextFileResponse",
    "WriteTextFileRequest",
    "WriteTextFileResponse",
]


class ReadTextFileRequest(ACPModel):
    """Request to read content from a text file."""

    session_id: SessionId
    path: str
    """Absolute path to the file to read."""
    line: OrDefault[UInt32 | None] = None
    """Line number to start reading from (1-based)."""
    limit: OrDefault[UInt32 | None] = None
    """Maximum number of lines to read."""


class ReadTextFileResponse(ACPModel):
    """Response containing the contents of a text file."""

    content: str


class WriteTextFileRequest(ACPModel):
    """Request to write content to a text file (the client creates it if missing)."""

    session_id: SessionId
    path: str
    """Absolute path to the file to write."""
    content: str


class WriteTextFileResponse(EmptyResult):
    """Response to ``fs/write_text_file``."""
