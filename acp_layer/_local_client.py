"""`LocalClient`: a ready-made client on the local file system and local processes.

Files are confined to the session's workspace (its ``cwd`` and additional directories, or
the ``workspace`` given): relative paths, ``..`` escapes, symbolic links and absolute paths
leading outside are refused with -32602, and so are hard links (a file with other links
may be one outside); a missing file is -32002. A write replaces the file by a new one
(``_workspace``, rule 3). Terminals are local subprocesses (see ``_terminals``), started
only with the user's consent (``_consent``). Permission requests are answered by a policy
(allow or reject) or by a function standing in for the editor's dialog.
"""

from __future__ import annotations

import inspect
import os
import uuid
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Literal

import anyio

from jsonrpc_core import InvalidParams

from . import schema as s
from ._client import Client
from ._consent import CommandPolicy, CommandRefused, ExecuteGrants, TerminalCommand
from ._errors import ResourceNotFound
from ._terminals import LocalTerminal
from ._workspace import confine, open_confined, write_confined

__all__ = ["LocalClient"]

PermissionDialog = Callable[
    [s.RequestPermissionRequest],
    Awaitable[s.RequestPermissionOutcome] | s.RequestPermissionOutcome,
]
UpdateCallback = Callable[[s.SessionNotification], Awaitable[None] | None]

_ALLOW = ("allow_once", "allow_always")
_RELEASED_KEPT = 256  # released terminals whose final output is kept for display
_REJECT = ("reject_once", "reject_always")


