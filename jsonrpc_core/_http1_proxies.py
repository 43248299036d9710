"""The proxies the environment names, as httpx mount patterns (for `new_async_client`).

httpx mounts these for its own default transport only; a client on `HTTP1Transport` has
them mounted ahead of it. They are read with the standard library's
`urllib.request.getproxies` (``HTTP_PROXY``, ``HTTPS_PROXY``, ``ALL_PROXY``,
``NO_PROXY``, upper or lower case) and turned into httpx's URL patterns:

- ``HTTP_PROXY`` -> ``"http://"``, ``HTTPS_PROXY`` -> ``"https://"``, ``ALL_PROXY`` ->
  ``"all://"``; a proxy given without a scheme is an ``http://`` one;
- each ``NO_PROXY`` entry -> a pattern mounted to None (connect directly): an IP address
  -> ``all://<ip>`` (IPv6 in brackets), ``localhost`` -> ``all://localhost``, a name ->
  ``all://*<name>`` (the name and its subdomains), an entry with a scheme as it is;
  ``*`` means no proxy at all.
"""

from __future__ import annotations

import ipaddress
import urllib.request

__all__ = ["environment_proxies"]

_SCHEMES = ("http", "https", "all")


def environment_proxies() -> dict[str, str | None]:
    """httpx mount pattern -> proxy URL, or None for a host reached directly."""
    found = urllib.request.getproxies()
    bypass = [entry.strip() for entry in found.get("no", "").split(",") if entry.strip()]
    if "*" in bypass:
        return {}
    mounts: dict[str, str | None] = {}
    for scheme in _SCHEMES:
        proxy = found.get(scheme)
        if proxy:
            mounts[f"{scheme}://"] = proxy if "://" in proxy else f"http://{proxy}"
    for entry in bypass:
        mounts[_direct_pattern(entry)] = None
    return mounts


def _direct_pattern(entry: str) -> str:
    """The httpx URL pattern of one ``NO_PROXY`` entry."""
    if "://" in entry:
        return entry
    try:
        address = ipaddress.ip_address(entry.strip("[]").split("/", 1)[0])
    except ValueError:
        pass
    else:
        return f"all://[{entry.strip('[]')}]" if address.version == 6 else f"all://{entry}"
    if entry.lower() == "localhost":
        return "all://localhost"
    return f"all://*{entry}"
