"""An MCP server as an OAuth 2.1 resource server: bearer tokens checked by a
`TokenVerifier`, scopes per method and per tool, and the Protected Resource Metadata
document (RFC 9728) that tells clients where to get tokens."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from jsonrpc_core import BearerAuth
from jsonrpc_core.http import HTTPRequest, HTTPResponse, Route

from ._models import ProtectedResourceMetadata
from ._urls import check_secure, protected_resource_metadata_url

__all__ = ["ProtectedResource"]


@dataclass(slots=True, kw_only=True)
class ProtectedResource(BearerAuth):
    """`BearerAuth` for an MCP server protected by OAuth; pass it as ``auth=`` to
    `MCPServer.asgi_app` (or any jsonrpc_core HTTP app)::

        auth = ProtectedResource(
            JWTVerifier(issuer=AS, audience="https://mcp.example.com/mcp"),
            resource="https://mcp.example.com/mcp",
            authorization_servers=[AS],
            scopes=["mcp"],                       # needed by every request
            tool_scopes={"delete_file": ["files:write"]},   # step-up per tool
        )
        app = server.asgi_app(auth=auth)

    Serves the metadata document at its well-known URL (``/.well-known/
    oauth-protected-resource`` + the resource's path) and names it in every
    challenge. A request without a valid token for ``resource`` is 401; one whose token
    lacks the scopes of ``scopes``, of its method (``method_scopes``) or of the tool it
    calls (``tool_scopes``) is 403 ``insufficient_scope`` naming all of them; neither
    reaches a handler. ``scopes_supported`` (published) defaults to ``scopes``.
    """

    resource: str
    authorization_servers: Sequence[str]
    scopes_supported: Sequence[str] | None = None
    method_scopes: Mapping[str, Sequence[str]] = field(default_factory=dict)
    tool_scopes: Mapping[str, Sequence[str]] = field(default_factory=dict)
    resource_name: str | None = None
    resource_documentation: str | None = None
    allow_http: bool = False

    def __post_init__(self) -> None:
        check_secure(self.resource, "the resource URI", allow_http=self.allow_http)
        if urlsplit(self.resource).fragment:
            raise ValueError("a resource URI has no fragment (RFC 8707)")
        if not self.authorization_servers:
            raise ValueError("a protected resource names at least one authorization server")
        if self.resource_metadata_url is None:
            self.resource_metadata_url = protected_resource_metadata_url(self.resource)
        if self.message_scopes is None and (self.method_scopes or self.tool_scopes):
            self.message_scopes = self.scopes_for_message
        path = urlsplit(self.resource_metadata_url).path
        self.routes = (*self.routes, Route(path, ("GET",), self._serve_metadata))

    @property
    def metadata(self) -> ProtectedResourceMetadata:
        """The Protected Resource Metadata document."""
        supported = self.scopes_supported
        if supported is None and self.scopes:
            supported = self.scopes
        return ProtectedResourceMetadata(
            resource=self.resource,
            authorization_servers=list(self.authorization_servers),
            scopes_supported=list(supported) if supported is not None else None,
            bearer_methods_supported=["header"],
            resource_name=self.resource_name,
            resource_documentation=self.resource_documentation,
        )

    def scopes_for_message(self, message: Any) -> Iterable[str]:
        """The scopes a parsed JSON-RPC message needs beyond ``scopes``."""
        method = getattr(message, "method", None)
        if not isinstance(method, str):
            return ()
        needed = list(self.method_scopes.get(method, ()))
        if method == "tools/call":
            params = getattr(message, "params", None)
            name = params.get("name") if isinstance(params, Mapping) else None
            if isinstance(name, str):
                needed.extend(self.tool_scopes.get(name, ()))
        return needed

    async def _serve_metadata(self, request: HTTPRequest) -> HTTPResponse:
        return HTTPResponse.json(
            self.metadata.dump(), headers={"cache-control": "public, max-age=3600"}
        )
