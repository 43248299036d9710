"""Push notifications: delivering task events to webhooks, and receiving them.

`PushDispatcher` (server side) POSTs each event of a task, as a `StreamResponse`, to
every push config of that task. `PushReceiver` (client side) checks and deduplicates
what arrives. Rules:

1. Delivery is at least once: a failed POST (connection error, timeout, 408, 429 or
   5xx) is retried with exponential backoff, at most ``max_attempts`` times; other
   4xx answers are final. Events of one task are delivered in order.
2. Every request carries ``Authorization: {scheme} {credentials}`` when the config has
   credentials, and the config's token in ``X-A2A-Notification-Token``.
3. The queue per task is bounded (``max_queued``); past it the oldest undelivered event
   is dropped and logged (a client can always catch up with GetTask).
4. With ``block_private_networks`` (opt-in: SSRF guard), a webhook whose host is or
   resolves to a loopback, private, link-local or otherwise non-public address is
   refused when the config is created and again before each delivery.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import logging
import threading
from collections import OrderedDict, deque
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Mapping, MutableMapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import anyio
import anyio.to_thread
import pydantic

from jsonrpc_core import InvalidParams

from ._executor import new_id
from ._store import TaskStore, public_tenant
from .types import StreamResponse, TaskPushNotificationConfig

if TYPE_CHECKING:
    import httpx
    from anyio.abc import TaskGroup

__all__ = [
    "TOKEN_HEADER",
    "PushDispatcher",
    "PushReceiver",
    "PushRejected",
    "check_webhook_url",
]

logger = logging.getLogger("a2a_layer.push")

TOKEN_HEADER = "X-A2A-Notification-Token"
"""The header carrying a push config's token (the name the official SDKs use)."""

_RETRY_STATUSES = frozenset({408, 425, 429})


