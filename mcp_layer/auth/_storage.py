"""Where a client keeps its tokens and registrations between authorizations.

Tokens are keyed by the MCP server they are for (its canonical URL); client
registrations by the issuer of the authorization server that made them, so that a
registration is never presented to another authorization server (SEP-2352). A
storage that persists must keep both confidential (OAuth 2.1 §7.1).
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from ._models import ClientInformation, StoredTokens

__all__ = ["InMemoryTokenStorage", "TokenStorage"]


@runtime_checkable
class TokenStorage(Protocol):
    """Keeps tokens per server and client registrations per authorization server.

    Passing ``None`` to a setter forgets the entry.
    """

    async def get_tokens(self, server: str) -> StoredTokens | None: ...

    async def set_tokens(self, server: str, tokens: StoredTokens | None) -> None: ...

    async def get_client(self, issuer: str) -> ClientInformation | None: ...

    async def set_client(self, issuer: str, client: ClientInformation | None) -> None: ...


class InMemoryTokenStorage:
    """A `TokenStorage` in this process's memory: forgotten when the process ends."""

    def __init__(self) -> None:
        self._tokens: dict[str, StoredTokens] = {}
        self._clients: dict[str, ClientInformation] = {}

    async def get_tokens(self, server: str) -> StoredTokens | None:
        return self._tokens.get(server)

    async def set_tokens(self, server: str, tokens: StoredTokens | None) -> None:
        if tokens is None:
            self._tokens.pop(server, None)
        else:
            self._tokens[server] = tokens

    async def get_client(self, issuer: str) -> ClientInformation | None:
        return self._clients.get(issuer)

    async def set_client(self, issuer: str, client: ClientInformation | None) -> None:
        if client is None:
            self._clients.pop(issuer, None)
        else:
            self._clients[issuer] = client
