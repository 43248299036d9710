"""Agent Card conversion between A2A 0.3 and 1.0 (security schemes included).

0.3 cards name one main ``url`` + ``preferredTransport`` plus ``additionalInterfaces``
and one card-wide ``protocolVersion``; 1.0 cards list ``supportedInterfaces``, each with
its own ``protocolVersion``. 0.3 security schemes carry a ``type`` discriminator and
may list several OAuth flows; 1.0 wraps each scheme in a ``oneof`` and holds one flow.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..types import AgentCard, AgentSkill, OAuthFlows, SecurityRequirement, SecurityScheme

__all__ = ["card_from_any", "card_from_v03", "card_to_v03"]

V03_PROTOCOL_VERSION = "0.3.0"


def _drop_none(obj: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in obj.items() if v is not None}


def _major_minor(version: Any) -> str:
    parts = str(version or "0.3").split(".")
    return ".".join(parts[:2]) if len(parts) >= 2 else f"{parts[0]}.0"


# -- security: 0.3 -> 1.0 ------------------------------------------------------------------

_FLOW_ORDER = ("authorizationCode", "clientCredentials", "deviceCode", "implicit", "password")


def _flows_in(flows: Any) -> Any:
    if not isinstance(flows, Mapping):
        return flows
    # 1.0 holds exactly one flow; keep the strongest one the 0.3 card offers.
    for name in _FLOW_ORDER:
        if isinstance(flows.get(name), Mapping):
            return {name: flows[name]}
    return dict(flows)


def _scheme_in(scheme: Any) -> Any:
    if not isinstance(scheme, Mapping) or "type" not in scheme:
        return scheme  # already 1.0 shaped, or invalid: validation reports it
    kind = scheme.get("type")
    desc = scheme.get("description")
    if kind == "apiKey":
        inner = {"description": desc, "location": scheme.get("in"), "name": scheme.get("name")}
        return {"apiKeySecurityScheme": _drop_none(inner)}
    if kind == "http":
        inner = {
            "description": desc,
            "scheme": scheme.get("scheme"),
            "bearerFormat": scheme.get("bearerFormat"),
        }
        return {"httpAuthSecurityScheme": _drop_none(inner)}
    if kind == "oauth2":
        inner = {
            "description": desc,
            "flows": _flows_in(scheme.get("flows")),
            "oauth2MetadataUrl": scheme.get("oauth2MetadataUrl"),
        }
        return {"oauth2SecurityScheme": _drop_none(inner)}
    if kind == "openIdConnect":
        inner = {"description": desc, "openIdConnectUrl": scheme.get("openIdConnectUrl")}
        return {"openIdConnectSecurityScheme": _drop_none(inner)}
    if kind == "mutualTLS":
        return {"mtlsSecurityScheme": _drop_none({"description": desc})}
    raise ValueError(f"unknown 0.3 security scheme type {kind!r}")


def _requirements_in(reqs: Any) -> Any:
    if not isinstance(reqs, list):
        return reqs
    out: list[Any] = []
    for req in reqs:
        if isinstance(req, Mapping) and "schemes" not in req:
            out.append({"schemes": {name: {"list": scopes} for name, scopes in req.items()}})
        else:
            out.append(req)
    return out


# -- security: 1.0 -> 0.3 ------------------------------------------------------------------


def _flows_out(flows: OAuthFlows) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if flows.authorization_code is not None:
        f = flows.authorization_code
        out["authorizationCode"] = _drop_none(
            {
                "authorizationUrl": f.authorization_url,
                "tokenUrl": f.token_url,
                "refreshUrl": f.refresh_url,
                "scopes": f.scopes,
            }
        )
    if flows.client_credentials is not None:
        c = flows.client_credentials
        out["clientCredentials"] = _drop_none(
            {"tokenUrl": c.token_url, "refreshUrl": c.refresh_url, "scopes": c.scopes}
        )
    if flows.implicit is not None:
        i = flows.implicit
        out["implicit"] = _drop_none(
            {
                "authorizationUrl": i.authorization_url or "",
                "refreshUrl": i.refresh_url,
                "scopes": i.scopes or {},
            }
        )
    if flows.password is not None:
        p = flows.password
        out["password"] = _drop_none(
            {"tokenUrl": p.token_url or "", "refreshUrl": p.refresh_url, "scopes": p.scopes or {}}
        )
    # The device code flow has no 0.3 form and is left out.
    return out


def _scheme_out(wrapper: SecurityScheme) -> dict[str, Any]:
    inner: dict[str, Any]
    if (a := wrapper.api_key_security_scheme) is not None:
        inner = {"type": "apiKey", "in": a.location, "name": a.name}
        desc = a.description
    elif (h := wrapper.http_auth_security_scheme) is not None:
        inner = {"type": "http", "scheme": h.scheme, "bearerFormat": h.bearer_format}
        desc = h.description
    elif (o := wrapper.oauth2_security_scheme) is not None:
        inner = {
            "type": "oauth2",
            "flows": _flows_out(o.flows),
            "oauth2MetadataUrl": o.oauth2_metadata_url,
        }
        desc = o.description
    elif (c := wrapper.open_id_connect_security_scheme) is not None:
        inner = {"type": "openIdConnect", "openIdConnectUrl": c.open_id_connect_url}
        desc = c.description
    else:
        inner = {"type": "mutualTLS"}
        desc = wrapper.mtls_security_scheme.description if wrapper.mtls_security_scheme else None
    return _drop_none({**inner, "description": desc})


def _requirements_out(reqs: list[SecurityRequirement] | None) -> list[dict[str, Any]] | None:
    if reqs is None:
        return None
    return [{name: sl.values for name, sl in req.schemes.items()} for req in reqs]


# -- cards ---------------------------------------------------------------------------------


def _card_in(obj: Mapping[str, Any]) -> dict[str, Any]:
    card = dict(obj)
    version = _major_minor(card.pop("protocolVersion", None))
    url = card.pop("url", None)
    transport = card.pop("preferredTransport", None) or "JSONRPC"
    interfaces: list[Any] = []
    seen: set[tuple[Any, Any]] = set()
    if url is not None:
        interfaces.append({"url": url, "protocolBinding": transport, "protocolVersion": version})
        seen.add((url, transport))
    for extra in card.pop("additionalInterfaces", None) or []:
        if isinstance(extra, Mapping):
            key = (extra.get("url"), extra.get("transport"))
            if key not in seen:
                seen.add(key)
                interfaces.append(
                    {"url": key[0], "protocolBinding": key[1], "protocolVersion": version}
                )
    card["supportedInterfaces"] = interfaces
    caps = dict(card.get("capabilities") or {})
    caps.pop("stateTransitionHistory", None)
    extended = card.pop("supportsAuthenticatedExtendedCard", None)
    extended = card.pop("supportsExtendedAgentCard", extended)
    if extended is not None and "extendedAgentCard" not in caps:
        caps["extendedAgentCard"] = extended
    card["capabilities"] = caps
    schemes = card.get("securitySchemes")
    if isinstance(schemes, Mapping):
        card["securitySchemes"] = {k: _scheme_in(v) for k, v in schemes.items()}
    if "security" in card:
        card["securityRequirements"] = _requirements_in(card.pop("security"))
    skills = card.get("skills")
    if isinstance(skills, list):
        card["skills"] = [_skill_in(s) for s in skills]
    return card


def _skill_in(skill: Any) -> Any:
    if not isinstance(skill, Mapping) or "security" not in skill:
        return skill
    out = dict(skill)
    out["securityRequirements"] = _requirements_in(out.pop("security"))
    return out


def card_from_v03(obj: Mapping[str, Any]) -> AgentCard:
    """A 1.0 `AgentCard` from a 0.3 card (``url``/``preferredTransport``/``additionalInterfaces``).

    Every interface gets the card's ``protocolVersion`` (as major.minor); an OAuth2
    scheme offering several flows keeps one (authorization code first).
    """
    return AgentCard.model_validate(_card_in(obj))


def card_from_any(obj: Mapping[str, Any]) -> AgentCard:
    """A 1.0 `AgentCard` from a card of either version (told by ``supportedInterfaces``).

    A 1.0-shaped card with the pre-1.0 top-level ``supportsExtendedAgentCard`` has it
    moved into ``capabilities`` (spec A.2.2).
    """
    if "supportedInterfaces" not in obj and ("url" in obj or "protocolVersion" in obj):
        return card_from_v03(obj)
    if "supportsExtendedAgentCard" in obj:
        card = dict(obj)
        caps = dict(card.get("capabilities") or {})
        caps.setdefault("extendedAgentCard", card.pop("supportsExtendedAgentCard"))
        card["capabilities"] = caps
        return AgentCard.model_validate(card)
    return AgentCard.model_validate(obj)


def card_to_v03(card: AgentCard, *, protocol_version: str = V03_PROTOCOL_VERSION) -> dict[str, Any]:
    """The 0.3 form of ``card``, for 0.3 clients fetching the well-known card.

    The main ``url`` is the first interface declaring protocol version 0.3 (else the
    first interface); ``additionalInterfaces`` lists every interface of that version.
    """
    wanted = _major_minor(protocol_version)
    chosen = [i for i in card.supported_interfaces if _major_minor(i.protocol_version) == wanted]
    chosen = chosen or list(card.supported_interfaces)
    main = chosen[0] if chosen else None
    caps = card.capabilities
    out: dict[str, Any] = {
        "name": card.name,
        "description": card.description,
        "url": main.url if main else "",
        "preferredTransport": main.protocol_binding if main else "JSONRPC",
        "additionalInterfaces": [{"url": i.url, "transport": i.protocol_binding} for i in chosen]
        or None,
        "protocolVersion": protocol_version,
        "provider": card.provider.model_dump(by_alias=True, exclude_none=True)
        if card.provider
        else None,
        "version": card.version,
        "documentationUrl": card.documentation_url,
        "iconUrl": card.icon_url,
        "capabilities": _drop_none(
            {
                "streaming": caps.streaming,
                "pushNotifications": caps.push_notifications,
                "extensions": [
                    e.model_dump(mode="json", by_alias=True, exclude_none=True)
                    for e in caps.extensions
                ]
                if caps.extensions is not None
                else None,
            }
        ),
        "supportsAuthenticatedExtendedCard": caps.extended_agent_card,
        "securitySchemes": {k: _scheme_out(v) for k, v in card.security_schemes.items()}
        if card.security_schemes is not None
        else None,
        "security": _requirements_out(card.security_requirements),
        "defaultInputModes": card.default_input_modes,
        "defaultOutputModes": card.default_output_modes,
        "skills": [_skill_out(s) for s in card.skills],
        "signatures": [
            s.model_dump(mode="json", by_alias=True, exclude_none=True) for s in card.signatures
        ]
        if card.signatures is not None
        else None,
    }
    return _drop_none(out)


def _skill_out(skill: AgentSkill) -> dict[str, Any]:
    out: dict[str, Any] = skill.model_dump(
        mode="json", by_alias=True, exclude_none=True, exclude={"security_requirements"}
    )
    security = _requirements_out(skill.security_requirements)
    if security is not None:
        out["security"] = security
    return out
