"""The errors of MCP authorization, client and resource server sides.

::

    OAuthError                      anything that stops an authorization
    ├── DiscoveryError              no usable protected resource / server metadata
    │   └── ResourceMismatch        the metadata names another resource (RFC 9728 §3.3)
    ├── RegistrationError           no client id could be had (none pre-registered,
    │                               no CIMD support, registration refused)
    ├── AuthorizationResponseError  the browser step failed: an error redirect, a wrong
    │                               ``state``, a missing or wrong ``iss`` (RFC 9207)
    ├── TokenError                  the token endpoint refused (``error`` from RFC 6749)
    └── AuthorizationLimitError     re-authorizing did not help, and was given up

All are `jsonrpc_core.TransportError`: they surface where the HTTP request that needed
the token was sent, as any other failure to deliver a message would.
"""

from __future__ import annotations

from jsonrpc_core import TransportError

__all__ = [
    "AuthorizationLimitError",
    "AuthorizationResponseError",
    "DiscoveryError",
    "OAuthError",
    "RegistrationError",
    "ResourceMismatch",
    "TokenError",
]


class OAuthError(TransportError):
    """An authorization step failed; ``error`` is the OAuth error code, if any."""

    def __init__(
        self, message: str, *, error: str | None = None, description: str | None = None
    ) -> None:
        super().__init__(message)
        self.error = error
        self.description = description


class DiscoveryError(OAuthError):
    """Neither protected resource metadata nor authorization server metadata could be
    found and trusted."""


class ResourceMismatch(DiscoveryError):
    """The protected resource metadata names a resource other than the server used."""


class RegistrationError(OAuthError):
    """The client has no client id for the authorization server."""


class AuthorizationResponseError(OAuthError):
    """The authorization response (the redirect back) was refused or was an error."""


class TokenError(OAuthError):
    """The token endpoint answered with an error."""

    def __init__(
        self,
        message: str,
        *,
        error: str | None = None,
        description: str | None = None,
        status: int | None = None,
    ) -> None:
        super().__init__(message, error=error, description=description)
        self.status = status


class AuthorizationLimitError(OAuthError):
    """The server kept refusing new tokens; no further authorization is attempted."""
