"""MCP authorization, resource-server side: `ProtectedResource` on `MCPServer.asgi_app`
with `JWTVerifier` (JWKS fetched from an in-process authorization server) and
`IntrospectionVerifier`. Raw HTTP requests, so every refusal is seen as sent."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import jwt
import pytest
from fixtures.oauth_server import HostDispatch, TestAuthorizationServer, new_key

from jsonrpc_core.testing import StreamingASGITransport
from mcp_layer import Context, MCPServer
from mcp_layer.auth import (
    AccessToken,
    IntrospectionVerifier,
    JWKSCache,
    JWTVerifier,
    ProtectedResource,
    bearer_challenge,
)

pytestmark = pytest.mark.anyio

MCP_HOST = "localhost:8001"
AS_HOST = "127.0.0.1:9000"
RESOURCE = f"http://{MCP_HOST}/mcp"
ISSUER = f"http://{AS_HOST}"
METADATA_URL = f"http://{MCP_HOST}/.well-known/oauth-protected-resource/mcp"
HEADERS = {
    "accept": "application/json, text/event-stream",
    "content-type": "application/json",
    "mcp-protocol-version": "2025-11-25",
}


class FakeClock:
    """Wall-clock seconds that only move when told."""

    def __init__(self, now: float = 1_800_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def build_server(effects: list[str]) -> MCPServer:
    server = MCPServer("protected", "1.0.0")

    @server.tool()
    def delete_file(path: str) -> str:
        """Delete a file (here: record that it would be)."""
        effects.append(path)
        return f"deleted {path}"

    @server.tool()
    def whoami(ctx: Context) -> str:
        """Who the server thinks is calling, and whether the token reached the tool."""
        info = ctx.request.info
        principal = info.principal
        assert isinstance(principal, AccessToken)
        leaked = info.header("authorization")
        return json.dumps(
            {"sub": principal.subject, "scopes": sorted(principal.scopes), "leaked": leaked}
        )

    return server


@asynccontextmanager
async def stack(
    *, verifier: Any = None, clock: FakeClock | None = None
) -> AsyncIterator[tuple[httpx.AsyncClient, TestAuthorizationServer, list[str], ProtectedResource]]:
    clock = clock or FakeClock()
    authorization_server = TestAuthorizationServer(ISSUER, clock=clock)
    effects: list[str] = []
    server = build_server(effects)
    auth_http = httpx.AsyncClient(transport=StreamingASGITransport(authorization_server))
    if verifier is None:
        verifier = JWTVerifier(issuer=ISSUER, audience=RESOURCE, http_client=auth_http, clock=clock)
    auth = ProtectedResource(
        verifier,
        resource=RESOURCE,
        authorization_servers=[ISSUER],
        scopes=["mcp"],
        tool_scopes={"delete_file": ["files:write"]},
        resource_name="test server",
    )
    app = server.asgi_app(auth=auth, json_response=True)
    dispatch = HostDispatch({MCP_HOST: app, AS_HOST: authorization_server}, app)
    async with auth_http, httpx.AsyncClient(transport=StreamingASGITransport(dispatch)) as http:
        with anyio.fail_after(20):
            yield http, authorization_server, effects, auth


def rpc(method: str, params: Any = None, id: int = 1) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message).encode()


INIT = rpc(
    "initialize",
    {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"},
    },
)


async def post(
    http: httpx.AsyncClient, body: bytes, token: str | None, session: str | None = None
) -> httpx.Response:
    headers = dict(HEADERS)
    if token is not None:
        headers["authorization"] = f"Bearer {token}"
    if session is not None:
        headers["mcp-session-id"] = session
    return await http.post(RESOURCE, content=body, headers=headers)


async def open_session(http: httpx.AsyncClient, token: str) -> str:
    response = await post(http, INIT, token)
    assert response.status_code == 200, response.text
    session = response.headers["mcp-session-id"]
    note = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode()
    assert (await post(http, note, token, session)).status_code == 202
    return session


def call(name: str, arguments: dict[str, Any], id: int = 2) -> bytes:
    return rpc("tools/call", {"name": name, "arguments": arguments}, id)


# -- metadata and challenges -------------------------------------------------------


async def test_protected_resource_metadata_is_served_without_a_token() -> None:
    async with stack() as (http, _, _, _):
        response = await http.get(METADATA_URL)
    assert response.status_code == 200
    assert response.json() == {
        "resource": RESOURCE,
        "authorization_servers": [ISSUER],
        "scopes_supported": ["mcp"],
        "bearer_methods_supported": ["header"],
        "resource_name": "test server",
    }


async def test_missing_token_is_401_with_resource_metadata_and_scope() -> None:
    async with stack() as (http, _, effects, _):
        response = await post(http, INIT, None)
    assert response.status_code == 401
    challenge = bearer_challenge(response.headers)
    assert challenge is not None
    assert challenge.resource_metadata == METADATA_URL
    assert challenge.scope == "mcp"
    assert challenge.error is None
    assert effects == []


# -- refusals: each before anything runs -----------------------------------------------


async def test_valid_token_calls_the_tool_and_the_token_stays_out_of_it() -> None:
    async with stack() as (http, issuer, effects, _):
        token = issuer.mint(audience=RESOURCE, scope="mcp files:write")
        session = await open_session(http, token)
        response = await post(http, call("delete_file", {"path": "a.txt"}), token, session)
        who = await post(http, call("whoami", {}, id=3), token, session)
    assert response.status_code == 200
    assert response.json()["result"]["content"][0]["text"] == "deleted a.txt"
    assert effects == ["a.txt"]
    identity = json.loads(who.json()["result"]["content"][0]["text"])
    assert identity == {"sub": "alice", "scopes": ["files:write", "mcp"], "leaked": None}


async def test_expired_token_is_401_invalid_token_and_nothing_runs() -> None:
    async with stack() as (http, issuer, effects, _):
        good = issuer.mint(audience=RESOURCE, scope="mcp files:write")
        session = await open_session(http, good)
        expired = issuer.mint(audience=RESOURCE, scope="mcp files:write", expires_in=-120)
        response = await post(http, call("delete_file", {"path": "x"}), expired, session)
    assert response.status_code == 401
    challenge = bearer_challenge(response.headers)
    assert challenge is not None and challenge.error == "invalid_token"
    assert challenge.resource_metadata == METADATA_URL
    assert effects == []


async def test_token_for_another_resource_is_401_and_nothing_runs() -> None:
    async with stack() as (http, issuer, effects, _):
        good = issuer.mint(audience=RESOURCE, scope="mcp files:write")
        session = await open_session(http, good)
        other = issuer.mint(audience="http://localhost:8002/mcp", scope="mcp files:write")
        response = await post(http, call("delete_file", {"path": "x"}), other, session)
        initialize = await post(http, INIT, other)
    assert response.status_code == 401
    assert initialize.status_code == 401
    challenge = bearer_challenge(response.headers)
    assert challenge is not None and challenge.error == "invalid_token"
    assert effects == []


async def test_missing_tool_scope_is_403_insufficient_scope_and_nothing_runs() -> None:
    async with stack() as (http, issuer, effects, _):
        token = issuer.mint(audience=RESOURCE, scope="mcp")
        session = await open_session(http, token)
        response = await post(http, call("delete_file", {"path": "x"}), token, session)
        allowed = await post(http, call("whoami", {}, id=3), token, session)
    assert response.status_code == 403
    challenge = bearer_challenge(response.headers)
    assert challenge is not None
    assert challenge.error == "insufficient_scope"
    assert challenge.scope == "mcp files:write"
    assert challenge.resource_metadata == METADATA_URL
    assert effects == []
    assert allowed.status_code == 200


async def test_missing_base_scope_is_403_even_for_initialize() -> None:
    async with stack() as (http, issuer, _effects, _):
        token = issuer.mint(audience=RESOURCE, scope="files:write")
        response = await post(http, INIT, token)
    assert response.status_code == 403
    challenge = bearer_challenge(response.headers)
    assert challenge is not None and challenge.error == "insufficient_scope"
    assert challenge.scope == "mcp"


async def test_forged_signature_is_401_and_nothing_runs() -> None:
    async with stack() as (http, issuer, effects, _):
        good = issuer.mint(audience=RESOURCE, scope="mcp files:write")
        session = await open_session(http, good)
        # Same kid as the real key, signed by another key.
        kid = issuer.keys[0][0]
        stranger = (kid, new_key()[1])
        forged = issuer.mint(audience=RESOURCE, scope="mcp files:write", key=stranger)
        # A token whose payload was altered after signing.
        header, payload, signature = good.split(".")
        claims = json.loads(jwt.utils.base64url_decode(payload))
        claims["scope"] = "mcp files:write admin"
        tampered_payload = jwt.utils.base64url_encode(json.dumps(claims).encode()).decode()
        tampered = f"{header}.{tampered_payload}.{signature}"
        # alg "none"
        unsigned = jwt.encode(claims, None, algorithm="none")  # type: ignore[arg-type]
        answers = [
            await post(http, call("delete_file", {"path": "x"}), token, session)
            for token in (forged, tampered, unsigned, "not-a-jwt")
        ]
    assert [a.status_code for a in answers] == [401, 401, 401, 401]
    assert effects == []


async def test_token_from_another_issuer_is_401() -> None:
    async with stack() as (http, issuer, _effects, _):
        token = issuer.mint(audience=RESOURCE, scope="mcp", issuer="http://127.0.0.1:9999")
        response = await post(http, INIT, token)
    assert response.status_code == 401


async def test_refreshed_token_keeps_the_session() -> None:
    async with stack() as (http, issuer, _, _):
        first = issuer.mint(audience=RESOURCE, scope="mcp")
        session = await open_session(http, first)
        second = issuer.mint(audience=RESOURCE, scope="mcp files:write")
        response = await post(http, call("whoami", {}), second, session)
        someone_else = issuer.mint(audience=RESOURCE, scope="mcp", subject="mallory")
        stolen = await post(http, call("whoami", {}, id=3), someone_else, session)
    assert response.status_code == 200
    assert stolen.status_code == 404


# -- JWKS: caching and key rotation ------------------------------------------------------


async def test_key_rotation_refetches_the_jwks_by_kid() -> None:
    async with stack() as (http, issuer, _, auth):
        monotonic = FakeClock(0.0)
        assert isinstance(auth.verifier, JWTVerifier)
        auth.verifier.keys.clock = monotonic
        assert (
            await post(http, INIT, issuer.mint(audience=RESOURCE, scope="mcp"))
        ).status_code == 200
        jwks_fetches = len(issuer.requests_to("/jwks"))
        assert (
            await post(http, INIT, issuer.mint(audience=RESOURCE, scope="mcp"))
        ).status_code == 200
        assert len(issuer.requests_to("/jwks")) == jwks_fetches  # cached
        issuer.rotate_key()
        monotonic.now += 60
        rotated = issuer.mint(audience=RESOURCE, scope="mcp")
        response = await post(http, INIT, rotated)
    assert response.status_code == 200
    assert len(issuer.requests_to("/jwks")) == jwks_fetches + 1


async def test_unknown_kids_refetch_at_most_once_per_interval() -> None:
    clock = FakeClock()
    monotonic = FakeClock(100.0)
    authorization_server = TestAuthorizationServer(ISSUER, clock=clock)
    async with httpx.AsyncClient(transport=StreamingASGITransport(authorization_server)) as http:
        cache = JWKSCache(
            url=ISSUER + "/jwks", http_client=http, min_refresh_interval=30, clock=monotonic
        )
        verifier = JWTVerifier(issuer=ISSUER, audience=RESOURCE, keys=cache, clock=clock)
        assert await verifier.verify(authorization_server.mint(audience=RESOURCE)) is not None
        strangers = [authorization_server.mint(audience=RESOURCE, key=new_key()) for _ in range(5)]
        monotonic.now += 31
        for token in strangers:
            assert await verifier.verify(token) is None
        assert len(authorization_server.requests_to("/jwks")) == 2
        authorization_server.rotate_key()
        fresh = authorization_server.mint(audience=RESOURCE)
        assert await verifier.verify(fresh) is None  # too soon to refetch
        monotonic.now += 31
        assert await verifier.verify(fresh) is not None
        assert len(authorization_server.requests_to("/jwks")) == 3


async def test_jwt_verifier_finds_the_jwks_through_issuer_metadata() -> None:
    clock = FakeClock()
    authorization_server = TestAuthorizationServer(ISSUER, clock=clock)
    async with httpx.AsyncClient(transport=StreamingASGITransport(authorization_server)) as http:
        verifier = JWTVerifier(issuer=ISSUER, audience=RESOURCE, http_client=http, clock=clock)
        token = await verifier.verify(
            authorization_server.mint(audience=[RESOURCE, "x"], scope="a b")
        )
    assert token is not None
    assert token.scopes == {"a", "b"}
    assert token.subject == "alice"
    assert authorization_server.requests_to("/.well-known/oauth-authorization-server")


async def test_jwt_verifier_expiry_uses_its_clock_with_leeway() -> None:
    clock = FakeClock()
    authorization_server = TestAuthorizationServer(ISSUER, clock=clock)
    verifier = JWTVerifier(
        issuer=ISSUER, audience=RESOURCE, jwks=authorization_server.jwks(), leeway=10, clock=clock
    )
    token = authorization_server.mint(audience=RESOURCE, expires_in=60)
    assert await verifier.verify(token) is not None
    clock.now += 65
    assert await verifier.verify(token) is not None  # within leeway
    clock.now += 10
    assert await verifier.verify(token) is None
    no_exp = jwt.encode(
        {"iss": ISSUER, "aud": RESOURCE, "sub": "x"},
        authorization_server.keys[0][1],
        algorithm="ES256",
        headers={"kid": authorization_server.keys[0][0]},
    )
    assert await verifier.verify(no_exp) is None


def test_jwt_verifier_refuses_symmetric_algorithms() -> None:
    with pytest.raises(ValueError):
        JWTVerifier(issuer=ISSUER, audience=RESOURCE, jwks={"keys": []}, algorithms=["HS256"])


# -- introspection (RFC 7662) ----------------------------------------------------------


async def test_introspection_verifier_checks_active_audience_and_scopes() -> None:
    clock = FakeClock()
    async with stack(clock=clock) as (http, issuer, _effects, _auth):
        introspection = IntrospectionVerifier(
            ISSUER + "/introspect",
            audience=RESOURCE,
            client_id="rs",
            client_secret="rs-secret",
            http_client=http,
            clock=clock,
        )
        issuer.add_client("rs", "rs-secret")
        good = await introspection.verify(issuer.mint(audience=RESOURCE, scope="mcp files:write"))
        other = await introspection.verify(issuer.mint(audience="https://elsewhere/mcp"))
        expired = await introspection.verify(issuer.mint(audience=RESOURCE, expires_in=-100))
        garbage = await introspection.verify("garbage")
        basic = issuer.log[-1]
    assert good is not None and good.scopes == {"mcp", "files:write"}
    assert other is None and expired is None and garbage is None
    assert basic[1] == "/introspect"


async def test_introspection_protects_the_server_end_to_end() -> None:
    clock = FakeClock()
    authorization_server = TestAuthorizationServer(ISSUER, clock=clock)
    authorization_server.add_client("rs", "rs-secret")
    effects: list[str] = []
    server = build_server(effects)
    auth_http = httpx.AsyncClient(transport=StreamingASGITransport(authorization_server))
    auth = ProtectedResource(
        IntrospectionVerifier(
            ISSUER + "/introspect",
            audience=RESOURCE,
            client_id="rs",
            client_secret="rs-secret",
            http_client=auth_http,
            clock=clock,
        ),
        resource=RESOURCE,
        authorization_servers=[ISSUER],
        tool_scopes={"delete_file": ["files:write"]},
    )
    app = server.asgi_app(auth=auth, json_response=True)
    async with auth_http, httpx.AsyncClient(transport=StreamingASGITransport(app)) as http:
        token = authorization_server.mint(audience=RESOURCE, scope="files:read")
        session = await open_session(http, token)
        refused = await post(http, call("delete_file", {"path": "x"}), token, session)
        wrong = await post(http, INIT, authorization_server.mint(audience="https://other/mcp"))
    assert refused.status_code == 403
    assert wrong.status_code == 401
    assert effects == []


# -- the optional dependency -----------------------------------------------------------


def test_mcp_layer_auth_imports_without_pyjwt() -> None:
    code = "import sys, mcp_layer.auth; assert 'jwt' not in sys.modules, 'jwt imported'"
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_missing_pyjwt_is_a_clear_import_error(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec

    def find_spec(name: str, *args: Any) -> Any:
        return None if name == "jwt" else real(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    with pytest.raises(ImportError, match=r"rpcweave\[auth\]"):
        JWTVerifier(issuer=ISSUER, audience=RESOURCE, jwks={"keys": []})


async def test_token_type_can_be_required() -> None:
    authorization_server = TestAuthorizationServer(ISSUER)
    verifier = JWTVerifier(
        issuer=ISSUER, audience=RESOURCE, jwks=authorization_server.jwks(), token_type="at+jwt"
    )
    assert await verifier.verify(authorization_server.mint(audience=RESOURCE)) is not None
    kid, key = authorization_server.keys[0]
    claims = {"iss": ISSUER, "aud": RESOURCE, "sub": "x", "exp": 4_000_000_000}
    id_token = jwt.encode(claims, key, algorithm="ES256", headers={"kid": kid, "typ": "JWT"})
    assert await verifier.verify(id_token) is None
