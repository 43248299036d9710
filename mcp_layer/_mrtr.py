"""Multi round-trip requests (MCP 2026-07-28, SEP-2322) on the server side.

In the handshake era a handler asks the client for input by sending it a request
(``elicitation/create``, ``sampling/createMessage``, ``roots/list``) and waiting. In the
2026-07-28 era a server sends no requests: it answers ``tools/call``, ``prompts/get`` or
``resources/read`` with an ``InputRequiredResult`` listing what it needs, and the client
retries the original request with the answers (``inputResponses``) and the opaque
``requestState`` it was given.

The same handler serves both eras. Design: **re-run the handler with every answer
collected so far** (not suspend it across rounds). `Context.elicit` and friends look
the answer up by key; when it is missing they raise `InputRequiredSignal` (a
`BaseException`, so that a handler's ``except Exception`` cannot swallow it), the
session turns it into an ``InputRequiredResult``, and the answers consumed so far travel
in the sealed ``requestState``. A retry is self-contained: any server process holding
the key can serve it, after a restart too, with nothing stored server-side. The cost is
that code before the last question runs once per round; `Context.once` records a
step's result in the state so that side effects run once.

Rules:

1. ``requestState`` is attacker-controlled input. It is sealed with HMAC-SHA256 under a
   server key (random per process unless configured) and bound to the method, the
   target (tool or prompt name, resource URI), a digest of the arguments, the
   principal (when authenticated) and an expiry. A state that fails any check is
   refused with -32602 before the handler runs.
2. Answers are keyed by the names the server chose. Keys a handler does not ask for
   are ignored; with a state, answers to keys the state does not list as asked are
   ignored too. A missing answer is asked again (a new ``InputRequiredResult``), not
   an error; an answer of the wrong shape is -32602.
3. A key means the same question on every round: default keys are numbered per kind in
   call order (``elicitation-1``, ``sampling-1``, ``roots-1``), so a handler must ask
   in a deterministic order, or name its keys.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import secrets
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from jsonrpc_core import InvalidParams

if sys.version_info < (3, 11):
    from exceptiongroup import BaseExceptionGroup  # type: ignore[import-not-found,unused-ignore]

__all__ = [
    "InputRequiredSignal",
    "InputRound",
    "InvalidRequestState",
    "RequestBinding",
    "RequestStateSealer",
    "default_principal_id",
    "find_signal",
]

_VERSION = "v1"


class InputRequiredSignal(BaseException):
    """Raised by a `Context` input method when the answer is not there yet (2026 era).

    A `BaseException` on purpose, like a cancellation: user code that catches
    ``Exception`` lets it through to the session.
    """

    def __init__(self, requests: dict[str, dict[str, Any]]) -> None:
        super().__init__(f"input required: {', '.join(requests)}")
        self.requests = requests


def find_signal(exc: BaseException) -> InputRequiredSignal | None:
    """The `InputRequiredSignal` in ``exc``, looking inside exception groups."""
    if isinstance(exc, InputRequiredSignal):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        merged: dict[str, dict[str, Any]] = {}
        for inner in exc.exceptions:
            found = find_signal(inner)
            if found is None:
                return None  # something else failed too: that wins
            merged.update(found.requests)
        return InputRequiredSignal(merged)
    return None


class InvalidRequestState(InvalidParams):
    """-32602: the ``requestState`` failed verification (tampered, expired, misbound)."""


def default_principal_id(principal: Any) -> str | None:
    """A stable identifier for an authenticated principal, or ``None``.

    A string is itself; a mapping or an object gives its ``sub``/``subject``,
    ``client_id`` and ``iss``/``issuer`` members. Anything else is not bound (an object's
    ``repr`` need not be stable across requests).
    """
    if principal is None:
        return None
    if isinstance(principal, str):
        return principal
    parts: list[str] = []
    for names in (("sub", "subject"), ("client_id",), ("iss", "issuer")):
        for name in names:
            if isinstance(principal, Mapping):
                value = principal.get(name)
            else:
                value = getattr(principal, name, None)
            if isinstance(value, (str, int)):
                parts.append(f"{names[0]}={value}")
                break
    return "|".join(parts) or None


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def canonical_digest(value: Any) -> str:
    """SHA-256 of ``value`` as canonical JSON (sorted keys), base64url."""
    data = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return _b64(hashlib.sha256(data.encode("utf-8")).digest())


class RequestStateSealer:
    """Seals and opens ``requestState`` tokens: ``v1.<payload>.<HMAC-SHA256>``.

    ``key`` is the server secret (32 random bytes per process by default, so a state
    only opens in the process that made it: give every instance of a scaled-out server
    the same key). ``ttl`` is how long a state stays valid, in seconds. ``clock`` gives
    the time in seconds since the epoch (a parameter for tests).
    """

    def __init__(
        self,
        key: bytes | str | None = None,
        *,
        ttl: float = 600.0,
        principal_id: Callable[[Any], str | None] = default_principal_id,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if isinstance(key, str):
            key = key.encode("utf-8")
        if key is not None and len(key) < 16:
            raise ValueError("the request-state key must be at least 16 bytes")
        self._key = key if key is not None else secrets.token_bytes(32)
        self.ttl = ttl
        self.principal_id = principal_id
        self.clock = clock

    def _mac(self, body: str) -> str:
        signed = f"{_VERSION}.{body}".encode("ascii")
        return _b64(hmac.new(self._key, signed, hashlib.sha256).digest())

    def seal(self, payload: Mapping[str, Any]) -> str:
        """An opaque token for ``payload`` (an expiry is added)."""
        content = {**payload, "exp": int(self.clock() + self.ttl)}
        data = json.dumps(content, separators=(",", ":"), ensure_ascii=False)
        body = _b64(data.encode("utf-8"))
        return f"{_VERSION}.{body}.{self._mac(body)}"

    def open_round(
        self,
        method: str,
        target: str,
        arguments: Any,
        principal: str | None,
        input_responses: Any,
        request_state: Any,
        *,
        can_ask: bool = True,
    ) -> InputRound:
        """The `InputRound` of a request to ``method`` on ``target`` (a tool or prompt
        name, a resource URI) with ``arguments``, by ``principal`` (see
        `InputRound.start`, which raises before anything runs).

        ``can_ask=False`` says the handler cannot ask a question (its function takes no
        `Context`): then no state is sealed for it, and the digest of ``arguments`` is
        computed only if a ``requestState`` must be checked (module rule 1). Otherwise
        it is taken now, before the handler could change its arguments in place.
        """
        binding = RequestBinding(method, target, arguments, principal)
        if can_ask:
            binding.fields()
        return InputRound.start(self, binding, input_responses, request_state)

    def unseal(self, token: str) -> dict[str, Any]:
        """The payload of a token this sealer made, unmodified and not expired.

        Raises `InvalidRequestState` otherwise (the reason is deliberately vague).
        """
        parts = token.split(".") if isinstance(token, str) else []
        if len(parts) != 3 or parts[0] != _VERSION:
            raise InvalidRequestState("Invalid requestState")
        _, body, mac = parts
        if not hmac.compare_digest(self._mac(body), mac):
            raise InvalidRequestState("Invalid requestState: integrity check failed")
        try:
            payload = json.loads(_unb64(body))
        except (ValueError, binascii.Error):
            raise InvalidRequestState("Invalid requestState") from None
        if not isinstance(payload, dict):
            raise InvalidRequestState("Invalid requestState")
        expiry = payload.get("exp")
        if not isinstance(expiry, int) or self.clock() > expiry:
            raise InvalidRequestState("Invalid requestState: expired")
        return payload


class RequestBinding:
    """What a ``requestState`` is bound to (module rule 1): the method, the target, a
    digest of the arguments and the principal; the digest is computed on first use."""

    __slots__ = ("_fields", "arguments", "method", "principal", "target")

    def __init__(self, method: str, target: str, arguments: Any, principal: str | None) -> None:
        self.method = method
        self.target = target
        self.arguments = arguments
        self.principal = principal
        self._fields: dict[str, Any] | None = None

    def fields(self) -> dict[str, Any]:
        """The members a state carries and a retry must match (``m``, ``t``, ``a``, ``p``)."""
        fields = self._fields
        if fields is None:
            fields = {
                "m": self.method,
                "t": self.target,
                "a": canonical_digest(self.arguments or {}),  # absent and empty: one call
            }
            if self.principal is not None:
                fields["p"] = self.principal
            self._fields = fields
        return fields


@dataclass
class InputRound:
    """The inputs of one round of a multi round-trip request (2026 era).

    ``answers`` holds every answer known this round (from the state and the retry);
    the handler's questions are answered from it, and the ones it used, with the
    recorded `Context.once` steps, go into the next round's state.
    """

    request: RequestBinding
    answers: dict[str, Any] = field(default_factory=dict)
    steps: dict[str, Any] = field(default_factory=dict)
    resumed: bool = False
    used: dict[str, Any] = field(default_factory=dict)
    counters: dict[str, int] = field(default_factory=dict)

    @property
    def binding(self) -> dict[str, Any]:
        """The members of `request` a state carries (`RequestBinding.fields`)."""
        return self.request.fields()

    @staticmethod
    def signal_in(exc: BaseException) -> InputRequiredSignal | None:
        """The `InputRequiredSignal` in ``exc`` (`find_signal`)."""
        return find_signal(exc)

    def next_key(self, kind: str) -> str:
        """The default key of the next question of ``kind`` (``elicitation-1``, ...)."""
        number = self.counters.get(kind, 0) + 1
        self.counters[kind] = number
        return f"{kind}-{number}"

    def state(self, asked: list[str]) -> dict[str, Any]:
        """What the next round needs to carry on."""
        payload: dict[str, Any] = {**self.binding, "answers": self.used, "asked": asked}
        if self.steps:
            payload["steps"] = self.steps
        return payload

    @classmethod
    def start(
        cls,
        sealer: RequestStateSealer,
        binding: RequestBinding,
        input_responses: Any,
        request_state: Any,
    ) -> InputRound:
        """The round for a request: verify its state, gather its answers.

        Raises `InvalidRequestState` or `jsonrpc_core.InvalidParams` before anything
        runs when the state or the answers are unacceptable.
        """
        if input_responses is not None and not isinstance(input_responses, dict):
            raise InvalidParams("Invalid params: inputResponses must be an object")
        responses: dict[str, Any] = dict(input_responses or {})
        for key, value in responses.items():
            if not isinstance(value, dict):
                raise InvalidParams(f"Invalid params: inputResponses.{key} must be an object")
        round_ = cls(binding)
        if request_state is None:
            round_.answers = responses
            return round_
        if not isinstance(request_state, str):
            raise InvalidRequestState("Invalid requestState: it must be a string")
        payload = sealer.unseal(request_state)
        for name, value in binding.fields().items():
            if payload.get(name) != value:
                raise InvalidRequestState("Invalid requestState: it was issued for another request")
        previous = payload.get("answers")
        asked = payload.get("asked")
        steps = payload.get("steps")
        if not isinstance(previous, dict) or not isinstance(asked, list):
            raise InvalidRequestState("Invalid requestState")
        answers = dict(previous)
        answers.update({k: v for k, v in responses.items() if k in asked})
        round_.answers = answers
        round_.steps = dict(steps) if isinstance(steps, dict) else {}
        round_.resumed = True
        return round_
