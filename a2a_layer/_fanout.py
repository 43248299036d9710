"""Replication: the task runtime's side of a `SharedTaskStore` (several replicas).

The runtime hands its shared-store work to one `Replication`, which reaches back into
the runtime only through `LocalTasks` (the tasks this replica keeps in memory; the
runtime's `ActiveTasks`). Rules, beside the runtime's own (which still hold within each
replica):

1. Every change a replica makes to a task goes through `write` under the task's lock:
   compute from the in-memory task, compare-and-set it into the store; when another
   replica got there first (`StaleTask`), catch up with what it wrote (telling local
   subscribers) and compute again. So each replica's subscribers see the task's
   events once, in the store's order.
2. Changes made elsewhere reach a replica through `SharedTaskStore.listen`; for each
   task it keeps in memory (a run or subscribers) it reads the events it has not seen
   (`catch_up`) and offers them to its subscribers. It never re-publishes them to
   push webhooks: the replica that made a change delivers its pushes. A gap (events
   pruned meanwhile) cuts the task's subscribers off (their streams end; they
   resubscribe and start from the task as it is).
3. A task that became terminal elsewhere (CancelTask served by another replica) stops
   the agent running it here.
4. A send is run by the replica that claims its message id (`claim`); a replica that
   loses the claim (a concurrent or retried send with the same id) follows the
   winner's run (the send path, ``_send``), with no second call of the agent. A claim
   still pending after ``claim_timeout`` seconds (its replica died) is taken over and
   run here.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

import anyio
from anyio.abc import TaskGroup

from jsonrpc_core import InternalError

from ._active import TaskKey, settles
from ._shared import Claim, SharedTaskStore, StaleTask, StoredEvent, TaskSnapshot
from .types import StreamResponse, Task

if TYPE_CHECKING:
    from ._active import _Active
    from ._run import _Run
    from ._subscriber import _Subscriber

__all__ = ["LocalTasks", "Replication"]

logger = logging.getLogger("a2a_layer.replication")

_MAX_WRITE_ATTEMPTS = 32
_Compute = Callable[[Task], tuple[Task, StreamResponse | None]]


class LocalTasks(Protocol):
    """What replication uses of the runtime: the tasks this replica keeps in memory.

    Beside these four methods it uses only public fields of the runtime's records: of
    an `_Active`, ``task``, ``seq``, ``tenant``, ``lock`` and ``subscribers`` (read and
    set under ``lock``) and ``run``; of a `_Run` (its own, or one it is handed in
    `claim` and `produced_nothing`), ``done``, ``cancel_requested``, ``cancel_scope``
    (to stop it: rule 3), ``message_key``, ``tenant``, ``task_id``, ``message`` and
    ``error``.
    """

    def get(self, key: TaskKey) -> _Active | None:
        """The record of the task ``key`` names, if it is in memory."""
        ...

    def keys(self) -> list[TaskKey]:
        """The keys of every task in memory (a copy)."""
        ...

    def drop_subscriber(self, active: _Active, sub: _Subscriber) -> None:
        """Stop offering ``active``'s events to ``sub``."""
        ...

    def broadcast(
        self, active: _Active, event: StreamResponse, *, closes: bool, push: bool = True
    ) -> None:
        """Offer ``event`` to ``active``'s subscribers (the caller holds its lock)."""
        ...


