"""Consent for the commands an agent runs in `LocalClient`'s terminals.

Rules:

1. A ``terminal/create`` command runs only with consent: the policy ``"allow"``, the ask
   callback answering true, or a grant from rule 2. Anything else is refused with
   `CommandRefused` (-32602) before a process exists, and the connection serves on.
2. A permission the user granted (an ``allow_once`` or ``allow_always`` option) during a
   prompt turn, for a tool call of kind ``execute``, is consent for one terminal the agent
   creates in that same turn: an agent that asked first is not asked twice. A grant never
   outlives its turn (`ClientSideSession.turn` moves on when the turn ends).
3. A question still open when the user cancels the turn is withdrawn, as a permission
   request is (`ClientConnection.cancel`): the command is refused.
"""

from __future__ import annotations

import shlex
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from jsonrpc_core import InvalidParams

from . import schema as s

if TYPE_CHECKING:
    from ._client_connection import ClientSideSession

__all__ = ["CommandAsk", "CommandPolicy", "CommandRefused", "ExecuteGrants", "TerminalCommand"]

_ALLOW = ("allow_once", "allow_always")


@dataclass(frozen=True)
class TerminalCommand:
    """A command an agent asks to run (``terminal/create``), as the ask callback sees it.

    ``cwd`` is the real directory it would run in (inside the workspace); ``env`` holds the
    variables the agent sets on top of the editor's environment.
    """

    session_id: str
    command: str
    args: tuple[str, ...]
    cwd: str
    env: Mapping[str, str] = field(default_factory=dict)

    def command_line(self) -> str:
        """The exact command line, quoted for a POSIX shell (``env NAME=value ...`` first
        when the agent sets variables)."""
        env = [f"{name}={value}" for name, value in self.env.items()]
        return shlex.join([*(["env", *env] if env else []), self.command, *self.args])


CommandAsk = Callable[[TerminalCommand], Awaitable[bool]]
"""Asks the user whether a command may run: true runs it, false refuses it."""

CommandPolicy = Literal["allow", "deny"] | CommandAsk
"""`LocalClient`'s ``commands``: run every command, refuse every one, or ask."""


class CommandRefused(InvalidParams):
    """-32602: the user did not allow the command the agent asked to run."""


class ExecuteGrants:
    """Execute permissions granted per session in the running turn (rule 2)."""

    def __init__(self) -> None:
        # session id -> (the turn granted in, terminals still allowed in it)
        self._grants: dict[str, tuple[int, int]] = {}

    def note(
        self,
        session: ClientSideSession,
        request: s.RequestPermissionRequest,
        outcome: s.RequestPermissionOutcome,
        kind: s.ToolKind | None,
    ) -> None:
        """Record ``outcome`` if it grants an ``execute`` tool call during a turn."""
        if kind != "execute" or not session.in_turn:
            return
        if not isinstance(outcome, s.SelectedPermissionOutcome):
            return
        kinds = {option.option_id: option.kind for option in request.options}
        if kinds.get(outcome.option_id) not in _ALLOW:
            return
        turn, count = self._grants.get(session.session_id, (session.turn, 0))
        if turn != session.turn:
            count = 0
        self._grants[session.session_id] = (session.turn, count + 1)

    def take(self, session: ClientSideSession) -> bool:
        """Use one grant of the running turn, if there is one."""
        grant = self._grants.pop(session.session_id, None)
        if grant is None or not session.in_turn or grant[0] != session.turn:
            return False
        turn, count = grant
        if count > 1:
            self._grants[session.session_id] = (turn, count - 1)
        return True
