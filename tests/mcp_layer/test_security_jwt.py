"""Bearer JWT checks on the A2A server and the MCP server, route by route.

Both servers verify tokens with `mcp_layer.auth.JWTVerifier` (ES256 keys from a JWKS)
behind `jsonrpc_core.BearerAuth`. Every token that must not pass — missing, malformed,
expired, not yet valid, for another audience, from another issuer, signed by another key,
tampered with, unsigned (``alg: none``), HMAC-signed with the public key (algorithm
confusion), without ``exp`` — is answered 401 with a ``WWW-Authenticate: Bearer``
challenge on every route that serves the agent or tool: A2A JSON-RPC (1.0 and 0.3 names,
streaming ones included), HTTP+JSON (tenant forms included), SSE and the extended card;
MCP Streamable HTTP (POST, GET, DELETE) and the legacy HTTP+SSE transport. Nothing runs
for a refused caller. A valid token passes everywhere. No token text shows in a log
record, an error body or a response header.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import jwt
import pytest
from a2a_fixtures.harness import BASE, make_card, message
from cryptography.hazmat.primitives import serialization
from fixtures.oauth_server import TestAuthorizationServer, new_key

from a2a_layer import A2AServer, ExecutionContext, TaskUpdater
from jsonrpc_core import BearerAuth
from jsonrpc_core.testing import StreamingASGITransport
from mcp_layer import MCPServer
from mcp_layer.auth import JWTVerifier, bearer_challenge

pytestmark = pytest.mark.anyio

ISSUER = "https://issuer.example"
AUDIENCE = "http://127.0.0.1/"
METADATA = "http://127.0.0.1/.well-known/oauth-protected-resource"
NOW = 1_800_000_000.0


class Clock:
    """Wall-clock seconds that stand still."""

    def __call__(self) -> float:
        return NOW


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unsigned(claims: dict[str, Any], header: dict[str, Any]) -> str:
    """A JWS with an empty signature (``alg: none``)."""
    return f"{b64(json.dumps(header).encode())}.{b64(json.dumps(claims).encode())}."


class Tokens:
    """One valid token and every kind of bad one, all for the same subject."""

    def __init__(self, issuer: TestAuthorizationServer, audience: str) -> None:
        mint = issuer.mint
        kid, private = issuer.keys[0]
        self.valid = mint(audience=audience, scope="a2a mcp")
        good_claims = jwt.decode(self.valid, options={"verify_signature": False})
        header, _payload, signature = self.valid.split(".")
        tampered_claims = {**good_claims, "sub": "root"}
        pem = private.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
        confused_head = b64(json.dumps({"alg": "HS256", "kid": kid, "typ": "at+jwt"}).encode())
        confused_body = b64(json.dumps(good_claims).encode())
        confused_mac = hmac.new(pem, f"{confused_head}.{confused_body}".encode(), hashlib.sha256)
        self.bad: dict[str, str | None] = {
            "missing": None,
            "empty": "",
            "malformed": "not-a-jwt",
            "expired": mint(audience=audience, scope="a2a mcp", expires_in=-3600),
            "not-yet-valid": mint(audience=audience, scope="a2a mcp", nbf=int(NOW) + 3600),
            "wrong-audience": mint(audience="https://other.example/", scope="a2a mcp"),
            "wrong-issuer": mint(audience=audience, scope="a2a mcp", issuer="https://evil.example"),
            "forged": mint(audience=audience, scope="a2a mcp", key=(kid, new_key()[1])),
            "unknown-kid": mint(audience=audience, scope="a2a mcp", key=new_key()),
            "tampered": f"{header}.{b64(json.dumps(tampered_claims).encode())}.{signature}",
            "alg-none": unsigned(good_claims, {"alg": "none", "typ": "JWT"}),
            "alg-none-kid": unsigned(good_claims, {"alg": "none", "kid": kid, "typ": "at+jwt"}),
            "hs256-public-key": f"{confused_head}.{confused_body}.{b64(confused_mac.digest())}",
            "no-exp": jwt.encode(
                {k: v for k, v in good_claims.items() if k != "exp"},
                private,
                algorithm="ES256",
                headers={"kid": kid, "typ": "at+jwt"},
            ),
        }

    def secrets(self) -> list[str]:
        """Every token's text (the signature part too: it must not leak on its own)."""
        texts = [self.valid, *(t for t in self.bad.values() if t)]
        return texts + [t.split(".")[-1] for t in texts if t.count(".") == 2 and t[-1] != "."]


