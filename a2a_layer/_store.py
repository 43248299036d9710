"""Durable A2A state behind one interface: tasks, message ids, push configs.

`TaskStore` is what the server needs; `InMemoryTaskStore` keeps everything in dicts and
`SQLiteTaskStore` (``_sqlite``) on disk. Rules every store keeps:

1. A saved `Task` is whole: status, history and artifacts travel together, so a reader
   never sees an artifact without the status that came with it.
2. Tasks are scoped by tenant (``""`` when none): a task of another tenant is not found.
   With authentication, the service stores everything of a caller under `scope_key`
   (tenant and owner) in place of the tenant, so a task, a message id or a push config
   of another caller is not found either, by any operation and in any store.
3. `list_tasks` orders by status timestamp, newest first, then by id (descending), and
   pages with an opaque cursor over that order (keyset pagination), so a page never
   repeats or skips a task that did not change meanwhile.
4. Task models are never mutated in place by anyone (see ``_state``), so stores may hand
   out the objects they keep.
5. A client message is remembered under its `message_key`: its messageId and a digest
   of its content. The ``message_id`` the message methods take is that key, opaque to
   the store, so a message that reuses an id with other content is another message
   (and any store, a user's own included, keeps the rule without a schema of its own).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import weakref
from abc import ABC, abstractmethod
from collections import OrderedDict, deque
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from operator import itemgetter
from typing import Any

from .types import Message, Task, TaskPushNotificationConfig, TaskState

__all__ = [
    "DEFAULT_PAGE_SIZE",
    "InMemoryTaskStore",
    "InvalidPageToken",
    "MessageRecord",
    "TaskPage",
    "TaskQuery",
    "TaskStore",
    "decode_page_token",
    "encode_page_token",
    "message_key",
    "principal_owner",
    "public_tenant",
    "scope_key",
    "sort_key",
]

_OWNER_SEPARATOR = "\x1f"


def principal_owner(principal: Any) -> str | None:
    """Who a verified principal is, as a string; ``None`` for an anonymous caller.

    A string principal is itself; otherwise its issuer, subject and client id (the
    attributes of an access token, or the ``iss``/``sub``/``client_id`` entries of a
    mapping of claims); otherwise its ``str()``.
    """
    if principal is None:
        return None
    if isinstance(principal, str):
        return principal
    if isinstance(principal, Mapping):
        parts = [principal.get(k) for k in ("iss", "sub", "client_id")]
    else:
        parts = [getattr(principal, k, None) for k in ("issuer", "subject", "client_id")]
    if any(isinstance(p, str) and p for p in parts):
        return "|".join(p if isinstance(p, str) else "" for p in parts)
    return str(principal)


def scope_key(tenant: str, owner: str | None) -> str:
    """The key a caller's tasks are stored under: ``tenant``, plus a digest of ``owner``
    when there is one (rule 2). Tenants cannot forge it: the separator is a control
    character no tenant may hold (the service refuses such tenants)."""
    if owner is None:
        return tenant
    digest = hashlib.sha256(owner.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return f"{tenant}{_OWNER_SEPARATOR}{digest}"


def public_tenant(scope: str) -> str:
    """The tenant part of a `scope_key` (what the client and the agent see)."""
    return scope.split(_OWNER_SEPARATOR, 1)[0]


def valid_tenant(tenant: str) -> bool:
    """Whether a tenant given by a client can be stored (no owner separator in it)."""
    return _OWNER_SEPARATOR not in tenant


def message_key(message: Message) -> str:
    """The key a client message is remembered under (rule 5): ``messageId``, then a
    digest of the message's content.

    The digest covers the whole message as the client sent it, in canonical JSON
    (members that are absent or null left out, object keys sorted): ``messageId``,
    ``role``, ``parts``, ``contextId``, ``taskId``, ``metadata``, ``extensions`` and
    ``referenceTaskIds``. The request around it (``configuration``, request
    ``metadata``, headers) is not part of it: a retry that asks to be answered
    differently is still the same message. The digest has a fixed length, so the key
    splits back unambiguously whatever the id holds.
    """
    serializer = message.__pydantic_serializer__
    if message.metadata is None and all(
        part.metadata is None and part.data is None and "data" not in part.model_fields_set
        for part in message.parts
    ):
        # No free-form object anywhere: the model's own field order is canonical.
        canonical = serializer.to_json(message, by_alias=True, exclude_none=True)
    else:
        value = serializer.to_python(message, mode="json", by_alias=True, exclude_none=True)
        text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        canonical = text.encode("utf-8", "surrogatepass")
    digest = base64.urlsafe_b64encode(hashlib.blake2b(canonical, digest_size=16).digest())
    return f"{message.message_id}{_OWNER_SEPARATOR}{digest.decode().rstrip('=')}"


DEFAULT_PAGE_SIZE = 50
"""ListTasks page size when the client gives none (spec: at most 50 by default)."""


@dataclass(frozen=True)
class TaskQuery:
    """The filters and page of one ListTasks call."""

    tenant: str = ""
    context_id: str | None = None
    status: TaskState | None = None
    status_timestamp_after: datetime | None = None
    page_size: int = DEFAULT_PAGE_SIZE
    page_token: str | None = None


@dataclass(frozen=True)
class TaskPage:
    """One page of tasks; ``next_page_token`` is ``""`` on the last page."""

    tasks: list[Task]
    next_page_token: str
    total_size: int


@dataclass(frozen=True)
class MessageRecord:
    """What a message id led to: a task (``task_id``) or a direct ``reply``."""

    task_id: str | None = None
    reply: Message | None = None


class InvalidPageToken(ValueError):
    """A page token this store did not issue."""


def _timestamp_text(ts: datetime | None) -> str:
    # Fixed width, so that string order is time order (SQLite compares the same text).
    return "" if ts is None else f"{ts:%Y-%m-%dT%H:%M:%S.%f}"


def _timestamp_key(task: Task) -> str:
    return _timestamp_text(task.status.timestamp)


def sort_key(task: Task) -> tuple[str, str]:
    """The ListTasks order key: (status timestamp, id); larger comes first."""
    return (_timestamp_text(task.status.timestamp), task.id)


def encode_page_token(key: tuple[str, str]) -> str:
    """An opaque cursor pointing just after ``key``."""
    raw = json.dumps(list(key), separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_page_token(token: str) -> tuple[str, str]:
    """The key a cursor points after; raises `InvalidPageToken`."""
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        value = json.loads(raw)
    except (binascii.Error, ValueError):
        raise InvalidPageToken(f"invalid page token {token!r}") from None
    if not isinstance(value, list) or len(value) != 2 or not all(isinstance(v, str) for v in value):
        raise InvalidPageToken(f"invalid page token {token!r}")
    return (value[0], value[1])


class TaskStore(ABC):
    """Where an `A2AServer` keeps its tasks, message ids and push configs."""

    @abstractmethod
    async def get_task(self, task_id: str, *, tenant: str = "") -> Task | None:
        """The task, or ``None`` if this tenant has none with that id."""

    @abstractmethod
    async def save_task(self, task: Task, *, tenant: str = "") -> None:
        """Insert or replace ``task`` (whole: status, history, artifacts)."""

    @abstractmethod
    async def list_tasks(self, query: TaskQuery) -> TaskPage:
        """One page of the tenant's tasks matching ``query`` (rule 3)."""

    @abstractmethod
    async def get_message(self, message_id: str, *, tenant: str = "") -> MessageRecord | None:
        """What the client message remembered as ``message_id`` (a `message_key`, rule 5)
        led to, if it was seen before."""

    @abstractmethod
    async def save_message(
        self, message_id: str, record: MessageRecord, *, tenant: str = ""
    ) -> None:
        """Remember what the client message ``message_id`` (a `message_key`) led to (for
        deduplication)."""

    @abstractmethod
    async def save_push_config(
        self, config: TaskPushNotificationConfig, *, tenant: str = ""
    ) -> None:
        """Insert or replace a push config (``task_id`` and ``id`` are set)."""

    @abstractmethod
    async def get_push_config(
        self, task_id: str, config_id: str, *, tenant: str = ""
    ) -> TaskPushNotificationConfig | None:
        """One push config of a task."""

    @abstractmethod
    async def list_push_configs(
        self, task_id: str, *, tenant: str = ""
    ) -> list[TaskPushNotificationConfig]:
        """Every push config of a task, oldest first."""

    @abstractmethod
    async def delete_push_config(self, task_id: str, config_id: str, *, tenant: str = "") -> bool:
        """Delete a push config; ``False`` if there was none."""

    async def count_push_configs(self) -> int | None:
        """How many push configs the store holds in all, or None if it cannot tell.

        `PushDispatcher` bounds the total with it; the built-in stores all count.
        """
        return None

    async def aclose(self) -> None:  # noqa: B027 - optional hook, a no-op by default
        """Release resources (files, connections); the store is not used afterwards."""


