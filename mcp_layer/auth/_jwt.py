"""Verifying JWT access tokens (RFC 9068) against a JSON Web Key Set, with PyJWT.

Rules:

1. The signature is checked with a key of the issuer's JWKS chosen by the token's
   ``kid`` (the only key when neither names one), for an asymmetric algorithm of the
   allowed list; ``none`` and shared-secret algorithms are never accepted.
2. The key set is fetched once and kept for ``jwks_ttl`` seconds. A ``kid`` it does not
   hold makes it fetched again (key rotation), at most once per
   ``jwks_min_refresh_interval`` seconds, so unknown keys cannot flood the issuer.
3. Then the claims: ``iss`` is the issuer, ``aud`` names this resource (RFC 8707),
   ``exp`` is in the future and ``nbf`` in the past, each with ``leeway`` seconds,
   on the verifier's clock. Any failure is ``None``: the caller answers 401.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import anyio
import httpx
import pydantic_core

from jsonrpc_core import TransportError
from jsonrpc_core.http import fetch_body, new_async_client

from ._crypto import require_pyjwt
from ._discovery import fetch_authorization_server_metadata
from ._token import AccessToken, audience_matches, scopes_of_claims
from ._urls import NO_AUTH

__all__ = ["ASYMMETRIC_ALGORITHMS", "JWKSCache", "JWTVerifier"]

logger = logging.getLogger("mcp_layer.auth")

ASYMMETRIC_ALGORITHMS = (
    "RS256",
    "RS384",
    "RS512",
    "PS256",
    "PS384",
    "PS512",
    "ES256",
    "ES384",
    "ES512",
    "EdDSA",
)


class JWKSCache:
    """An issuer's JSON Web Key Set, fetched on demand and kept (rules 1 and 2).

    ``url`` is the ``jwks_uri``; without it the issuer's metadata (RFC 8414 or OpenID
    Connect Discovery) is fetched to find it. ``jwks`` gives a fixed key set instead.
    """

    def __init__(
        self,
        *,
        url: str | None = None,
        issuer: str | None = None,
        jwks: Mapping[str, Any] | None = None,
        http_client: httpx.AsyncClient | None = None,
        ttl: float = 3600.0,
        min_refresh_interval: float = 30.0,
        timeout: float = 10.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        require_pyjwt("JWT access token verification")
        if url is None and issuer is None and jwks is None:
            raise ValueError("JWKSCache needs a jwks_uri, an issuer or a key set")
        self.url = url
        self.issuer = issuer
        self.http_client = http_client
        self.ttl = ttl
        self.min_refresh_interval = min_refresh_interval
        self.timeout = timeout
        self.clock = clock
        self._fixed = jwks is not None
        self._keys: list[_Key] = _parse(jwks) if jwks is not None else []
        self._fetched_at: float | None = None
        self._lock: anyio.Lock | None = None

    async def get(self, kid: str | None) -> _Key | None:
        """The key for ``kid`` (or the only key, when ``kid`` is ``None``)."""
        if not self._fixed:
            now = self.clock()
            if self._fetched_at is None or now - self._fetched_at >= self.ttl:
                await self._refresh(now)
        key = _find(self._keys, kid)
        if key is None and not self._fixed and kid is not None:
            now = self.clock()
            assert self._fetched_at is not None
            if now - self._fetched_at >= self.min_refresh_interval:
                logger.info("unknown key id %r: fetching the key set again", kid)
                await self._refresh(now, force=True)
                key = _find(self._keys, kid)
        return key

    async def _refresh(self, now: float, *, force: bool = False) -> None:
        if self._lock is None:
            self._lock = anyio.Lock()
        async with self._lock:
            if self._fetched_at is not None:
                age = now - self._fetched_at
                if age < (self.min_refresh_interval if force else self.ttl):
                    return  # fetched meanwhile
            self._fetched_at = now
            try:
                self._keys = await self._fetch()
            except (httpx.HTTPError, ValueError, TransportError) as exc:
                logger.warning(
                    "fetching the JSON Web Key Set failed: %r (keeping %d key(s))",
                    exc,
                    len(self._keys),
                )

    async def _fetch(self) -> list[_Key]:
        if self.http_client is not None:
            return await self._fetch_with(self.http_client)
        async with new_async_client(timeout=self.timeout) as http:
            return await self._fetch_with(http)

    async def _fetch_with(self, http: httpx.AsyncClient) -> list[_Key]:
        if self.url is None:
            assert self.issuer is not None
            metadata = await fetch_authorization_server_metadata(
                http, self.issuer, timeout=self.timeout
            )
            if metadata is None or not metadata.jwks_uri:
                raise ValueError(f"{self.issuer!r} publishes no jwks_uri")
            self.url = metadata.jwks_uri
        request = http.build_request("GET", self.url, timeout=self.timeout)
        response, body = await fetch_body(http, request, follow_redirects=False, auth=NO_AUTH)
        response.raise_for_status()
        data = pydantic_core.from_json(body)
        if not isinstance(data, Mapping):
            raise ValueError("the JSON Web Key Set is not an object")
        return _parse(data)


@dataclass(frozen=True, slots=True)
class _Key:
    """One verification key: its ``kid``, the ``alg`` it is declared for, the key."""

    kid: str | None
    alg: str | None
    key: Any


def _parse(data: Mapping[str, Any]) -> list[_Key]:
    """The usable asymmetric signing keys of a key set."""
    import jwt

    keys: list[_Key] = []
    for item in data.get("keys", []) or []:
        if not isinstance(item, Mapping) or item.get("kty") == "oct":
            continue
        if item.get("use", "sig") != "sig":
            continue
        try:
            jwk = jwt.PyJWK(dict(item))
        except jwt.PyJWTError as exc:
            logger.info("skipping an unusable key (%s): %s", item.get("kid"), exc)
            continue
        alg = item.get("alg")
        keys.append(_Key(jwk.key_id, alg if isinstance(alg, str) else None, jwk.key))
    return keys


def _find(keys: Sequence[_Key], kid: str | None) -> _Key | None:
    if kid is None:
        return keys[0] if len(keys) == 1 else None
    return next((key for key in keys if key.kid == kid), None)


class JWTVerifier:
    """A `TokenVerifier` for JWT access tokens signed by ``issuer`` for ``audience``
    (this server's resource URI, or several names of it).

    Keys come from ``jwks_url``, a fixed ``jwks`` document, or the issuer's metadata;
    a `JWKSCache` may be shared. ``clock`` (wall-clock seconds) judges ``exp`` and
    ``nbf``; tokens without ``exp`` are refused unless ``require_exp=False``. With
    ``token_type="at+jwt"`` the JWS ``typ`` must say so (RFC 9068 §4), which keeps ID
    tokens and other JWTs of the same issuer out.
    """

    def __init__(
        self,
        *,
        issuer: str,
        audience: str | Sequence[str],
        jwks_url: str | None = None,
        jwks: Mapping[str, Any] | None = None,
        keys: JWKSCache | None = None,
        algorithms: Sequence[str] = ASYMMETRIC_ALGORITHMS,
        leeway: float = 30.0,
        require_exp: bool = True,
        token_type: str | None = None,
        http_client: httpx.AsyncClient | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        require_pyjwt("JWTVerifier")
        unsafe = [a for a in algorithms if a not in ASYMMETRIC_ALGORITHMS]
        if unsafe:
            raise ValueError(f"only asymmetric signature algorithms are accepted, not {unsafe}")
        self.issuer = issuer
        self.audience = [audience] if isinstance(audience, str) else list(audience)
        self.algorithms = tuple(algorithms)
        self.leeway = leeway
        self.require_exp = require_exp
        self.token_type = token_type.lower().removeprefix("application/") if token_type else None
        self.clock = clock
        self.keys = keys or JWKSCache(
            url=jwks_url, issuer=issuer, jwks=jwks, http_client=http_client
        )

    async def verify(self, token: str) -> AccessToken | None:
        """The token's `AccessToken`, or ``None`` (rules 1 and 3)."""
        import jwt

        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            return None
        algorithm = header.get("alg")
        kid = header.get("kid")
        if algorithm not in self.algorithms or not (kid is None or isinstance(kid, str)):
            return None
        if self.token_type is not None:
            typ = str(header.get("typ", "")).lower().removeprefix("application/")
            if typ != self.token_type:
                return None
        key = await self.keys.get(kid)
        if key is None:
            logger.info("no key for a token (kid %r)", kid)
            return None
        if key.alg is not None and key.alg != algorithm:
            return None
        try:
            claims = jwt.decode(
                token,
                key.key,
                algorithms=[algorithm],
                options={
                    "verify_signature": True,
                    "verify_exp": False,
                    "verify_nbf": False,
                    "verify_iat": False,
                    "verify_aud": False,
                    "verify_iss": False,
                },
            )
        except jwt.PyJWTError as exc:
            logger.info("token refused: %s", exc)
            return None
        return self._check_claims(claims)

    def _check_claims(self, claims: dict[str, Any]) -> AccessToken | None:
        now = self.clock()
        exp = claims.get("exp")
        if exp is None:
            if self.require_exp:
                return None
        elif not isinstance(exp, int | float) or now >= exp + self.leeway:
            logger.info("token refused: expired")
            return None
        nbf = claims.get("nbf")
        if nbf is not None and (not isinstance(nbf, int | float) or now < nbf - self.leeway):
            return None
        if claims.get("iss") != self.issuer:
            logger.info("token refused: issuer %r", claims.get("iss"))
            return None
        audience = claims.get("aud")
        if not audience_matches(audience, self.audience):
            logger.info("token refused: audience %r is not this resource", audience)
            return None
        client_id = claims.get("client_id", claims.get("azp"))
        subject = claims.get("sub")
        return AccessToken(
            client_id=client_id if isinstance(client_id, str) else None,
            subject=subject if isinstance(subject, str) else None,
            scopes=scopes_of_claims(claims),
            expires_at=float(exp) if isinstance(exp, int | float) else None,
            issuer=self.issuer,
            audience=tuple(audience) if isinstance(audience, list) else (str(audience),),
            claims=claims,
        )
