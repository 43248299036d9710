"""`AgentConnection`: what an agent uses to call the client, and `TerminalHandle`.

Rules:

1. Strict out: a call that needs a client capability (``fs.readTextFile``, ``terminal``, an
   elicitation mode) raises `CapabilityError` locally when the client did not advertise it,
   as the spec says agents MUST NOT call such methods.
2. A call made while serving a prompt is cancelled with that prompt when the client sends
   ``session/cancel``; the client is told with ``$/cancel_request``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import TYPE_CHECKING, Any, get_args

import anyio
from anyio.abc import TaskGroup

from jsonrpc_core import Peer

from . import _methods as m
from . import schema as s
from ._rpc import CapabilityError, after_response

if TYPE_CHECKING:
    from ._agent_server import _Turn

__all__ = ["AgentConnection", "AgentSession", "TerminalHandle"]


@dataclass
class AgentSession:
    """A session this connection knows (created, loaded or resumed), as the client set it up."""

    session_id: str
    cwd: str
    mcp_servers: list[s.McpServer] = field(default_factory=list)
    additional_directories: list[str] = field(default_factory=list)
    turns: set[_Turn] = field(default_factory=set, repr=False)

    @property
    def busy(self) -> bool:
        """Whether a prompt turn is running in this session."""
        return bool(self.turns)


class AgentConnection:
    """The agent's end of an ACP connection: calls into the client.

    Available as ``agent.client`` once the connection is served. ``client_capabilities`` and
    ``client_info`` are what the client sent in ``initialize``; ``sessions`` maps each known
    session id to its `AgentSession`.
    """

    def __init__(self, peer: Peer, task_group: TaskGroup) -> None:
        self.peer = peer
        self._task_group = task_group
        self.client_capabilities = s.ClientCapabilities()
        self.client_info: s.Implementation | None = None
        self.protocol_version: int | None = None
        self.sessions: dict[str, AgentSession] = {}

    @property
    def initialized(self) -> bool:
        """Whether ``initialize`` has been answered successfully."""
        return self.protocol_version is not None

    # -- session updates -------------------------------------------------------------------

    async def session_update(self, session_id: str, update: s.SessionUpdate) -> None:
        """Send one ``session/update`` notification."""
        if type(session_id) is str and type(update) in _UPDATE_TYPES:
            # Already a valid update model: sent as it is, without a wrapper model
            # (SessionNotification would only check what is checked here).
            await self.peer.notify(_SESSION_UPDATE, {"sessionId": session_id, "update": update})
        else:
            note = s.SessionNotification(session_id=session_id, update=update)
            await self.peer.notify(_SESSION_UPDATE, note)

    async def send_text(self, session_id: str, text: str, *, message_id: str | None = None) -> None:
        """Send an ``agent_message_chunk`` with text."""
        params = _text_chunk(session_id, "agent_message_chunk", text, message_id)
        if params is None:
            chunk = s.AgentMessageChunk(content=s.TextContent(text=text), message_id=message_id)
            await self.session_update(session_id, chunk)
        else:
            await self.peer.notify(_SESSION_UPDATE, params)

    async def send_thought(self, session_id: str, text: str) -> None:
        """Send an ``agent_thought_chunk`` with text."""
        params = _text_chunk(session_id, "agent_thought_chunk", text, None)
        if params is None:
            chunk = s.AgentThoughtChunk(content=s.TextContent(text=text))
            await self.session_update(session_id, chunk)
        else:
            await self.peer.notify(_SESSION_UPDATE, params)

    async def send_plan(self, session_id: str, entries: Sequence[s.PlanEntry]) -> None:
        """Send the whole plan (each plan update replaces the previous one)."""
        await self.session_update(session_id, s.Plan(entries=list(entries)))

    async def start_tool_call(self, session_id: str, tool_call: s.ToolCall) -> None:
        """Announce a tool call (``tool_call`` update)."""
        await self.session_update(session_id, tool_call)

    async def update_tool_call(self, session_id: str, update: s.ToolCallProgress) -> None:
        """Report progress or the result of a tool call (``tool_call_update``)."""
        await self.session_update(session_id, update)

    def after_response(self, hook: Callable[[], Awaitable[None]]) -> None:
        """Run ``hook`` right after the response to the request being served is sent.

        For instance, advertise slash commands once the client knows the new session id.
        """
        after_response(hook)

    def start_soon(self, func: Callable[..., Coroutine[Any, Any, Any]], *args: Any) -> None:
        """Run background work for as long as the connection lives."""
        self._task_group.start_soon(func, *args)

    # -- client methods --------------------------------------------------------------------

    async def request_permission(
        self,
        session_id: str,
        tool_call: s.ToolCallUpdate,
        options: Sequence[s.PermissionOption],
    ) -> s.RequestPermissionOutcome:
        """Ask the user to authorise a tool call; the selected or ``cancelled`` outcome."""
        request = s.RequestPermissionRequest(
            session_id=session_id, tool_call=tool_call, options=list(options)
        )
        response = await self.peer.request(m.SESSION_REQUEST_PERMISSION, request)
        return response.outcome

    async def read_text_file(
        self, session_id: str, path: str, *, line: int | None = None, limit: int | None = None
    ) -> str:
        """Read a text file (as the editor sees it, unsaved changes included)."""
        if not self.client_capabilities.fs.read_text_file:
            raise CapabilityError("the client does not offer fs/read_text_file")
        request = s.ReadTextFileRequest(session_id=session_id, path=path, line=line, limit=limit)
        return (await self.peer.request(m.FS_READ_TEXT_FILE, request)).content

    async def write_text_file(self, session_id: str, path: str, content: str) -> None:
        """Write a text file (the client creates it if needed)."""
        if not self.client_capabilities.fs.write_text_file:
            raise CapabilityError("the client does not offer fs/write_text_file")
        request = s.WriteTextFileRequest(session_id=session_id, path=path, content=content)
        await self.peer.request(m.FS_WRITE_TEXT_FILE, request)

    async def create_terminal(
        self,
        session_id: str,
        command: str,
        args: Sequence[str] = (),
        *,
        env: dict[str, str] | None = None,
        cwd: str | None = None,
        output_byte_limit: int | None = None,
    ) -> TerminalHandle:
        """Start ``command`` in a client terminal; release the handle when done.

        Use it as ``async with await conn.create_terminal(...) as terminal:`` to release it
        even on errors and cancellation.
        """
        if not self.client_capabilities.terminal:
            raise CapabilityError("the client does not offer terminals")
        request = s.CreateTerminalRequest(
            session_id=session_id,
            command=command,
            args=list(args),
            env=[s.EnvVariable(name=k, value=v) for k, v in (env or {}).items()],
            cwd=cwd,
            output_byte_limit=output_byte_limit,
        )
        response = await self.peer.request(m.TERMINAL_CREATE, request)
        return TerminalHandle(self.peer, session_id, response.terminal_id)

    async def create_elicitation(
        self, request: s.CreateElicitationRequest
    ) -> s.CreateElicitationResponse:
        """Ask the user for structured input (form) or to visit a URL."""
        caps = self.client_capabilities.elicitation
        mode = getattr(request, "mode", None)
        offered = caps is not None and getattr(caps, str(mode), None) is not None
        if not offered:
            raise CapabilityError(f"the client does not offer {mode!r} elicitation")
        return await self.peer.request(m.ELICITATION_CREATE, request)

    async def complete_elicitation(self, elicitation_id: str) -> None:
        """Tell the client that a URL elicitation finished out of band."""
        note = s.CompleteElicitationNotification(elicitation_id=elicitation_id)
        await self.peer.notify(m.ELICITATION_COMPLETE, note)

    async def ext_method(self, method: str, params: dict[str, Any] | None = None) -> Any:
        """Call a ``_``-prefixed extension method of the client."""
        return await self.peer.request(_ext_name(method), params or {})

    async def ext_notification(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Send a ``_``-prefixed extension notification to the client."""
        await self.peer.notify(_ext_name(method), params or {})