def headers_for(token: str | None, **extra: str) -> dict[str, str]:
    headers = dict(extra)
    if token is not None:
        headers["authorization"] = f"Bearer {token}"
    return headers


def assert_refused(response: httpx.Response, what: str, secrets: list[str]) -> None:
    assert response.status_code == 401, (what, response.status_code, response.text[:300])
    challenge = bearer_challenge(response.headers)
    assert challenge is not None, (what, response.headers)
    assert response.headers["www-authenticate"].startswith("Bearer")
    assert challenge.resource_metadata == METADATA
    shown = response.text + json.dumps(dict(response.headers))
    for secret in secrets:
        assert secret not in shown, f"{what}: a token leaked into the answer"


# --- A2A ----------------------------------------------------------------------------------


class RecordingAgent:
    """Completes each task at once; records the subject of every caller it ran for."""

    def __init__(self) -> None:
        self.subjects: list[str | None] = []

    async def __call__(self, context: ExecutionContext, updater: TaskUpdater) -> None:
        self.subjects.append(getattr(context.principal, "subject", None))
        await updater.start_work()
        await updater.complete("done")


@asynccontextmanager
async def a2a_stack() -> AsyncIterator[tuple[httpx.AsyncClient, Tokens, RecordingAgent]]:
    issuer = TestAuthorizationServer(ISSUER, clock=Clock())
    verifier = JWTVerifier(issuer=ISSUER, audience=AUDIENCE, jwks=issuer.jwks(), clock=Clock())
    agent = RecordingAgent()
    card = make_card(push=True, extended=True)
    extended = card.model_copy(update={"name": "extended agent"})
    server = A2AServer(
        card,
        agent,
        auth=BearerAuth(verifier, resource_metadata_url=METADATA),
        extended_card=extended,
        allow_private_webhooks=True,  # the push config below names loopback
    )
    async with server.running():
        transport = StreamingASGITransport(server.asgi_app())
        async with httpx.AsyncClient(transport=transport, base_url=BASE, timeout=10) as http:
            yield http, Tokens(issuer, AUDIENCE), agent


