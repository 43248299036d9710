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
4. A webhook must be an http(s) URL whose host is, or resolves only to, public addresses
   (``is_global``; no loopback, private, link-local, carrier-grade NAT, unique-local or
   IPv4-mapped forms of them). It is checked when the config is registered (a refusal is
   `InvalidParams`, naming the host and why) and again on every connection a delivery
   makes: the dispatcher's own client resolves the host once and connects to the address
   it checked (`jsonrpc_core.http.public_addresses_only`), so DNS rebinding cannot switch it;
   a refused delivery is logged and never sent. Redirects are not followed; environment
   proxies are not used. ``allow_private_webhooks`` lifts the address rule (the scheme
   rule stays): for loopback receivers in demos and tests, or a trusted private network.
   With a ``client`` of the caller's own the address is checked before each attempt
   (best effort: that client resolves the name again when it connects).
5. A task has at most ``max_configs_per_task`` push configs and the server at most
   ``max_configs`` in all (`TaskStore.count_push_configs`; a store that cannot count
   has the per-task bound only). A config past either bound is refused at registration
   with `InvalidParams`; replacing a config (same id) always fits. Registrations are
   serialised in this process; replicas sharing a store may overshoot by the number
   registering at the same moment.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
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
from jsonrpc_core.http import BodyTooLarge, ClientDisconnected, read_body

from ._executor import new_id
from ._store import TaskStore, public_tenant
from .types import StreamResponse, TaskPushNotificationConfig

if TYPE_CHECKING:
    import httpx
    from anyio.abc import TaskGroup

