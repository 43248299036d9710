"""``terminal/*``: the agent runs commands in terminals the client owns (docs/terminals.mdx).

Needs ``clientCapabilities.terminal``. ``create`` starts the command and returns at once;
``output`` polls, ``wait_for_exit`` blocks, ``kill`` stops the command but keeps the terminal,
``release`` frees it (the agent must release every terminal it creates). A terminal can be
embedded in a tool call's content to stream its output live.
"""

from pydantic import Field

from ._base import ACPModel, EmptyResult, SessionId, TerminalId, UInt32, UInt64
from ._lenient import ItemsOrDefault, OrDefault
from ._mcp import EnvVariable

__all__ = [
    "CreateTerminalRequest",
    "CreateTerminalResponse",
    "KillTerminalRequest",
    "KillTerminalResponse",
    "ReleaseTerminalRequest",
    "ReleaseTerminalResponse",
    "TerminalExitStatus",
    "TerminalOutputRequest",
    "TerminalOutputResponse",
    "WaitForTerminalExitRequest",
    "WaitForTerminalExitResponse",
]


class CreateTerminalRequest(ACPModel):
    """Request to create a new terminal and execute a command."""

    session_id: SessionId
    command: str
    args: ItemsOrDefault[str] = Field(default_factory=list)
    env: ItemsOrDefault[EnvVariable] = Field(default_factory=list)
    cwd: OrDefault[str | None] = None
    """Working directory (absolute path)."""
    output_byte_limit: OrDefault[UInt64 | None] = None
    """Maximum output bytes to retain; the client truncates from the beginning."""


class CreateTerminalResponse(ACPModel):
    """Response containing the id of the created terminal."""

    terminal_id: TerminalId


class TerminalOutputRequest(ACPModel):
    """Request to get the current output and status of a terminal."""

    session_id: SessionId
    terminal_id: TerminalId


class TerminalExitStatus(ACPModel):
    """Exit status of a terminal command."""

    exit_code: OrDefault[UInt32 | None] = None
    """The process exit code; ``None`` if a signal terminated it."""
    signal: OrDefault[str | None] = None
    """The signal that terminated the process; ``None`` if it exited normally."""


class TerminalOutputResponse(ACPModel):
    """Response containing the terminal output and exit status."""

    output: str
    truncated: bool
    """Whether the output was truncated because of ``outputByteLimit``."""
    exit_status: OrDefault[TerminalExitStatus | None] = None
    """Present once the command has exited."""


class ReleaseTerminalRequest(ACPModel):
    """Request to release a terminal and free its resources (kills the command if running)."""

    session_id: SessionId
    terminal_id: TerminalId


class ReleaseTerminalResponse(EmptyResult):
    """Response to ``terminal/release``."""


class WaitForTerminalExitRequest(ACPModel):
    """Request to wait for a terminal command to exit."""

    session_id: SessionId
    terminal_id: TerminalId


class WaitForTerminalExitResponse(EmptyResult):
    """Response containing the exit status of a terminal command."""

    exit_code: OrDefault[UInt32 | None] = None
    signal: OrDefault[str | None] = None


class KillTerminalRequest(ACPModel):
    """Request to kill a terminal's command without releasing the terminal."""

    session_id: SessionId
    terminal_id: TerminalId


class KillTerminalResponse(EmptyResult):
    """Response to ``terminal/kill``."""