def _fits(
    query: TaskQuery, context_id: str | None, state: TaskState, timestamp: datetime | None
) -> bool:
    if query.context_id is not None and context_id != query.context_id:
        return False
    if query.status is not None and state is not query.status:
        return False
    if query.status_timestamp_after is not None:
        if timestamp is None or timestamp <= query.status_timestamp_after:
            return False
    return True


def _matches(task: Task, query: TaskQuery) -> bool:
    status = task.status
    return _fits(query, task.context_id, status.state, status.timestamp)


def _page(rows: list[tuple[tuple[str, str], Any]], query: TaskQuery) -> tuple[list[Any], str, int]:
    """Rule 3 over the matching ``(sort key, item)`` rows of one tenant: the items of the
    page, the next page token and the number of matches."""
    rows.sort(key=itemgetter(0), reverse=True)
    start = 0
    if query.page_token:
        after = decode_page_token(query.page_token)
        start = next((i for i, (key, _) in enumerate(rows) if key < after), len(rows))
    page = rows[start : start + query.page_size]
    more = start + query.page_size < len(rows)
    token = encode_page_token(page[-1][0]) if more and page else ""
    return [item for _, item in page], token, len(rows)


def page_of(tasks: list[Task], query: TaskQuery) -> TaskPage:
    """Rule 3 applied to an unordered list of the tenant's tasks."""
    rows = [(sort_key(t), t) for t in tasks if _matches(t, query)]
    page, token, total = _page(rows, query)
    return TaskPage(page, token, total)


