"""MCP authorization end to end, in process: our client (`OAuthAuth` on
`connect_http`) + our resource server (`ProtectedResource` + `JWTVerifier`) + the test
authorization server of ``fixtures/oauth_server.py``, through discovery, dynamic client
registration, PKCE, token, refresh and step-up."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
import httpx
import pytest
from _connect import ROOT, load_example
from fixtures.oauth_server import HostDispatch, TestAuthorizationServer

from jsonrpc_core import HTTPStatusError
from jsonrpc_core.testing import StreamingASGITransport
from mcp_layer import ClientSession, MCPServer, connect_http
from mcp_layer.auth import (
    AuthorizationLimitError,
    ClientCredentialsAuth,
    ClientInformation,
    ClientMetadata,
    InMemoryTokenStorage,
    JWTVerifier,
    OAuthAuth,
    ProtectedResource,
    TokenError,
)

pytestmark = pytest.mark.anyio

MCP_HOST = "localhost:8001"
AS_HOST = "127.0.0.1:9000"
SERVER_URL = f"http://{MCP_HOST}/mcp"
ISSUER = f"http://{AS_HOST}"
REDIRECT_URI = "http://127.0.0.1:33418/callback"


class FakeClock:
    def __init__(self, now: float = 1_800_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@dataclass
class Stack:
    http: httpx.AsyncClient
    issuer: TestAuthorizationServer
    effects: list[str]
    clock: FakeClock
    browser_visits: list[str]

    async def browser(self, url: str) -> str:
        """The user's browser: follows the link, consents, returns where it lands."""
        self.browser_visits.append(url)
        response = await self.http.get(url)
        assert response.status_code == 302, response.text
        return response.headers["location"]

    def auth(self, **options: Any) -> OAuthAuth:
        options.setdefault("http_client", self.http)
        options.setdefault("clock", self.clock)
        options.setdefault("client_metadata", ClientMetadata(client_name="flow test"))
        return OAuthAuth(self.browser, redirect_uri=REDIRECT_URI, **options)

    @asynccontextmanager
    async def session(self, auth: httpx.Auth) -> AsyncIterator[ClientSession]:
        async with connect_http(SERVER_URL, auth=auth, client=self.http) as session:
            yield session


@asynccontextmanager
async def stack(
    *, token_lifetime: int = 3600, scopes: list[str] | None = None, **as_options: Any
) -> AsyncIterator[Stack]:
    clock = FakeClock()
    authorization_server = TestAuthorizationServer(
        ISSUER, clock=clock, token_lifetime=token_lifetime, **as_options
    )
    effects: list[str] = []
    server = MCPServer("protected", "1.0.0")

    @server.tool()
    def delete_file(path: str) -> str:
        """Delete a file."""
        effects.append(path)
        return f"deleted {path}"

    @server.tool()
    def read_file(path: str) -> str:
        """Read a file."""
        return f"contents of {path}"

    auth_http = httpx.AsyncClient(transport=StreamingASGITransport(authorization_server))
    auth = ProtectedResource(
        JWTVerifier(issuer=ISSUER, audience=SERVER_URL, http_client=auth_http, clock=clock),
        resource=SERVER_URL,
        authorization_servers=[ISSUER],
        scopes=scopes if scopes is not None else ["mcp"],
        tool_scopes={"delete_file": ["files:write"]},
    )
    app = server.asgi_app(auth=auth)
    dispatch = HostDispatch({MCP_HOST: app, AS_HOST: authorization_server}, app)
    async with auth_http, httpx.AsyncClient(transport=StreamingASGITransport(dispatch)) as http:
        with anyio.fail_after(30):
            yield Stack(http, authorization_server, effects, clock, [])


def text(result: Any) -> str:
    return str(result.content[0].text)


