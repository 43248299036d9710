"""a2a_layer: the Agent2Agent (A2A) protocol on rpcweave's JSON-RPC core.

Speaks A2A 1.0 (ProtoJSON objects, PascalCase methods, ``A2A-Version: 1.0``) and keeps
0.3 peers working (``message/send``, ``kind`` discriminators). The objects live in
`a2a_layer.types`.

Serving an agent::

    async def agent(context: ExecutionContext, updater: TaskUpdater) -> None:
        await updater.start_work()
        await updater.add_artifact("Hello from the agent")
        await updater.complete()

    A2AServer(card, agent, store=SQLiteTaskStore("tasks.db")).run(port=9999)

Calling one::

    async with A2AClient.connect("http://127.0.0.1:9999") as client:
        async for event in client.stream("hi"):
            ...

Everything but `types` (errors, server, client, stores, push) is imported on first
use, so that ``import a2a_layer`` stays cheap (no HTTP stack, no JSON-RPC core).
"""

from typing import TYPE_CHECKING, Any

from . import types

if TYPE_CHECKING:
    from ._card import CARD_PATH, LEGACY_CARD_PATH, CardNotFound, resolve_card
    from ._client import A2AClient, BearerToken, NoSupportedInterface, user_message
    from ._errors import (
        A2A_ERRORS,
        A2AError,
        ContentTypeNotSupported,
        ExtendedAgentCardNotConfigured,
        ExtensionSupportRequired,
        InvalidAgentResponse,
        PushNotificationNotSupported,
        TaskNotCancelable,
        TaskNotFound,
        UnsupportedOperation,
        VersionNotSupported,
    )
    from ._executor import (
        AgentExecutor,
        AgentFunction,
        ExecutionContext,
        TaskUpdater,
        agent_message,
        new_id,
        text_of,
    )
    from ._postgres import PostgresTaskStore
    from ._push import TOKEN_HEADER, PushDispatcher, PushReceiver, PushRejected
    from ._runtime import CallInfo
    from ._server import A2AServer
    from ._shared import SharedTaskStore
    from ._sqlite import SQLiteTaskStore
    from ._state import InvalidTransition
    from ._store import InMemoryTaskStore, MessageRecord, TaskPage, TaskQuery, TaskStore

_ERRORS = (
    "A2A_ERRORS",
    "A2AError",
    "ContentTypeNotSupported",
    "ExtendedAgentCardNotConfigured",
    "ExtensionSupportRequired",
    "InvalidAgentResponse",
    "PushNotificationNotSupported",
    "TaskNotCancelable",
    "TaskNotFound",
    "UnsupportedOperation",
    "VersionNotSupported",
)

_LAZY = {
    **dict.fromkeys(_ERRORS, "._errors"),
    "CARD_PATH": "._card",
    "LEGACY_CARD_PATH": "._card",
    "CardNotFound": "._card",
    "resolve_card": "._card",
    "A2AClient": "._client",
    "BearerToken": "._client",
    "NoSupportedInterface": "._client",
    "user_message": "._client",
    "AgentExecutor": "._executor",
    "AgentFunction": "._executor",
    "ExecutionContext": "._executor",
    "TaskUpdater": "._executor",
    "agent_message": "._executor",
    "new_id": "._executor",
    "text_of": "._executor",
    "TOKEN_HEADER": "._push",
    "PushDispatcher": "._push",
    "PushReceiver": "._push",
    "PushRejected": "._push",
    "CallInfo": "._runtime",
    "A2AServer": "._server",
    "PostgresTaskStore": "._postgres",
    "SharedTaskStore": "._shared",
    "SQLiteTaskStore": "._sqlite",
    "InvalidTransition": "._state",
    "InMemoryTaskStore": "._store",
    "MessageRecord": "._store",
    "TaskPage": "._store",
    "TaskQuery": "._store",
    "TaskStore": "._store",
}


def __getattr__(name: str) -> Any:
    module_name = _LAZY.get(name)
    if module_name is None:
        raise AttributeError(f"module 'a2a_layer' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module_name, __name__), name)
    globals()[name] = value
    return value


__all__ = [
    "A2A_ERRORS",
    "CARD_PATH",
    "LEGACY_CARD_PATH",
    "TOKEN_HEADER",
    "A2AClient",
    "A2AError",
    "A2AServer",
    "AgentExecutor",
    "AgentFunction",
    "BearerToken",
    "CallInfo",
    "CardNotFound",
    "ContentTypeNotSupported",
    "ExecutionContext",
    "ExtendedAgentCardNotConfigured",
    "ExtensionSupportRequired",
    "InMemoryTaskStore",
    "InvalidAgentResponse",
    "InvalidTransition",
    "MessageRecord",
    "NoSupportedInterface",
    "PostgresTaskStore",
    "PushDispatcher",
    "PushNotificationNotSupported",
    "PushReceiver",
    "PushRejected",
    "SQLiteTaskStore",
    "SharedTaskStore",
    "TaskNotCancelable",
    "TaskNotFound",
    "TaskPage",
    "TaskQuery",
    "TaskStore",
    "TaskUpdater",
    "UnsupportedOperation",
    "VersionNotSupported",
    "agent_message",
    "new_id",
    "resolve_card",
    "text_of",
    "types",
    "user_message",
]
