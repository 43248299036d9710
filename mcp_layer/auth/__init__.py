"""MCP authorization (OAuth 2.1) for HTTP transports: both ends.

Resource server (an MCP server that requires tokens)::

    from mcp_layer.auth import JWTVerifier, ProtectedResource

    auth = ProtectedResource(
        JWTVerifier(issuer="https://auth.example.com", audience="https://mcp.example.com/mcp"),
        resource="https://mcp.example.com/mcp",
        authorization_servers=["https://auth.example.com"],
        tool_scopes={"delete_file": ["files:write"]},
    )
    app = server.asgi_app(auth=auth)

Client, for a user (authorization code + PKCE; the browser step is pluggable:
`LoopbackRedirectHandler` for programs on the user's machine, `CallbackRedirectHandler`
for web apps, or any ``async (authorization_url) -> redirected_to_url``)::

    from mcp_layer import connect_http
    from mcp_layer.auth import LoopbackRedirectHandler, OAuthAuth

    auth = OAuthAuth(LoopbackRedirectHandler())
    async with connect_http("https://mcp.example.com/mcp", auth=auth) as session:
        ...

Client, for a machine: ``ClientCredentialsAuth(client_id, client_secret=...)``.

`JWTVerifier` and ``private_key_jwt`` need PyJWT (``pip install 'rpcweave[auth]'``).
"""

from ._challenge import Challenge, bearer_challenge, parse_www_authenticate
from ._discovery import (
    AuthorizationServerChooser,
    Discovery,
    discover,
    fetch_authorization_server_metadata,
)
from ._endpoints import SigningKey, register_client, request_token
from ._errors import (
    AuthorizationLimitError,
    AuthorizationResponseError,
    DiscoveryError,
    OAuthError,
    RegistrationError,
    ResourceMismatch,
    TokenError,
)
from ._flow_base import union_scopes
from ._flows import ClientCredentialsAuth, OAuthAuth
from ._introspection import IntrospectionVerifier
from ._jwt import ASYMMETRIC_ALGORITHMS, JWKSCache, JWTVerifier
from ._loopback import LoopbackRedirectHandler
from ._models import (
    AuthorizationServerMetadata,
    ClientInformation,
    ClientMetadata,
    ProtectedResourceMetadata,
    StoredTokens,
    TokenResponse,
)
from ._redirect import (
    AuthorizationResponse,
    RedirectHandler,
    check_authorization_response,
    new_pkce_pair,
    new_state,
)
from ._resource import ProtectedResource
from ._storage import InMemoryTokenStorage, TokenStorage
from ._token import AccessToken, TokenVerifier, audience_matches, scopes_of_claims
from ._urls import canonical_resource, protected_resource_metadata_url, resource_allowed
from ._web import CallbackRedirectHandler

__all__ = [
    "ASYMMETRIC_ALGORITHMS",
    "AccessToken",
    "AuthorizationLimitError",
    "AuthorizationResponse",
    "AuthorizationResponseError",
    "AuthorizationServerChooser",
    "AuthorizationServerMetadata",
    "CallbackRedirectHandler",
    "Challenge",
    "ClientCredentialsAuth",
    "ClientInformation",
    "ClientMetadata",
    "Discovery",
    "DiscoveryError",
    "InMemoryTokenStorage",
    "IntrospectionVerifier",
    "JWKSCache",
    "JWTVerifier",
    "LoopbackRedirectHandler",
    "OAuthAuth",
    "OAuthError",
    "ProtectedResource",
    "ProtectedResourceMetadata",
    "RedirectHandler",
    "RegistrationError",
    "ResourceMismatch",
    "SigningKey",
    "StoredTokens",
    "TokenError",
    "TokenResponse",
    "TokenStorage",
    "TokenVerifier",
    "audience_matches",
    "bearer_challenge",
    "canonical_resource",
    "check_authorization_response",
    "discover",
    "fetch_authorization_server_metadata",
    "new_pkce_pair",
    "new_state",
    "parse_www_authenticate",
    "protected_resource_metadata_url",
    "register_client",
    "request_token",
    "resource_allowed",
    "scopes_of_claims",
    "union_scopes",
]
