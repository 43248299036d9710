"""The feature handlers of a `ServerSession`: tools, resources, prompts and completion.

Each serves both eras (`ServerSession` registers them, gives each request its
`RequestScope` and completes a 2026-era result); the module rules of
`mcp_layer._session` hold, rules 3 and 5 here:

3. Tool failures are results (``isError: true``), never protocol errors; an unknown tool
   and malformed ``tools/call`` params are protocol errors (-32602).
5. A 2026-era ``tools/call``, ``prompts/get`` or ``resources/read`` verifies its
   ``requestState`` before its handler runs (`ServerSession._input_round`); a missing
   answer ends the handler with an ``InputRequiredResult``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from inspect import isawaitable
from typing import TYPE_CHECKING, Any, cast

from jsonrpc_core import InvalidParams, JsonRpcError, Peer, RequestContext

from ._era import RequestScope
from ._errors import ResourceNotFound
from ._functions import ArgumentsError
from ._methods import NOTIFICATIONS_RESOURCES_UPDATED
from ._registry import call
from ._results import (
    to_call_tool_result,
    to_call_tool_wire,
    to_prompt_result,
    to_resource_contents,
)
from .types import (
    CallToolRequestParams,
    CallToolResult,
    CompleteRequestParams,
    CompleteResult,
    Completion,
    EmptyResult,
    GetPromptRequestParams,
    GetPromptResult,
    InputRequiredResult,
    ListPromptsResult,
    ListResourcesResult,
    ListResourceTemplatesResult,
    ListToolsResult,
    PaginatedRequestParams,
    ReadResourceRequestParams,
    ReadResourceResult,
    ResourceUpdatedNotificationParams,
    Result,
    SubscribeRequestParams,
    TextContent,
    UnsubscribeRequestParams,
)

if TYPE_CHECKING:
    from ._context import Context
    from ._mrtr import InputRound
    from ._server import MCPServer
    from ._session import ServerSession

__all__ = ["FeatureHandlers"]

logger = logging.getLogger("mcp_layer.server")


class FeatureHandlers:
    """Tools, resources, prompts and completion, the base of `ServerSession`.

    What it needs from the session: the state declared below, and the 2026-era round of
    a request (`_input_round`, `_input_required`) and its completed wire form
    (`complete_wire`). Every handler is looked up on the session's class as before the
    split: serving a request has no extra call (where a `Context` or a task is made,
    ``self`` is handed on as the `ServerSession` it is, through `typing.cast`).
    """

    server: MCPServer
    peer: Peer | None
    subscriptions: set[str]
    """The URIs this client subscribed to (handshake era, ``resources/subscribe``)."""

    if TYPE_CHECKING:

        def _input_round(
            self,
            ctx: RequestContext,
            method: str,
            target: str,
            arguments: Any,
            params: Any,
            *,
            can_ask: bool = True,
        ) -> InputRound | None:
            raise NotImplementedError

        def _input_required(
            self, inputs: InputRound, requests: dict[str, Any]
        ) -> InputRequiredResult:
            raise NotImplementedError

        def complete_wire(self, result: dict[str, Any]) -> dict[str, Any]:
            raise NotImplementedError

    # -- tools ---------------------------------------------------------------------

    def _list_tools(
        self, params: PaginatedRequestParams, ctx: RequestContext, scope: RequestScope
    ) -> ListToolsResult | dict[str, Any]:
        page, next_cursor = self.server.page(list(self.server.tools.values()), params.cursor)
        if scope.modern:  # `complete_result` fills in the model
            return ListToolsResult(tools=[entry.tool for entry in page], next_cursor=next_cursor)
        # A handshake-era tool declares its task support in `execution` (2025-11-25).
        tools = [entry.handshake_tool or entry.tool for entry in page]
        # A handshake-era result is written as `ListToolsResult` would be (the same members
        # in the same order, each `Tool` by its own serializer) without building that
        # model, whose validator and serializer would hold one more copy of `Tool`'s.
        if next_cursor is None:
            return {"tools": tools}
        return {"nextCursor": next_cursor, "tools": tools}

    async def _call_tool(
        self, params: CallToolRequestParams, ctx: RequestContext, scope: RequestScope
    ) -> CallToolResult | InputRequiredResult | Result | dict[str, Any]:
        entry = self.server.tools.get(params.name)
        if entry is None:
            raise InvalidParams(f"Unknown tool: {params.name}")
        inputs: InputRound | None = None
        if scope.modern:
            can_ask = entry.signature.context_param is not None
            inputs = self._input_round(
                ctx, "tools/call", params.name, params.arguments, params, can_ask=can_ask
            )
        tasks = self.server.tasks
        if tasks is not None and scope.modern:
            task_result: Result | None = await tasks.maybe_start(
                cast("ServerSession", self), entry, params, ctx, scope, inputs
            )
            if task_result is not None:
                return task_result
        elif tasks is not None:
            from ._tasks_legacy import start_task  # 2025-11-25 tasks: loaded on first use

            session = cast("ServerSession", self)  # the one class built on this one
            created = await start_task(tasks, session, entry, params, ctx, scope)
            if created is not None:
                return created
        # A plain result may come as its wire form: as it is in the handshake era, and
        # completed here in the 2026 era (`complete_result` passes a dict through).
        result = await self.run_tool(entry, params, ctx, scope, inputs, wire=True)
        if scope.modern and type(result) is dict:
            return self.complete_wire(result)
        return result

    async def run_tool(
        self,
        entry: Any,
        params: CallToolRequestParams,
        ctx: RequestContext,
        scope: RequestScope,
        inputs: InputRound | None,
        context: Context | None = None,
        *,
        wire: bool = False,
    ) -> CallToolResult | InputRequiredResult | dict[str, Any]:
        """Run a tool's function and make its result (or failure) a ``CallToolResult``;
        with ``wire``, a plain result may come as its encoded-equivalent dict instead."""
        signature = entry.signature
        try:
            kwargs = signature.validate(params.arguments)
        except ArgumentsError as exc:
            return _tool_error(f"Invalid arguments for tool {params.name!r}: {exc}")
        if signature.context_param is not None:
            kwargs[signature.context_param] = context or _new_context(self, ctx, scope, inputs)
        try:
            func = signature.func
            if signature.is_async:  # known since the tool was declared: no test per call
                value = await func(**kwargs)
            elif entry.run_in_thread:
                value = await call(func, kwargs, in_thread=True)
            else:
                value = func(**kwargs)
                if isawaitable(value):  # a plain function may still hand back an awaitable
                    value = await value
        except JsonRpcError as exc:
            if exc.received:
                # The client refused a request the tool made (sampling, elicitation):
                # the tool failed, the protocol did not.
                return _tool_error(f"{params.name!r} failed: the client answered {exc.message}")
            raise
        except Exception as exc:
            logger.info("tool %r failed: %r", params.name, exc)
            return _tool_error(f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__)
        except BaseException as exc:
            signal = inputs.signal_in(exc) if inputs is not None else None
            if signal is None or inputs is None:
                raise
            return self._input_required(inputs, signal.requests)
        if wire:
            plain = to_call_tool_wire(
                value, output_schema=signature.output_schema, wraps_result=signature.wraps_result
            )
            if plain is not None:
                return plain
        return to_call_tool_result(
            value, output_schema=signature.output_schema, wraps_result=signature.wraps_result
        )

    # -- resources -------------------------------------------------------------------

    def _list_resources(
        self, params: PaginatedRequestParams, ctx: RequestContext, scope: RequestScope
    ) -> ListResourcesResult:
        entries = list(self.server.resources.values())
        page, next_cursor = self.server.page(entries, params.cursor)
        return ListResourcesResult(resources=[e.resource for e in page], next_cursor=next_cursor)

    def _list_templates(
        self, params: PaginatedRequestParams, ctx: RequestContext, scope: RequestScope
    ) -> ListResourceTemplatesResult:
        page, next_cursor = self.server.page(list(self.server.templates.values()), params.cursor)
        return ListResourceTemplatesResult(
            resource_templates=[e.template for e in page], next_cursor=next_cursor
        )

    async def _read_resource(
        self, params: ReadResourceRequestParams, ctx: RequestContext, scope: RequestScope
    ) -> ReadResourceResult | InputRequiredResult:
        uri = params.uri
        found = self._find_resource(uri)
        if found is None:
            if scope.modern:
                raise InvalidParams(f"Resource not found: {uri}", data={"uri": uri})
            raise ResourceNotFound(f"Resource not found: {uri}", data={"uri": uri})
        func, kwargs, context_param, mime_type = found
        inputs: InputRound | None = None
        if scope.modern:
            inputs = self._input_round(
                ctx, "resources/read", uri, None, params, can_ask=bool(context_param)
            )
        if context_param:
            kwargs[context_param] = _new_context(self, ctx, scope, inputs)
        try:
            value = await call(func, kwargs)
        except BaseException as exc:
            signal = inputs.signal_in(exc) if inputs is not None else None
            if signal is None or inputs is None:
                raise
            return self._input_required(inputs, signal.requests)
        return ReadResourceResult(contents=to_resource_contents(uri, value, mime_type))

    def _find_resource(
        self, uri: str
    ) -> tuple[Callable[..., Any], dict[str, Any], str | None, str | None] | None:
        static = self.server.resources.get(uri)
        if static is not None:
            return static.func, {}, static.context_param, static.resource.mime_type
        for entry in self.server.templates.values():
            variables = entry.matcher.match(uri)
            if variables is not None:
                return entry.func, dict(variables), entry.context_param, entry.template.mime_type
        return None

    def _subscribe(self, params: SubscribeRequestParams, ctx: RequestContext) -> EmptyResult:
        self.subscriptions.add(params.uri)
        return EmptyResult()

    def _unsubscribe(self, params: UnsubscribeRequestParams, ctx: RequestContext) -> EmptyResult:
        self.subscriptions.discard(params.uri)
        return EmptyResult()

    async def notify_resource_updated(self, uri: str) -> None:
        """Tell this client ``uri`` changed, if it subscribed to it (handshake era)."""
        if uri in self.subscriptions and self.peer is not None and not self.peer.closed:
            await self.peer.notify(
                NOTIFICATIONS_RESOURCES_UPDATED, ResourceUpdatedNotificationParams(uri=uri)
            )

    # -- prompts and completion ------------------------------------------------------

    def _list_prompts(
        self, params: PaginatedRequestParams, ctx: RequestContext, scope: RequestScope
    ) -> ListPromptsResult:
        page, next_cursor = self.server.page(list(self.server.prompts.values()), params.cursor)
        return ListPromptsResult(prompts=[e.prompt for e in page], next_cursor=next_cursor)

    async def _get_prompt(
        self, params: GetPromptRequestParams, ctx: RequestContext, scope: RequestScope
    ) -> GetPromptResult | InputRequiredResult:
        entry = self.server.prompts.get(params.name)
        if entry is None:
            raise InvalidParams(f"Unknown prompt: {params.name}")
        try:
            kwargs = entry.signature.validate(params.arguments)
        except ArgumentsError as exc:
            raise InvalidParams(f"Invalid arguments for prompt {params.name!r}: {exc}") from None
        inputs: InputRound | None = None
        if scope.modern:
            can_ask = entry.signature.context_param is not None
            inputs = self._input_round(
                ctx, "prompts/get", params.name, params.arguments, params, can_ask=can_ask
            )
        if entry.signature.context_param is not None:
            kwargs[entry.signature.context_param] = _new_context(self, ctx, scope, inputs)
        try:
            value = await call(entry.signature.func, kwargs)
        except BaseException as exc:
            signal = inputs.signal_in(exc) if inputs is not None else None
            if signal is None or inputs is None:
                raise
            return self._input_required(inputs, signal.requests)
        return to_prompt_result(value, entry.prompt.description)

    async def _complete(
        self, params: CompleteRequestParams, ctx: RequestContext, scope: RequestScope
    ) -> CompleteResult:
        handler = self.server.completion_handler
        if handler is None:
            return CompleteResult(completion=Completion(values=[]))
        value = await call(
            handler,
            {"ref": params.ref, "argument": params.argument, "context": params.context},
        )
        if isinstance(value, CompleteResult):
            return value
        if isinstance(value, Completion):
            return CompleteResult(completion=value)
        values = list(value or [])
        return CompleteResult(
            completion=Completion(
                values=values[:100], total=len(values), has_more=len(values) > 100
            )
        )


_CONTEXT: type[Context] | None = None


def _new_context(
    handlers: FeatureHandlers, ctx: RequestContext, scope: RequestScope, inputs: InputRound | None
) -> Context:
    """The `Context` of a function that takes one (`Context` loaded when one first does);
    ``handlers`` is the `ServerSession` it is (the one class built on `FeatureHandlers`)."""
    global _CONTEXT
    if _CONTEXT is None:
        from ._context import Context

        _CONTEXT = Context
    return _CONTEXT(cast("ServerSession", handlers), ctx, scope, inputs)


def _tool_error(message: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(text=message)], is_error=True)
