"""The send path: a message starts a run, or finds what an earlier send of it produced.

`SendPath` keeps the runtime's rule 4 (see ``_runtime``): a message is remembered under
its `message_key` from the moment its run starts; a retried send joins the run in
progress (``AgentRuns.inflight``) or replays what the finished one produced (the
store's message records), and never starts the agent again.

With a `SharedTaskStore` the store's claims stand for the message records (rule 6): a
send is run by the replica that claims its message id; a replica that loses the claim
(a concurrent or retried send with the same id) follows the winner's run (`_follow`):
its reply, or its task until the task settles (terminal or interrupted after the
message), with no second call of the agent.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import anyio

from jsonrpc_core import InternalError, JsonRpcError

from ._active import check_continuation, settles
from ._errors import A2A_ERRORS
from ._executor import ExecutionContext, new_id
from ._run import _Run
from ._store import message_key, public_tenant
from ._types._base import replaced
from .types import Message, Role, SendMessageConfiguration, Task, TaskState

if TYPE_CHECKING:
    from ._active import ActiveTasks
    from ._agent_runs import AgentRuns
    from ._runtime import CallInfo
    from ._shared import Claim
    from ._subscriber import _Subscriber

__all__ = ["SendPath"]


class SendPath:
    """Starts runs for new messages; joins or replays the runs of messages sent before."""

    def __init__(self, tasks: ActiveTasks, runs: AgentRuns) -> None:
        self.tasks = tasks
        self.runs = runs

    async def start(
        self,
        message: Message,
        *,
        call: CallInfo,
        configuration: SendMessageConfiguration | None = None,
        metadata: Mapping[str, Any] | None = None,
        subscriber: _Subscriber | None = None,
    ) -> _Run:
        """`TaskRuntime.start`."""
        stored_as = message_key(message)
        key = (call.tenant, stored_as)
        inflight = self.runs.inflight
        replication = self.tasks.replication
        claim: Claim | None = None
        if replication is not None:
            # Rule 6: the shared store's claims stand for the message records.
            earlier = inflight.get(key)
            if earlier is None:
                claim = await self._live_claim(stored_as, message, call)
                if not message.task_id:
                    # Only a continuation is checked before it runs (unless it was sent
                    # before); a new task's claim is taken below.
                    claim = None
        else:
            earlier = await self._earlier_run(key, message, call)
        if earlier is not None:
            if earlier.replayed_task is not None or earlier.active is not None:
                await self._add_push_config(earlier.task_id, configuration, call)
            if subscriber is not None:
                await earlier.attach(subscriber)
            return earlier
        if claim is None:
            run, continuation = await self._new_run(
                message, stored_as, call, configuration, metadata
            )
        else:
            try:  # the claim's winner checked the message already; this one only follows
                run, continuation = await self._new_run(
                    message, stored_as, call, configuration, metadata
                )
            except JsonRpcError:
                context = ExecutionContext(
                    message=message,
                    task_id=claim.task_id or "",
                    context_id=message.context_id or "",
                )
                run, continuation = _Run(self.tasks, message, context, call, stored_as), False
        if not self.runs.serving:
            raise InternalError("Internal error: the server is not running")
        if replication is not None and claim is None:
            claim = await replication.claim(run)
        if claim is not None and claim.task_id is not None:
            # A follower's push config goes to the task the claim's winner makes.
            await self._add_push_config(claim.task_id, configuration, call)
        joined = inflight.get(key)  # a retry that arrived while we looked things up
        if joined is not None:
            if subscriber is not None:
                await joined.attach(subscriber)
            return joined
        if subscriber is not None:
            run.listeners.append(subscriber)
        inflight[key] = run
        if claim is not None and replication is not None:
            self.runs.start_soon(self._follow, run, continuation, claim)
        else:
            self.runs.spawn(run, continuation)
        return run

    async def _new_run(
        self,
        message: Message,
        key: str,
        call: CallInfo,
        configuration: SendMessageConfiguration | None,
        metadata: Mapping[str, Any] | None,
    ) -> tuple[_Run, bool]:
        """A run for ``message`` (checked: see `start`), and whether it continues a task."""
        task = None
        if message.task_id:
            task = await self.tasks.store.get_task(message.task_id, tenant=call.tenant)
            check_continuation(message, task)
            assert task is not None
            context_id = task.context_id or new_id()
            task_id = task.id
        else:
            context_id = message.context_id or new_id()
            task_id = new_id()
        message = replaced(message, task_id=task_id, context_id=context_id)
        context = ExecutionContext(
            message=message,
            task_id=task_id,
            context_id=context_id,
            task=task,
            configuration=configuration,
            metadata=metadata,
            tenant=public_tenant(call.tenant) or None,
            extensions=call.extensions,
            principal=call.principal,
            headers=call.headers,
        )
        return _Run(self.tasks, message, context, call, key), task is not None

    async def _earlier_run(
        self, key: tuple[str, str], message: Message, call: CallInfo
    ) -> _Run | None:
        inflight = self.runs.inflight
        running = inflight.get(key)
        if running is not None:
            return running
        store = self.tasks.store
        record = await store.get_message(key[1], tenant=call.tenant)
        if record is None:
            return inflight.get(key)
        task = None
        if record.task_id is not None:
            task = await store.get_task(record.task_id, tenant=call.tenant)
        if (task is None and record.reply is None) or _moved_on(task, message):
            return inflight.get(key)
        return _Run.replay(self.tasks, message, call, key[1], (task, record.reply))

    async def _live_claim(self, stored_as: str, message: Message, call: CallInfo) -> Claim | None:
        """The shared store's claim of ``stored_as``, unless its run failed or its task
        moved on since (rule 4): such a claim is released, so this send runs."""
        assert self.tasks.replication is not None
        store = self.tasks.replication.store
        claim = await store.get_claim(stored_as, tenant=call.tenant)
        if claim is None or claim.error is not None:
            return None  # unseen, or it failed before producing anything: it runs again
        if claim.pending or claim.task_id is None:
            return claim
        task = await store.get_task(claim.task_id, tenant=call.tenant)
        if not _moved_on(task, message):
            return claim
        await store.release_claim(stored_as, tenant=call.tenant, task_id=claim.task_id)
        return None

    async def _add_push_config(
        self, task_id: str, configuration: SendMessageConfiguration | None, call: CallInfo
    ) -> None:
        """A resend's push config goes to the task its first send made (rule 4)."""
        push = self.tasks.push
        push_config = configuration.task_push_notification_config if configuration else None
        if push_config is not None and push is not None:
            await push.add_config(push_config, task_id=task_id, tenant=call.tenant)

    # -- a claim lost to another replica (rule 6) ----------------------------------------

    async def _follow(self, run: _Run, continuation: bool, claim: Claim) -> None:
        """Mirror the claim winner's run of the same message in ``run``; run it here if
        the winner vanished (its claim went stale and this replica took it)."""
        replication = self.tasks.replication
        assert replication is not None
        delay = 0.005
        try:
            with anyio.fail_after(replication.claim_timeout + 30):
                while claim.pending:
                    await anyio.sleep(delay)
                    delay = min(delay * 2, 0.2)
                    taken = await replication.claim(run)
                    if taken is None:  # the winner vanished: run it here
                        await self.runs.execute(run, continuation)
                        return
                    claim = taken
        except TimeoutError:
            from . import _shared  # loaded already: only a shared store has claims

            error = InternalError("Internal error: the send was not run").to_object()
            claim = _shared.Claim(error=error)
        try:
            if claim.error is not None:
                run.fail(A2A_ERRORS.from_object(claim.error))
            elif claim.reply is not None:
                run.answer = claim.reply
                for sub in run.listeners:
                    await run.attach(sub)
                run.listeners.clear()
            elif claim.task_id is not None:
                await self._follow_task(run, claim)
        except JsonRpcError as exc:
            run.fail(exc)
        finally:
            self.runs.inflight.pop((run.tenant, run.message_key), None)
            run.first.set()
            run.settled.set()
            run.done.set()

    async def _follow_task(self, run: _Run, claim: Claim) -> None:
        tasks = self.tasks
        replication = tasks.replication
        assert replication is not None and claim.task_id is not None
        run.task_id = claim.task_id
        active = await tasks.acquire(run.tenant, claim.task_id)
        watcher = tasks.new_subscriber()
        try:
            async with active.lock:
                after = min(claim.seq, active.seq)
                changes = await replication.store.changes_after(
                    claim.task_id, tenant=run.tenant, after=after
                )
                await replication.catch_up(active, changes)
                settled = any(settles(e.event) for e in changes[1] if e.seq > claim.seq)
                run.context_id = active.task.context_id or run.context_id
                run.active = active
                await tasks.attach_locked(active, watcher, settled=settled)
                for sub in run.listeners:
                    await tasks.attach_locked(active, sub, settled=settled)
                run.listeners.clear()
            run.first.set()
            async with watcher:
                async for _ in watcher:
                    pass
        finally:
            watcher.close()
            tasks.drop_subscriber(active, watcher)
            tasks.release(active)


def _moved_on(task: Task | None, message: Message) -> bool:
    """Whether ``task`` was addressed through its id since ``message`` was sent to it:
    canceled, or a later client message in its history (rule 4)."""
    if task is None:
        return False
    if task.status.state is TaskState.CANCELED:
        return True
    for entry in reversed(task.history or ()):
        if entry.role is Role.USER:
            return entry.message_id != message.message_id
    return False
