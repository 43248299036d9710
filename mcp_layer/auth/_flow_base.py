"""What both MCP authorization flows share: `OAuthFlow`, the base of `OAuthAuth` and
`ClientCredentialsAuth` (`mcp_layer.auth._flows`): token upkeep, the 401/403 loop,
discovery, one authorization at a time.

Rules:

1. A flow serves one MCP server: the ``server_url`` given, else the URL of its first
   request. Its tokens go to that origin only; requests elsewhere pass untouched.
2. Every request to the server carries the current access token; one that has expired
   is refreshed first when a refresh token and the server's metadata are at hand.
3. A 401 starts discovery (the challenge's ``resource_metadata``, else the well-known
   URIs), then a refresh if the token came from the same authorization server, else a
   new authorization; a 403 ``insufficient_scope`` starts a step-up authorization for
   the union of the scopes requested so far and the challenged ones (SEP-2350). The
   request is then sent again with the new token.
4. One authorization at a time: concurrent requests that hit a 401 wait for the one in
   progress and use its token. A request is retried at most ``max_authorizations``
   times, and a scope set is stepped up to at most ``max_step_ups`` times; after that
   `AuthorizationLimitError`.
5. Credentials are bound to the authorization server that issued them: tokens from
   another issuer are dropped, registrations are stored per issuer (SEP-2352).
6. Requests to the authorization server never go through a flow (``NO_AUTH``), even
   on a client whose default ``auth`` is this flow: no token leaks there, no flow
   waits on itself.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Generator
from contextlib import asynccontextmanager

import anyio
import httpx

from jsonrpc_core.http import new_async_client, read_response_body

from ._challenge import Challenge, bearer_challenge
from ._discovery import AuthorizationServerChooser, Discovery, discover
from ._endpoints import SigningKey, request_token
from ._errors import AuthorizationLimitError, OAuthError
from ._models import ClientInformation, StoredTokens, TokenResponse
from ._storage import InMemoryTokenStorage, TokenStorage
from ._urls import canonical_resource, origin

__all__ = ["EXPIRY_MARGIN", "OAuthFlow", "union_scopes"]

logger = logging.getLogger("mcp_layer.auth")

EXPIRY_MARGIN = 30.0
"""Seconds before ``expires_at`` at which a token counts as expired."""


def union_scopes(*scopes: str | None) -> str | None:
    """The union of space-separated scope lists, in first-seen order."""
    merged: dict[str, None] = {}
    for scope in scopes:
        for item in (scope or "").split():
            merged[item] = None
    return " ".join(merged) or None


class OAuthFlow(httpx.Auth):
    """What both grants share: token upkeep, the 401/403 loop, discovery, the lock."""

    requires_request_body = True

    def __init__(
        self,
        *,
        server_url: str | None,
        storage: TokenStorage | None,
        http_client: httpx.AsyncClient | None,
        scope: str | None,
        max_authorizations: int,
        max_step_ups: int,
        choose_authorization_server: AuthorizationServerChooser | None,
        allow_http: bool,
        timeout: float,
        clock: Callable[[], float],
    ) -> None:
        self.server_url = canonical_resource(server_url) if server_url else None
        self.storage: TokenStorage = storage if storage is not None else InMemoryTokenStorage()
        self.http_client = http_client
        self.scope = scope
        self.max_authorizations = max_authorizations
        self.max_step_ups = max_step_ups
        self.choose_authorization_server = choose_authorization_server
        self.allow_http = allow_http
        self.timeout = timeout
        self.clock = clock
        self.discovery: Discovery | None = None
        """What the last discovery found (kept for refreshing ahead of a 401)."""
        self._lock: anyio.Lock | None = None
        self._step_ups: dict[frozenset[str], int] = {}

    # -- the httpx flow ------------------------------------------------------------

    async def async_auth_flow(
        self, request: httpx.Request
    ) -> AsyncGenerator[httpx.Request, httpx.Response]:
        if not self._serves(request.url):
            yield request
            return
        tokens = await self._current_tokens()
        _authorize_request(request, tokens)
        response = yield request
        attempts = 0
        while response.status_code in (401, 403):
            challenge = bearer_challenge(response.headers)
            if response.status_code == 403 and (
                challenge is None or challenge.error != "insufficient_scope"
            ):
                return
            if attempts >= self.max_authorizations:
                raise AuthorizationLimitError(
                    f"{request.method} {request.url} still answers HTTP "
                    f"{response.status_code} after {attempts} authorization(s)"
                )
            attempts += 1
            await read_response_body(response)  # capped; httpx's own read after this reuses it
            tokens = await self._reauthorize(
                response.status_code, challenge, sent=tokens, may_refresh=attempts == 1
            )
            _authorize_request(request, tokens)
            response = yield request

    def sync_auth_flow(
        self, request: httpx.Request
    ) -> Generator[httpx.Request, httpx.Response, None]:
        raise RuntimeError(f"{type(self).__name__} works with httpx.AsyncClient only")
        yield request  # pragma: no cover - makes this a generator, as httpx expects

    def _serves(self, url: httpx.URL) -> bool:
        """Rule 1."""
        if self.server_url is None:
            self.server_url = canonical_resource(str(url.copy_with(query=None, fragment=None)))
        return canonical_resource(origin(str(url))) == canonical_resource(origin(self.server_url))

    @property
    def _key(self) -> str:
        assert self.server_url is not None
        return self.server_url

    def _get_lock(self) -> anyio.Lock:
        if self._lock is None:
            self._lock = anyio.Lock()
        return self._lock

    @asynccontextmanager
    async def _http(self) -> AsyncIterator[httpx.AsyncClient]:
        """The client for requests to the authorization server and metadata."""
        if self.http_client is not None:
            yield self.http_client
            return
        async with new_async_client(timeout=self.timeout) as client:
            yield client

    # -- tokens --------------------------------------------------------------------

    def _expired(self, tokens: StoredTokens) -> bool:
        return tokens.expires_at is not None and self.clock() >= tokens.expires_at - EXPIRY_MARGIN

    async def _current_tokens(self) -> StoredTokens | None:
        """Rule 2."""
        tokens = await self.storage.get_tokens(self._key)
        if tokens is None or not self._expired(tokens) or not tokens.refresh_token:
            return tokens
        async with self._get_lock():
            tokens = await self.storage.get_tokens(self._key)
            discovery = self.discovery
            if (
                tokens is None
                or not self._expired(tokens)
                or not tokens.refresh_token
                or discovery is None
                or discovery.issuer != tokens.issuer
            ):
                return tokens
            async with self._http() as http:
                try:
                    return await self._refresh(http, discovery, tokens)
                except OAuthError as exc:
                    logger.info("refreshing the access token failed: %s", exc)
                    return tokens

    def _store(
        self, response: TokenResponse, discovery: Discovery, requested: str | None
    ) -> StoredTokens:
        expires_at = None
        if response.expires_in is not None:
            expires_at = self.clock() + float(response.expires_in)
        return StoredTokens(
            access_token=response.access_token,
            token_type=response.token_type,
            refresh_token=response.refresh_token,
            expires_at=expires_at,
            scope=response.scope,
            requested_scope=requested,
            issuer=discovery.issuer,
            resource=discovery.resource,
        )

    async def _refresh(
        self, http: httpx.AsyncClient, discovery: Discovery, tokens: StoredTokens
    ) -> StoredTokens:
        """Renew with the refresh token (RFC 6749 §6), for the same resource."""
        assert tokens.refresh_token is not None
        client = await self._client(http, discovery, register=False)
        form = {
            "grant_type": "refresh_token",
            "refresh_token": tokens.refresh_token,
            "resource": discovery.resource,
        }
        response = await self._token_request(http, discovery, form, client)
        renewed = self._store(response, discovery, tokens.requested_scope)
        if renewed.refresh_token is None:
            renewed.refresh_token = tokens.refresh_token
        if renewed.scope is None:
            renewed.scope = tokens.scope
        await self.storage.set_tokens(self._key, renewed)
        logger.info("access token refreshed at %s", discovery.issuer)
        return renewed

    async def _token_request(
        self,
        http: httpx.AsyncClient,
        discovery: Discovery,
        form: dict[str, str],
        client: ClientInformation,
    ) -> TokenResponse:
        return await request_token(
            http,
            discovery.metadata,
            form,
            client,
            signing_key=self._signing_key(client),
            clock=self.clock,
            allow_http=self.allow_http,
            timeout=self.timeout,
        )

    # -- 401 and 403 ---------------------------------------------------------------

    async def _reauthorize(
        self,
        status: int,
        challenge: Challenge | None,
        *,
        sent: StoredTokens | None,
        may_refresh: bool,
    ) -> StoredTokens:
        """Rules 3 to 5: new tokens for a request the server refused."""
        async with self._get_lock():
            current = await self.storage.get_tokens(self._key)
            if current is not None and (sent is None or current.access_token != sent.access_token):
                return current  # another request re-authorized meanwhile
            async with self._http() as http:
                discovery = await discover(
                    http,
                    self._key,
                    resource_metadata_url=challenge.resource_metadata if challenge else None,
                    choose=self.choose_authorization_server,
                    allow_http=self.allow_http,
                    timeout=self.timeout,
                )
                self.discovery = discovery
                previous_scope = current.requested_scope if current is not None else None
                if current is not None and current.issuer not in (None, discovery.issuer):
                    logger.info(
                        "the authorization server changed from %s to %s: tokens dropped",
                        current.issuer,
                        discovery.issuer,
                    )
                    await self.storage.set_tokens(self._key, None)
                    current = None
                if status == 401 and may_refresh and current is not None and current.refresh_token:
                    try:
                        return await self._refresh(http, discovery, current)
                    except OAuthError as exc:
                        logger.info("refresh refused (%s): authorizing anew", exc)
                scope = self._scope_for(status, challenge, discovery, previous_scope)
                if status == 403:
                    self._count_step_up(scope)
                tokens = await self._obtain(http, discovery, scope)
                await self.storage.set_tokens(self._key, tokens)
                return tokens

    def _scope_for(
        self,
        status: int,
        challenge: Challenge | None,
        discovery: Discovery,
        previous: str | None,
    ) -> str | None:
        """MCP Scope Selection Strategy: the challenge's scope, else (on a 401) every
        ``scopes_supported`` of the resource, else none; united with the scopes asked
        for before and any the flow was configured with."""
        challenged = challenge.scope if challenge is not None else None
        if challenged is None and status == 401:
            supported = discovery.resource_metadata and discovery.resource_metadata.scopes_supported
            challenged = " ".join(supported) if supported else None
        return union_scopes(previous, challenged, self.scope)

    def _count_step_up(self, scope: str | None) -> None:
        key = frozenset((scope or "").split())
        count = self._step_ups.get(key, 0) + 1
        if count > self.max_step_ups:
            raise AuthorizationLimitError(
                f"the server still asks for more scope after {count - 1} step-up "
                f"authorization(s) for {scope!r}: given up"
            )
        self._step_ups[key] = count

    # -- per grant -----------------------------------------------------------------

    async def _obtain(
        self, http: httpx.AsyncClient, discovery: Discovery, scope: str | None
    ) -> StoredTokens:
        raise NotImplementedError

    async def _client(
        self, http: httpx.AsyncClient, discovery: Discovery, *, register: bool = True
    ) -> ClientInformation:
        raise NotImplementedError

    def _signing_key(self, client: ClientInformation) -> SigningKey | None:
        return None


def _authorize_request(request: httpx.Request, tokens: StoredTokens | None) -> None:
    if tokens is not None:
        request.headers["Authorization"] = f"Bearer {tokens.access_token}"