__all__ = [
    "DEFAULT_MAX_CONFIGS",
    "DEFAULT_MAX_CONFIGS_PER_TASK",
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
_MAX_BODY = 16 * 1024 * 1024
"""Bytes a webhook request body may have (`PushReceiver`; past it: 413)."""
_MAX_WEBHOOK_ANSWER = 64 * 1024  # a webhook's answer is not used: read only this much of it


DEFAULT_MAX_CONFIGS_PER_TASK = 10
"""How many push configs one task may have (`PushDispatcher`'s default)."""

DEFAULT_MAX_CONFIGS = 10_000
"""How many push configs a server keeps in all (`PushDispatcher`'s default)."""

_DEFAULT_PORTS = {"http": 80, "https": 443}


async def check_webhook_url(url: str, *, allow_private: bool = False) -> None:
    """Raise `InvalidParams` unless ``url`` is an http(s) URL to a public address.

    The host must be a public IP, or a name all of whose addresses are public
    (`jsonrpc_core.http.public_addresses_only`: ``is_global``, IPv4-mapped IPv6 unwrapped).
    With ``allow_private`` only the scheme and host are checked. The message names the
    host and why, e.g. "webhook address 10.0.0.5 is not public".
    """
    from jsonrpc_core.http import AddressRefused, public_addresses_only

    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        port = -1
    if parts.scheme not in _DEFAULT_PORTS or not parts.hostname or port == -1:
        raise InvalidParams(f"Invalid params: push notification url {url!r} is not an http(s) URL")
    if allow_private:
        return
    try:
        await public_addresses_only()(parts.hostname, port or _DEFAULT_PORTS[parts.scheme])
    except AddressRefused as exc:
        raise InvalidParams(
            f"Invalid params: webhook {exc}: this server sends push notifications to public "
            "addresses only (private targets need allow_private_webhooks)"
        ) from None


class PushDispatcher:
    """Delivers task events to their webhooks (see module rules).

    Run it with `run_until_cancelled` (the server does, in its lifespan). Without a
    ``client`` it makes its own: rpcweave's HTTP/1.1 client with the public-address
    policy on every connection (unless ``allow_private_webhooks``), no environment
    proxies and no redirects followed. A ``client`` of your own is used as given: the
    registration check still holds, and each delivery attempt checks the address first,
    but your client resolves the name again when it connects (rule 4), so give it a
    transport with an address policy (``new_async_client(resolve=public_addresses_only(),
    trust_env=False)``) for the same guarantee, and leave ``follow_redirects`` off.
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
        allow_private_webhooks: bool = False,
        max_configs_per_task: int = DEFAULT_MAX_CONFIGS_PER_TASK,
        max_configs: int = DEFAULT_MAX_CONFIGS,
    ) -> None:
        self.store = store
        self.max_attempts = max_attempts
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.timeout = timeout
        self.max_queued = max_queued
        self.allow_private_webhooks = allow_private_webhooks
        self.max_configs_per_task = max_configs_per_task
        self.max_configs = max_configs
        self._client = client
        self._owns_client = client is None
        self._queues: dict[tuple[str, str], deque[StreamResponse]] = {}
        self._task_group: TaskGroup | None = None
        # Made in the loop that registers (a server may be built in another one).
        self._registering: anyio.Lock | None = None

    async def run_until_cancelled(self, started: anyio.Event | None = None) -> None:
        """Deliver until cancelled."""
        from jsonrpc_core.http import new_async_client, public_addresses_only

        client = self._client or new_async_client(
            timeout=self.timeout,
            trust_env=False,
            resolve=None if self.allow_private_webhooks else public_addresses_only(),
        )
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

    async def check_config(
        self, config: TaskPushNotificationConfig, *, task_id: str | None, tenant: str = ""
    ) -> None:
        """Raise `InvalidParams` unless ``config`` may be registered (rules 4 and 5).

        ``task_id`` is the task it is for, or None for a task still to be created.
        """
        await check_webhook_url(config.url, allow_private=self.allow_private_webhooks)
        await self._check_room(config, task_id, tenant)

    async def _check_room(
        self, config: TaskPushNotificationConfig, task_id: str | None, tenant: str
    ) -> None:
        if task_id is not None:
            existing = await self.store.list_push_configs(task_id, tenant=tenant)
            if config.id and any(c.id == config.id for c in existing):
                return  # a replacement: the count does not grow
            if len(existing) >= self.max_configs_per_task:
                raise InvalidParams(
                    f"Invalid params: task {task_id} already has {len(existing)} push "
                    f"notification configs, the most a task may have "
                    f"({self.max_configs_per_task}); delete one first"
                )
        total = await self.store.count_push_configs()
        if total is not None and total >= self.max_configs:
            raise InvalidParams(
                f"Invalid params: this server already holds {total} push notification "
                f"configs, the most it keeps ({self.max_configs})"
            )

    async def add_config(
        self,
        config: TaskPushNotificationConfig,
        *,
        task_id: str,
        tenant: str = "",
        checked: bool = False,
    ) -> TaskPushNotificationConfig:
        """Check (rules 4 and 5), complete (task id, config id) and store a push config.

        ``checked``: `check_config` already passed for it (a config sent with the
        message that creates its task).
        """
        if self._registering is None:
            self._registering = anyio.Lock()
        async with self._registering:
            if not checked:
                await self.check_config(config, task_id=task_id, tenant=tenant)
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

    async def _post(self, url: str, body: bytes, headers: dict[str, str]) -> int:
        """POST one event; the webhook's status. Its answer is read up to
        `_MAX_WEBHOOK_ANSWER` bytes (decoded) so the connection is kept, else closed
        unread: a webhook cannot make the server read (or inflate) an endless body."""
        from jsonrpc_core.http import ResponseTooLarge, read_response_body

        assert self._client is not None
        request = self._client.build_request(
            "POST", url, content=body, headers=headers, timeout=self.timeout
        )
        response = await self._client.send(request, stream=True)
        try:
            with contextlib.suppress(ResponseTooLarge):
                await read_response_body(response, _MAX_WEBHOOK_ANSWER)
        finally:
            await response.aclose()
        return response.status_code

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
        from jsonrpc_core.http import AddressRefused

        # Our own client checks the address it connects to (rule 4); a client of the
        # caller's own is checked here first, best effort.
        check_first = not self.allow_private_webhooks and not self._owns_client
        delay = self.backoff
        for attempt in range(1, self.max_attempts + 1):
            try:
                await check_webhook_url(
                    config.url, allow_private=self.allow_private_webhooks or not check_first
                )
            except InvalidParams as exc:
                logger.warning("push to %s refused: %s", config.url, exc.message)
                return False
            try:
                status = await self._post(config.url, body, headers)
            except httpx.HTTPError as exc:
                if isinstance(exc.__cause__, AddressRefused):
                    logger.warning("push to %s refused: webhook %s", config.url, exc.__cause__)
                    return False
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
        try:
            body = await read_body(receive, _MAX_BODY)
        except BodyTooLarge:
            await _respond(send, 413, b"too large")
            return
        except ClientDisconnected:
            return  # a body cut off is no event: nothing to answer, nothing delivered
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
