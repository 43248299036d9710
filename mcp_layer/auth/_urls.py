"""URLs of OAuth discovery: well-known locations, canonical resource URIs, checks.

Rules: a resource URI is compared after lowercasing scheme and host and dropping a
default port (RFC 3986 §6.2.2-6.2.3), since the MCP spec asks to accept either case;
an ``iss`` parameter is compared as a plain string (RFC 9207 §2.4), never here.
"""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

import httpx

__all__ = [
    "NO_AUTH",
    "authorization_server_metadata_urls",
    "canonical_resource",
    "check_secure",
    "is_loopback",
    "origin",
    "protected_resource_metadata_url",
    "protected_resource_metadata_urls",
    "resource_allowed",
    "same_resource",
]

NO_AUTH = httpx.Auth()
"""Per-request ``auth`` that adds nothing, whatever the client's default is."""

_DEFAULT_PORTS = {"http": 80, "https": 443}
_PRM = "/.well-known/oauth-protected-resource"
_OAUTH = "/.well-known/oauth-authorization-server"
_OIDC = "/.well-known/openid-configuration"


def _parts(url: str) -> tuple[str, str, str]:
    """Scheme, host[:port] and path of ``url``, normalised for comparison."""
    split = urlsplit(url)
    scheme = split.scheme.lower()
    host = (split.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    port = split.port
    netloc = host if port is None or port == _DEFAULT_PORTS.get(scheme) else f"{host}:{port}"
    return scheme, netloc, split.path


def canonical_resource(url: str) -> str:
    """The canonical URI of a resource (RFC 8707 §2): lowercase scheme and host, no
    default port, no query or fragment, no trailing slash (unless that is the path)."""
    scheme, netloc, path = _parts(url)
    if not scheme or not netloc:
        raise ValueError(f"not an absolute URL: {url!r}")
    path = path.rstrip("/")
    return urlunsplit((scheme, netloc, path, "", ""))


def same_resource(a: str, b: str) -> bool:
    """Whether two resource URIs name the same resource."""
    try:
        return canonical_resource(a) == canonical_resource(b)
    except ValueError:
        return False


def resource_allowed(server_url: str, resource: str) -> bool:
    """Whether protected resource metadata naming ``resource`` may describe the server
    at ``server_url``: same origin, and ``resource``'s path is ``server_url``'s path or
    a parent of it (a server at ``/mcp`` may be covered by a resource at ``/``)."""
    try:
        s_scheme, s_netloc, s_path = _parts(canonical_resource(server_url))
        r_scheme, r_netloc, r_path = _parts(canonical_resource(resource))
    except ValueError:
        return False
    if (s_scheme, s_netloc) != (r_scheme, r_netloc):
        return False
    return r_path == "" or s_path == r_path or s_path.startswith(r_path + "/")


def origin(url: str) -> str:
    """``scheme://host[:port]`` of ``url``."""
    split = urlsplit(url)
    return urlunsplit((split.scheme, split.netloc, "", "", ""))


def protected_resource_metadata_url(resource: str) -> str:
    """Where the metadata of ``resource`` lives (RFC 9728 §3.1): the well-known path
    inserted between host and path."""
    split = urlsplit(resource)
    path = split.path.rstrip("/")
    return urlunsplit((split.scheme, split.netloc, _PRM + path, "", ""))


def protected_resource_metadata_urls(server_url: str, from_challenge: str | None) -> list[str]:
    """Where to look for a server's protected resource metadata, in order: the URL of
    the ``WWW-Authenticate`` challenge, then the path-based and the root well-known
    URIs (MCP: Protected Resource Metadata Discovery Requirements)."""
    urls = [from_challenge] if from_challenge else []
    path_based = protected_resource_metadata_url(server_url)
    root = urlunsplit((*urlsplit(server_url)[:2], _PRM, "", ""))
    for url in (path_based, root):
        if url not in urls:
            urls.append(url)
    return urls


def authorization_server_metadata_urls(issuer: str) -> list[str]:
    """Where to look for an authorization server's metadata, in the MCP order: RFC 8414
    then OpenID Connect Discovery, path inserted, then OpenID's path appended."""
    split = urlsplit(issuer)
    path = split.path.rstrip("/")
    base = (split.scheme, split.netloc)
    if not path:
        return [urlunsplit((*base, _OAUTH, "", "")), urlunsplit((*base, _OIDC, "", ""))]
    return [
        urlunsplit((*base, _OAUTH + path, "", "")),
        urlunsplit((*base, _OIDC + path, "", "")),
        urlunsplit((*base, path + _OIDC, "", "")),
    ]


def is_loopback(url: str) -> bool:
    """Whether ``url`` names this machine (``localhost``, 127.0.0.0/8, ``::1``)."""
    host = (urlsplit(url).hostname or "").lower()
    return (
        host == "localhost"
        or host.endswith(".localhost")
        or host.startswith("127.")
        or (host == "::1")
    )


def check_secure(url: str, what: str, *, allow_http: bool = False) -> None:
    """``ValueError`` unless ``url`` is https, or http on a loopback host (or
    ``allow_http``): OAuth endpoints and redirect URIs must be (OAuth 2.1 §1.5)."""
    scheme = urlsplit(url).scheme.lower()
    if scheme == "https" or (scheme == "http" and (allow_http or is_loopback(url))):
        return
    raise ValueError(f"{what} must use https (or http on a loopback host): {url!r}")
