"""`Client`: the class an editor author fills in to serve an agent's requests.

Each method the agent may call takes the typed request; what a subclass overrides decides
the capabilities sent in ``initialize`` (``fs.readTextFile``, ``fs.writeTextFile``,
``terminal`` when all five terminal methods are there). `LocalClient` is a ready-made one.
The connection to the agent (`ClientConnection`) is ``self.connection`` while connected.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from jsonrpc_core import MethodNotFound

from . import schema as s

if TYPE_CHECKING:
    from ._client_connection import ClientConnection

__all__ = ["Client"]

_TERMINAL_METHODS = (
    "create_terminal",
    "terminal_output",
    "wait_for_terminal_exit",
    "kill_terminal",
    "release_terminal",
)


class Client:
    """Base class of ACP clients: override what the editor offers.

    ``request_permission`` and ``session_update`` are always served. ``session_update`` runs
    on the connection's read loop, in arrival order: it must not wait for the agent. When
    the user cancels a turn (`ClientConnection.cancel`), pending permission requests of that
    session are answered ``cancelled`` for you.
    """

    client_info: ClassVar[s.Implementation | None] = None
    """Sent as ``clientInfo`` in ``initialize``."""
    elicitation_capabilities: ClassVar[s.ElicitationCapabilities | None] = None
    """The elicitation modes offered when ``create_elicitation`` is overridden."""

    connection: ClientConnection
    """The connection to the agent, set by `on_connect`."""

    def on_connect(self, connection: ClientConnection) -> None:
        """Called when a connection to an agent starts; keeps it as ``self.connection``."""
        self.connection = connection

    async def aclose(self) -> None:
        """Called when the connection ends: free what the agent left (e.g. terminals)."""

    def _overrides(self, name: str) -> bool:
        return getattr(type(self), name) is not getattr(Client, name)

    def client_capabilities(self) -> s.ClientCapabilities:
        """The capabilities sent in ``initialize``, from the overridden methods."""
        elicitation = None
        if self._overrides("create_elicitation"):
            elicitation = self.elicitation_capabilities
        return s.ClientCapabilities(
            fs=s.FileSystemCapabilities(
                read_text_file=self._overrides("read_text_file"),
                write_text_file=self._overrides("write_text_file"),
            ),
            terminal=all(self._overrides(name) for name in _TERMINAL_METHODS),
            elicitation=elicitation,
        )

    # -- always served ---------------------------------------------------------------------

    async def request_permission(
        self, params: s.RequestPermissionRequest
    ) -> s.RequestPermissionResponse | s.RequestPermissionOutcome:
        """Ask the user; the default rejects once (or cancels when no reject option exists)."""
        for option in params.options:
            if option.kind == "reject_once":
                return s.SelectedPermissionOutcome(option_id=option.option_id)
        return s.CancelledPermissionOutcome()

    async def session_update(self, params: s.SessionNotification) -> None:
        """Show an update of a session (message chunks, tool calls, plans, ...)."""

    # -- file system -----------------------------------------------------------------------

    async def read_text_file(self, params: s.ReadTextFileRequest) -> s.ReadTextFileResponse:
        """Read a text file (override to offer ``fs.readTextFile``)."""
        raise MethodNotFound("Method not found: fs/read_text_file")

    async def write_text_file(
        self, params: s.WriteTextFileRequest
    ) -> s.WriteTextFileResponse | None:
        """Write a text file (override to offer ``fs.writeTextFile``)."""
        raise MethodNotFound("Method not found: fs/write_text_file")

    # -- terminals -------------------------------------------------------------------------

    async def create_terminal(self, params: s.CreateTerminalRequest) -> s.CreateTerminalResponse:
        """Start a command in a new terminal and return its id at once."""
        raise MethodNotFound("Method not found: terminal/create")

    async def terminal_output(self, params: s.TerminalOutputRequest) -> s.TerminalOutputResponse:
        """The terminal's output so far and its exit status once exited."""
        raise MethodNotFound("Method not found: terminal/output")

    async def wait_for_terminal_exit(
        self, params: s.WaitForTerminalExitRequest
    ) -> s.WaitForTerminalExitResponse:
        """Wait for the terminal's command to exit."""
        raise MethodNotFound("Method not found: terminal/wait_for_exit")

    async def kill_terminal(self, params: s.KillTerminalRequest) -> s.KillTerminalResponse | None:
        """Kill the terminal's command, keeping the terminal."""
        raise MethodNotFound("Method not found: terminal/kill")

    async def release_terminal(
        self, params: s.ReleaseTerminalRequest
    ) -> s.ReleaseTerminalResponse | None:
        """Kill the command if running and forget the terminal."""
        raise MethodNotFound("Method not found: terminal/release")

    # -- elicitation -----------------------------------------------------------------------

    async def create_elicitation(
        self, params: s.CreateElicitationRequest
    ) -> s.CreateElicitationResponse:
        """Ask the user for input (override and set ``elicitation_capabilities``)."""
        raise MethodNotFound("Method not found: elicitation/create")

    async def complete_elicitation(self, params: s.CompleteElicitationNotification) -> None:
        """A URL elicitation finished out of band."""

    # -- extensions ------------------------------------------------------------------------

    async def ext_method(self, method: str, params: Any) -> Any:
        """Answer a ``_``-prefixed extension request (default: method not found)."""
        raise MethodNotFound(f"Method not found: {method}")

    async def ext_notification(self, method: str, params: Any) -> None:
        """Handle a ``_``-prefixed extension notification (default: ignored)."""