_SESSION_UPDATE = m.SESSION_UPDATE.method

# The classes of the SessionUpdate union (``Annotated[Union[Annotated[cls, Tag], ...], ...]``).
_UPDATE_TYPES: frozenset[type] = frozenset(
    get_args(member)[0] for member in get_args(get_args(s.SessionUpdate)[0])
)


def _text_chunk(
    session_id: str, kind: str, text: str, message_id: str | None
) -> dict[str, Any] | None:
    """The ``session/update`` params of a text chunk, written directly: the hot path of
    streaming. The same bytes as the models give (tests compare both); ``None`` for
    values of other types, which the models then check (and reject or default) as ever."""
    if type(session_id) is not str or type(text) is not str:
        return None
    content = {"type": "text", "text": text}
    if message_id is None:
        update = {"content": content, "sessionUpdate": kind}
    elif type(message_id) is str:
        update = {"content": content, "messageId": message_id, "sessionUpdate": kind}
    else:
        return None
    return {"sessionId": session_id, "update": update}


def _ext_name(method: str) -> str:
    if not method.startswith("_"):
        raise ValueError(f"extension method names start with '_': {method!r}")
    return method


class TerminalHandle:
    """A terminal the client runs for us; ``release()`` it when done (or use ``async with``)."""

    def __init__(self, peer: Peer, session_id: str, terminal_id: str) -> None:
        self._peer = peer
        self.session_id = session_id
        self.id = terminal_id
        self.released = False

    def _params(self) -> dict[str, str]:
        return {"sessionId": self.session_id, "terminalId": self.id}

    def content(self) -> s.Terminal:
        """The tool call content that embeds this terminal's live output."""
        return s.Terminal(terminal_id=self.id)

    async def output(self) -> s.TerminalOutputResponse:
        """The output so far, whether it was truncated, and the exit status once exited."""
        return await self._peer.request(m.TERMINAL_OUTPUT, self._params())

    async def wait_for_exit(self) -> s.WaitForTerminalExitResponse:
        """Wait until the command exits; its exit code or signal."""
        return await self._peer.request(m.TERMINAL_WAIT_FOR_EXIT, self._params())

    async def kill(self) -> None:
        """Kill the command; the terminal stays valid for ``output``."""
        await self._peer.request(m.TERMINAL_KILL, self._params())

    async def release(self) -> None:
        """Kill the command if still running and free the terminal (idempotent)."""
        if not self.released:
            self.released = True
            await self._peer.request(m.TERMINAL_RELEASE, self._params())

    async def __aenter__(self) -> TerminalHandle:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        with anyio.CancelScope(shield=True), anyio.move_on_after(5):
            try:
                await self.release()
            except Exception:
                # The release of an abandoned terminal must not hide the original error.
                if exc is None:
                    raise
