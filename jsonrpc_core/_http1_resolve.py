"""Address policies for `HTTP1Transport`: which addresses a connection may be made to.

A policy is an ``async (host, port) -> [ip, ...]`` function (`AddressResolver`) given to
`HTTP1Transport` (or `new_async_client`) as ``resolve``. The pool calls it once per new
connection and connects the socket to one of the IP addresses it returned, never to the
name, while the ``Host`` header and the TLS server name stay the name. So the address
checked is the address connected to: a name that resolves differently the next time
(DNS rebinding) cannot switch it. A policy refuses a host by raising `AddressRefused`
(an `OSError`); the pool raises it as `httpx.ConnectError`, with the refusal as its
``__cause__``.

`public_addresses_only` is the policy for a URL a remote party chose (an A2A webhook,
say): every address must be globally routable (`is_public_address`). Nothing here
knows any protocol.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Awaitable, Callable

import anyio

__all__ = [
    "AddressRefused",
    "AddressResolver",
    "is_public_address",
    "public_addresses_only",
    "system_resolve",
]

AddressResolver = Callable[[str, int], Awaitable[list[str]]]
"""``async (host, port) -> [ip, ...]``: the addresses a connection to ``host`` may use."""


_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")


class AddressRefused(OSError):
    """A host (or one of its addresses) that an address policy does not allow."""


def ip_of(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """``host`` as an IP address (IPv4-mapped IPv6 unwrapped, zone dropped), else None."""
    try:
        ip = ipaddress.ip_address(host.strip("[]").split("%", 1)[0])
    except ValueError:
        return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


def is_public_address(address: str) -> bool:
    """Whether ``address`` (an IP string) is globally routable (`is_global`).

    IPv4-mapped IPv6 addresses (``::ffff:10.0.0.1``) are judged by their IPv4 address,
    and 6to4 (``2002::/16``) and NAT64 (``64:ff9b::/96``) ones by the one they carry too.
    Loopback, private, link-local, carrier-grade NAT (100.64/10), unique-local (fc00::/7),
    unspecified, reserved and documentation ranges are not public; nor is multicast.
    """
    ip = ip_of(address)
    if ip is None or not ip.is_global or ip.is_multicast:
        return False
    if isinstance(ip, ipaddress.IPv6Address):
        # An IPv4 address carried inside (6to4, the NAT64 well-known prefix) is judged too:
        # a relay or gateway would deliver to it.
        inner = ip.sixtofour
        if inner is None and ip in _NAT64:
            inner = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
        if inner is not None and not inner.is_global:
            return False
    return True


async def system_resolve(host: str, port: int) -> list[str]:
    """The addresses of ``host`` from the system resolver, in its order, once each."""
    infos = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def public_addresses_only(resolve: AddressResolver | None = None) -> AddressResolver:
    """An address policy that allows a host only if all of its addresses are public.

    An IP literal is checked as it is; a name is resolved (with ``resolve``, the system
    resolver by default) and refused when it has no address or any address that is not
    public (`is_public_address`), so a name cannot mix a public and a private answer.
    Raises `AddressRefused` with a message naming the address, e.g. "address 10.0.0.5 is
    not public".
    """

    async def policy(host: str, port: int) -> list[str]:
        literal = ip_of(host)
        if literal is not None:
            addresses = [host.strip("[]")]
        else:
            try:
                # Looked up at call time, so that tests can patch `system_resolve`.
                addresses = await (resolve or system_resolve)(host, port)
            except AddressRefused:
                raise
            except OSError as exc:
                raise AddressRefused(f"host {host} does not resolve ({exc})") from None
            if not addresses:
                raise AddressRefused(f"host {host} has no address")
        for address in addresses:
            if not is_public_address(address):
                shown = address if address == host.strip("[]") else f"{address} (of {host})"
                raise AddressRefused(f"address {shown} is not public")
        return addresses

    return policy
