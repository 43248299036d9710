"""A `RedirectHandler` for programs on the user's machine (CLIs, desktop apps): it
opens the browser and catches the redirect on a loopback port (RFC 8252 §7.3)."""

from __future__ import annotations

import socket
import sys
import webbrowser
from collections.abc import Callable
from html import escape
from urllib.parse import parse_qs, urlsplit

import anyio
import anyio.abc
import anyio.to_thread

from ._errors import AuthorizationResponseError
from ._redirect import AuthorizationResponse

__all__ = ["LoopbackRedirectHandler"]

_MAX_HEAD = 16 * 1024
_REASONS = {200: "OK", 400: "Bad Request", 404: "Not Found"}
_PAGE = (
    "<!doctype html><meta charset=utf-8><title>{title}</title>"
    "<p>{title}. You can close this window.</p>"
)


def _free_port(host: str) -> int:
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


class LoopbackRedirectHandler:
    """Open ``authorization_url`` in a browser and wait for the redirect to
    ``redirect_uri`` (``http://127.0.0.1:<port><path>``).

    ``port=0`` picks a free port now, so that ``redirect_uri`` is known before the
    client registers. ``open_browser`` is ``webbrowser.open`` by default (``None``:
    only print the URL). Waits at most ``timeout`` seconds for the user.

    Only a callback carrying the ``state`` of ``authorization_url`` ends the wait
    (none when the URL has none): any other program on the machine can reach the
    port, so a callback with another or no ``state`` is answered 400 and the wait
    goes on (RFC 6749 §10.12, RFC 8252 §8.9).
    """

    def __init__(
        self,
        *,
        port: int = 0,
        path: str = "/callback",
        host: str = "127.0.0.1",
        open_browser: Callable[[str], object] | None = webbrowser.open,
        timeout: float = 300.0,
    ) -> None:
        self.host = host
        self.port = port or _free_port(host)
        self.path = path if path.startswith("/") else "/" + path
        self.open_browser = open_browser
        self.timeout = timeout
        netloc = f"[{host}]" if ":" in host else host
        self.redirect_uri = f"http://{netloc}:{self.port}{self.path}"

    async def __call__(self, authorization_url: str) -> str:
        result: list[str] = []
        done = anyio.Event()
        expected_state = _state_of(authorization_url)

        async def handle(stream: anyio.abc.SocketStream) -> None:
            async with stream:
                with anyio.move_on_after(10):
                    target = await _read_target(stream)
                    if target is None or urlsplit(target).path != self.path:
                        await _respond(stream, 404, "Not found")
                        return
                    if AuthorizationResponse.from_url(target).state != expected_state:
                        await _respond(stream, 400, "Unexpected authorization response")
                        return
                    await _respond(stream, 200, "Authorization received")
                    if not result:
                        result.append(self.redirect_uri.split(self.path, 1)[0] + target)
                        done.set()

        listener = await anyio.create_tcp_listener(local_host=self.host, local_port=self.port)
        async with listener, anyio.create_task_group() as task_group:
            task_group.start_soon(listener.serve, handle)
            print(f"Open this URL to authorize: {authorization_url}", file=sys.stderr)
            if self.open_browser is not None:
                await anyio.to_thread.run_sync(self.open_browser, authorization_url)
            with anyio.move_on_after(self.timeout):
                await done.wait()
            task_group.cancel_scope.cancel()
        if not result:
            raise AuthorizationResponseError(
                f"no authorization response reached {self.redirect_uri} in {self.timeout:g} s"
            )
        return result[0]


def _state_of(authorization_url: str) -> str | None:
    """The ``state`` query parameter of ``authorization_url``, if it has one."""
    states = parse_qs(urlsplit(authorization_url).query).get("state")
    return states[0] if states else None


async def _read_target(stream: anyio.abc.SocketStream) -> str | None:
    """The request target of a ``GET`` request, or ``None``."""
    head = b""
    while b"\r\n\r\n" not in head and b"\n\n" not in head:
        try:
            chunk = await stream.receive(4096)
        except (anyio.EndOfStream, anyio.BrokenResourceError):
            break
        head += chunk
        if len(head) > _MAX_HEAD:
            return None
    line = head.split(b"\n", 1)[0].decode("latin-1").strip()
    parts = line.split(" ")
    if len(parts) != 3 or parts[0] != "GET" or not parts[1].startswith("/"):
        return None
    return parts[1]


async def _respond(stream: anyio.abc.SocketStream, status: int, title: str) -> None:
    body = _PAGE.format(title=escape(title)).encode()
    reason = _REASONS[status]
    head = (
        f"HTTP/1.1 {status} {reason}\r\ncontent-type: text/html; charset=utf-8\r\n"
        f"content-length: {len(body)}\r\ncache-control: no-store\r\nconnection: close\r\n\r\n"
    )
    try:
        await stream.send(head.encode() + body)
    except (anyio.BrokenResourceError, anyio.ClosedResourceError):
        pass
