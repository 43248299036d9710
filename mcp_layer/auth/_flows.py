"""The client side of MCP authorization as ``httpx.Auth`` flows.

`OAuthAuth` acts for a user (authorization code + PKCE, with a browser step through a
`RedirectHandler`); `ClientCredentialsAuth` acts for itself (``client_credentials``).
Either goes wherever an ``httpx.Auth`` does: ``connect_http(url, auth=...)``,
`StreamableHTTPTransport`, a plain ``httpx.AsyncClient``.

The rules they keep are those of their base, `mcp_layer.auth._flow_base.OAuthFlow`:
each differs from the other only in how it obtains tokens and names its client.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from urllib.parse import urlencode, urlsplit, urlunsplit

import httpx

from ._challenge import Challenge
from ._discovery import AuthorizationServerChooser, Discovery
from ._endpoints import SigningKey, choose_auth_method, register_client
from ._errors import OAuthError, RegistrationError, TokenError
from ._flow_base import OAuthFlow, union_scopes
from ._models import ClientInformation, ClientMetadata, StoredTokens
from ._redirect import (
    AuthorizationResponse,
    RedirectHandler,
    check_authorization_response,
    new_pkce_pair,
    new_state,
)
from ._storage import TokenStorage
from ._urls import check_secure, is_loopback

__all__ = ["ClientCredentialsAuth", "OAuthAuth"]

logger = logging.getLogger("mcp_layer.auth")


class OAuthAuth(OAuthFlow):
    """Authorization code with PKCE for an MCP server, on behalf of a user.

    ``redirect_handler`` does the browser step (see `LoopbackRedirectHandler` for a
    CLI); ``redirect_uri`` defaults to the handler's own. The client id comes, in the
    spec's order, from ``clients`` (pre-registered, each bound to an ``issuer`` or to
    any when it has none), a registration kept in ``storage``, the Client ID Metadata
    Document at ``client_metadata_url`` when the server supports those, or dynamic
    client registration of ``client_metadata``. ``scope`` is always asked for too;
    ``offline_access`` is added when the authorization server lists it.

    ``http_client`` carries the requests to the authorization server (a fresh client
    per authorization when ``None``); plain http is refused there except to loopback
    hosts unless ``allow_http``.
    """

    def __init__(
        self,
        redirect_handler: RedirectHandler,
        *,
        server_url: str | None = None,
        redirect_uri: str | None = None,
        client_metadata: ClientMetadata | None = None,
        client_metadata_url: str | None = None,
        clients: Sequence[ClientInformation] = (),
        signing_key: SigningKey | None = None,
        storage: TokenStorage | None = None,
        http_client: httpx.AsyncClient | None = None,
        scope: str | None = None,
        offline_access: bool = True,
        max_authorizations: int = 3,
        max_step_ups: int = 2,
        choose_authorization_server: AuthorizationServerChooser | None = None,
        allow_http: bool = False,
        timeout: float = 30.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__(
            server_url=server_url,
            storage=storage,
            http_client=http_client,
            scope=scope,
            max_authorizations=max_authorizations,
            max_step_ups=max_step_ups,
            choose_authorization_server=choose_authorization_server,
            allow_http=allow_http,
            timeout=timeout,
            clock=clock,
        )
        self.redirect_handler = redirect_handler
        uri = redirect_uri or getattr(redirect_handler, "redirect_uri", None)
        if not isinstance(uri, str) or not uri:
            raise ValueError("OAuthAuth needs a redirect_uri (or a handler that has one)")
        check_secure(uri, "the redirect URI", allow_http=allow_http)
        self.redirect_uri = uri
        if client_metadata_url is not None:
            split = urlsplit(client_metadata_url)
            if split.scheme != "https" or split.path in ("", "/"):
                raise ValueError("a client_metadata_url must be an https URL with a path")
        self.client_metadata_url = client_metadata_url
        self.client_metadata = client_metadata or ClientMetadata(client_name="rpcweave MCP client")
        self.clients = list(clients)
        self.signing_key = signing_key
        self.offline_access = offline_access

    def _signing_key(self, client: ClientInformation) -> SigningKey | None:
        return self.signing_key

    def _scope_for(
        self,
        status: int,
        challenge: Challenge | None,
        discovery: Discovery,
        previous: str | None,
    ) -> str | None:
        scope = super()._scope_for(status, challenge, discovery, previous)
        supported = discovery.metadata.scopes_supported or []
        if scope is not None and self.offline_access and "offline_access" in supported:
            scope = union_scopes(scope, "offline_access")
        return scope

    async def _client(
        self, http: httpx.AsyncClient, discovery: Discovery, *, register: bool = True
    ) -> ClientInformation:
        """The client id for ``discovery``'s authorization server, in the spec's order:
        pre-registered, stored registration, Client ID Metadata Document, registration."""
        issuer = discovery.issuer
        for client in self.clients:
            if client.issuer in (None, issuer):
                return client
        stored = await self.storage.get_client(issuer)
        if stored is not None:
            return stored
        metadata = discovery.metadata
        if self.client_metadata_url and metadata.client_id_metadata_document_supported:
            method = "private_key_jwt" if self.signing_key is not None else "none"
            return ClientInformation(
                client_id=self.client_metadata_url, token_endpoint_auth_method=method
            )
        if not register:
            raise RegistrationError(f"no client id for {issuer!r} to refresh with")
        if not metadata.registration_endpoint:
            raise RegistrationError(
                f"no client id for {issuer!r}: nothing pre-registered, no Client ID Metadata "
                "Document support, no dynamic client registration"
            )
        client = await register_client(
            http,
            metadata,
            self._registration_metadata(discovery),
            allow_http=self.allow_http,
            timeout=self.timeout,
        )
        await self.storage.set_client(issuer, client)
        logger.info("registered client %s at %s", client.client_id, issuer)
        return client

    def _registration_metadata(self, discovery: Discovery) -> ClientMetadata:
        """``client_metadata`` completed for a registration request."""
        data = self.client_metadata.dump()
        data.setdefault("redirect_uris", [self.redirect_uri])
        data.setdefault("grant_types", ["authorization_code", "refresh_token"])
        data.setdefault("response_types", ["code"])
        data.setdefault("application_type", "native" if is_loopback(self.redirect_uri) else "web")
        if "token_endpoint_auth_method" not in data:
            supported = discovery.metadata.token_endpoint_auth_methods_supported
            if supported is None or "none" in supported:
                data["token_endpoint_auth_method"] = "none"
            else:
                probe = ClientInformation(client_id="", client_secret="x")
                data["token_endpoint_auth_method"] = choose_auth_method(probe, discovery.metadata)
        return ClientMetadata.model_validate(data)

    async def _obtain(
        self, http: httpx.AsyncClient, discovery: Discovery, scope: str | None
    ) -> StoredTokens:
        """The authorization code grant with PKCE S256, RFC 8707 and RFC 9207."""
        metadata = discovery.metadata
        if not discovery.defaults and "S256" not in (
            metadata.code_challenge_methods_supported or []
        ):
            raise OAuthError(
                f"{metadata.issuer!r} does not advertise PKCE S256 "
                "(code_challenge_methods_supported): refusing to authorize"
            )
        endpoint = metadata.authorization_endpoint
        if not endpoint:
            raise OAuthError(f"{metadata.issuer!r} publishes no authorization endpoint")
        try:
            check_secure(endpoint, "the authorization endpoint", allow_http=self.allow_http)
        except ValueError as exc:
            raise OAuthError(str(exc)) from None
        client = await self._client(http, discovery)
        verifier, challenge = new_pkce_pair()
        state = new_state()
        issuer = metadata.issuer  # recorded before the redirect (RFC 9207)
        params = {
            "response_type": "code",
            "client_id": client.client_id,
            "redirect_uri": self.redirect_uri,
            "state": state,
            "code_challenge": challenge,
            "code_challenge_method": "S256",
            "resource": discovery.resource,
        }
        if scope:
            params["scope"] = scope
        callback = await self.redirect_handler(_with_query(endpoint, params))
        code = check_authorization_response(
            AuthorizationResponse.from_url(callback),
            state=state,
            issuer=issuer,
            iss_supported=metadata.authorization_response_iss_parameter_supported,
        )
        form = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": self.redirect_uri,
            "code_verifier": verifier,
            "resource": discovery.resource,
        }
        try:
            response = await self._token_request(http, discovery, form, client)
        except TokenError as exc:
            if exc.error == "invalid_client":
                # A stored registration the server no longer knows: register anew next time.
                stored = await self.storage.get_client(issuer)
                if stored is not None and stored.client_id == client.client_id:
                    await self.storage.set_client(issuer, None)
            raise
        logger.info("authorized at %s for scope %r", issuer, scope)
        return self._store(response, discovery, scope)


def _with_query(url: str, params: dict[str, str]) -> str:
    split = urlsplit(url)
    query = urlencode(params)
    return urlunsplit(split._replace(query=f"{split.query}&{query}" if split.query else query))


class ClientCredentialsAuth(OAuthFlow):
    """The ``client_credentials`` grant for an MCP server, for a client acting on its
    own behalf (a service, a CI job): no user, no browser.

    The client authenticates with ``client_secret`` (``client_secret_basic`` or
    ``_post``, whichever the server supports) or with ``signing_key``
    (``private_key_jwt``). On a 403 ``insufficient_scope`` it asks for the union of
    scopes once more (``step_up``) or fails at once.
    """

    def __init__(
        self,
        client_id: str,
        *,
        client_secret: str | None = None,
        signing_key: SigningKey | None = None,
        token_endpoint_auth_method: str | None = None,
        server_url: str | None = None,
        storage: TokenStorage | None = None,
        http_client: httpx.AsyncClient | None = None,
        scope: str | None = None,
        step_up: bool = True,
        max_authorizations: int = 3,
        max_step_ups: int = 1,
        choose_authorization_server: AuthorizationServerChooser | None = None,
        allow_http: bool = False,
        timeout: float = 30.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__(
            server_url=server_url,
            storage=storage,
            http_client=http_client,
            scope=scope,
            max_authorizations=max_authorizations,
            max_step_ups=max_step_ups if step_up else 0,
            choose_authorization_server=choose_authorization_server,
            allow_http=allow_http,
            timeout=timeout,
            clock=clock,
        )
        if client_secret is None and signing_key is None and token_endpoint_auth_method != "none":
            raise ValueError("ClientCredentialsAuth needs a client_secret or a signing_key")
        self.client = ClientInformation(
            client_id=client_id,
            client_secret=client_secret,
            token_endpoint_auth_method=token_endpoint_auth_method,
        )
        self.signing_key = signing_key

    def _signing_key(self, client: ClientInformation) -> SigningKey | None:
        return self.signing_key

    async def _client(
        self, http: httpx.AsyncClient, discovery: Discovery, *, register: bool = True
    ) -> ClientInformation:
        return self.client

    async def _obtain(
        self, http: httpx.AsyncClient, discovery: Discovery, scope: str | None
    ) -> StoredTokens:
        form = {"grant_type": "client_credentials", "resource": discovery.resource}
        if scope:
            form["scope"] = scope
        response = await self._token_request(http, discovery, form, self.client)
        logger.info("client credentials granted at %s for scope %r", discovery.issuer, scope)
        return self._store(response, discovery, scope)
