"""Security schemes (OpenAPI 3.2 style, as ``oneof`` wrappers) and requirements."""

from __future__ import annotations

from typing import TypeAlias

from pydantic import Field, model_validator
from typing_extensions import Self

from ._base import A2AModel

__all__ = [
    "APIKeySecurityScheme",
    "AuthorizationCodeOAuthFlow",
    "ClientCredentialsOAuthFlow",
    "DeviceCodeOAuthFlow",
    "HTTPAuthSecurityScheme",
    "ImplicitOAuthFlow",
    "MutualTlsSecurityScheme",
    "OAuth2SecurityScheme",
    "OAuthFlow",
    "OAuthFlows",
    "OpenIdConnectSecurityScheme",
    "PasswordOAuthFlow",
    "SchemeVariant",
    "SecurityRequirement",
    "SecurityScheme",
    "StringList",
]


class StringList(A2AModel):
    """A list of strings (``{"list": [...]}`` on the wire)."""

    values: list[str] = Field(default_factory=list, alias="list")


class SecurityRequirement(A2AModel):
    """Defines the security requirements for an agent: scheme name -> required scopes."""

    schemes: dict[str, StringList] = Field(default_factory=dict)

    @classmethod
    def of(cls, **scopes: list[str]) -> SecurityRequirement:
        """Build from ``scheme_name=[scope, ...]`` pairs."""
        return cls(schemes={k: StringList(values=v) for k, v in scopes.items()})


class APIKeySecurityScheme(A2AModel):
    """Defines a security scheme using an API key."""

    description: str | None = None
    location: str  # "query", "header" or "cookie"
    name: str


class HTTPAuthSecurityScheme(A2AModel):
    """Defines a security scheme using HTTP authentication."""

    description: str | None = None
    scheme: str
    bearer_format: str | None = None


class AuthorizationCodeOAuthFlow(A2AModel):
    """Defines configuration details for the OAuth 2.0 Authorization Code flow."""

    authorization_url: str
    token_url: str
    refresh_url: str | None = None
    scopes: dict[str, str] = Field(default_factory=dict)
    pkce_required: bool = False


class ClientCredentialsOAuthFlow(A2AModel):
    """Defines configuration details for the OAuth 2.0 Client Credentials flow."""

    token_url: str
    refresh_url: str | None = None
    scopes: dict[str, str] = Field(default_factory=dict)


class ImplicitOAuthFlow(A2AModel):
    """Deprecated: Use Authorization Code + PKCE instead."""

    authorization_url: str | None = None
    refresh_url: str | None = None
    scopes: dict[str, str] | None = None


class PasswordOAuthFlow(A2AModel):
    """Deprecated: Use Authorization Code + PKCE or Device Code."""

    token_url: str | None = None
    refresh_url: str | None = None
    scopes: dict[str, str] | None = None


class DeviceCodeOAuthFlow(A2AModel):
    """Defines configuration details for the OAuth 2.0 Device Code flow (RFC 8628)."""

    device_authorization_url: str
    token_url: str
    refresh_url: str | None = None
    scopes: dict[str, str] = Field(default_factory=dict)


OAuthFlow: TypeAlias = (
    AuthorizationCodeOAuthFlow
    | ClientCredentialsOAuthFlow
    | ImplicitOAuthFlow
    | PasswordOAuthFlow
    | DeviceCodeOAuthFlow
)

_FLOW_MEMBERS = ("authorization_code", "client_credentials", "implicit", "password", "device_code")


class OAuthFlows(A2AModel):
    """Defines the configuration for the supported OAuth 2.0 flows (exactly one)."""

    authorization_code: AuthorizationCodeOAuthFlow | None = None
    client_credentials: ClientCredentialsOAuthFlow | None = None
    implicit: ImplicitOAuthFlow | None = None
    password: PasswordOAuthFlow | None = None
    device_code: DeviceCodeOAuthFlow | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> Self:
        self._one_of(_FLOW_MEMBERS, "OAuthFlows")
        return self

    @property
    def flow(self) -> OAuthFlow:
        """The flow that is set."""
        return getattr(self, self._one_of(_FLOW_MEMBERS, "OAuthFlows"))  # type: ignore[no-any-return]


class OAuth2SecurityScheme(A2AModel):
    """Defines a security scheme using OAuth 2.0."""

    description: str | None = None
    flows: OAuthFlows
    oauth2_metadata_url: str | None = None


class OpenIdConnectSecurityScheme(A2AModel):
    """Defines a security scheme using OpenID Connect."""

    description: str | None = None
    open_id_connect_url: str


class MutualTlsSecurityScheme(A2AModel):
    """Defines a security scheme using mTLS authentication."""

    description: str | None = None


SchemeVariant: TypeAlias = (
    APIKeySecurityScheme
    | HTTPAuthSecurityScheme
    | OAuth2SecurityScheme
    | OpenIdConnectSecurityScheme
    | MutualTlsSecurityScheme
)

_SCHEME_MEMBERS = (
    "api_key_security_scheme",
    "http_auth_security_scheme",
    "oauth2_security_scheme",
    "open_id_connect_security_scheme",
    "mtls_security_scheme",
)


class SecurityScheme(A2AModel):
    """A security scheme that can secure an agent's endpoints (exactly one variant)."""

    api_key_security_scheme: APIKeySecurityScheme | None = None
    http_auth_security_scheme: HTTPAuthSecurityScheme | None = None
    oauth2_security_scheme: OAuth2SecurityScheme | None = None
    open_id_connect_security_scheme: OpenIdConnectSecurityScheme | None = None
    mtls_security_scheme: MutualTlsSecurityScheme | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> Self:
        self._one_of(_SCHEME_MEMBERS, "SecurityScheme")
        return self

    @property
    def scheme(self) -> SchemeVariant:
        """The variant that is set."""
        return getattr(self, self._one_of(_SCHEME_MEMBERS, "SecurityScheme"))  # type: ignore[no-any-return]

    @classmethod
    def wrap(cls, scheme: SchemeVariant) -> SecurityScheme:
        """Put ``scheme`` in the member its type calls for."""
        for name, kind in zip(_SCHEME_MEMBERS, _SCHEME_TYPES, strict=True):
            if isinstance(scheme, kind):
                return cls.model_validate({name: scheme})
        raise TypeError(f"not a security scheme: {type(scheme).__name__}")


_SCHEME_TYPES: tuple[type[A2AModel], ...] = (
    APIKeySecurityScheme,
    HTTPAuthSecurityScheme,
    OAuth2SecurityScheme,
    OpenIdConnectSecurityScheme,
    MutualTlsSecurityScheme,
)
