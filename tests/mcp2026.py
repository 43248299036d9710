"""Helpers for the MCP 2026-07-28 tests: raw per-request messages over in-process HTTP.

`ModernHTTP` posts one JSON-RPC request per POST with the envelope in ``_meta`` and the
headers 2026-07-28 asks for (``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name``),
any of which a test may override or drop, and returns what came back: the HTTP status
and every JSON-RPC message of the answer (one for JSON, several for SSE).

Uses the private unit `mcp_layer._headers.request_headers` on purpose: the tests build
the headers our client would send and then override or drop single ones.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio
import httpx
from mcp_schema import SchemaCheckingASGI, WireChecker

from jsonrpc_core.http import SSEDecoder
from jsonrpc_core.testing import StreamingASGITransport
from mcp_layer._headers import request_headers

if TYPE_CHECKING:
    from mcp_layer import MCPServer

VERSION = "2026-07-28"
BASE = "http://127.0.0.1"
CLIENT_INFO = {"name": "rpcweave-2026-tests", "version": "1.0.0"}
TASKS = "io.modelcontextprotocol/tasks"


def envelope(
    capabilities: dict[str, Any] | None = None,
    *,
    version: str = VERSION,
    log_level: str | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """The ``_meta`` of a 2026-07-28 request."""
    meta: dict[str, Any] = {
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
        "io.modelcontextprotocol/clientCapabilities": capabilities or {},
        **extra,
    }
    if log_level is not None:
        meta["io.modelcontextprotocol/logLevel"] = log_level
    return meta


@dataclass
class Answer:
    """What one POST got back."""

    status: int
    messages: list[dict[str, Any]] = field(default_factory=list)
    content_type: str = ""

    @property
    def final(self) -> dict[str, Any]:
        """The JSON-RPC response (the last message)."""
        return self.messages[-1]

    @property
    def result(self) -> dict[str, Any]:
        """The response's result (fails the test if it is an error)."""
        assert "result" in self.final, self.final
        result: dict[str, Any] = self.final["result"]
        return result

    @property
    def error(self) -> dict[str, Any]:
        """The response's error (fails the test if it is a result)."""
        assert "error" in self.final, self.final
        error: dict[str, Any] = self.final["error"]
        return error

    @property
    def notifications(self) -> list[dict[str, Any]]:
        """The notifications that came before the response."""
        return [m for m in self.messages if "method" in m]


class ModernHTTP:
    """Raw 2026-07-28 requests against an ASGI app (see the module docstring)."""

    def __init__(self, http: httpx.AsyncClient, path: str = "/mcp") -> None:
        self.http = http
        self.path = path
        self._next_id = 0

    def next_id(self) -> int:
        self._next_id += 1
        return self._next_id

    async def post(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        capabilities: dict[str, Any] | None = None,
        meta: dict[str, Any] | None = None,
        headers: dict[str, str | None] | None = None,
        request_id: Any = None,
        log_level: str | None = None,
        omit_meta: bool = False,
    ) -> Answer:
        """Post ``method``; ``meta=None`` builds the envelope (``omit_meta``: none at all),
        ``headers`` override (a ``None`` value drops that header)."""
        body_params = dict(params or {})
        if meta is None:
            meta = envelope(capabilities, log_level=log_level)
        if not omit_meta:
            body_params["_meta"] = {**meta, **body_params.get("_meta", {})}
        message = {
            "jsonrpc": "2.0",
            "id": self.next_id() if request_id is None else request_id,
            "method": method,
            "params": body_params,
        }
        sent_headers: dict[str, str] = {
            "content-type": "application/json",
            "accept": "application/json, text/event-stream",
            **request_headers(method, body_params, VERSION),
        }
        for name, value in (headers or {}).items():
            for existing in [k for k in sent_headers if k.lower() == name.lower()]:
                del sent_headers[existing]
            if value is not None:
                sent_headers[name] = value
        return await self.send_raw(json.dumps(message).encode(), sent_headers)

    async def send_raw(self, body: bytes, headers: dict[str, str]) -> Answer:
        """Post ``body`` as is."""
        async with self.http.stream("POST", self.path, content=body, headers=headers) as response:
            content_type = response.headers.get("content-type", "")
            answer = Answer(response.status_code, content_type=content_type)
            if content_type.startswith("text/event-stream"):
                decoder = SSEDecoder()
                async for chunk in response.aiter_bytes():
                    for event in decoder.feed(chunk):
                        if event.data:
                            answer.messages.append(json.loads(event.data))
            else:
                data = await response.aread()
                if data:
                    answer.messages.append(json.loads(data))
        return answer


@asynccontextmanager
async def asgi_client(app: Any) -> AsyncIterator[httpx.AsyncClient]:
    """An httpx client on ``app`` in this process (SSE streams as they come)."""
    async with httpx.AsyncClient(transport=StreamingASGITransport(app), base_url=BASE) as http:
        yield http


def server_wire() -> Iterator[WireChecker]:
    """A checker of what our server sends at 2026-07-28, asserted clean once the test is
    done (the ``wire`` fixture of the server-side tests: ``yield from server_wire()``)."""
    checker = WireChecker(ours={"server"}, revision=VERSION)
    yield checker
    checker.assert_clean()


@asynccontextmanager
async def modern_http(server: MCPServer, wire: WireChecker) -> AsyncIterator[ModernHTTP]:
    """`ModernHTTP` to ``server``'s ASGI app in process, every message checked by ``wire``,
    the whole block within 20 s."""
    async with asgi_client(SchemaCheckingASGI(server.asgi_app(), wire)) as http:
        with anyio.fail_after(20):
            yield ModernHTTP(http)
