"""Verifying opaque access tokens by asking the authorization server (RFC 7662)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import httpx
import pydantic_core

from jsonrpc_core import TransportError
from jsonrpc_core.http import fetch_body, new_async_client

from ._endpoints import basic_credentials
from ._token import AccessToken, audience_matches, scopes_of_claims
from ._urls import NO_AUTH, check_secure

__all__ = ["IntrospectionVerifier"]

logger = logging.getLogger("mcp_layer.auth")


class IntrospectionVerifier:
    """A `TokenVerifier` that POSTs each token to an introspection ``endpoint``.

    The server authenticates with ``client_id`` and ``client_secret`` (HTTP Basic, or
    in the form when ``auth_method="client_secret_post"``). A token is accepted when
    the answer is ``active``, unexpired on ``clock``, from ``issuer`` when one is
    given, and its ``aud`` names ``audience`` (this server's resource URI); an answer
    without ``aud`` is refused unless ``require_audience=False``. Any failure to ask is
    a refusal (401), never an acceptance.
    """

    def __init__(
        self,
        endpoint: str,
        *,
        audience: str | Sequence[str],
        client_id: str | None = None,
        client_secret: str | None = None,
        auth_method: str = "client_secret_basic",
        issuer: str | None = None,
        require_audience: bool = True,
        leeway: float = 30.0,
        http_client: httpx.AsyncClient | None = None,
        timeout: float = 10.0,
        allow_http: bool = False,
        clock: Callable[[], float] = time.time,
    ) -> None:
        check_secure(endpoint, "the introspection endpoint", allow_http=allow_http)
        if auth_method not in ("client_secret_basic", "client_secret_post", "none"):
            raise ValueError(f"unsupported introspection authentication {auth_method!r}")
        self.endpoint = endpoint
        self.audience = [audience] if isinstance(audience, str) else list(audience)
        self.client_id = client_id
        self.client_secret = client_secret
        self.auth_method = auth_method
        self.issuer = issuer
        self.require_audience = require_audience
        self.leeway = leeway
        self.http_client = http_client
        self.timeout = timeout
        self.clock = clock

    async def verify(self, token: str) -> AccessToken | None:
        """The token's `AccessToken`, or ``None``."""
        try:
            answer = await self._introspect(token)
        except (httpx.HTTPError, ValueError, TransportError) as exc:
            logger.warning("token introspection failed: %r", exc)
            return None
        if answer is None or answer.get("active") is not True:
            return None
        return self._check(answer)

    async def _introspect(self, token: str) -> Mapping[str, Any] | None:
        form = {"token": token, "token_type_hint": "access_token"}
        headers = {"accept": "application/json"}
        if self.auth_method == "client_secret_basic" and self.client_id and self.client_secret:
            headers["authorization"] = basic_credentials(self.client_id, self.client_secret)
        elif self.client_id:
            form["client_id"] = self.client_id
            if self.auth_method == "client_secret_post" and self.client_secret:
                form["client_secret"] = self.client_secret
        if self.http_client is not None:
            response, body = await self._post(self.http_client, form, headers)
        else:
            async with new_async_client(timeout=self.timeout) as http:
                response, body = await self._post(http, form, headers)
        if response.status_code != 200:
            logger.warning("introspection answered HTTP %d", response.status_code)
            return None
        data = pydantic_core.from_json(body)
        return data if isinstance(data, Mapping) else None

    async def _post(
        self, http: httpx.AsyncClient, form: dict[str, str], headers: dict[str, str]
    ) -> tuple[httpx.Response, bytes]:
        request = http.build_request(
            "POST", self.endpoint, data=form, headers=headers, timeout=self.timeout
        )
        return await fetch_body(http, request, follow_redirects=False, auth=NO_AUTH)

    def _check(self, answer: Mapping[str, Any]) -> AccessToken | None:
        exp = answer.get("exp")
        if exp is not None and (
            not isinstance(exp, int | float) or self.clock() >= exp + self.leeway
        ):
            return None
        nbf = answer.get("nbf")
        if isinstance(nbf, int | float) and self.clock() < nbf - self.leeway:
            return None
        issuer = answer.get("iss")
        if self.issuer is not None and issuer is not None and issuer != self.issuer:
            return None
        audience = answer.get("aud")
        if audience is None:
            if self.require_audience:
                logger.info("introspected token refused: it names no audience")
                return None
        elif not audience_matches(audience, self.audience):
            logger.info("introspected token refused: audience %r", audience)
            return None
        client_id = answer.get("client_id")
        subject = answer.get("sub")
        return AccessToken(
            client_id=client_id if isinstance(client_id, str) else None,
            subject=subject if isinstance(subject, str) else None,
            scopes=scopes_of_claims(answer),
            expires_at=float(exp) if isinstance(exp, int | float) else None,
            issuer=issuer if isinstance(issuer, str) else self.issuer,
            audience=(
                tuple(audience)
                if isinstance(audience, list)
                else ((audience,) if isinstance(audience, str) else ())
            ),
            claims=dict(answer),
        )
