"""The client side of MCP's HTTP+SSE transport (protocol 2024-11-05).

The event stream is opened with a GET and announces the ``endpoint`` each message is
POSTed to; every answer arrives on the event stream. See ``_http_client`` for the rules
both HTTP transports keep (rule 4: the deadline of each POST and of the ``endpoint``).
"""

from __future__ import annotations

import logging
from urllib.parse import urljoin

import anyio
import httpx

from ._deadline import Deadline
from ._errors import TransportError
from ._http_body import fetch_body
from ._http_client_base import HTTPTransportBase, error_from_response
from ._sse import SSEDecoder
from ._transport import encode_payload
from ._wire import Message, Request, RequestId, parse

__all__ = ["HTTPSSETransport"]

logger = logging.getLogger("jsonrpc_core.http.client")


class HTTPSSETransport(HTTPTransportBase):
    """The client side of MCP's HTTP+SSE transport (protocol 2024-11-05).

    Opens the event stream at ``url``, waits for the ``endpoint`` event, then POSTs
    each message there; every answer arrives on the event stream. Its arguments are
    `HTTPTransportBase`'s.
    """

    endpoint: str | None = None
    """Where each message is POSTed: the ``endpoint`` event's URL (``None`` until it came)."""

    async def __aenter__(self) -> HTTPSSETransport:
        await self._open()
        try:
            request = self.client.build_request(
                "GET", self._url, headers=self._request_headers("text/event-stream")
            )
            deadline = Deadline(self.timeout, self.url, "endpoint event")
            try:
                with deadline:
                    response = await self.client.send(request, stream=True, auth=self._auth_arg)
            except httpx.HTTPError as exc:
                raise TransportError(f"GET {self.url} failed: {exc!r}") from exc
            if response.status_code != 200:
                await response.aclose()
                raise TransportError(f"GET {self.url}: HTTP {response.status_code}")
            endpoint_known = anyio.Event()
            self._start(self._read_stream, response, endpoint_known)
            with deadline:
                await endpoint_known.wait()
            if self.endpoint is None:
                raise TransportError(f"{self.url} closed the stream before sending an endpoint")
        except BaseException:
            await self._exit()
            raise
        return self

    async def _read_stream(self, response: httpx.Response, endpoint_known: anyio.Event) -> None:
        decoder = SSEDecoder()
        try:
            async for chunk in response.aiter_bytes():
                for event in decoder.feed(chunk):
                    if event.event == "endpoint":
                        self.endpoint = urljoin(self.url, event.data.strip())
                        endpoint_known.set()
                    elif event.event in (None, "message") and event.data:
                        await self._deliver_payload(parse(event.data))
        except httpx.HTTPError as exc:
            logger.info("event stream from %s ended: %r", self.url, exc)
        finally:
            await response.aclose()
            endpoint_known.set()
            self._inbound_send.close()

    async def send(
        self, payload: Message | list[Message], *, related_request_id: RequestId | None = None
    ) -> None:
        if self._closed or self.endpoint is None:
            raise anyio.ClosedResourceError
        headers = self._request_headers("application/json, text/event-stream")
        headers["content-type"] = "application/json"
        request = self.client.build_request(
            "POST", self.endpoint, content=encode_payload(payload), headers=headers
        )
        try:
            with Deadline(self.timeout, self.endpoint, "POST"):  # the answer is on the stream
                # Read even when not needed (a 202's "Accepted"): the connection is reused.
                response, body = await fetch_body(
                    self.client, request, self.max_body_size, auth=self._auth_arg
                )
        except httpx.HTTPError as exc:
            raise TransportError(f"POST {self.endpoint} failed: {exc!r}") from exc
        if response.status_code >= 400:
            request_id = payload.id if isinstance(payload, Request) else None
            raise error_from_response(response.status_code, body, request_id)
