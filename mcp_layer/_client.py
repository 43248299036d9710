"""`ClientSession`: the host's side of an MCP connection, over any transport, either era.

Rules:

1. The era is settled when the session opens. A handshake-era version (the default,
   2025-11-25) performs ``initialize``; a 2026-07-28 version sends ``server/discover``;
   ``"auto"`` probes with ``server/discover`` and falls back to ``initialize`` on any
   answer that is not a recognised 2026-era one (an error, an HTTP 4xx without such an
   error, silence for ``probe_timeout`` seconds). A -32022 naming a version we speak
   retries with it.
2. Handshake era: nothing but ``initialize`` (and ``ping``) is sent before the handshake
   completes, and a server whose protocol version we do not speak is refused.
3. 2026 era: every request carries the envelope (version, client info, capabilities,
   log level) in ``_meta``; over HTTP its headers mirror the body (``Mcp-Method``,
   ``Mcp-Name``, the tool's ``x-mcp-header`` arguments), and tool definitions whose
   ``x-mcp-header`` annotations are invalid are left out of ``tools/list``. An
   ``InputRequiredResult`` is answered from the host's handlers and the request
   retried (``max_input_rounds`` times at most); a task is polled to its end.
   Handshake era: a tool whose ``execution.taskSupport`` is ``"required"`` (or
   ``"optional"``, when asked) is called as a 2025-11-25 task (`mcp_layer._client_tasks`).
4. Capabilities are declared from what the host supplies: a sampling handler, an
   elicitation handler, roots.
5. A call abandoned by timeout or cancellation sends ``notifications/cancelled``
   (over 2026-era HTTP it closes the request's response stream instead).

The session is one class built from one unit per responsibility: `ClientEra`
(`mcp_layer._client_era`: rules 1, 2, 3 and 5, the era settled and every request sent
and read in it) under the feature methods, each family in its module: tools
(`_client_tools`), resources (`_client_resources`), prompts, completion and logging
(`_client_prompts`), tasks (`_client_tasks`), notifications and subscriptions
(`_client_notifications`), the host's answers (`_client_host`, rule 4).
"""

from __future__ import annotations

import itertools
from collections.abc import Awaitable, Callable
from types import TracebackType

from jsonrpc_core import LocalError, MessageStream, MethodRegistry, Peer

from ._cache import ResultCache
from ._client_era import ClientEra, ProtocolVersionError
from ._client_host import (
    ElicitationHandler,
    HostAnswers,
    SamplingHandler,
    with_elicitation_defaults,
)
from ._client_notifications import NotificationCallback, NotificationMethods
from ._client_prompts import PromptMethods
from ._client_resources import ResourceMethods
from ._client_tasks import TaskMethods
from ._client_tools import ToolMethods
from ._errors import MCP_ERRORS
from ._methods import (
    ELICITATION_CREATE,
    NOTIFICATIONS_CANCELLED,
    NOTIFICATIONS_ELICITATION_COMPLETE,
    NOTIFICATIONS_MESSAGE,
    NOTIFICATIONS_PROGRESS,
    NOTIFICATIONS_PROMPTS_LIST_CHANGED,
    NOTIFICATIONS_RESOURCES_LIST_CHANGED,
    NOTIFICATIONS_RESOURCES_UPDATED,
    NOTIFICATIONS_SUBSCRIPTIONS_ACKNOWLEDGED,
    NOTIFICATIONS_TASKS,
    NOTIFICATIONS_TASKS_STATUS,
    NOTIFICATIONS_TOOLS_LIST_CHANGED,
    PING,
    ROOTS_LIST,
    SAMPLING_CREATE_MESSAGE,
)
from ._telemetry import MCP_CLIENT_TELEMETRY
from .types import (
    LATEST_PROTOCOL_VERSION,
    ClientCapabilities,
    ElicitationCapability,
    EmptyResult,
    Implementation,
    Root,
    RootsCapability,
    SamplingCapability,
)

# `ProtocolVersionError` and `with_elicitation_defaults` are re-exported for the code that
# imported them from here before the split.
__all__ = ["ClientSession", "ProtocolVersionError", "with_elicitation_defaults"]


