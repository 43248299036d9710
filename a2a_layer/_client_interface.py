"""Which of an agent card's interfaces an `A2AClient` uses, and the transport speaking it.

The first interface whose binding and version this client speaks is used (JSON-RPC 1.0
or 0.3, HTTP+JSON 1.0); gRPC (1.0 or 0.3, the ``grpc`` extra) only when the card offers
nothing else, or when asked for with ``bindings=[ProtocolBinding.GRPC]``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import httpx

from jsonrpc_core import WireTap

from ._client_transport import (
    ClientTransport,
    JsonRpcClientTransport,
    RestClientTransport,
    grpc_transport,
)
from ._rpc import normalise_version
from .types import AgentCard, AgentInterface, ProtocolBinding

__all__ = ["BINDINGS", "VERSIONS", "NoSupportedInterface", "choose_interface", "open_transport"]

BINDINGS = (ProtocolBinding.JSONRPC, ProtocolBinding.HTTP_JSON)
"""The bindings a client looks for by default, in this order."""
# Used only when a card offers none of BINDINGS (or when asked for: bindings=...).
_FALLBACK_BINDINGS = (ProtocolBinding.GRPC,)
VERSIONS = ("1.0", "0.3")
"""The protocol versions a client speaks, in order of preference."""


class NoSupportedInterface(LookupError):
    """The agent card lists no interface this client can use."""


def choose_interface(
    card: AgentCard,
    bindings: Sequence[str] = BINDINGS,
    versions: Sequence[str] = VERSIONS,
) -> AgentInterface:
    """The first interface of ``card`` with a binding and version this client speaks.

    With the default ``bindings``, gRPC is chosen only when nothing else fits.
    """
    found = _first_interface(card, bindings, versions)
    if found is None and tuple(bindings) == BINDINGS:
        found = _first_interface(card, _FALLBACK_BINDINGS, versions)
    if found is not None:
        return found
    offered = ", ".join(
        f"{i.protocol_binding} {i.protocol_version}" for i in card.supported_interfaces
    )
    raise NoSupportedInterface(f"no usable interface in the agent card (offered: {offered})")


def _first_interface(
    card: AgentCard, bindings: Sequence[str], versions: Sequence[str]
) -> AgentInterface | None:
    for interface in card.supported_interfaces:
        version = normalise_version(interface.protocol_version)
        binding = interface.protocol_binding
        if binding not in bindings or version not in versions:
            continue
        if binding == ProtocolBinding.HTTP_JSON and version != "1.0":
            continue  # the 0.3 HTTP+JSON routes are not spoken here
        return interface
    return None


def open_transport(
    interface: AgentInterface,
    http: httpx.AsyncClient,
    *,
    headers: Mapping[str, str],
    token: str | None,
    timeout: float | None,
    tap: WireTap | None,
    max_body_size: int,
) -> ClientTransport:
    """The transport for ``interface``'s binding (``token``: the bearer token for gRPC;
    the HTTP bindings authenticate through ``http``)."""
    protocol_version = normalise_version(interface.protocol_version)
    if interface.protocol_binding == ProtocolBinding.GRPC:
        return grpc_transport(
            interface.url,
            token=token,
            headers=headers,
            timeout=timeout,
            protocol_version=protocol_version,
        )
    if interface.protocol_binding == ProtocolBinding.HTTP_JSON:
        return RestClientTransport(
            http, interface.url, headers=headers, timeout=timeout, max_body_size=max_body_size
        )
    return JsonRpcClientTransport(
        http,
        interface.url,
        protocol_version=protocol_version,
        headers=headers,
        tap=tap,
        timeout=timeout,
        max_body_size=max_body_size,
    )
