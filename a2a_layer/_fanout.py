"""Replication: the task runtime's side of a `SharedTaskStore` (several replicas).

`TaskRuntime` hands its shared-store work to one `Replication`. Rules, beside the
runtime's own (which still hold within each replica):

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
4. A send is run by the replica that claims its message id; a replica that loses the
   claim (a concurrent or retried send with the same id) follows the winner's run:
   its reply, or its task until the task settles (terminal or interrupted after the
   message), with no second call of the agent. A claim still pending after
   ``claim_timeout`` seconds (its replica died) is taken over and run here.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

import anyio
from anyio.abc import TaskGroup

from jsonrpc_core import InternalError, JsonRpcError

from ._errors import A2A_ERRORS
from ._shared import Claim, SharedTaskStore, StaleTask, StoredEvent, TaskSnapshot
from .types import StreamResponse, Task, TaskState

if TYPE_CHECKING:
    from ._runtime import TaskRuntime, _Active, _Run

__all__ = ["Replication"]

logger = logging.getLogger("a2a_layer.replication")

_MAX_WRITE_ATTEMPTS = 32
_Compute = Callable[[Task], tuple[Task, StreamResponse | None]]


def _closes(state: TaskState) -> bool:
    return state.is_terminal or state.is_interrupted


def _closing(event: StreamResponse | None) -> bool:
    return (
        event is not None
        and event.status_update is not None
        and _closes(event.status_update.status.state)
    )


class Replication:
    """Keeps one replica's in-memory tasks in step with the shared store."""

    def __init__(
        self, runtime: TaskRuntime, store: SharedTaskStore, *, claim_timeout: float = 300.0
    ) -> None:
        self.runtime = runtime
        self.store = store
        self.claim_timeout = claim_timeout
        self._task_group: TaskGroup | None = None
        self._dirty: dict[tuple[str, str], bool] = {}  # key -> caught-up worker must run again
        self._wanted: dict[tuple[str, str], int] = {}  # key -> highest change announced

    async def run(self, task_group: TaskGroup) -> None:
        """Start listening (returns once changes flow)."""
        self._task_group = task_group
        started = anyio.Event()
        task_group.start_soon(self.store.listen, self._on_change, self._on_resync, started)
        await started.wait()

    # -- changes made elsewhere (rule 2) -----------------------------------------------

    def _on_change(self, tenant: str, task_id: str, seq: int) -> None:
        key = (tenant, task_id)
        active = self.runtime._active.get(key)
        if active is not None and seq > active.seq:
            self.schedule(key, seq)

    def _on_resync(self) -> None:
        for key in list(self.runtime._active):
            self.schedule(key)

    def schedule(self, key: tuple[str, str], seq: int | None = None) -> None:
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

    async def _catch_up_worker(self, key: tuple[str, str]) -> None:
        try:
            while True:
                self._dirty[key] = False
                active = self.runtime._active.get(key)
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
        runtime = self.runtime
        if not contiguous:
            logger.info("task %s: events pruned meanwhile; subscribers start over", active.task.id)
            for sub in list(active.subscribers):
                sub.close()
                runtime._drop_subscriber(active, sub)
        else:
            for stored in news:
                event = stored.event
                if event is None or event.task is not None:
                    continue  # a history change, or the new task (nobody follows it yet)
                runtime._broadcast(active, event, closes=_closing(event), push=False)
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

    async def follow(self, run: _Run, continuation: bool, claim: Claim) -> None:
        """Mirror the claim winner's run of the same message in ``run`` (rule 4)."""
        runtime = self.runtime
        delay = 0.005
        try:
            with anyio.fail_after(self.claim_timeout + 30):
                while claim.pending:
                    await anyio.sleep(delay)
                    delay = min(delay * 2, 0.2)
                    taken = await self.claim(run)
                    if taken is None:  # the winner vanished: run it here
                        await runtime._execute(run, continuation)
                        return
                    claim = taken
        except TimeoutError:
            claim = Claim(error=InternalError("Internal error: the send was not run").to_object())
        try:
            if claim.error is not None:
                error = A2A_ERRORS.from_object(claim.error)
                runtime._finish_with_error(run, error)
            elif claim.reply is not None:
                run.answer = claim.reply
                for sub in run.listeners:
                    await run.attach(sub)
                run.listeners.clear()
            elif claim.task_id is not None:
                await self._follow_task(run, claim)
        except JsonRpcError as exc:
            runtime._finish_with_error(run, exc)
        finally:
            runtime._inflight.pop((run.tenant, run.message_key), None)
            run.first.set()
            run.settled.set()
            run.done.set()

    async def _follow_task(self, run: _Run, claim: Claim) -> None:
        runtime = self.runtime
        assert claim.task_id is not None
        run.task_id = claim.task_id
        active = await runtime._acquire(run.tenant, claim.task_id)
        watcher = runtime.new_subscriber()
        try:
            async with active.lock:
                after = min(claim.seq, active.seq)
                changes = await self.store.changes_after(
                    claim.task_id, tenant=run.tenant, after=after
                )
                await self.catch_up(active, changes)
                settled = any(_closing(e.event) for e in changes[1] if e.seq > claim.seq)
                run.context_id = active.task.context_id or run.context_id
                run.active = active
                await runtime._attach_locked(active, watcher, settled=settled)
                for sub in run.listeners:
                    await runtime._attach_locked(active, sub, settled=settled)
                run.listeners.clear()
            run.first.set()
            async with watcher:
                async for _ in watcher:
                    pass
        finally:
            watcher.close()
            runtime._drop_subscriber(active, watcher)
            runtime._release(active)