class ClientSession(
    ToolMethods,
    ResourceMethods,
    PromptMethods,
    TaskMethods,
    NotificationMethods,
    HostAnswers,
    ClientEra,
):
    """An MCP client connection, opened with ``async with``::

        async with ClientSession(stream) as client:
            tools = await client.list_all_tools()
            result = await client.call_tool("add", {"a": 1, "b": 2})

    ``protocol_version`` picks the era (module rule 1): a handshake-era version (the
    default), a 2026-07-28 version, or ``"auto"``. ``sampling``, ``elicitation`` and
    ``roots`` are the host's answers to the server's questions (requests in the
    handshake era, input requests in the 2026 era); ``on_log``,
    ``on_resource_updated`` and ``on_list_changed`` receive notifications
    (``on_list_changed`` gets "tools", "resources" or "prompts"). With
    ``elicitation_defaults``, an accepted form-mode answer is completed with the
    ``default`` of every requested field it leaves out (SEP-1034). ``cache`` keeps
    2026-era results for as long as their ``ttlMs`` says; ``tasks`` declares the tasks
    extension in the 2026 era (a tool call the server turns into a task is polled to
    its end).

    ``request_timeout`` is every request's total deadline (the handshake's too), from
    its first byte sent to its answer's last byte read, however slowly the server
    sends; a call's own ``timeout`` replaces it (``math.inf``: none for that call).
    Past it the call raises `jsonrpc_core.RequestTimeout`, the request is abandoned
    (module rule 5) and its HTTP response closed. ``None`` (the default for a session
    built on a stream): no deadline; `connect` over HTTP sets it to its ``timeout``.
    """

    def __init__(
        self,
        stream: MessageStream,
        *,
        client_info: Implementation | None = None,
        protocol_version: str = LATEST_PROTOCOL_VERSION,
        sampling: SamplingHandler | None = None,
        elicitation: ElicitationHandler | None = None,
        roots: list[Root] | Callable[[], Awaitable[list[Root]] | list[Root]] | None = None,
        on_log: NotificationCallback | None = None,
        on_resource_updated: NotificationCallback | None = None,
        on_list_changed: Callable[[str], Awaitable[None] | None] | None = None,
        on_elicitation_complete: NotificationCallback | None = None,
        elicitation_defaults: bool = False,
        request_timeout: float | None = None,
        capabilities: ClientCapabilities | None = None,
        probe_timeout: float = 10.0,
        cache: bool = True,
        max_input_rounds: int = 10,
        tasks: bool = True,
    ) -> None:
        self.stream = stream
        self.client_info = client_info or Implementation(name="rpcweave", version="0.1.0")
        self.requested_version = protocol_version
        self.sampling = sampling
        self.elicitation = elicitation
        self.roots = roots
        self.on_log = on_log
        self.on_resource_updated = on_resource_updated
        self.on_list_changed = on_list_changed
        self.on_elicitation_complete = on_elicitation_complete
        self.elicitation_defaults = elicitation_defaults
        self.capabilities = capabilities or self._capabilities()
        self.probe_timeout = probe_timeout
        self.max_input_rounds = max_input_rounds
        self.tasks = tasks
        self.cache = ResultCache() if cache else None
        self.server = None
        self.discovery = None
        self.era = None
        self.modern_version = None
        self.log_level = None
        self._progress = {}
        self._tokens = itertools.count(1)
        self._tool_schemas = {}
        self._task_support = {}
        self.task_watches = {}
        self._subscriptions = {}
        self.peer = Peer(
            stream,
            self._registry(),
            name="mcp-client",
            errors=MCP_ERRORS,
            telemetry=MCP_CLIENT_TELEMETRY,
            answer_cancelled=False,
            on_outgoing_cancel=self._cancel_notification,
            request_timeout=request_timeout,
        )

    def _capabilities(self) -> ClientCapabilities:
        return ClientCapabilities(
            sampling=SamplingCapability() if self.sampling is not None else None,
            elicitation=(
                ElicitationCapability.model_validate({"form": {}, "url": {}})
                if self.elicitation is not None
                else None
            ),
            roots=RootsCapability(list_changed=True) if self.roots is not None else None,
        )

    def _registry(self) -> MethodRegistry:
        registry = MethodRegistry()
        registry.on(PING, lambda params, ctx: EmptyResult())
        registry.on(SAMPLING_CREATE_MESSAGE, self._sample)
        registry.on(ELICITATION_CREATE, self._elicit)
        registry.on(ROOTS_LIST, self._list_roots)
        registry.on(NOTIFICATIONS_MESSAGE, self._log)
        registry.on(NOTIFICATIONS_PROGRESS, self._progress_update)
        registry.on(NOTIFICATIONS_RESOURCES_UPDATED, self._resource_updated)
        registry.on(NOTIFICATIONS_ELICITATION_COMPLETE, self._elicitation_complete)
        registry.on(NOTIFICATIONS_CANCELLED, self._cancelled)
        registry.on(NOTIFICATIONS_SUBSCRIPTIONS_ACKNOWLEDGED, self._acknowledged)
        registry.on(NOTIFICATIONS_TASKS.method, self._task_status)
        registry.on(NOTIFICATIONS_TASKS_STATUS, self._task_status_legacy)
        for kind, descriptor in (
            ("tools", NOTIFICATIONS_TOOLS_LIST_CHANGED),
            ("resources", NOTIFICATIONS_RESOURCES_LIST_CHANGED),
            ("prompts", NOTIFICATIONS_PROMPTS_LIST_CHANGED),
        ):
            registry.on(descriptor, self._list_changed_handler(kind))
        return registry

    # -- lifecycle -----------------------------------------------------------------------

    async def __aenter__(self) -> ClientSession:
        await self.peer.__aenter__()
        try:
            await self.open()
        except BaseException:
            # Stop the peer as after a clean exit, then raise the handshake's own error:
            # handing it to the task group would wrap it in an ExceptionGroup.
            await self.peer.__aexit__(None, None, None)
            raise
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        return await self.peer.__aexit__(exc_type, exc, tb)

    async def ping(self, *, timeout: float | None = None) -> None:
        """Check that the server answers (handshake era; 2026-07-28 has no ``ping``)."""
        if self.modern:
            raise LocalError("ping does not exist in MCP 2026-07-28")
        await self.peer.request(PING, {}, timeout=self._timeout(timeout))