class Replication:
    """Keeps one replica's in-memory tasks in step with the shared store."""

    def __init__(
        self, tasks: LocalTasks, store: SharedTaskStore, *, claim_timeout: float = 300.0
    ) -> None:
        self.tasks = tasks
        self.store = store
        self.claim_timeout = claim_timeout
        self._task_group: TaskGroup | None = None
        self._dirty: dict[TaskKey, bool] = {}  # key -> caught-up worker must run again
        self._wanted: dict[TaskKey, int] = {}  # key -> highest change announced

    async def run(self, task_group: TaskGroup) -> None:
        """Start listening (returns once changes flow)."""
        self._task_group = task_group
        started = anyio.Event()
        task_group.start_soon(self.store.listen, self._on_change, self._on_resync, started)
        await started.wait()

    # -- changes made elsewhere (rule 2) -----------------------------------------------

    def _on_change(self, tenant: str, task_id: str, seq: int) -> None:
        key = (tenant, task_id)
        active = self.tasks.get(key)
        if active is not None and seq > active.seq:
            self.schedule(key, seq)

    def _on_resync(self) -> None:
        for key in self.tasks.keys():
            self.schedule(key)

    def schedule(self, key: TaskKey, seq: int | None = None) -> None:
        """Catch the task up soon (coalesced: one worker per task at a time); ``seq``
        is the change announced, if known (``None``: look in any case)."""
        wanted = self._wanted.get(key, 0)
        self._wanted[key] = max(wanted, seq if seq is not None else 1 << 62)
        if key in self._dirty:
            self._dirty[key] = True
            return
        if self._task_group is None:
            return
        self._dirty[key] = False
        self._task_group.start_soon(self._catch_up_worker, key)

    async def _catch_up_worker(self, key: TaskKey) -> None:
        try:
            while True:
                self._dirty[key] = False
                active = self.tasks.get(key)
                if active is None:
                    return
                try:
                    async with active.lock:
                        # Often the announcement is of this replica's own change, which
                        # was applied while the announcement waited for the lock.
                        if self._wanted.get(key, 0) > active.seq:
                            await self.catch_up(active)
                except Exception:
                    logger.exception("cannot catch up with task %s", key[1])
                    return
                if not self._dirty.get(key):
                    return
        finally:
            self._dirty.pop(key, None)
            self._wanted.pop(key, None)

    async def catch_up(
        self,
        active: _Active,
        changes: tuple[TaskSnapshot | None, list[StoredEvent]] | None = None,
    ) -> None:
        """Bring ``active`` up to the store (hold its lock); ``changes`` if already read."""
        if changes is None:
            changes = await self.store.changes_after(
                active.task.id, tenant=active.tenant, after=active.seq
            )
        snapshot, events = changes
        if snapshot is None or snapshot.seq <= active.seq:
            return
        news = [e for e in events if e.seq > active.seq]
        contiguous = [e.seq for e in news] == list(range(active.seq + 1, snapshot.seq + 1))
        active.task, active.seq = snapshot.task, snapshot.seq
        tasks = self.tasks
        if not contiguous:
            logger.info("task %s: events pruned meanwhile; subscribers start over", active.task.id)
            for sub in list(active.subscribers):
                sub.close()
                tasks.drop_subscriber(active, sub)
        else:
            for stored in news:
                event = stored.event
                if event is None or event.task is not None:
                    continue  # a history change, or the new task (nobody follows it yet)
                tasks.broadcast(active, event, closes=settles(event), push=False)
        run = active.run
        if active.task.status.state.is_terminal and run is not None and not run.done.is_set():
            if not run.cancel_requested:  # rule 3
                run.cancel_requested = True
                run.cancel_scope.cancel()

    # -- changes made here (rule 1) ----------------------------------------------------

    async def write(
        self, active: _Active, compute: _Compute, *, message_id: str | None = None
    ) -> tuple[Task, StreamResponse | None]:
        """Compute a change from ``active.task`` and store it (hold the lock)."""
        for _ in range(_MAX_WRITE_ATTEMPTS):
            task, event = compute(active.task)  # may raise (InvalidTransition, ...)
            try:
                seq = await self.store.append(
                    task, event, tenant=active.tenant, after=active.seq, message_id=message_id
                )
            except StaleTask:
                await self.catch_up(active)
                continue
            active.task, active.seq = task, seq
            return task, event
        raise InternalError(f"Internal error: task {active.task.id} keeps changing")

    # -- message ids (rule 4) ----------------------------------------------------------

    async def claim(self, run: _Run) -> Claim | None:
        """Claim ``run``'s message id: ``None`` if this replica runs it."""
        return await self.store.claim_message(
            run.message_key,
            tenant=run.tenant,
            task_id=run.task_id,
            stale_after=self.claim_timeout,
        )

    async def produced_nothing(self, run: _Run) -> None:
        """Record that ``run`` failed before producing a task or a reply."""
        error = run.error if run.error is not None else InternalError("Internal error")
        with anyio.CancelScope(shield=True):
            try:
                await self.store.fail_claim(
                    run.message_key,
                    tenant=run.tenant,
                    task_id=run.task_id,
                    error=error.to_object(),
                )
            except Exception:
                logger.exception("cannot record the failure of message %s", run.message.message_id)