def rpc_body(method: str, params: Any, request_id: int = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


def a2a_calls(task_id: str) -> list[tuple[str, str, dict[str, Any] | None, dict[str, str]]]:
    """(verb, path, JSON body, extra headers) of every route serving the agent."""
    v1 = {"A2A-Version": "1.0"}
    sse = {**v1, "accept": "text/event-stream"}
    send = {"message": message("hello", "m-x")}
    hook = {"url": "http://127.0.0.1:9/hook", "token": "push-tok"}
    calls: list[tuple[str, str, dict[str, Any] | None, dict[str, str]]] = [
        ("POST", "/", rpc_body("SendMessage", send), v1),
        ("POST", "/", rpc_body("SendStreamingMessage", send), sse),
        ("POST", "/", rpc_body("GetTask", {"id": task_id}), v1),
        ("POST", "/", rpc_body("ListTasks", {}), v1),
        ("POST", "/", rpc_body("CancelTask", {"id": task_id}), v1),
        ("POST", "/", rpc_body("SubscribeToTask", {"id": task_id}), sse),
        (
            "POST",
            "/",
            rpc_body("CreateTaskPushNotificationConfig", {"taskId": task_id, **hook}),
            v1,
        ),
        ("POST", "/", rpc_body("ListTaskPushNotificationConfigs", {"taskId": task_id}), v1),
        ("POST", "/", rpc_body("GetExtendedAgentCard", {}), v1),
        ("POST", "/", rpc_body("tasks/get", {"id": task_id}), {}),
        ("POST", "/", rpc_body("message/stream", {"message": message("hi", "m-y")}), sse),
        ("POST", "/", rpc_body("agent/getAuthenticatedExtendedCard", None), {}),
        ("POST", "/rest/message:send", send, v1),
        ("POST", "/rest/message:stream", send, sse),
        ("GET", f"/rest/tasks/{task_id}", None, v1),
        ("GET", "/rest/tasks", None, v1),
        ("GET", "/rest/acme/tasks", None, v1),
        ("POST", f"/rest/tasks/{task_id}:cancel", {}, v1),
        ("GET", f"/rest/tasks/{task_id}:subscribe", None, sse),
        ("POST", f"/rest/tasks/{task_id}:subscribe", {}, sse),
        ("POST", f"/rest/tasks/{task_id}/pushNotificationConfigs", hook, v1),
        ("GET", f"/rest/tasks/{task_id}/pushNotificationConfigs", None, v1),
        ("GET", f"/rest/tasks/{task_id}/pushNotificationConfigs/c1", None, v1),
        ("DELETE", f"/rest/tasks/{task_id}/pushNotificationConfigs/c1", None, v1),
        ("GET", "/rest/extendedAgentCard", None, v1),
        ("GET", "/rest/acme/extendedAgentCard", None, v1),
    ]
    return calls


async def call(
    http: httpx.AsyncClient, verb: str, path: str, body: Any, headers: dict[str, str]
) -> httpx.Response:
    if body is not None:
        headers = {"content-type": "application/json", **headers}
    return await http.request(
        verb, path, content=None if body is None else json.dumps(body), headers=headers
    )


async def create_task(http: httpx.AsyncClient, token: str) -> str:
    response = await call(
        http,
        "POST",
        "/",
        rpc_body("SendMessage", {"message": message("first", "m-first")}),
        headers_for(token, **{"A2A-Version": "1.0"}),
    )
    task_id: str = response.json()["result"]["task"]["id"]
    return task_id


async def test_every_a2a_route_refuses_every_bad_token(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    async with a2a_stack() as (http, tokens, agent):
        task_id = await create_task(http, tokens.valid)
        assert agent.subjects == ["alice"]
        secrets = tokens.secrets()
        refused = 0
        for name, token in tokens.bad.items():
            for verb, path, body, extra in a2a_calls(task_id):
                response = await call(http, verb, path, body, headers_for(token, **extra))
                assert_refused(response, f"{name} {verb} {path}", secrets)
                challenge = bearer_challenge(response.headers)
                assert challenge is not None
                expected_error = None if token in (None, "") else "invalid_token"
                assert challenge.error == expected_error, (name, path, challenge)
                refused += 1
        # Other schemes and a bare "Bearer" are as good as no token.
        for value in ("Basic " + tokens.valid, tokens.valid, "Bearer", "Bearer    "):
            response = await call(
                http, "POST", "/", rpc_body("ListTasks", {}), {"authorization": value}
            )
            assert_refused(response, value[:12], secrets)
        # The public card stays public.
        card = await http.get("/.well-known/agent-card.json")
        assert card.status_code == 200 and card.json()["name"] == "test agent"
        assert refused == len(tokens.bad) * len(a2a_calls(task_id))
        assert agent.subjects == ["alice"], "nothing ran for a refused caller"
        listed = await call(
            http,
            "POST",
            "/",
            rpc_body("ListTasks", {}),
            headers_for(tokens.valid, **{"A2A-Version": "1.0"}),
        )
        assert [t["id"] for t in listed.json()["result"]["tasks"]] == [task_id]
    logged = caplog.text + "\n".join(r.getMessage() for r in caplog.records)
    for secret in secrets:
        assert secret not in logged, "a token leaked into the logs"


async def test_a_valid_token_passes_every_a2a_route(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    async with a2a_stack() as (http, tokens, agent):
        task_id = await create_task(http, tokens.valid)
        for verb, path, body, extra in a2a_calls(task_id):
            response = await call(http, verb, path, body, headers_for(tokens.valid, **extra))
            assert response.status_code in (200, 400, 404), (verb, path, response.text[:300])
            assert "www-authenticate" not in response.headers, (verb, path)
            text = response.text
            if path == "/" and not text.startswith("{"):
                assert "event:" in text or "data:" in text, (verb, path, text[:200])
            elif path == "/":
                answer = response.json()
                code = answer.get("error", {}).get("code")
                # The finished task can be neither cancelled nor subscribed to.
                assert code in (None, -32002, -32004), (path, body, answer)
            if path.endswith("extendedAgentCard") and response.status_code == 200:
                assert response.json()["name"] == "extended agent"
        extended = await call(
            http,
            "POST",
            "/",
            rpc_body("GetExtendedAgentCard", {}),
            headers_for(tokens.valid, **{"A2A-Version": "1.0"}),
        )
        assert extended.json()["result"]["name"] == "extended agent"
        assert (
            set(agent.subjects) == {"alice"} and len(agent.subjects) >= 3
        )  # m-first, m-x (deduplicated), m-y
    logged = caplog.text + "\n".join(r.getMessage() for r in caplog.records)
    for secret in tokens.secrets():
        assert secret not in logged


# --- MCP ----------------------------------------------------------------------------------

MCP_HEADERS = {
    "accept": "application/json, text/event-stream",
    "content-type": "application/json",
    "mcp-protocol-version": "2025-11-25",
}
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"},
    },
}


@asynccontextmanager
async def mcp_stack() -> AsyncIterator[tuple[httpx.AsyncClient, Tokens, list[str]]]:
    issuer = TestAuthorizationServer(ISSUER, clock=Clock())
    audience = "http://127.0.0.1/mcp"
    verifier = JWTVerifier(issuer=ISSUER, audience=audience, jwks=issuer.jwks(), clock=Clock())
    ran: list[str] = []
    server = MCPServer("protected", "1.0.0")

    @server.tool()
    def echo(text: str) -> str:
        """Echo, and record that the tool ran."""
        ran.append(text)
        return text

    app = server.asgi_app(auth=BearerAuth(verifier, resource_metadata_url=METADATA))
    async with app.running():
        transport = StreamingASGITransport(app)
        async with httpx.AsyncClient(transport=transport, base_url=BASE, timeout=10) as http:
            yield http, Tokens(issuer, audience), ran


async def open_mcp_session(http: httpx.AsyncClient, token: str) -> str:
    response = await http.post("/mcp", json=INIT, headers=headers_for(token, **MCP_HEADERS))
    assert response.status_code == 200, response.text
    session: str = response.headers["mcp-session-id"]
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    answer = await http.post(
        "/mcp", json=note, headers=headers_for(token, **MCP_HEADERS, **{"mcp-session-id": session})
    )
    assert answer.status_code == 202
    return session


async def test_every_mcp_route_refuses_every_bad_token(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    async with mcp_stack() as (http, tokens, ran):
        session = await open_mcp_session(http, tokens.valid)
        in_session = {**MCP_HEADERS, "mcp-session-id": session}
        tool_call = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": "refused"}},
        }
        routes: list[tuple[str, str, Any, dict[str, str]]] = [
            ("POST", "/mcp", INIT, MCP_HEADERS),
            ("POST", "/mcp", tool_call, in_session),
            ("GET", "/mcp", None, {**in_session, "accept": "text/event-stream"}),
            ("DELETE", "/mcp", None, in_session),
            ("GET", "/sse", None, {"accept": "text/event-stream"}),
            ("POST", f"/messages?session_id={session}", tool_call, MCP_HEADERS),
        ]
        secrets = tokens.secrets()
        for name, token in tokens.bad.items():
            for verb, path, body, extra in routes:
                response = await call(http, verb, path, body, headers_for(token, **extra))
                assert_refused(response, f"{name} {verb} {path}", secrets)
        assert ran == []
        # The session survived every refused DELETE; the valid token still reaches the tool.
        answer = await call(
            http,
            "POST",
            "/mcp",
            {**tool_call, "params": {"name": "echo", "arguments": {"text": "ok"}}},
            headers_for(tokens.valid, **in_session),
        )
        assert answer.status_code == 200, answer.text
        assert ran == ["ok"]
        closed = await call(http, "DELETE", "/mcp", None, headers_for(tokens.valid, **in_session))
        assert closed.status_code in (200, 204)
    logged = caplog.text + "\n".join(r.getMessage() for r in caplog.records)
    for secret in secrets:
        assert secret not in logged, "a token leaked into the logs"
