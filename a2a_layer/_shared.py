"""`SharedTaskStore`: a `TaskStore` that several server processes (replicas) share.

A replica keeps the tasks it is working on in memory (``_runtime``'s `_Active`), so a
store shared with other replicas must also tell it what the others changed. Every
change of a task gets the next number of that task's sequence (1 for the new task),
and is written with the event subscribers are told about, if any (a message appended
to the history is a change without an event). Rules:

1. `append` is compare-and-set: it saves the change after ``after`` only if the
   stored task is still at ``after``, else raises `StaleTask`; the writer then reads
   the changes it missed (`changes_after`) and decides again. So two replicas never
   overwrite each other's changes, and the events of a task form one gap-free
   sequence in the order the task went through them.
2. `changes_after` returns a task and the events after a number, up to that task's
   number, read at one instant: the snapshot never runs ahead of the events.
3. `listen` reports every change (tenant, task id, number) of any replica, soon after
   it is committed, and calls ``on_resync`` when reports may have been lost (the
   listening connection was lost): then every followed task is read again.
4. A message id is claimed before its run starts (`claim_message`): exactly one
   replica wins and runs the agent; the others follow the task or the reply the
   winner produces (`get_claim`). A claim whose run failed before producing anything
   records the error (`fail_claim`); a later send with that id claims it afresh
   (runs again), as does one whose winner vanished (claimed longer ago than
   ``stale_after`` seconds and still pending).
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import anyio

from ._store import TaskStore
from .types import Message, StreamResponse, Task

__all__ = ["Claim", "SharedTaskStore", "StaleTask", "StoredEvent", "TaskSnapshot"]


class StaleTask(Exception):
    """The task changed since the number the writer started from (rule 1)."""


@dataclass(frozen=True)
class TaskSnapshot:
    """A task as stored, with the number of its last change."""

    task: Task
    seq: int


@dataclass(frozen=True)
class StoredEvent:
    """Change ``seq`` of a task; ``event`` is ``None`` for a change nobody is told of."""

    seq: int
    event: StreamResponse | None


@dataclass(frozen=True)
class Claim:
    """A message id as the shared store has it (rule 4).

    ``pending``: a run claimed it and has produced nothing yet. Then it produced either
    ``task_id`` (the message was accepted as change ``seq`` of that task) or a direct
    ``reply``; or it failed first with ``error`` (a JSON-RPC error object).
    """

    task_id: str | None = None
    reply: Message | None = None
    pending: bool = False
    seq: int = 0
    error: dict[str, Any] | None = None


class SharedTaskStore(TaskStore):
    """A `TaskStore` shared by several replicas (see module rules)."""

    @abstractmethod
    async def load_task(self, task_id: str, *, tenant: str = "") -> TaskSnapshot | None:
        """The task and the number of its last change."""

    @abstractmethod
    async def append(
        self,
        task: Task,
        event: StreamResponse | None,
        *,
        tenant: str = "",
        after: int,
        message_id: str | None = None,
    ) -> int:
        """Save ``task`` as the change after ``after`` (0: a new task) with ``event``;
        returns its number. With ``message_id``, that message's claim records the
        task and this number. Raises `StaleTask` (rule 1)."""

    @abstractmethod
    async def changes_after(
        self, task_id: str, *, tenant: str = "", after: int
    ) -> tuple[TaskSnapshot | None, list[StoredEvent]]:
        """The task now and its events after ``after`` (rule 2); events may have gaps
        only where old events were pruned."""

    @abstractmethod
    async def claim_message(
        self, message_id: str, *, tenant: str = "", task_id: str, stale_after: float
    ) -> Claim | None:
        """Claim a message id for a run that would create ``task_id``: ``None`` if the
        caller won, else the claim as it stands (rule 4)."""

    @abstractmethod
    async def get_claim(self, message_id: str, *, tenant: str = "") -> Claim | None:
        """A message id's claim, whatever its state."""

    @abstractmethod
    async def fail_claim(
        self, message_id: str, *, tenant: str = "", task_id: str, error: dict[str, Any]
    ) -> None:
        """The run that claimed ``message_id`` (for ``task_id``) failed before producing
        anything."""

    @abstractmethod
    async def release_claim(self, message_id: str, *, tenant: str = "", task_id: str) -> None:
        """Let the next send of ``message_id`` claim it again: its run (for ``task_id``)
        finished and its task moved on since (``_runtime`` rule 4)."""

    @abstractmethod
    async def listen(
        self,
        on_change: Callable[[str, str, int], None],
        on_resync: Callable[[], None],
        started: anyio.Event | None = None,
    ) -> None:
        """Report changes of every replica until cancelled (rule 3); ``started`` is set
        once reports flow. Callbacks run on the event loop and must not block."""
