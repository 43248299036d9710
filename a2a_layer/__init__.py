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
use, so that ``import a2a_layer`` stays cheap (no HTTP stack, no module of the JSON-RPC
core).
"""

from typing import TYPE_CHECKING

from jsonrpc_core import install_lazy_exports

from . import types as types

if TYPE_CHECKING or not install_lazy_exports(globals()):
    from ._card import CARD_PATH as CARD_PATH
    from ._card import LEGACY_CARD_PATH as LEGACY_CARD_PATH
    from ._card import CardNotFound as CardNotFound
    from ._card import resolve_card as resolve_card
    from ._client import A2AClient as A2AClient
    from ._client import BearerToken as BearerToken
    from ._client import user_message as user_message
    from ._client_interface import NoSupportedInterface as NoSupportedInterface
    from ._errors import A2A_ERRORS as A2A_ERRORS
    from ._errors import A2AError as A2AError
    from ._errors import ContentTypeNotSupported as ContentTypeNotSupported
    from ._errors import ExtendedAgentCardNotConfigured as ExtendedAgentCardNotConfigured
    from ._errors import ExtensionSupportRequired as ExtensionSupportRequired
    from ._errors import InvalidAgentResponse as InvalidAgentResponse
    from ._errors import PushNotificationNotSupported as PushNotificationNotSupported
    from ._errors import TaskNotCancelable as TaskNotCancelable
    from ._errors import TaskNotFound as TaskNotFound
    from ._errors import UnsupportedOperation as UnsupportedOperation
    from ._errors import VersionNotSupported as VersionNotSupported
    from ._executor import AgentExecutor as AgentExecutor
    from ._executor import AgentFunction as AgentFunction
    from ._executor import ExecutionContext as ExecutionContext
    from ._executor import TaskUpdater as TaskUpdater
    from ._executor import agent_message as agent_message
    from ._executor import new_id as new_id
    from ._executor import text_of as text_of
    from ._postgres import PostgresTaskStore as PostgresTaskStore
    from ._push import TOKEN_HEADER as TOKEN_HEADER
    from ._push import PushDispatcher as PushDispatcher
    from ._push import PushReceiver as PushReceiver
    from ._push import PushRejected as PushRejected
    from ._runtime import CallInfo as CallInfo
    from ._server import A2AServer as A2AServer
    from ._shared import SharedTaskStore as SharedTaskStore
    from ._sqlite import SQLiteTaskStore as SQLiteTaskStore
    from ._state import InvalidTransition as InvalidTransition
    from ._store import InMemoryTaskStore as InMemoryTaskStore
    from ._store import MessageRecord as MessageRecord
    from ._store import TaskPage as TaskPage
    from ._store import TaskQuery as TaskQuery
    from ._store import TaskStore as TaskStore
