"""The task state machine and the pure functions that apply events to a `Task`.

No I/O here: every function takes a `Task` and returns a new one (models are treated as
immutable, so a snapshot handed to a reader never changes under it). Rules:

1. A terminal task (completed, failed, canceled, rejected) never changes again: no
   status, no artifact, no message.
2. ``SUBMITTED`` is only ever the first state; nothing moves back to it.
3. ``WORKING -> WORKING`` is allowed (a progress message); so is staying interrupted
   (a second question while input-required).
4. Artifact chunks with ``append`` extend the parts of the artifact with the same id;
   without ``append`` an artifact with the same id is replaced.
5. A status message is also appended to the history (so a restarted server, or a client
   that polls, still sees the agent's question).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import datetime, timezone

from ._types._base import replaced, trusted
from .types import (
    Artifact,
    Message,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)

__all__ = [
    "ALLOWED_TRANSITIONS",
    "InvalidTransition",
    "append_history",
    "apply_artifact",
    "apply_status",
    "check_transition",
    "new_task",
    "trim_history",
    "utc_now",
]

_S = TaskState
_ACTIVE = frozenset(
    {
        _S.WORKING,
        _S.INPUT_REQUIRED,
        _S.AUTH_REQUIRED,
        _S.COMPLETED,
        _S.FAILED,
        _S.CANCELED,
        _S.REJECTED,
    }
)

ALLOWED_TRANSITIONS: dict[TaskState, frozenset[TaskState]] = {
    _S.SUBMITTED: _ACTIVE,
    _S.WORKING: _ACTIVE,
    _S.INPUT_REQUIRED: _ACTIVE,
    _S.AUTH_REQUIRED: _ACTIVE,
    # An UNSPECIFIED state (read from a lenient peer or an old store) moves on like
    # any active state.
    _S.UNSPECIFIED: _ACTIVE,
    _S.COMPLETED: frozenset(),
    _S.FAILED: frozenset(),
    _S.CANCELED: frozenset(),
    _S.REJECTED: frozenset(),
}
"""The states each state may move to (terminal states: none)."""


class InvalidTransition(RuntimeError):
    """An event the task's state does not allow (e.g. anything after ``COMPLETED``).

    Raised to the agent's code by `TaskUpdater`; never sent on the wire.
    """


def utc_now() -> datetime:
    """The current time, UTC, millisecond precision (what the wire keeps)."""
    millis = time.time_ns() // 1_000_000
    now = datetime.fromtimestamp(millis / 1000, timezone.utc)
    if now.microsecond % 1000:  # float rounding (not before the 23rd century)
        now = now.replace(microsecond=millis % 1000 * 1000)
    return now


def check_transition(task: Task, state: TaskState) -> None:
    """Raise `InvalidTransition` unless ``task`` may move to ``state``."""
    current = task.status.state
    if state not in ALLOWED_TRANSITIONS[current]:
        if current.is_terminal:
            raise InvalidTransition(
                f"task {task.id} is {current.value}: a terminal task never changes"
            )
        raise InvalidTransition(f"task {task.id}: {current.value} -> {state.value} is not allowed")


def new_task(task_id: str, context_id: str, message: Message | None) -> Task:
    """A new task in ``SUBMITTED`` whose history holds the message that created it."""
    return trusted(
        Task,
        id=task_id,
        context_id=context_id,
        status=trusted(TaskStatus, state=TaskState.SUBMITTED, timestamp=utc_now()),
        history=[message] if message is not None else [],
    )


def append_history(task: Task, message: Message) -> Task:
    """``task`` with ``message`` appended to its history (refused when terminal)."""
    if task.status.state.is_terminal:
        raise InvalidTransition(f"task {task.id} is terminal: it takes no more messages")
    return replaced(task, history=[*(task.history or []), message])


def apply_status(task: Task, event: TaskStatusUpdateEvent) -> Task:
    """``task`` after a status update (rules 1-3 and 5)."""
    check_transition(task, event.status.state)
    status = event.status
    if status.timestamp is None:
        status = replaced(status, timestamp=utc_now())
    if status.message is not None:
        return replaced(task, status=status, history=[*(task.history or []), status.message])
    return replaced(task, status=status)


def apply_artifact(task: Task, event: TaskArtifactUpdateEvent) -> Task:
    """``task`` after an artifact chunk (rules 1 and 4)."""
    if task.status.state.is_terminal:
        raise InvalidTransition(f"task {task.id} is terminal: it takes no more artifacts")
    incoming = event.artifact
    artifacts = list(task.artifacts or [])
    for index, existing in enumerate(artifacts):
        if existing.artifact_id != incoming.artifact_id:
            continue
        if event.append:
            artifacts[index] = _merged(existing, incoming)
        else:
            artifacts[index] = incoming
        break
    else:
        artifacts.append(incoming)
    return replaced(task, artifacts=artifacts)


def _merged(existing: Artifact, chunk: Artifact) -> Artifact:
    update: dict[str, object] = {"parts": [*existing.parts, *chunk.parts]}
    for name in ("name", "description", "metadata", "extensions"):
        value = getattr(chunk, name)
        if value is not None:
            update[name] = value
    return replaced(existing, **update)


def trim_history(task: Task, history_length: int | None) -> Task:
    """``task`` as returned for ``historyLength`` (spec 3.2.4).

    Unset: the whole history; 0: no ``history`` member; n: the n most recent messages.
    """
    if history_length is None or task.history is None:
        return task
    if history_length == 0:
        return replaced(task, history=None)
    history: Sequence[Message] = task.history
    if len(history) <= history_length:
        return task
    return replaced(task, history=list(history[-history_length:]))
