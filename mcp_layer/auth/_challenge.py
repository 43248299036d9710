"""``WWW-Authenticate`` challenges (RFC 9110 §11.6.1, RFC 6750 §3, RFC 9728 §5.1).

Parses a header value into its challenges, each a scheme with auth-params (quoted or
token values; a token68 is kept under ``""``), tolerating the loose spacing servers
send. `bearer_challenge` picks the Bearer one out of a response's headers.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = ["Challenge", "bearer_challenge", "parse_www_authenticate"]

_TOKEN = r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+"
_SCHEME = re.compile(rf"\s*({_TOKEN})(?=\s|,|$)")
_PARAM = re.compile(rf'\s*({_TOKEN})\s*=\s*(?:"((?:[^"\\]|\\.)*)"|({_TOKEN}))\s*')
_TOKEN68 = re.compile(r"\s*([A-Za-z0-9\-._~+/]+=*)\s*(?=,|$)")


@dataclass(frozen=True, slots=True)
class Challenge:
    """One challenge: its scheme (lowercase) and parameters (lowercase names)."""

    scheme: str
    params: dict[str, str] = field(default_factory=dict)

    @property
    def error(self) -> str | None:
        """The ``error`` code (``invalid_token``, ``insufficient_scope``, ...)."""
        return self.params.get("error")

    @property
    def scope(self) -> str | None:
        """The ``scope`` the server asks for, ``None`` when absent or empty."""
        value = self.params.get("scope", "").strip()
        return value or None

    @property
    def resource_metadata(self) -> str | None:
        """The protected resource metadata URL (RFC 9728 §5.1)."""
        return self.params.get("resource_metadata") or None


def parse_www_authenticate(value: str) -> list[Challenge]:
    """Every challenge in a ``WWW-Authenticate`` value, in order."""
    challenges: list[Challenge] = []
    position = 0
    while position < len(value):
        while position < len(value) and value[position] in " ,":
            position += 1
        match = _SCHEME.match(value, position)
        if match is None:
            break
        scheme = match.group(1).lower()
        position = match.end()
        params: dict[str, str] = {}
        token68 = _TOKEN68.match(value, position)
        if token68 is not None and not _PARAM.match(value, position):
            params[""] = token68.group(1)
            position = token68.end()
        while True:
            param = _PARAM.match(value, position)
            if param is None:
                break
            name = param.group(1).lower()
            quoted = param.group(2)
            raw = re.sub(r"\\(.)", r"\1", quoted) if quoted is not None else param.group(3)
            params.setdefault(name, raw)
            position = param.end()
            if position < len(value) and value[position] == ",":
                position += 1
            else:
                break
        challenges.append(Challenge(scheme, params))
    return challenges


def bearer_challenge(headers: Mapping[str, str]) -> Challenge | None:
    """The Bearer challenge among a response's ``WWW-Authenticate`` headers, if any."""
    getter = getattr(headers, "get_list", None)
    values = getter("www-authenticate") if getter is not None else None
    if values is None:
        single = headers.get("www-authenticate")
        values = [single] if single else []
    for value in values:
        for challenge in parse_www_authenticate(value):
            if challenge.scheme == "bearer":
                return challenge
    return None