class _Packed:
    """A settled task as the JSON `SQLiteTaskStore` keeps (about a tenth of the model's
    memory), with what ListTasks filters and orders on.

    Only tasks that wait (terminal, or interrupted until the client answers) are packed:
    one that is running is saved again at each event and stays a model. While the model
    it was packed from is alive elsewhere (the runtime answering the call that settled
    it), a read returns that model instead of decoding a copy.
    """

    __slots__ = ("body", "context_id", "model", "state", "timestamp")

    def __init__(self, task: Task) -> None:
        # What `model_dump_json` does, without decoding the bytes to a str.
        self.body: bytes = task.__pydantic_serializer__.to_json(
            task, by_alias=True, exclude_none=True
        )
        status = task.status
        self.context_id = task.context_id
        self.state = status.state
        self.timestamp = status.timestamp
        self.model: weakref.ref[Task] | None = weakref.ref(task)

    def live(self) -> Task | None:
        """The model this was packed from, if it is still alive."""
        model = self.model
        return None if model is None else model()

    def task(self) -> Task:
        """The task: the live model, or a new one read from the JSON."""
        live = self.live()
        return Task.model_validate_json(self.body) if live is None else live


_NO_TASKS: dict[str, Task | _Packed] = {}
"""What a tenant without tasks has (never written to)."""

_RECENT = 64
"""At most this many packed tasks keep a reference to their model (the newest ones)."""


def _settled(task: Task) -> bool:
    state = task.status.state
    return state.is_terminal or state.is_interrupted


def _message_key(tenant: str, message_id: str) -> str | tuple[str, str]:
    """Where `InMemoryTaskStore` remembers a message id: the id itself for the default
    tenant (no tuple kept per message), else ``(tenant, message_id)``. A string and a
    tuple never compare equal, so tenants stay apart."""
    return (tenant, message_id) if tenant else message_id


