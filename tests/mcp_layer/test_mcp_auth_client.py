"""MCP authorization, client side, piece by piece: challenges, discovery order and
fallbacks, issuer and ``iss`` checks, PKCE, client authentication, the loopback
redirect handler. The whole flow is in test_mcp_auth_flow.py.

Tests the private unit `mcp_layer.auth._urls` on purpose: the discovery URL order of each
issuer shape.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Callable, MutableMapping
from typing import Any

import anyio
import httpx
import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from jsonrpc_core.testing import StreamingASGITransport
from mcp_layer.auth import (
    AuthorizationResponse,
    AuthorizationResponseError,
    AuthorizationServerMetadata,
    CallbackRedirectHandler,
    ClientCredentialsAuth,
    ClientInformation,
    DiscoveryError,
    LoopbackRedirectHandler,
    OAuthAuth,
    OAuthError,
    ResourceMismatch,
    SigningKey,
    TokenError,
    canonical_resource,
    check_authorization_response,
    discover,
    new_pkce_pair,
    parse_www_authenticate,
    request_token,
    resource_allowed,
    union_scopes,
)
from mcp_layer.auth._urls import (
    authorization_server_metadata_urls,
    protected_resource_metadata_urls,
)

pytestmark = pytest.mark.anyio

# -- WWW-Authenticate ----------------------------------------------------------------


def test_parse_bearer_challenge_with_quoted_and_token_values() -> None:
    [challenge] = parse_www_authenticate(
        'Bearer error="insufficient_scope", scope="files:read files:write", '
        'resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource", '
        'error_description="needs \\"write\\", sorry"'
    )
    assert challenge.scheme == "bearer"
    assert challenge.error == "insufficient_scope"
    assert challenge.scope == "files:read files:write"
    assert challenge.resource_metadata.endswith("/oauth-protected-resource")  # type: ignore[union-attr]
    assert challenge.params["error_description"] == 'needs "write", sorry'


def test_parse_several_challenges_and_token68() -> None:
    challenges = parse_www_authenticate(
        'Basic realm="x", Bearer scope=mcp,resource_metadata="u", Negotiate abc123=='
    )
    assert [c.scheme for c in challenges] == ["basic", "bearer", "negotiate"]
    assert challenges[1].scope == "mcp"
    assert challenges[1].resource_metadata == "u"
    assert challenges[2].params[""] == "abc123=="


def test_empty_scope_counts_as_none() -> None:
    [challenge] = parse_www_authenticate('Bearer scope=""')
    assert challenge.scope is None


# -- URLs ------------------------------------------------------------------------------


def test_protected_resource_metadata_urls_in_order() -> None:
    assert protected_resource_metadata_urls("https://h.example/public/mcp", None) == [
        "https://h.example/.well-known/oauth-protected-resource/public/mcp",
        "https://h.example/.well-known/oauth-protected-resource",
    ]
    assert protected_resource_metadata_urls("https://h.example/", "https://h.example/m") == [
        "https://h.example/m",
        "https://h.example/.well-known/oauth-protected-resource",
    ]


def test_authorization_server_metadata_urls_in_order() -> None:
    assert authorization_server_metadata_urls("https://auth.example.com/tenant1") == [
        "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
        "https://auth.example.com/.well-known/openid-configuration/tenant1",
        "https://auth.example.com/tenant1/.well-known/openid-configuration",
    ]
    assert authorization_server_metadata_urls("https://auth.example.com") == [
        "https://auth.example.com/.well-known/oauth-authorization-server",
        "https://auth.example.com/.well-known/openid-configuration",
    ]


def test_canonical_resource_and_allowed_resources() -> None:
    assert (
        canonical_resource("HTTPS://MCP.Example.com:443/mcp/?q=1#f")
        == "https://mcp.example.com/mcp"
    )
    assert canonical_resource("https://mcp.example.com:8443") == "https://mcp.example.com:8443"
    assert resource_allowed("https://h.example/mcp", "https://h.example/mcp")
    assert resource_allowed("https://h.example/mcp", "https://H.example/")
    assert resource_allowed("https://h.example/a/mcp", "https://h.example/a")
    assert not resource_allowed("https://h.example/mcp", "https://evil.example.com/mcp")
    assert not resource_allowed("https://h.example/mcp", "https://h.example/mc")
    assert not resource_allowed("https://h.example/mcp", "http://h.example/mcp")


def test_union_keeps_order_and_drops_duplicates() -> None:
    assert union_scopes("a b", "b c", None) == "a b c"
    assert union_scopes(None, "") is None


# -- the authorization response (RFC 9207, state) ------------------------------------

ISSUER = "https://auth.example.com"


def check(url: str, supported: bool | None) -> str:
    return check_authorization_response(
        AuthorizationResponse.from_url(url), state="s1", issuer=ISSUER, iss_supported=supported
    )


@pytest.mark.parametrize("supported", [True, False, None])
def test_iss_present_and_equal_is_accepted(supported: bool | None) -> None:
    assert check(f"http://127.0.0.1/cb?code=c&state=s1&iss={ISSUER}", supported) == "c"


def test_iss_absent_is_refused_only_when_advertised() -> None:
    assert check("http://127.0.0.1/cb?code=c&state=s1", False) == "c"
    assert check("http://127.0.0.1/cb?code=c&state=s1", None) == "c"
    with pytest.raises(AuthorizationResponseError, match="iss"):
        check("http://127.0.0.1/cb?code=c&state=s1", True)


@pytest.mark.parametrize(
    "iss",
    [
        "https://evil.example.com",
        ISSUER + "/",
        "HTTPS://auth.example.com",
        "https://auth.example.com:443",
    ],
)
@pytest.mark.parametrize("supported", [True, None])
def test_iss_is_compared_as_a_plain_string(iss: str, supported: bool | None) -> None:
    with pytest.raises(AuthorizationResponseError) as caught:
        check(f"http://127.0.0.1/cb?code=c&state=s1&iss={iss}&error=x", supported)
    assert caught.value.error is None  # the error of a mismatched response is not used


def test_state_mismatch_and_error_responses_are_refused() -> None:
    with pytest.raises(AuthorizationResponseError, match="state"):
        check(f"http://127.0.0.1/cb?code=c&state=other&iss={ISSUER}", True)
    with pytest.raises(AuthorizationResponseError) as caught:
        check(f"http://127.0.0.1/cb?error=access_denied&state=s1&iss={ISSUER}", True)
    assert caught.value.error == "access_denied"


def test_pkce_pair_is_s256() -> None:
    verifier, challenge = new_pkce_pair()
    assert 43 <= len(verifier) <= 128
    digest = hashlib.sha256(verifier.encode()).digest()
    assert challenge == base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


# -- discovery against a scripted server ----------------------------------------------


class Scripted:
    """An ASGI app answering GETs from a path -> JSON table, recording every path."""

    def __init__(self, routes: dict[str, Any]) -> None:
        self.routes = routes
        self.seen: list[str] = []

    async def __call__(self, scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        host = dict(scope["headers"]).get(b"host", b"").decode()
        key = f"{host}{scope['path']}"
        self.seen.append(key)
        answer = self.routes.get(key)
        status = 200 if answer is not None else 404
        body = json.dumps(answer).encode() if answer is not None else b"{}"
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [(b"content-type", b"application/json")],
            }
        )
        await send({"type": "http.response.body", "body": body})


async def run_discovery(
    routes: dict[str, Any], server: str, **options: Any
) -> tuple[Any, list[str]]:
    app = Scripted(routes)
    async with httpx.AsyncClient(transport=StreamingASGITransport(app)) as http:
        with anyio.fail_after(10):
            try:
                return await discover(http, server, **options), app.seen
            except OAuthError as exc:
                return exc, app.seen


def as_metadata(issuer: str, **extra: Any) -> dict[str, Any]:
    return {
        "issuer": issuer,
        "authorization_endpoint": issuer + "/authorize",
        "token_endpoint": issuer + "/token",
        "code_challenge_methods_supported": ["S256"],
        **extra,
    }


async def test_discovery_prefers_the_challenge_then_path_then_root() -> None:
    prm = {"resource": "http://localhost/mcp", "authorization_servers": ["http://127.0.0.1/t1"]}
    routes = {
        "localhost/.well-known/oauth-protected-resource": prm,
        "127.0.0.1/t1/.well-known/openid-configuration": as_metadata("http://127.0.0.1/t1"),
    }
    found, seen = await run_discovery(routes, "http://localhost/mcp")
    assert found.issuer == "http://127.0.0.1/t1"
    assert found.resource == "http://localhost/mcp"
    assert seen == [
        "localhost/.well-known/oauth-protected-resource/mcp",
        "localhost/.well-known/oauth-protected-resource",
        "127.0.0.1/.well-known/oauth-authorization-server/t1",
        "127.0.0.1/.well-known/openid-configuration/t1",
        "127.0.0.1/t1/.well-known/openid-configuration",
    ]
    routes["localhost/custom.json"] = prm
    found, seen = await run_discovery(
        routes, "http://localhost/mcp", resource_metadata_url="http://localhost/custom.json"
    )
    assert seen[0] == "localhost/custom.json"
    assert "localhost/.well-known/oauth-protected-resource" not in seen


async def test_metadata_with_another_issuer_is_never_used() -> None:
    prm = {"resource": "http://localhost/mcp", "authorization_servers": ["http://127.0.0.1"]}
    routes = {
        "localhost/.well-known/oauth-protected-resource/mcp": prm,
        "127.0.0.1/.well-known/oauth-authorization-server": as_metadata("https://attacker.example"),
    }
    found, _ = await run_discovery(routes, "http://localhost/mcp")
    assert isinstance(found, DiscoveryError)


async def test_resource_metadata_for_another_resource_is_refused() -> None:
    prm = {
        "resource": "https://evil.example.com/mcp",
        "authorization_servers": ["http://127.0.0.1"],
    }
    found, seen = await run_discovery(
        {"localhost/.well-known/oauth-protected-resource/mcp": prm}, "http://localhost/mcp"
    )
    assert isinstance(found, ResourceMismatch)
    assert not any(s.startswith("127.0.0.1") for s in seen)


async def test_plain_http_authorization_servers_are_refused_off_loopback() -> None:
    prm = {"resource": "http://localhost/mcp", "authorization_servers": ["http://auth.example"]}
    found, _ = await run_discovery(
        {"localhost/.well-known/oauth-protected-resource/mcp": prm}, "http://localhost/mcp"
    )
    assert isinstance(found, DiscoveryError)


async def test_a_2025_03_26_server_falls_back_to_its_origin_and_default_endpoints() -> None:
    found, seen = await run_discovery({}, "http://localhost:8000/mcp")
    assert found.legacy and found.defaults
    assert found.metadata.token_endpoint == "http://localhost:8000/token"
    assert found.resource == "http://localhost:8000/mcp"
    assert seen[-2:] == [
        "localhost:8000/.well-known/oauth-authorization-server",
        "localhost:8000/.well-known/openid-configuration",
    ]


# -- client authentication at the token endpoint -----------------------------------------


class TokenEndpoint:
    def __init__(self, status: int = 200, answer: Any = None) -> None:
        self.status = status
        self.answer = answer or {"access_token": "t", "token_type": "bearer", "expires_in": 60}
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return httpx.Response(self.status, json=self.answer)


async def token_request(
    endpoint: TokenEndpoint, client: ClientInformation, methods: list[str] | None, **kw: Any
) -> Any:
    metadata = AuthorizationServerMetadata(
        issuer="https://auth.example.com",
        token_endpoint="https://auth.example.com/token",
        token_endpoint_auth_methods_supported=methods,
    )
    async with httpx.AsyncClient(transport=httpx.MockTransport(endpoint)) as http:
        return await request_token(http, metadata, {"grant_type": "x"}, client, **kw)


def form_of(request: httpx.Request) -> dict[str, str]:
    return dict(httpx.QueryParams(request.content.decode()))


async def test_client_secret_basic_post_and_none() -> None:
    endpoint = TokenEndpoint()
    secret = ClientInformation(client_id="id:1", client_secret="s e/cret")
    await token_request(endpoint, secret, ["client_secret_basic"])
    await token_request(endpoint, secret, ["client_secret_post"])
    await token_request(endpoint, ClientInformation(client_id="pub"), ["none"])
    basic, post, none = endpoint.requests
    raw = base64.b64decode(basic.headers["authorization"].split()[1]).decode()
    assert raw == "id%3A1:s+e%2Fcret"
    assert "client_secret" not in form_of(basic)
    assert form_of(post)["client_secret"] == "s e/cret"
    assert "authorization" not in post.headers
    assert form_of(none) == {"grant_type": "x", "client_id": "pub"}


async def test_private_key_jwt_assertion() -> None:
    private = ec.generate_private_key(ec.SECP256R1())
    pem = private.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()
    endpoint = TokenEndpoint()
    client = ClientInformation(client_id="robot")
    await token_request(
        endpoint, client, ["private_key_jwt"], signing_key=SigningKey(pem, "ES256", kid="k1")
    )
    form = form_of(endpoint.requests[0])
    assert form["client_assertion_type"] == "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
    assert jwt.get_unverified_header(form["client_assertion"])["kid"] == "k1"
    claims = jwt.decode(
        form["client_assertion"],
        private.public_key(),
        algorithms=["ES256"],
        audience="https://auth.example.com",
    )
    assert claims["iss"] == claims["sub"] == "robot"
    assert claims["exp"] > claims["iat"]


async def test_token_endpoint_errors_carry_the_oauth_error() -> None:
    endpoint = TokenEndpoint(400, {"error": "invalid_grant", "error_description": "used"})
    with pytest.raises(TokenError) as caught:
        await token_request(endpoint, ClientInformation(client_id="c"), None)
    assert caught.value.error == "invalid_grant"
    assert caught.value.status == 400
    dpop = TokenEndpoint(200, {"access_token": "t", "token_type": "DPoP"})
    with pytest.raises(TokenError, match="token type"):
        await token_request(dpop, ClientInformation(client_id="c"), None)


# -- configuration checks --------------------------------------------------------------


async def noop_browser(url: str) -> str:
    raise AssertionError("no browser step expected")


def test_oauth_auth_checks_its_configuration() -> None:
    with pytest.raises(ValueError, match="redirect_uri"):
        OAuthAuth(noop_browser)
    with pytest.raises(ValueError, match="https"):
        OAuthAuth(noop_browser, redirect_uri="http://app.example.com/cb")
    with pytest.raises(ValueError, match="client_metadata_url"):
        OAuthAuth(
            noop_browser,
            redirect_uri="http://127.0.0.1/cb",
            client_metadata_url="https://app.example.com",
        )
    with pytest.raises(ValueError):
        ClientCredentialsAuth("robot")


async def test_pkce_support_is_required() -> None:
    routes = {
        "localhost/.well-known/oauth-protected-resource/mcp": {
            "resource": "http://localhost/mcp",
            "authorization_servers": ["http://127.0.0.1"],
        },
        "127.0.0.1/.well-known/oauth-authorization-server": {
            **as_metadata("http://127.0.0.1"),
            "code_challenge_methods_supported": ["plain"],
            "registration_endpoint": "http://127.0.0.1/register",
        },
    }
    app = Scripted(routes)

    async def mcp(scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
        if dict(scope["headers"]).get(b"host") == b"localhost" and scope["path"] == "/mcp":
            await send({"type": "http.response.start", "status": 401, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        await app(scope, receive, send)

    async with httpx.AsyncClient(transport=StreamingASGITransport(mcp)) as http:
        auth = OAuthAuth(noop_browser, redirect_uri="http://127.0.0.1/cb", http_client=http)
        with anyio.fail_after(10), pytest.raises(OAuthError, match="PKCE"):
            await http.post("http://localhost/mcp", content=b"{}", auth=auth)
    assert "127.0.0.1/register" not in app.seen


# -- the loopback redirect handler -------------------------------------------------------


async def test_loopback_handler_catches_the_redirect() -> None:
    visited: list[str] = []

    def browser(handler: LoopbackRedirectHandler) -> Callable[[str], None]:
        def open_url(url: str) -> None:
            visited.append(url)
            base = handler.redirect_uri.rsplit("/", 1)[0]
            assert httpx.get(base + "/favicon.ico").status_code == 404
            assert httpx.get(handler.redirect_uri + "?code=abc&state=xyz").status_code == 200

        return open_url

    handler = LoopbackRedirectHandler(timeout=10)
    handler.open_browser = browser(handler)
    with anyio.fail_after(20):
        url = await handler("https://auth.example.com/authorize?x=1&state=xyz")
    assert visited == ["https://auth.example.com/authorize?x=1&state=xyz"]
    assert url == handler.redirect_uri + "?code=abc&state=xyz"
    assert handler.redirect_uri.startswith("http://127.0.0.1:")


async def test_loopback_handler_answers_400_to_a_callback_without_the_expected_state() -> None:
    answers: list[tuple[str, int]] = []

    def browser(handler: LoopbackRedirectHandler) -> Callable[[str], None]:
        def open_url(url: str) -> None:
            # Another local program races the real redirect: a forged state, none at
            # all, and an error response with a wrong state. None ends the wait.
            for query in ("?code=evil&state=forged", "?code=evil", "?error=x&state=forged"):
                status = httpx.get(handler.redirect_uri + query).status_code
                answers.append((query, status))
            status = httpx.get(handler.redirect_uri + "?code=good&state=s1").status_code
            answers.append(("?code=good&state=s1", status))

        return open_url

    handler = LoopbackRedirectHandler(timeout=10)
    handler.open_browser = browser(handler)
    with anyio.fail_after(20):
        url = await handler("https://auth.example.com/authorize?state=s1")
    assert url == handler.redirect_uri + "?code=good&state=s1"
    assert answers == [
        ("?code=evil&state=forged", 400),
        ("?code=evil", 400),
        ("?error=x&state=forged", 400),
        ("?code=good&state=s1", 200),
    ]


async def test_loopback_handler_keeps_waiting_after_a_forged_callback() -> None:
    def browser(handler: LoopbackRedirectHandler) -> Callable[[str], None]:
        def open_url(url: str) -> None:
            assert httpx.get(handler.redirect_uri + "?code=evil&state=forged").status_code == 400

        return open_url

    handler = LoopbackRedirectHandler(timeout=0.5)
    handler.open_browser = browser(handler)
    with anyio.fail_after(20), pytest.raises(AuthorizationResponseError, match="no authorization"):
        await handler("https://auth.example.com/authorize?state=s1")


async def test_loopback_handler_gives_up_after_its_timeout() -> None:
    handler = LoopbackRedirectHandler(timeout=0.2, open_browser=None)
    with anyio.fail_after(10), pytest.raises(AuthorizationResponseError, match="no authorization"):
        await handler("https://auth.example.com/authorize")


# -- the web application's redirect handler ----------------------------------------------


async def test_callback_handler_pairs_callbacks_by_state() -> None:
    shown: list[str] = []
    both_shown = anyio.Event()

    async def show(url: str) -> None:
        shown.append(url)
        if len(shown) == 2:
            both_shown.set()

    handler = CallbackRedirectHandler("https://app.example.com/cb", show, timeout=10)
    results: list[str] = []

    async def authorize(state: str) -> None:
        results.append(await handler(f"https://auth.example.com/authorize?state={state}"))

    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            tg.start_soon(authorize, "one")
            tg.start_soon(authorize, "two")
            await both_shown.wait()
            assert handler.pending == 2
            assert not handler.deliver("https://app.example.com/cb?code=x&state=forged")
            assert handler.deliver("https://app.example.com/cb?code=b&state=two")
            assert not handler.deliver("https://app.example.com/cb?code=b2&state=two")
            assert handler.deliver("https://app.example.com/cb?code=a&state=one")
    assert sorted(results) == [
        "https://app.example.com/cb?code=a&state=one",
        "https://app.example.com/cb?code=b&state=two",
    ]
    assert len(shown) == 2
    assert handler.pending == 0


async def test_callback_handler_times_out() -> None:
    async def show(url: str) -> None:
        pass

    handler = CallbackRedirectHandler("https://app.example.com/cb", show, timeout=0.1)
    with anyio.fail_after(10), pytest.raises(AuthorizationResponseError):
        await handler("https://auth.example.com/authorize?state=s")
    assert handler.pending == 0