def _is_public(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return not (
        ip.is_private
        or ip.is_loopback
        or ip.is_link_local
        or ip.is_multicast
        or ip.is_reserved
        or ip.is_unspecified
    )


async def check_webhook_url(url: str, *, block_private_networks: bool = False) -> None:
    """Raise `InvalidParams` unless ``url`` is an http(s) URL (and public, if asked)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InvalidParams(f"Invalid params: push notification url {url!r} is not an http(s) URL")
    if not block_private_networks:
        return
    host = parts.hostname
    try:
        addresses = [host] if _is_ip(host) else await _resolve(host, parts.port)
    except OSError:
        raise InvalidParams(
            f"Invalid params: push notification host {host!r} does not resolve"
        ) from None
    if not addresses or not all(_is_public(a) for a in addresses):
        raise InvalidParams(
            f"Invalid params: push notification url {url!r} points to a private, loopback "
            "or link-local address, which this server refuses"
        )


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return False
    return True


async def _resolve(host: str, port: int | None) -> list[str]:
    infos = await anyio.getaddrinfo(host, port or 443)
    return [str(info[4][0]) for info in infos]


class PushDispatcher:
    """Delivers task events to their webhooks (see module rules).

    Run it with `run_until_cancelled` (the server does, in its lifespan).
    """

    def __init__(
        self,
        store: TaskStore,
        *,
        client: httpx.AsyncClient | None = None,
        max_attempts: int = 5,
        backoff: float = 0.5,
        max_backoff: float = 10.0,
        timeout: float = 10.0,
        max_queued: int = 1000,
        block_private_networks: bool = False,
    ) -> None:
        self.store = store
        self.max_attempts = max_attempts
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.timeout = timeout
        self.max_queued = max_queued
        self.block_private_networks = block_private_networks
        self._client = client
        self._owns_client = client is None
        self._queues: dict[tuple[str, str], deque[StreamResponse]] = {}
        self._task_group: TaskGroup | None = None

    async def run_until_cancelled(self, started: anyio.Event | None = None) -> None:
        """Deliver until cancelled."""
        from jsonrpc_core._http1 import new_async_client

        client = self._client or new_async_client(timeout=self.timeout)
        try:
            async with anyio.create_task_group() as task_group:
                self._client, self._task_group = client, task_group
                if started is not None:
                    started.set()
                await anyio.sleep_forever()
        finally:
            self._task_group = None
            if self._owns_client:
                self._client = None
                with anyio.CancelScope(shield=True):
                    await client.aclose()

    async def add_config(
        self, config: TaskPushNotificationConfig, *, task_id: str, tenant: str = ""
    ) -> TaskPushNotificationConfig:
        """Check, complete (task id, config id) and store a push config."""
        await check_webhook_url(config.url, block_private_networks=self.block_private_networks)
        stored = config.model_copy(
            update={
                "task_id": task_id,
                "id": config.id or new_id(),
                "tenant": public_tenant(tenant) or None,
            }
        )
        await self.store.save_push_config(stored, tenant=tenant)
        return stored

    def publish(self, tenant: str, task_id: str, event: StreamResponse) -> None:
        """Queue ``event`` for every webhook of the task (never blocks; rule 3)."""
        if self._task_group is None or self._task_group.cancel_scope.cancel_called:
            logger.warning("push delivery is not running; event for task %s dropped", task_id)
            return
        key = (tenant, task_id)
        queue = self._queues.get(key)
        if queue is None:
            queue = self._queues[key] = deque()
            delivery = self._deliver_task(key, queue)
            try:
                self._task_group.start_soon(_given, delivery, name=f"push delivery {task_id}")
            except RuntimeError:
                # The group takes no more tasks (it is shutting down): the delivery never
                # runs, so it is closed here rather than left for the garbage collector
                # to report as never awaited.
                delivery.close()
                del self._queues[key]
                logger.warning("push delivery is stopping; event for task %s dropped", task_id)
                return
        if len(queue) >= self.max_queued:
            queue.popleft()
            logger.warning("push queue of task %s is full: oldest event dropped", task_id)
        queue.append(event)

    async def _deliver_task(self, key: tuple[str, str], queue: deque[StreamResponse]) -> None:
        tenant, task_id = key
        try:
            while queue:
                event = queue[0]
                try:
                    configs = await self.store.list_push_configs(task_id, tenant=tenant)
                except Exception:
                    logger.exception("cannot read push configs of task %s", task_id)
                    configs = []
                body = event.model_dump_json(by_alias=True, exclude_none=True).encode()
                for config in configs:
                    await self.deliver(config, body)
                if queue and queue[0] is event:
                    queue.popleft()
        finally:
            if self._queues.get(key) is queue:
                del self._queues[key]

    async def deliver(self, config: TaskPushNotificationConfig, body: bytes) -> bool:
        """POST ``body`` to one webhook with retries (rule 1); whether it was accepted."""
        import httpx

        assert self._client is not None
        headers = {"content-type": "application/a2a+json"}
        auth = config.authentication
        if auth is not None and auth.credentials:
            headers["authorization"] = f"{auth.scheme} {auth.credentials}"
        if config.token:
            headers[TOKEN_HEADER] = config.token
        delay = self.backoff
        for attempt in range(1, self.max_attempts + 1):
            try:
                await check_webhook_url(
                    config.url, block_private_networks=self.block_private_networks
                )
            except InvalidParams as exc:
                logger.warning("push to %s refused: %s", config.url, exc.message)
                return False
            try:
                response = await self._client.post(
                    config.url, content=body, headers=headers, timeout=self.timeout
                )
                status = response.status_code
            except httpx.HTTPError as exc:
                status, reason = 0, repr(exc)
            else:
                reason = f"HTTP {status}"
                if 200 <= status < 300:
                    return True
                if status < 500 and status not in _RETRY_STATUSES:
                    logger.warning("push to %s rejected: %s", config.url, reason)
                    return False
            if attempt < self.max_attempts:
                logger.info("push to %s failed (%s); retry %d", config.url, reason, attempt)
                await anyio.sleep(delay)
                delay = min(delay * 2, self.max_backoff)
        logger.warning("push to %s failed %d times; giving up", config.url, self.max_attempts)
        return False


def _given(coroutine: Coroutine[Any, Any, None]) -> Coroutine[Any, Any, None]:
    """A coroutine made before starting it (so the caller can close it if it never starts)."""
    return coroutine


class PushRejected(Exception):
    """A push notification that failed verification; ``status`` is the HTTP answer."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class PushReceiver:
    """The client side of push notifications: verify, parse, deduplicate.

    ``token`` is the token given in the push config (checked in constant time);
    ``authorization``, if given, is the exact ``Authorization`` header expected.
    `accept` returns the `StreamResponse`, or ``None`` for a duplicate (a redelivery:
    acknowledge it and ignore it). `asgi_app` serves a webhook endpoint that queues
    accepted events for `events` (at most ``max_queued``; past that it answers 503, so
    the sender retries later) and calls ``on_event`` for each, in the serving loop.
    """

    def __init__(
        self,
        token: str | None = None,
        *,
        authorization: str | None = None,
        max_remembered: int = 10_000,
        max_queued: int = 1024,
        on_event: Callable[[StreamResponse], Awaitable[None]] | None = None,
    ) -> None:
        self.token = token
        self.authorization = authorization
        self.max_remembered = max_remembered
        self.on_event = on_event
        self.max_queued = max_queued
        self._seen: OrderedDict[bytes, None] = OrderedDict()
        # Thread-safe: the webhook may be served by uvicorn in its own thread and loop
        # (`jsonrpc_core.running_server`) while `events` is read in another.
        self._lock = threading.Lock()
        self._queue: deque[StreamResponse] = deque()
        self._ready = threading.Event()
        self.duplicates = 0

    def accept(self, headers: Mapping[str, str], body: bytes) -> StreamResponse | None:
        """Verify one delivery; raises `PushRejected` (401 bad credentials, 400 bad body)."""
        lowered = {k.lower(): v for k, v in headers.items()}
        if self.token is not None and not _same(lowered.get(TOKEN_HEADER.lower()), self.token):
            raise PushRejected(401, "invalid or missing push notification token")
        if self.authorization is not None and not _same(
            lowered.get("authorization"), self.authorization
        ):
            raise PushRejected(401, "invalid or missing Authorization")
        try:
            event = StreamResponse.model_validate_json(body)
        except pydantic.ValidationError as exc:
            raise PushRejected(400, f"not a StreamResponse: {exc.error_count()} error(s)") from None
        digest = hashlib.sha256(body).digest()
        with self._lock:
            if digest in self._seen:
                self.duplicates += 1
                return None
            self._seen[digest] = None
            while len(self._seen) > self.max_remembered:
                self._seen.popitem(last=False)
        return event

    def _enqueue(self, event: StreamResponse, body: bytes) -> bool:
        with self._lock:
            if len(self._queue) >= self.max_queued:
                # Not kept: forget it, so that the sender's retry is accepted.
                self._seen.pop(hashlib.sha256(body).digest(), None)
                return False
            self._queue.append(event)
            self._ready.set()
        return True

    async def events(self) -> AsyncIterator[StreamResponse]:
        """The accepted events, in arrival order (from any thread or event loop)."""
        while True:
            with self._lock:
                event = self._queue.popleft() if self._queue else None
                if not self._queue:
                    self._ready.clear()
            if event is not None:
                yield event
                continue
            await anyio.to_thread.run_sync(self._ready.wait, 0.5, abandon_on_cancel=True)

    async def __call__(
        self,
        scope: MutableMapping[str, Any],
        receive: Callable[[], Awaitable[MutableMapping[str, Any]]],
        send: Callable[[MutableMapping[str, Any]], Awaitable[None]],
    ) -> None:
        """An ASGI webhook endpoint: POST a StreamResponse; 200, 400, 401 or 503."""
        if scope["type"] == "lifespan":
            while (message := await receive())["type"] != "lifespan.shutdown":
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        if scope["type"] != "http":
            return
        if scope["method"] != "POST":
            await _respond(send, 405, b"POST only")
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if len(body) > 16 * 1024 * 1024:
                await _respond(send, 413, b"too large")
                return
            if not message.get("more_body", False):
                break
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        try:
            event = self.accept(headers, body)
        except PushRejected as exc:
            await _respond(send, exc.status, exc.message.encode())
            return
        if event is not None:
            if not self._enqueue(event, body):
                await _respond(send, 503, b"busy")
                return
            if self.on_event is not None:
                await self.on_event(event)
        await _respond(send, 200, b"")

    def asgi_app(self) -> PushReceiver:
        """This receiver as an ASGI application (it is one)."""
        return self


def _same(given: str | None, expected: str) -> bool:
    return given is not None and hmac.compare_digest(given.encode(), expected.encode())


async def _respond(
    send: Callable[[MutableMapping[str, Any]], Awaitable[None]], status: int, body: bytes
) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"text/plain"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
