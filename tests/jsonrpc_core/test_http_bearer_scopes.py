"""`BearerAuth` scopes in jsonrpc_core: scopes every request needs, scopes per message
(403 ``insufficient_scope`` for step-up), scope hierarchies, routes served beside the
endpoint without a token, and the token kept away from handlers. Nothing a refused
request carries is ever dispatched."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
import httpx
import pytest

from jsonrpc_core import (
    BearerAuth,
    HTTPServerOptions,
    JsonRpcHTTPApp,
    MessageStream,
    MethodRegistry,
    Peer,
    Request,
)
from jsonrpc_core.http import (
    HTTPRequest,
    HTTPResponse,
    Route,
    principal_scopes,
    without_credentials,
)
from jsonrpc_core.testing import StreamingASGITransport

pytestmark = pytest.mark.anyio

URL = "http://127.0.0.1/rpc"
HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
METADATA = "http://127.0.0.1/.well-known/oauth-protected-resource/rpc"


@dataclass(frozen=True)
class Principal:
    name: str
    scopes: frozenset[str]


TOKENS = {
    "reader": Principal("reader", frozenset({"rpc", "read"})),
    "writer": Principal("writer", frozenset({"rpc", "read", "write"})),
    "admin": Principal("admin", frozenset({"rpc", "admin"})),
    "outsider": Principal("outsider", frozenset({"read", "write"})),
}


async def verify(token: str) -> Principal | None:
    return TOKENS.get(token)


def needs(message: Any) -> list[str]:
    return {"write": ["write"], "read": ["read"]}.get(getattr(message, "method", ""), [])


def admin_implies_all(granted: frozenset[str], scope: str) -> bool:
    return scope in granted or "admin" in granted


async def metadata(request: HTTPRequest) -> HTTPResponse:
    return HTTPResponse.json({"resource": "http://127.0.0.1/rpc", "ok": True})


@asynccontextmanager
async def serve(**auth_options: Any) -> AsyncIterator[tuple[httpx.AsyncClient, list[Any]]]:
    calls: list[Any] = []
    registry = MethodRegistry()

    def record(name: str) -> Any:
        def handler(params: Any, ctx: Any) -> Any:
            calls.append((name, ctx.info.principal.name))
            return {"authorization": ctx.info.header("authorization")}

        return handler

    for name in ("read", "write", "other"):
        registry.on(name, record(name))

    async def serve_connection(stream: MessageStream) -> None:
        await Peer(stream, registry).run()

    auth = BearerAuth(
        verify,
        resource_metadata_url=METADATA,
        routes=[Route("/.well-known/oauth-protected-resource/rpc", ("GET",), metadata)],
        **auth_options,
    )
    app = JsonRpcHTTPApp(
        serve_connection,
        HTTPServerOptions(path="/rpc", sessions=None, json_response=True, auth=auth),
    )
    async with app.running(), httpx.AsyncClient(transport=StreamingASGITransport(app)) as http:
        with anyio.fail_after(10):
            yield http, calls


async def call(http: httpx.AsyncClient, token: str, *methods: str) -> httpx.Response:
    messages = [{"jsonrpc": "2.0", "id": i, "method": m} for i, m in enumerate(methods, 1)]
    body = messages[0] if len(messages) == 1 else messages
    headers = {**HEADERS, "authorization": f"Bearer {token}"}
    return await http.post(URL, content=json.dumps(body), headers=headers)


async def test_message_scopes_refuse_with_403_naming_every_needed_scope() -> None:
    async with serve(scopes=["rpc"], message_scopes=needs) as (http, calls):
        allowed = await call(http, "reader", "read")
        refused = await call(http, "reader", "write")
    assert allowed.status_code == 200
    assert refused.status_code == 403
    challenge = refused.headers["www-authenticate"]
    assert challenge.startswith("Bearer ")
    assert 'error="insufficient_scope"' in challenge
    assert 'scope="rpc write"' in challenge
    assert f'resource_metadata="{METADATA}"' in challenge
    assert calls == [("read", "reader")]


async def test_base_scopes_are_needed_by_every_request() -> None:
    async with serve(scopes=["rpc"]) as (http, calls):
        refused = await call(http, "outsider", "other")
        missing = await http.post(URL, content=b"{}", headers=HEADERS)
    assert refused.status_code == 403
    assert 'scope="rpc"' in refused.headers["www-authenticate"]
    assert missing.status_code == 401
    assert 'scope="rpc"' in missing.headers["www-authenticate"]
    assert "error=" not in missing.headers["www-authenticate"]
    assert calls == []


async def test_a_batch_is_refused_whole_when_one_message_lacks_a_scope() -> None:
    async with serve(message_scopes=needs) as (http, calls):
        refused = await call(http, "reader", "read", "write")
    assert refused.status_code == 403
    assert 'scope="read write"' in refused.headers["www-authenticate"]
    assert calls == []


async def test_scope_hierarchies_through_satisfies() -> None:
    async with serve(scopes=["rpc"], message_scopes=needs, satisfies=admin_implies_all) as (
        http,
        calls,
    ):
        answer = await call(http, "admin", "write")
    assert answer.status_code == 200
    assert calls == [("write", "admin")]


async def test_handlers_never_see_the_token() -> None:
    async with serve() as (http, _):
        answer = await call(http, "writer", "write")
    assert answer.json()["result"] == {"authorization": None}


async def test_auth_routes_are_served_without_a_token() -> None:
    async with serve(scopes=["rpc"]) as (http, _):
        answer = await http.get("http://127.0.0.1/.well-known/oauth-protected-resource/rpc")
    assert answer.status_code == 200
    assert answer.json()["ok"] is True


def test_challenge_quotes_values() -> None:
    auth = BearerAuth(verify, realm='a "b"', scopes=["x", "y"])
    assert auth.challenge("invalid_token", 'bad \\ "token"') == (
        'Bearer realm="a \\"b\\"", error="invalid_token", '
        'error_description="bad \\\\ \\"token\\"", scope="x y"'
    )


def test_principal_scopes_reads_attributes_and_mappings() -> None:
    assert principal_scopes(TOKENS["reader"]) == {"rpc", "read"}
    assert principal_scopes({"scope": "a b"}) == {"a", "b"}
    assert principal_scopes({"scopes": ["c"]}) == {"c"}
    assert principal_scopes("alice") == frozenset()
    assert principal_scopes(None) == frozenset()


def test_without_credentials_drops_only_authorization() -> None:
    assert without_credentials({"authorization": "Bearer x", "host": "h"}) == {"host": "h"}


def test_authorize_accepts_requests_without_requirements() -> None:
    auth = BearerAuth(verify, message_scopes=needs)
    auth.authorize(TOKENS["reader"], Request(1, "other", None))
    auth.authorize(TOKENS["reader"], [Request(1, "read", None)])
