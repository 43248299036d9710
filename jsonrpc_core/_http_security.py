"""DNS-rebinding protection and bearer-token checks for the HTTP server.

Rules: with the default policy a server bound to loopback answers only requests
whose ``Host`` is a loopback name and whose ``Origin``, when present, is a loopback
origin; anything else is refused with 403 before a body is read. A token verifier,
when configured, runs before any message is dispatched.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, cast

from ._http_common import HTTPError, Route

__all__ = [
    "BearerAuth",
    "OriginPolicy",
    "ScopeRequirement",
    "TokenVerifier",
    "principal_scopes",
    "without_credentials",
]

_LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")


@dataclass(slots=True)
class OriginPolicy:
    """Allow-lists for the ``Host`` and ``Origin`` headers (``fnmatch`` patterns).

    ``None`` disables a check. ``OriginPolicy.loopback()`` is the default for servers
    bound to 127.0.0.1.
    """

    allowed_hosts: Sequence[str] | None = None
    allowed_origins: Sequence[str] | None = None

    @classmethod
    def loopback(cls) -> OriginPolicy:
        """Only loopback hosts (any port) and loopback origins (http or https)."""
        hosts = [h for name in _LOOPBACK_HOSTS for h in (name, f"{name}:*")]
        origins = [f"{scheme}://{h}" for scheme in ("http", "https") for h in hosts]
        return cls(hosts, origins)

    @classmethod
    def allow_all(cls) -> OriginPolicy:
        """No checks (for servers behind a trusted proxy that does them)."""
        return cls(None, None)

    def check(self, headers: Mapping[str, str]) -> None:
        """Raise `HTTPError` 403 when ``Host`` or ``Origin`` is not allowed."""
        if self.allowed_hosts is not None:
            host = headers.get("host", "").lower()
            if not any(_matches(host, p) for p in self.allowed_hosts):
                raise HTTPError(403, f"Forbidden: Host {host!r} is not allowed")
        origin = headers.get("origin")
        if origin is not None and self.allowed_origins is not None:
            if not any(_matches(origin.lower(), p) for p in self.allowed_origins):
                raise HTTPError(403, f"Forbidden: Origin {origin!r} is not allowed")


def _matches(value: str, pattern: str) -> bool:
    """``fnmatch`` with ``*`` and ``?`` only: brackets are literal (IPv6 hosts)."""
    return fnmatch.fnmatchcase(value, pattern.lower().replace("[", "[[]"))


class TokenVerifier(Protocol):
    """Checks a bearer token; returns the principal, or ``None`` when it is invalid."""

    async def verify(self, token: str) -> Any | None: ...


ScopeRequirement = Callable[[Any], Iterable[str]]
"""The scopes one parsed message needs (a `Request`, `Notification`, ...), beyond the
scopes every request needs."""


def principal_scopes(principal: Any) -> frozenset[str]:
    """The scopes a principal was granted: its ``scopes`` attribute, or the ``scopes`` /
    ``scope`` entry of a mapping (a space-separated string or a list); none otherwise."""
    scopes = getattr(principal, "scopes", None)
    if scopes is None and isinstance(principal, Mapping):
        scopes = principal.get("scopes", principal.get("scope"))
    if isinstance(scopes, str):
        return frozenset(scopes.split())
    if isinstance(scopes, Iterable):
        return frozenset(str(s) for s in scopes)
    return frozenset()


def _quoted(value: str) -> str:
    """An RFC 9110 quoted-string."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


