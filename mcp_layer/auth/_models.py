"""OAuth documents as pydantic models: metadata (RFC 9728, RFC 8414), client
registration (RFC 7591, Client ID Metadata Documents) and tokens (RFC 6749).

Lenient in: unknown members are kept (``extra="allow"``) and every optional member
may be absent. Strict out: ``dump()`` leaves out what is unset.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "AuthorizationServerMetadata",
    "ClientInformation",
    "ClientMetadata",
    "ProtectedResourceMetadata",
    "StoredTokens",
    "TokenResponse",
]


class _Document(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)

    def dump(self) -> dict[str, Any]:
        """The document as JSON-ready data, unset members left out."""
        return self.model_dump(mode="json", exclude_none=True)


class ProtectedResourceMetadata(_Document):
    """OAuth 2.0 Protected Resource Metadata (RFC 9728 §2)."""

    resource: str
    authorization_servers: list[str] | None = None
    scopes_supported: list[str] | None = None
    bearer_methods_supported: list[str] | None = None
    jwks_uri: str | None = None
    resource_name: str | None = None
    resource_documentation: str | None = None
    resource_policy_uri: str | None = None
    resource_tos_uri: str | None = None


class AuthorizationServerMetadata(_Document):
    """OAuth 2.0 Authorization Server Metadata (RFC 8414 §2), which OpenID Connect
    Discovery documents also satisfy."""

    issuer: str
    authorization_endpoint: str | None = None
    token_endpoint: str | None = None
    registration_endpoint: str | None = None
    jwks_uri: str | None = None
    scopes_supported: list[str] | None = None
    response_types_supported: list[str] | None = None
    grant_types_supported: list[str] | None = None
    token_endpoint_auth_methods_supported: list[str] | None = None
    token_endpoint_auth_signing_alg_values_supported: list[str] | None = None
    introspection_endpoint: str | None = None
    revocation_endpoint: str | None = None
    code_challenge_methods_supported: list[str] | None = None
    client_id_metadata_document_supported: bool | None = None
    authorization_response_iss_parameter_supported: bool | None = None


class ClientMetadata(_Document):
    """Client metadata (RFC 7591 §2): what a client registers, or publishes as its
    Client ID Metadata Document."""

    redirect_uris: list[str] | None = None
    client_name: str | None = None
    client_uri: str | None = None
    logo_uri: str | None = None
    grant_types: list[str] | None = None
    response_types: list[str] | None = None
    token_endpoint_auth_method: str | None = None
    application_type: str | None = None
    scope: str | None = None
    contacts: list[str] | None = None
    tos_uri: str | None = None
    policy_uri: str | None = None
    jwks_uri: str | None = None
    jwks: dict[str, Any] | None = None
    software_id: str | None = None
    software_version: str | None = None

    def document(self, client_id: str) -> dict[str, Any]:
        """The Client ID Metadata Document to host at ``client_id`` (an https URL)."""
        return {"client_id": client_id, **self.dump()}


class ClientInformation(ClientMetadata):
    """A client id with its credentials: pre-registered, a Client ID Metadata Document
    URL, or an RFC 7591 registration response. ``issuer`` binds it to the
    authorization server that issued it (``None``: any)."""

    client_id: str
    client_secret: str | None = None
    client_id_issued_at: int | None = None
    client_secret_expires_at: int | None = None
    issuer: str | None = None


class TokenResponse(_Document):
    """A successful token endpoint response (RFC 6749 §5.1)."""

    access_token: str
    token_type: str = "Bearer"
    expires_in: float | None = None
    refresh_token: str | None = None
    scope: str | None = None


class StoredTokens(_Document):
    """Tokens as kept by a `TokenStorage`: the response plus what the client needs to
    use and renew them. ``expires_at`` is on the client's clock (seconds)."""

    access_token: str
    token_type: str = "Bearer"
    refresh_token: str | None = None
    expires_at: float | None = None
    scope: str | None = Field(default=None, description="scopes granted, when told")
    requested_scope: str | None = None
    issuer: str | None = None
    resource: str | None = None