async def test_discovery_registration_pkce_token_and_step_up() -> None:
    async with stack() as s:
        storage = InMemoryTokenStorage()
        auth = s.auth(storage=storage)
        async with s.session(auth) as session:
            assert text(await session.call_tool("read_file", {"path": "a"})) == "contents of a"
            assert s.effects == []
            # Step-up: delete_file needs files:write; the 403 challenge asks for it.
            result = await session.call_tool("delete_file", {"path": "b"})
            assert text(result) == "deleted b"
            assert s.effects == ["b"]
            # The new token serves both tools, on the same session.
            assert text(await session.call_tool("read_file", {"path": "c"})) == "contents of c"
    issuer = s.issuer
    # Discovery: protected resource metadata, then authorization server metadata.
    assert issuer.requests_to("/.well-known/oauth-authorization-server")
    # One registration, two authorizations (initial + step-up), two code exchanges.
    registrations = issuer.requests_to("/register")
    assert len(registrations) == 1
    assert registrations[0]["redirect_uris"] == [REDIRECT_URI]
    assert registrations[0]["application_type"] == "native"
    assert "refresh_token" in registrations[0]["grant_types"]
    authorizations = issuer.requests_to("/authorize")
    assert [a["scope"] for a in authorizations] == ["mcp", "mcp files:write"]
    for request in authorizations:
        assert request["code_challenge_method"] == "S256"
        assert request["resource"] == SERVER_URL
    exchanges = [t for t in issuer.requests_to("/token") if t["grant_type"] == "authorization_code"]
    assert len(exchanges) == 2
    assert all(t["resource"] == SERVER_URL and t["code_verifier"] for t in exchanges)
    stored = await storage.get_tokens(SERVER_URL)
    assert stored is not None and stored.issuer == ISSUER
    assert set((stored.scope or "").split()) == {"mcp", "files:write"}
    client = await storage.get_client(ISSUER)
    assert client is not None and client.client_id.startswith("dyn-")


async def test_expired_token_is_refreshed_before_the_request() -> None:
    async with stack(token_lifetime=300) as s:
        auth = s.auth()
        async with s.session(auth) as session:
            await session.call_tool("read_file", {"path": "a"})
            s.clock.now += 600  # the access token has expired on every clock
            assert text(await session.call_tool("read_file", {"path": "b"})) == "contents of b"
    refreshes = [t for t in s.issuer.requests_to("/token") if t["grant_type"] == "refresh_token"]
    assert len(refreshes) == 1
    assert refreshes[0]["resource"] == SERVER_URL
    assert len(s.issuer.requests_to("/authorize")) == 1  # no new browser step


async def test_a_401_with_a_refresh_token_refreshes_instead_of_reauthorizing() -> None:
    async with stack(token_lifetime=300) as s:
        auth = s.auth(clock=FakeClock(s.clock.now))  # the client's clock lags behind
        async with s.session(auth) as session:
            await session.call_tool("read_file", {"path": "a"})
            s.clock.now += 600  # expired for the server, not for the client
            assert text(await session.call_tool("read_file", {"path": "b"})) == "contents of b"
    grants = [t["grant_type"] for t in s.issuer.requests_to("/token")]
    assert grants == ["authorization_code", "refresh_token"]
    assert len(s.browser_visits) == 1


async def test_tokens_in_storage_are_reused_without_any_authorization() -> None:
    async with stack() as s:
        storage = InMemoryTokenStorage()
        async with s.session(s.auth(storage=storage)) as session:
            await session.list_tools()
        async with s.session(s.auth(storage=storage)) as session:
            await session.list_tools()
    assert len(s.browser_visits) == 1
    assert len(s.issuer.requests_to("/register")) == 1


async def test_pre_registered_client_is_used_instead_of_registration() -> None:
    async with stack(dynamic_registration=False) as s:
        s.issuer.add_client("pre", "pre-secret", redirect_uris=[REDIRECT_URI])
        pre = ClientInformation(client_id="pre", client_secret="pre-secret", issuer=ISSUER)
        elsewhere = ClientInformation(client_id="other", issuer="https://other.example")
        auth = s.auth(clients=[elsewhere, pre])
        async with s.session(auth) as session:
            await session.list_tools()
    token_requests = s.issuer.requests_to("/token")
    assert s.issuer.requests_to("/register") == []
    assert s.issuer.requests_to("/authorize")[0]["client_id"] == "pre"
    assert "client_secret" not in token_requests[0]  # client_secret_basic


async def test_no_way_to_get_a_client_id_is_a_clear_error() -> None:
    async with stack(dynamic_registration=False) as s:
        with pytest.raises(Exception, match="no client id"):
            async with s.session(s.auth()) as session:
                await session.list_tools()


async def test_client_credentials_for_machines() -> None:
    async with stack() as s:
        s.issuer.add_client("robot", "robot-secret")
        auth = ClientCredentialsAuth(
            "robot", client_secret="robot-secret", http_client=s.http, clock=s.clock
        )
        async with s.session(auth) as session:
            assert text(await session.call_tool("read_file", {"path": "a"})) == "contents of a"
            # A step-up with client credentials: ask again for the union of scopes.
            assert text(await session.call_tool("delete_file", {"path": "z"})) == "deleted z"
    grants = [(t["grant_type"], t.get("scope")) for t in s.issuer.requests_to("/token")]
    assert grants == [("client_credentials", "mcp"), ("client_credentials", "mcp files:write")]
    assert s.browser_visits == []


