"""Talking to an authorization server: dynamic client registration (RFC 7591) and the
token endpoint (RFC 6749 §3.2), with the client authentication methods of RFC 7591
§2 (``none``, ``client_secret_basic``, ``client_secret_post``, ``private_key_jwt``).
"""

from __future__ import annotations

import base64
import logging
import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote_plus

import httpx
import pydantic
import pydantic_core

from jsonrpc_core.http import ResponseTooLarge, fetch_body

from ._crypto import require_pyjwt
from ._errors import RegistrationError, TokenError
from ._models import (
    AuthorizationServerMetadata,
    ClientInformation,
    ClientMetadata,
    TokenResponse,
)
from ._urls import NO_AUTH, check_secure

__all__ = [
    "SigningKey",
    "authenticate_client",
    "basic_credentials",
    "choose_auth_method",
    "register_client",
    "request_token",
]

logger = logging.getLogger("mcp_layer.auth")

JWT_BEARER_ASSERTION = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"


@dataclass(frozen=True, slots=True)
class SigningKey:
    """A private key for ``private_key_jwt`` client authentication (RFC 7523 §2.2):
    a PEM string or a key object PyJWT accepts, its JWS ``algorithm``, and an optional
    ``kid`` for the JWS header."""

    key: Any
    algorithm: str = "ES256"
    kid: str | None = None

    def assertion(self, client_id: str, audience: str, now: float, lifetime: float = 300) -> str:
        """A signed client assertion: ``iss`` = ``sub`` = client id, ``aud`` = the
        authorization server's issuer (RFC 7523bis)."""
        require_pyjwt("private_key_jwt client authentication")
        import jwt

        claims = {
            "iss": client_id,
            "sub": client_id,
            "aud": audience,
            "iat": int(now),
            "exp": int(now + lifetime),
            "jti": secrets.token_urlsafe(16),
        }
        headers = {"kid": self.kid} if self.kid else None
        return jwt.encode(claims, self.key, algorithm=self.algorithm, headers=headers)


def choose_auth_method(
    client: ClientInformation, metadata: AuthorizationServerMetadata, *, has_key: bool = False
) -> str:
    """How ``client`` authenticates at the token endpoint: as registered, else the
    best the server supports for the credentials the client has."""
    if client.token_endpoint_auth_method:
        return client.token_endpoint_auth_method
    supported = metadata.token_endpoint_auth_methods_supported
    if has_key and (supported is None or "private_key_jwt" in supported):
        return "private_key_jwt"
    if client.client_secret:
        # RFC 8414 §2: client_secret_basic is the default when nothing is listed.
        for method in ("client_secret_basic", "client_secret_post"):
            if supported is None or method in supported:
                return method
        return "none" if supported and "none" in supported else "client_secret_basic"
    return "none"


def basic_credentials(client_id: str, secret: str) -> str:
    """RFC 6749 §2.3.1: both parts form-urlencoded, then Basic."""
    raw = f"{quote_plus(client_id)}:{quote_plus(secret)}".encode()
    return "Basic " + base64.b64encode(raw).decode("ascii")


def authenticate_client(
    form: dict[str, str],
    client: ClientInformation,
    metadata: AuthorizationServerMetadata,
    *,
    signing_key: SigningKey | None = None,
    clock: Callable[[], float] = time.time,
) -> dict[str, str]:
    """Add ``client``'s authentication to a token request; returns extra headers."""
    method = choose_auth_method(client, metadata, has_key=signing_key is not None)
    if method == "client_secret_basic":
        if not client.client_secret:
            raise TokenError("client_secret_basic needs a client secret")
        return {"authorization": basic_credentials(client.client_id, client.client_secret)}
    form["client_id"] = client.client_id
    if method == "client_secret_post":
        if not client.client_secret:
            raise TokenError("client_secret_post needs a client secret")
        form["client_secret"] = client.client_secret
    elif method == "private_key_jwt":
        if signing_key is None:
            raise TokenError("private_key_jwt needs a signing key")
        form["client_assertion_type"] = JWT_BEARER_ASSERTION
        form["client_assertion"] = signing_key.assertion(client.client_id, metadata.issuer, clock())
    elif method != "none":
        raise TokenError(f"unsupported token endpoint authentication method {method!r}")
    return {}