@dataclass(slots=True)
class BearerAuth:
    """Requires ``Authorization: Bearer <token>`` accepted by ``verifier`` (RFC 6750).

    Rules: a missing or rejected token is 401 with a ``WWW-Authenticate: Bearer``
    challenge carrying ``resource_metadata`` (RFC 9728) and ``scope`` when configured.
    A valid token whose principal lacks a scope in ``scopes`` (needed by every request),
    or a scope that ``message_scopes`` asks of a message, is 403
    ``error="insufficient_scope"`` naming every scope the operation needs, so the client
    can step up. Both checks run before a message is dispatched, and once a token is
    accepted the ``Authorization`` header is dropped from what handlers see: the token
    is never theirs to pass on.

    A principal's scopes are read by `principal_scopes`; ``satisfies`` decides whether
    the granted scopes cover a required one (scope hierarchies); membership by default.
    ``routes`` are served beside the endpoint without authentication (the protected
    resource metadata document).
    """

    verifier: TokenVerifier | Callable[[str], Awaitable[Any | None]]
    resource_metadata_url: str | None = None
    scopes: Sequence[str] = field(default_factory=tuple)
    realm: str | None = None
    message_scopes: ScopeRequirement | None = None
    satisfies: Callable[[frozenset[str], str], bool] | None = None
    routes: Sequence[Route] = field(default_factory=tuple)

    def challenge(
        self,
        error: str | None = None,
        description: str | None = None,
        *,
        scopes: Sequence[str] | None = None,
    ) -> str:
        """The ``WWW-Authenticate`` header value (``scopes`` defaults to ``self.scopes``)."""
        params: list[str] = []
        if self.realm:
            params.append(f"realm={_quoted(self.realm)}")
        if error:
            params.append(f"error={_quoted(error)}")
        if description:
            params.append(f"error_description={_quoted(description)}")
        if self.resource_metadata_url:
            params.append(f"resource_metadata={_quoted(self.resource_metadata_url)}")
        scope_list = self.scopes if scopes is None else scopes
        if scope_list:
            params.append(f"scope={_quoted(' '.join(scope_list))}")
        return "Bearer" + (" " + ", ".join(params) if params else "")

    async def authenticate(self, headers: Mapping[str, str]) -> Any:
        """The principal for the request, or `HTTPError` 401 (no or bad token) or 403
        (a scope every request needs is missing)."""
        value = headers.get("authorization", "")
        scheme, _, token = value.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise HTTPError(
                401,
                "Unauthorized: a bearer token is required",
                headers={"WWW-Authenticate": self.challenge()},
            )
        verify = cast(
            "Callable[[str], Awaitable[Any]]", getattr(self.verifier, "verify", self.verifier)
        )
        principal = await verify(token.strip())
        if principal is None:
            raise HTTPError(
                401,
                "Unauthorized: invalid or expired token",
                headers={"WWW-Authenticate": self.challenge("invalid_token")},
            )
        self._require(principal, ())
        return principal

    def authorize(self, principal: Any, payload: Any) -> None:
        """Check the scopes that the messages of ``payload`` (one message or a batch)
        need; `HTTPError` 403 ``insufficient_scope`` if the principal lacks one."""
        if self.message_scopes is None:
            return
        items = payload if isinstance(payload, list) else [payload]
        needed: list[str] = []
        for item in items:
            for scope in self.message_scopes(item):
                if scope not in needed:
                    needed.append(scope)
        if needed:
            self._require(principal, needed)

    def _require(self, principal: Any, extra: Sequence[str]) -> None:
        required = list(dict.fromkeys([*self.scopes, *extra]))
        if not required:
            return
        granted = principal_scopes(principal)
        satisfies = self.satisfies or _member
        if all(satisfies(granted, scope) for scope in required):
            return
        raise HTTPError(
            403,
            "Forbidden: insufficient scope",
            headers={
                "WWW-Authenticate": self.challenge(
                    "insufficient_scope",
                    "The access token lacks a scope this request needs",
                    scopes=required,
                )
            },
        )


def _member(granted: frozenset[str], scope: str) -> bool:
    return scope in granted


def without_credentials(headers: Mapping[str, str]) -> dict[str, str]:
    """``headers`` less ``Authorization``: what handlers see once a token is accepted."""
    return {name: value for name, value in headers.items() if name != "authorization"}