class LocalClient(Client):
    """A client that serves files from the session's workspace and runs terminals locally.

    ``permission`` is ``"reject"`` (default), ``"allow"``, or a function given the request
    that returns the outcome (the editor's dialog). Every session update is kept in
    ``updates`` (per session id) and passed to ``on_update``. Files larger than
    ``max_file_bytes`` are refused; terminal output is capped at ``max_output_bytes`` when
    the agent sets no lower ``outputByteLimit``.

    ``commands`` decides which ``terminal/create`` commands run: ``"deny"`` (default)
    refuses them all, ``"allow"`` runs them all, and an async function given the
    `TerminalCommand` (command, args, real cwd, env) asks the user and answers whether it
    may run. The default refuses because a command runs with the editor's rights and no
    path check confines it: only the user can let it run. A permission the user granted
    for an ``execute`` tool call in the running turn also lets the agent create one
    terminal in that turn without asking again; cancelling the turn withdraws a pending
    question. A refused command is -32602 (`CommandRefused`); it is never started.
    """

    client_info = s.Implementation(name="rpcweave-local-client", version="0.1.0")

    def __init__(
        self,
        workspace: str | Path | None = None,
        *,
        permission: Literal["allow", "reject"] | PermissionDialog = "reject",
        on_update: UpdateCallback | None = None,
        max_file_bytes: int = 8 * 1024 * 1024,
        max_output_bytes: int = 4 * 1024 * 1024,
        commands: CommandPolicy = "deny",
    ) -> None:
        self.workspace = None if workspace is None else str(workspace)
        self.permission = permission
        if not callable(commands) and commands not in ("allow", "deny"):
            raise ValueError(f"commands must be 'allow', 'deny' or a function, not {commands!r}")
        self.commands = commands
        self._grants = ExecuteGrants()
        self.on_update = on_update
        self.max_file_bytes = max_file_bytes
        self.max_output_bytes = max_output_bytes
        self.updates: dict[str, list[s.SessionUpdate]] = {}
        self.permission_requests: list[s.RequestPermissionRequest] = []
        self.terminals: dict[str, LocalTerminal] = {}
        # The final output of released terminals, newest last (rule: a tool call that
        # embeds a terminal keeps showing its output after release).
        self._released_output: OrderedDict[str, str] = OrderedDict()

    async def _roots(self, session_id: str) -> list[str]:
        session = await self.connection.session(session_id)
        return [self.workspace] if self.workspace is not None else session.roots

    async def _path(self, session_id: str, path: str) -> Path:
        return confine(path, await self._roots(session_id))

    # -- permission and updates ------------------------------------------------------------

    async def request_permission(
        self, params: s.RequestPermissionRequest
    ) -> s.RequestPermissionOutcome:
        """Answer with the policy's choice, or ask the dialog function."""
        self.permission_requests.append(params)
        outcome = await self._permission_outcome(params)
        session = self.connection.sessions.get(params.session_id)
        if session is not None:
            self._grants.note(session, params, outcome, self._tool_kind(params))
        return outcome

    async def _permission_outcome(
        self, params: s.RequestPermissionRequest
    ) -> s.RequestPermissionOutcome:
        if callable(self.permission):
            outcome = self.permission(params)
            return await outcome if inspect.isawaitable(outcome) else outcome
        kinds = _ALLOW if self.permission == "allow" else _REJECT
        for kind in kinds:
            for option in params.options:
                if option.kind == kind:
                    return s.SelectedPermissionOutcome(option_id=option.option_id)
        return s.CancelledPermissionOutcome()

    def _tool_kind(self, params: s.RequestPermissionRequest) -> s.ToolKind | None:
        """The permission's tool kind: its own, else the latest one announced for that
        tool call in the session's updates."""
        if params.tool_call.kind is not None:
            return params.tool_call.kind
        call_id = params.tool_call.tool_call_id
        for update in reversed(self.updates.get(params.session_id, ())):
            if (
                isinstance(update, s.ToolCall | s.ToolCallProgress)
                and update.tool_call_id == call_id
                and update.kind is not None
            ):
                return update.kind
        return None

    async def session_update(self, params: s.SessionNotification) -> None:
        """Keep the update and pass it to ``on_update``."""
        self.updates.setdefault(params.session_id, []).append(params.update)
        if self.on_update is not None:
            outcome = self.on_update(params)
            if inspect.isawaitable(outcome):
                await outcome

    # -- files -----------------------------------------------------------------------------

    async def read_text_file(self, params: s.ReadTextFileRequest) -> s.ReadTextFileResponse:
        """Read the file, from 1-based ``line`` and at most ``limit`` lines."""
        roots = await self._roots(params.session_id)
        path = await self._path(params.session_id, params.path)
        text = await anyio.to_thread.run_sync(self._read, path, roots, params.path)
        if params.line is not None or params.limit is not None:
            lines = text.splitlines(keepends=True)
            start = max((params.line or 1) - 1, 0)
            end = None if params.limit is None else start + params.limit
            text = "".join(lines[start:end])
        return s.ReadTextFileResponse(content=text)

    def _read(self, path: Path, roots: Sequence[str], shown: str) -> str:
        try:
            fd = open_confined(path, roots, shown=shown)
        except FileNotFoundError:
            raise ResourceNotFound(f"Resource not found: {shown!r}", {"path": shown}) from None
        with os.fdopen(fd, "rb") as file:
            if os.fstat(fd).st_size > self.max_file_bytes:
                raise InvalidParams(
                    f"Invalid params: {shown!r} is larger than {self.max_file_bytes} bytes"
                )
            return file.read(self.max_file_bytes + 1)[: self.max_file_bytes].decode(
                "utf-8", "replace"
            )

    async def write_text_file(self, params: s.WriteTextFileRequest) -> None:
        """Write the file, creating it and its missing parent directories."""
        roots = await self._roots(params.session_id)
        path = await self._path(params.session_id, params.path)
        await anyio.to_thread.run_sync(_write, path, roots, params.path, params.content)

    # -- terminals -------------------------------------------------------------------------

    async def create_terminal(self, params: s.CreateTerminalRequest) -> s.CreateTerminalResponse:
        """Start the command in the session's workspace (or in ``cwd`` inside it)."""
        roots = await self._roots(params.session_id)
        cwd = confine(params.cwd or roots[0], roots)
        command = TerminalCommand(
            session_id=params.session_id,
            command=params.command,
            args=tuple(params.args),
            cwd=str(cwd),
            env={e.name: e.value for e in params.env},
        )
        await self._consent(command)
        limit = self.max_output_bytes
        if params.output_byte_limit is not None:
            limit = min(limit, params.output_byte_limit)
        terminal_id = f"term_{uuid.uuid4().hex[:12]}"
        try:
            terminal = await LocalTerminal.start(
                terminal_id,
                command.command,
                command.args,
                cwd=command.cwd,
                env=command.env,
                limit=limit,
            )
        except OSError as exc:
            raise InvalidParams(
                f"Invalid params: cannot run {params.command!r}: {exc.strerror or exc}"
            ) from None
        self.terminals[terminal_id] = terminal
        self.connection.start_soon(terminal.run)
        return s.CreateTerminalResponse(terminal_id=terminal_id)

    async def _consent(self, command: TerminalCommand) -> None:
        """Return if ``command`` may run (``_consent`` rule 1), else raise `CommandRefused`."""
        session = await self.connection.session(command.session_id)
        if self.commands == "allow" or self._grants.take(session):
            return
        shown = command.command_line()
        if self.commands == "deny":
            raise CommandRefused(
                "Invalid params: command refused: this client runs no command without the"
                f" user's consent: `{shown}`"
            )
        allowed = False
        # Asked like a permission: cancelling the turn withdraws the question (rule 3).
        with anyio.CancelScope() as scope:
            session.permission_scopes.add(scope)
            try:
                allowed = await self.commands(command)
            finally:
                session.permission_scopes.discard(scope)
        if scope.cancelled_caught:
            raise CommandRefused(
                f"Invalid params: command refused: the turn was cancelled before the user"
                f" answered: `{shown}`"
            )
        if not allowed:
            raise CommandRefused(
                f"Invalid params: command refused: the user did not allow `{shown}`"
                f" in {command.cwd}"
            )

    def _terminal(self, terminal_id: str) -> LocalTerminal:
        terminal = self.terminals.get(terminal_id)
        if terminal is None:
            raise ResourceNotFound(
                f"Resource not found: unknown terminal {terminal_id!r}",
                {"terminalId": terminal_id},
            )
        return terminal

    async def terminal_output(self, params: s.TerminalOutputRequest) -> s.TerminalOutputResponse:
        """Output so far, ``truncated``, and the exit status once exited."""
        return self._terminal(params.terminal_id).snapshot()

    async def wait_for_terminal_exit(
        self, params: s.WaitForTerminalExitRequest
    ) -> s.WaitForTerminalExitResponse:
        """Wait for the command to exit."""
        return await self._terminal(params.terminal_id).wait()

    async def kill_terminal(self, params: s.KillTerminalRequest) -> None:
        """Kill the command; the terminal stays for ``output`` and ``wait_for_exit``."""
        self._terminal(params.terminal_id).kill()

    async def release_terminal(self, params: s.ReleaseTerminalRequest) -> None:
        """Kill the command if running and forget the terminal (its output stays
        available to `displayed_output`)."""
        terminal = self._terminal(params.terminal_id)
        del self.terminals[params.terminal_id]
        await terminal.close()
        self._released_output[params.terminal_id] = terminal.snapshot().output
        while len(self._released_output) > _RELEASED_KEPT:
            self._released_output.popitem(last=False)

    def displayed_output(self, terminal_id: str) -> str | None:
        """The output to show for a terminal embedded in a tool call: the live output,
        or, after release, the final one (ACP: the client SHOULD keep displaying it);
        ``None`` for an unknown terminal or one released long ago."""
        terminal = self.terminals.get(terminal_id)
        if terminal is not None:
            return terminal.snapshot().output
        return self._released_output.get(terminal_id)

    async def aclose(self) -> None:
        """Kill every terminal the agent did not release."""
        terminals: Sequence[LocalTerminal] = list(self.terminals.values())
        self.terminals.clear()
        for terminal in terminals:
            await terminal.close()


def _write(path: Path, roots: Sequence[str], shown: str, content: str) -> None:
    write_confined(path, roots, shown=shown, data=content.encode("utf-8"))