async def test_step_up_is_given_up_when_the_server_never_grants() -> None:
    async with stack() as s:
        s.issuer.add_client("robot", "robot-secret")
        original = s.issuer.mint

        def stingy(**claims: Any) -> str:
            claims["scope"] = "mcp"  # whatever was asked, only mcp is granted
            return original(**claims)

        s.issuer.mint = stingy  # type: ignore[method-assign]
        auth = ClientCredentialsAuth(
            "robot", client_secret="robot-secret", http_client=s.http, clock=s.clock
        )
        async with s.session(auth) as session:
            with pytest.raises(AuthorizationLimitError):
                await session.call_tool("delete_file", {"path": "z"})
            assert s.effects == []
            assert text(await session.call_tool("read_file", {"path": "a"})) == "contents of a"
    assert len(s.issuer.requests_to("/token")) <= 3


async def test_tokens_never_go_to_another_origin() -> None:
    seen: list[str | None] = []

    async def elsewhere(scope: Any, receive: Any, send: Any) -> None:
        headers = dict(scope["headers"])
        seen.append(headers.get(b"authorization", b"").decode() or None)
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})

    async with stack() as s:
        auth = s.auth()
        async with s.session(auth) as session:
            await session.list_tools()
            transport = StreamingASGITransport(elsewhere)
            async with httpx.AsyncClient(transport=transport) as other:
                response = await other.get("http://127.0.0.1:7777/x", auth=auth)
    assert response.status_code == 200
    assert seen == [None]


async def test_the_server_refuses_a_token_meant_for_another_server() -> None:
    async with stack() as s:
        token = s.issuer.mint(audience="http://localhost:8002/mcp", scope="mcp files:write")

        class Fixed(httpx.Auth):
            def auth_flow(self, request: httpx.Request) -> Any:
                request.headers["authorization"] = f"Bearer {token}"
                yield request

        with pytest.raises(HTTPStatusError) as caught:
            async with s.session(Fixed()) as session:
                await session.call_tool("delete_file", {"path": "x"})
    assert caught.value.status == 401
    assert s.effects == []


async def test_the_protected_server_example_with_its_scopes() -> None:
    example = load_example(ROOT / "examples" / "mcp" / "protected_server.py")
    clock = FakeClock()
    authorization_server = TestAuthorizationServer(ISSUER, clock=clock)
    auth_http = httpx.AsyncClient(transport=StreamingASGITransport(authorization_server))
    protected = ProtectedResource(
        JWTVerifier(issuer=ISSUER, audience=SERVER_URL, http_client=auth_http, clock=clock),
        resource=SERVER_URL,
        authorization_servers=[ISSUER],
        scopes=["notes:read"],
        tool_scopes={"add_note": ["notes:write"]},
    )
    app = example.build_server().asgi_app(auth=protected)
    dispatch = HostDispatch({MCP_HOST: app, AS_HOST: authorization_server}, app)
    async with auth_http, httpx.AsyncClient(transport=StreamingASGITransport(dispatch)) as http:
        s = Stack(http, authorization_server, [], clock, [])
        with anyio.fail_after(30):
            async with s.session(s.auth()) as session:
                assert text(await session.call_tool("add_note", {"text": "hi"})) == "1 note(s)"
    scopes = [a.get("scope") for a in authorization_server.requests_to("/authorize")]
    assert scopes == ["notes:read", "notes:read notes:write"]


async def test_a_registration_the_server_no_longer_honours_is_dropped() -> None:
    async with stack() as s:
        storage = InMemoryTokenStorage()
        async with s.session(s.auth(storage=storage)) as session:
            await session.list_tools()
        first = await storage.get_client(ISSUER)
        assert first is not None
        s.issuer.clients[first.client_id].client_secret = "rotated"  # the server changed it
        await storage.set_tokens(SERVER_URL, None)
        with pytest.raises(TokenError) as caught:
            async with s.session(s.auth(storage=storage)) as session:
                await session.list_tools()
        assert caught.value.error == "invalid_client"
        assert await storage.get_client(ISSUER) is None
        async with s.session(s.auth(storage=storage)) as session:
            await session.list_tools()
        second = await storage.get_client(ISSUER)
    assert second is not None and second.client_id != first.client_id
    assert len(s.issuer.requests_to("/register")) == 2
