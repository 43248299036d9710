"""What a tool, resource or prompt function can do while it runs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pydantic

from jsonrpc_core import LocalError, RequestContext

from ._methods import (
    ELICITATION_CREATE,
    NOTIFICATIONS_PROGRESS,
    ROOTS_LIST,
    SAMPLING_CREATE_MESSAGE,
)
from .types import (
    ClientCapabilities,
    CreateMessageRequestParams,
    CreateMessageResult,
    ElicitRequestFormParams,
    ElicitRequestURLParams,
    ElicitResult,
    Implementation,
    LoggingLevel,
    ProgressNotificationParams,
    Root,
    SamplingMessage,
    TextContent,
)

if TYPE_CHECKING:
    from ._session import ServerSession

__all__ = ["Context"]


class Context:
    """Handed to any tool, resource or prompt function that declares a ``Context`` parameter.

    Its messages go to the client that made the request, on that request's stream:
    log lines (``notifications/message``, honouring the client's ``logging/setLevel``),
    progress (when the client asked for it with a ``progressToken``), and requests back
    to the client: sampling, elicitation, roots.
    """

    def __init__(self, session: ServerSession, request: RequestContext) -> None:
        self.session = session
        self.request = request

    @property
    def request_id(self) -> Any:
        """The id of the request being served."""
        return self.request.request_id

    @property
    def client_info(self) -> Implementation | None:
        """The client's name and version from ``initialize``."""
        return self.session.client_info

    @property
    def client_capabilities(self) -> ClientCapabilities:
        """What the client said it supports."""
        return self.session.client_capabilities

    @property
    def protocol_version(self) -> str:
        """The protocol revision in use for this request."""
        return self.session.version_for(self.request)

    @property
    def progress_token(self) -> str | int | None:
        """The ``progressToken`` the client sent with this request, if any."""
        params = self.request.raw_params
        meta = params.get("_meta") if isinstance(params, dict) else None
        token = meta.get("progressToken") if isinstance(meta, dict) else None
        return token if isinstance(token, (str, int)) and not isinstance(token, bool) else None

    @property
    def cancelled(self) -> bool:
        """Whether the client cancelled this request."""
        return self.request.cancelled

    def close_sse_stream(self) -> bool:
        """End the SSE stream carrying this request's messages, keeping the request alive.

        SSE polling (2025-11-25, SEP-1699): a long-running handler may let go of its HTTP
        response; the client reconnects with ``Last-Event-ID`` after the ``retry`` delay
        and receives what the handler sent meanwhile, including the result. It needs a
        server with an event store (``asgi_app(event_store=...)``) to keep those
        messages; elsewhere (stdio, JSON responses, no event store) it returns ``False``
        and does nothing.
        """
        close = getattr(self.request.info, "close_sse_stream", None)
        if close is None:
            return False
        close()
        return True

    async def log(self, level: LoggingLevel, data: Any, *, logger: str | None = None) -> None:
        """Send a log message to the client, if its log level lets it through."""
        await self.session.send_log(level, data, logger=logger)

    async def debug(self, data: Any, *, logger: str | None = None) -> None:
        """Log at ``debug``."""
        await self.log("debug", data, logger=logger)

    async def info(self, data: Any, *, logger: str | None = None) -> None:
        """Log at ``info``."""
        await self.log("info", data, logger=logger)

    async def warning(self, data: Any, *, logger: str | None = None) -> None:
        """Log at ``warning``."""
        await self.log("warning", data, logger=logger)

    async def error(self, data: Any, *, logger: str | None = None) -> None:
        """Log at ``error``."""
        await self.log("error", data, logger=logger)

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Send ``notifications/progress`` (nothing if the client did not ask for it)."""
        token = self.progress_token
        if token is None:
            return
        params = ProgressNotificationParams(
            progress_token=token, progress=progress, total=total, message=message
        )
        await self.request.peer.notify(NOTIFICATIONS_PROGRESS, params)

    async def sample(
        self,
        messages: list[SamplingMessage] | str,
        *,
        max_tokens: int = 1000,
        system_prompt: str | None = None,
        timeout: float | None = None,
        **params: Any,
    ) -> CreateMessageResult:
        """Ask the client's model for a completion (``sampling/createMessage``).

        Raises `jsonrpc_core.LocalError`, sending nothing, if the client did not declare
        sampling (or ``sampling.tools``, for a request with ``tools`` or ``tool_choice``).
        """
        if isinstance(messages, str):
            messages = [SamplingMessage(role="user", content=TextContent(text=messages))]
        request = CreateMessageRequestParams(
            messages=messages, max_tokens=max_tokens, system_prompt=system_prompt, **params
        )
        declared = self.client_capabilities.sampling
        self._require("sampling", declared is not None)
        if request.tools is not None or request.tool_choice is not None:
            self._require(
                "sampling with tools", declared is not None and declared.tools is not None
            )
        return await self.request.peer.request(SAMPLING_CREATE_MESSAGE, request, timeout=timeout)

    def _require(self, feature: str, declared: bool) -> None:
        # Requests back to the client use only what it declared ("Only use capabilities
        # that were successfully negotiated"; for elicitation modes and sampling with
        # tools the spec says MUST NOT outright). A stateless server has no handshake to
        # learn them from, so it tries.
        if not declared and not self.session.stateless:
            raise LocalError(f"the client does not support {feature}")

    def _check_elicitation(self, mode: str) -> None:
        declared = self.client_capabilities.elicitation
        supported = declared is not None and (
            declared.supports_url if mode == "url" else declared.supports_form
        )
        self._require(f"{mode}-mode elicitation", supported)

    async def elicit(
        self,
        message: str,
        schema: type[pydantic.BaseModel] | dict[str, Any],
        *,
        timeout: float | None = None,
    ) -> ElicitResult:
        """Ask the user for structured input through the client (form mode).

        Raises `jsonrpc_core.LocalError`, sending nothing, if the client did not declare
        form-mode elicitation.
        """
        self._check_elicitation("form")
        if isinstance(schema, type):
            requested = schema.model_json_schema()
            requested.pop("title", None)
        else:
            requested = dict(schema)
        params = ElicitRequestFormParams.model_validate(
            {"mode": "form", "message": message, "requestedSchema": requested}
        )
        return await self.request.peer.request(ELICITATION_CREATE, params, timeout=timeout)

    async def elicit_url(
        self, message: str, url: str, elicitation_id: str, *, timeout: float | None = None
    ) -> ElicitResult:
        """Ask the user to visit ``url`` (URL mode elicitation).

        Raises `jsonrpc_core.LocalError`, sending nothing, if the client did not declare
        URL-mode elicitation.
        """
        self._check_elicitation("url")
        params = ElicitRequestURLParams(
            mode="url", message=message, url=url, elicitation_id=elicitation_id
        )
        return await self.request.peer.request(ELICITATION_CREATE, params, timeout=timeout)

    async def list_roots(self, *, timeout: float | None = None) -> list[Root]:
        """The client's roots (``roots/list``).

        Raises `jsonrpc_core.LocalError`, sending nothing, if the client did not declare
        roots.
        """
        self._require("roots", self.client_capabilities.roots is not None)
        result = await self.request.peer.request(ROOTS_LIST, {}, timeout=timeout)
        return list(result.roots)
