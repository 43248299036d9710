"""The HTTP parts a protocol layer or an HTTP extension builds on, beyond `jsonrpc_core`'s own.

`jsonrpc_core` exports what serving and calling JSON-RPC over HTTP takes
(`JsonRpcHTTPApp`, `HTTPServerOptions`, `serve`, `StreamableHTTPTransport`, the policies
`SessionPolicy`, `OriginPolicy`, `BearerAuth`). This module holds the rest, public and
kept stable for the layers (MCP, A2A) and for users who extend the HTTP server:

- the ASGI app's requests, answers and extra routes (`HTTPRequest`, `HTTPRequestInfo`,
  `HTTPResponse`, `SSEResponse`, `Route`, `read_body` and its errors), its sessions
  (`HTTPSession`, `SESSION_HEADER`), per-connection serving (`ServeConnection`), bearer
  scopes (`ScopeRequirement`, `principal_scopes`, `without_credentials`);
- the client side: rpcweave's HTTP/1.1 transport under httpx (`HTTP1Transport`,
  `new_async_client`, `send_post`), the lean sessionless caller (`HTTPCaller`), bounded body reads
  (`read_response_body`, `fetch_body`, `ResponseTooLarge`, `DEFAULT_MAX_BODY_SIZE`) and
  the address policy for URLs a remote party chose (`public_addresses_only`);
- the SSE codec (`SSEDecoder`, `encode_event`) and the event stores shared by several
  processes (`SharedEventStore`, `Replay`).

Each name loads on first use, like `jsonrpc_core`'s.
"""

from typing import TYPE_CHECKING

from jsonrpc_core import install_lazy_exports

if TYPE_CHECKING or not install_lazy_exports(globals()):
    from ._event_store import Replay as Replay
    from ._event_store import SharedEventStore as SharedEventStore
    from ._http1 import AddressRefused as AddressRefused
    from ._http1 import AddressResolver as AddressResolver
    from ._http1 import AnyAsyncClient as AnyAsyncClient
    from ._http1 import HTTP1Transport as HTTP1Transport
    from ._http1 import as_httpx_client as as_httpx_client
    from ._http1 import is_public_address as is_public_address
    from ._http1 import new_async_client as new_async_client
    from ._http1 import public_addresses_only as public_addresses_only
    from ._http1 import send_post as send_post
    from ._http_body import DEFAULT_MAX_BODY_SIZE as DEFAULT_MAX_BODY_SIZE
    from ._http_body import ResponseTooLarge as ResponseTooLarge
    from ._http_body import fetch_body as fetch_body
    from ._http_body import read_response_body as read_response_body
    from ._http_caller import HTTPCaller as HTTPCaller
    from ._http_common import SESSION_HEADER as SESSION_HEADER
    from ._http_common import BodyTooLarge as BodyTooLarge
    from ._http_common import BodyTooSlow as BodyTooSlow
    from ._http_common import ClientDisconnected as ClientDisconnected
    from ._http_common import HTTPRequest as HTTPRequest
    from ._http_common import HTTPRequestInfo as HTTPRequestInfo
    from ._http_common import HTTPResponse as HTTPResponse
    from ._http_common import Route as Route
    from ._http_common import SSEResponse as SSEResponse
    from ._http_common import read_body as read_body
    from ._http_security import ScopeRequirement as ScopeRequirement
    from ._http_security import principal_scopes as principal_scopes
    from ._http_security import without_credentials as without_credentials
    from ._http_server import ServeConnection as ServeConnection
    from ._http_sessions import HTTPSession as HTTPSession
    from ._sse import SSEDecoder as SSEDecoder
    from ._sse import SSEError as SSEError
    from ._sse import SSEEvent as SSEEvent
    from ._sse import encode_comment as encode_comment
    from ._sse import encode_event as encode_event
