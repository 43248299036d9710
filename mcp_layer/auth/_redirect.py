"""The browser step of the authorization code flow, and checking what comes back.

A `RedirectHandler` takes the user to the authorization URL (a browser, a link in a
web page, a test double) and returns the URL the authorization server sent the user
back to: the client's redirect URI with ``code``, ``state`` and ``iss`` (or
``error``) in its query. `check_authorization_response` then applies RFC 9207 §2.4
(as the MCP authorization spec tabulates it) and the ``state`` check before the code
is used.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit

from ._errors import AuthorizationResponseError

__all__ = [
    "AuthorizationResponse",
    "RedirectHandler",
    "check_authorization_response",
    "new_pkce_pair",
    "new_state",
]

RedirectHandler = Callable[[str], Awaitable[str]]
"""``await handler(authorization_url)`` -> the URL redirected back to."""


def new_pkce_pair() -> tuple[str, str]:
    """A PKCE code verifier and its S256 challenge (RFC 7636 §4.1-4.2)."""
    verifier = secrets.token_urlsafe(64)
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    challenge = base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")
    return verifier, challenge


def new_state() -> str:
    """An unguessable ``state`` value."""
    return secrets.token_urlsafe(32)


@dataclass(frozen=True, slots=True)
class AuthorizationResponse:
    """The parameters of an authorization response (RFC 6749 §4.1.2, RFC 9207)."""

    code: str | None = None
    state: str | None = None
    iss: str | None = None
    error: str | None = None
    error_description: str | None = None

    @classmethod
    def from_url(cls, url: str) -> AuthorizationResponse:
        """Parse the URL the user agent was redirected to (query, else fragment)."""
        split = urlsplit(url)
        raw = split.query or split.fragment
        values = {name: items[0] for name, items in parse_qs(raw).items() if items}
        return cls(
            code=values.get("code"),
            state=values.get("state"),
            iss=values.get("iss"),
            error=values.get("error"),
            error_description=values.get("error_description"),
        )


def check_authorization_response(
    response: AuthorizationResponse,
    *,
    state: str,
    issuer: str,
    iss_supported: bool | None,
) -> str:
    """The authorization code, once ``response`` is known to answer our request and to
    come from ``issuer``; `AuthorizationResponseError` otherwise.

    ``iss`` is compared to the issuer recorded before the redirect as a plain string:
    no case folding, port or slash normalisation. On a mismatch nothing else of the
    response is used, its ``error`` included.
    """
    if response.iss is not None:
        if response.iss != issuer:
            raise AuthorizationResponseError(
                f"the authorization response comes from issuer {response.iss!r}, "
                f"not {issuer!r}: refused"
            )
    elif iss_supported:
        raise AuthorizationResponseError(
            f"the authorization response lacks the iss parameter that {issuer!r} "
            "promises (RFC 9207): refused"
        )
    if response.state != state:
        raise AuthorizationResponseError("the authorization response has a wrong state")
    if response.error is not None:
        detail = f": {response.error_description}" if response.error_description else ""
        raise AuthorizationResponseError(
            f"authorization refused ({response.error}){detail}",
            error=response.error,
            description=response.error_description,
        )
    if not response.code:
        raise AuthorizationResponseError("the authorization response carries no code")
    return response.code