def _error_of(body: bytes) -> tuple[str | None, str | None]:
    try:
        data = pydantic_core.from_json(body)
    except ValueError:
        return None, body[:200].decode("utf-8", "replace") or None
    if not isinstance(data, Mapping):
        return None, None
    error = data.get("error")
    description = data.get("error_description")
    return (
        error if isinstance(error, str) else None,
        description if isinstance(description, str) else None,
    )


async def request_token(
    http: httpx.AsyncClient,
    metadata: AuthorizationServerMetadata,
    form: dict[str, str],
    client: ClientInformation,
    *,
    signing_key: SigningKey | None = None,
    clock: Callable[[], float] = time.time,
    allow_http: bool = False,
    timeout: float = 30.0,
) -> TokenResponse:
    """POST ``form`` to the token endpoint with ``client``'s authentication."""
    endpoint = metadata.token_endpoint
    if not endpoint:
        raise TokenError(f"{metadata.issuer!r} publishes no token endpoint")
    try:
        check_secure(endpoint, "the token endpoint", allow_http=allow_http)
    except ValueError as exc:
        raise TokenError(str(exc)) from None
    form = dict(form)
    headers = authenticate_client(form, client, metadata, signing_key=signing_key, clock=clock)
    headers["accept"] = "application/json"
    request = http.build_request("POST", endpoint, data=form, headers=headers, timeout=timeout)
    try:
        response, body = await fetch_body(http, request, follow_redirects=False, auth=NO_AUTH)
    except httpx.HTTPError as exc:
        raise TokenError(f"POST {endpoint} failed: {exc!r}") from exc
    except ResponseTooLarge as exc:
        raise TokenError(f"the token endpoint's {exc}") from exc
    if response.status_code != 200:
        error, description = _error_of(body)
        detail = f" ({error}{': ' + description if description else ''})" if error else ""
        raise TokenError(
            f"the token endpoint refused the {form.get('grant_type')} grant: "
            f"HTTP {response.status_code}{detail}",
            error=error,
            description=description,
            status=response.status_code,
        )
    try:
        token = TokenResponse.model_validate_json(body)
    except pydantic.ValidationError as exc:
        raise TokenError(f"the token endpoint answered with no usable token: {exc}") from None
    if token.token_type.lower() != "bearer":
        raise TokenError(f"unsupported token type {token.token_type!r} (only Bearer)")
    return token


async def register_client(
    http: httpx.AsyncClient,
    metadata: AuthorizationServerMetadata,
    client_metadata: ClientMetadata,
    *,
    allow_http: bool = False,
    timeout: float = 30.0,
) -> ClientInformation:
    """Register with the authorization server (RFC 7591 §3); the registration is bound
    to the server's issuer."""
    endpoint = metadata.registration_endpoint
    if not endpoint:
        raise RegistrationError(f"{metadata.issuer!r} offers no dynamic client registration")
    try:
        check_secure(endpoint, "the registration endpoint", allow_http=allow_http)
    except ValueError as exc:
        raise RegistrationError(str(exc)) from None
    request = http.build_request(
        "POST",
        endpoint,
        json=client_metadata.dump(),
        headers={"accept": "application/json"},
        timeout=timeout,
    )
    try:
        response, body = await fetch_body(http, request, follow_redirects=False, auth=NO_AUTH)
    except httpx.HTTPError as exc:
        raise RegistrationError(f"POST {endpoint} failed: {exc!r}") from exc
    except ResponseTooLarge as exc:
        raise RegistrationError(f"the registration endpoint's {exc}") from exc
    if response.status_code not in (200, 201):
        error, description = _error_of(body)
        raise RegistrationError(
            f"client registration refused: HTTP {response.status_code}"
            + (f" ({error}: {description})" if error else ""),
            error=error,
            description=description,
        )
    try:
        client = ClientInformation.model_validate_json(body)
    except pydantic.ValidationError as exc:
        raise RegistrationError(f"the registration response is not usable: {exc}") from None
    client.issuer = metadata.issuer
    return client