class InMemoryTaskStore(TaskStore):
    """A `TaskStore` in process memory: fast, and gone when the process ends.

    At most ``max_messages`` message ids are remembered for deduplication (oldest
    forgotten first). A task saved in a terminal or interrupted state is kept as its
    JSON and read back as an equal `Task` (as from `SQLiteTaskStore`; the model saved
    while it is still in use elsewhere); a running task is kept as the model saved.
    """

    def __init__(self, *, max_messages: int = 100_000) -> None:
        # Per tenant, then per id: ListTasks reads one tenant's tasks only.
        self._tasks: dict[str, dict[str, Task | _Packed]] = {}
        # A message that led to a task is remembered as the task id alone; the key is
        # the message id alone for the default tenant (see `_message_key`).
        self._messages: OrderedDict[str | tuple[str, str], str | MessageRecord] = OrderedDict()
        self._push: dict[tuple[str, str], dict[str, TaskPushNotificationConfig]] = {}
        self._recent: deque[_Packed] = deque()
        self.max_messages = max_messages

    async def get_task(self, task_id: str, *, tenant: str = "") -> Task | None:
        entry = self._tasks.get(tenant, _NO_TASKS).get(task_id)
        return entry.task() if isinstance(entry, _Packed) else entry

    async def save_task(self, task: Task, *, tenant: str = "") -> None:
        tasks = self._tasks.get(tenant)
        if tasks is None:
            tasks = self._tasks[tenant] = {}
        if not _settled(task):
            tasks[task.id] = task
            return
        try:
            packed = tasks[task.id] = _Packed(task)
        except ValueError:  # a value JSON cannot hold (PydanticSerializationError)
            tasks[task.id] = task
            return
        # Drop the references of older packed tasks whose model is gone (or past the
        # newest `_RECENT`), so that a stored task costs no more than its JSON.
        recent = self._recent
        recent.append(packed)
        while recent and (len(recent) > _RECENT or recent[0].live() is None):
            recent.popleft().model = None

    async def list_tasks(self, query: TaskQuery) -> TaskPage:
        rows: list[tuple[tuple[str, str], Task | _Packed]] = []
        for task_id, entry in self._tasks.get(query.tenant, _NO_TASKS).items():
            if isinstance(entry, _Packed):
                context_id, state, timestamp = entry.context_id, entry.state, entry.timestamp
            else:
                status = entry.status
                context_id, state, timestamp = entry.context_id, status.state, status.timestamp
            if _fits(query, context_id, state, timestamp):
                rows.append(((_timestamp_text(timestamp), task_id), entry))
        page, token, total = _page(rows, query)
        tasks = [e.task() if isinstance(e, _Packed) else e for e in page]
        return TaskPage(tasks, token, total)

    async def get_message(self, message_id: str, *, tenant: str = "") -> MessageRecord | None:
        record = self._messages.get(_message_key(tenant, message_id))
        return MessageRecord(task_id=record) if isinstance(record, str) else record

    async def save_message(
        self, message_id: str, record: MessageRecord, *, tenant: str = ""
    ) -> None:
        kept = record.task_id if record.reply is None and record.task_id is not None else record
        self._messages[_message_key(tenant, message_id)] = kept
        while len(self._messages) > self.max_messages:
            self._messages.popitem(last=False)

    async def save_push_config(
        self, config: TaskPushNotificationConfig, *, tenant: str = ""
    ) -> None:
        assert config.task_id and config.id, "a stored push config has task_id and id"
        self._push.setdefault((tenant, config.task_id), {})[config.id] = config

    async def get_push_config(
        self, task_id: str, config_id: str, *, tenant: str = ""
    ) -> TaskPushNotificationConfig | None:
        return self._push.get((tenant, task_id), {}).get(config_id)

    async def list_push_configs(
        self, task_id: str, *, tenant: str = ""
    ) -> list[TaskPushNotificationConfig]:
        return list(self._push.get((tenant, task_id), {}).values())

    async def delete_push_config(self, task_id: str, config_id: str, *, tenant: str = "") -> bool:
        configs = self._push.get((tenant, task_id))
        if configs is None or configs.pop(config_id, None) is None:
            return False
        if not configs:
            del self._push[(tenant, task_id)]
        return True

    async def count_push_configs(self) -> int:
        return sum(len(configs) for configs in self._push.values())
