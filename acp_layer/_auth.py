"""Logging in to an agent: the advertised ``authMethods`` typed by kind, and the login flows.

The kinds (docs/authentication.mdx and the auth-methods RFD):

``agent`` (no ``type``)
    The agent logs the user in itself: the client calls ``authenticate(methodId)``.
``terminal``
    The client runs the same agent command interactively with the method's ``args`` appended
    and its ``env`` applied, waits for exit status 0, then reconnects and re-initializes; it
    never passes the method to ``authenticate``. Offered only to clients that advertise
    ``clientCapabilities.auth.terminal``.
``env_var``
    The client starts the agent with the method's variables set (restarting it if they were
    not set already), then calls ``authenticate(methodId)``. This kind is in the RFD and in
    schema.unstable.json up to v1.19 (the Python SDK 0.12 and codex-acp send it) but not in
    schema v1.21, so `acp_layer.schema` parses it as `UnknownAuthMethod` (raw data kept) and
    `typed_auth_method` gives it its type here, `AuthMethodEnvVar`.

Rules:

1. A login never sends a credential anywhere but into the agent's environment: values read
   from this process's environment or asked for (``ask_env``) are passed to the restarted
   agent only.
2. Flows other than ``agent`` need the agent's command, so they run in `spawn_agent` only;
   ``ClientConnection.authenticate`` refuses a ``terminal`` method (the spec forbids it).
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Literal, TypeAlias

import anyio
from pydantic import Field

from . import schema as s
from ._schema._lenient import ItemsOrDefault, OrDefault

__all__ = [
    "AskEnv",
    "AuthEnvVar",
    "AuthMethodEnvVar",
    "AuthMethodNotOffered",
    "LoginFailed",
    "TerminalLogin",
    "TypedAuthMethod",
    "auth_method_kind",
    "run_terminal_login",
    "typed_auth_method",
]


class AuthEnvVar(s.ACPModel):
    """One environment variable of an ``env_var`` method."""

    name: str
    """The variable's name, e.g. ``OPENAI_API_KEY``."""
    label: OrDefault[str | None] = None
    """A human-readable label for it."""
    secret: OrDefault[bool] = True
    """Whether the value is a secret (ask for it without echo)."""
    optional: OrDefault[bool] = False
    """Whether the method works without it."""


class AuthMethodEnvVar(s.ACPModel):
    """An ``env_var`` method: the agent reads its credentials from environment variables."""

    type: Literal["env_var"] = "env_var"
    id: s.AuthMethodId
    name: str
    description: OrDefault[str | None] = None
    vars: ItemsOrDefault[AuthEnvVar] = Field(default_factory=list)
    """The variables to set (the RFD's earlier single ``varName`` is read as one of them)."""
    link: OrDefault[str | None] = None
    """Where the user can get the credentials."""


TypedAuthMethod: TypeAlias = (
    s.AuthMethodAgent | s.AuthMethodTerminal | AuthMethodEnvVar | s.UnknownAuthMethod
)
"""An advertised method, typed by kind (see `typed_auth_method`)."""

AuthKind = Literal["agent", "terminal", "env_var", "unknown"]

AskEnv: TypeAlias = Callable[[AuthMethodEnvVar, AuthEnvVar], Awaitable[str | None]]
"""Asked for the value of a variable that is not set; ``None`` gives up."""

TerminalLogin: TypeAlias = Callable[[Sequence[str], Mapping[str, str], str | None], Awaitable[int]]
"""Runs ``(argv, env, cwd)`` interactively for the user and returns its exit status."""


class LoginFailed(Exception):
    """A login flow did not succeed (a variable missing, the login process failed)."""


class AuthMethodNotOffered(LookupError):
    """The agent does not advertise the method asked for; ``offered`` is what it does."""

    def __init__(self, method_id: str, offered: Sequence[TypedAuthMethod]) -> None:
        ids = ", ".join(_method_id(m) for m in offered) or "none"
        super().__init__(f"the agent offers no login method {method_id!r} (it offers: {ids})")
        self.method_id = method_id
        self.offered = list(offered)


def _method_id(method: TypedAuthMethod) -> str:
    return str(getattr(method, "id", "?"))


def typed_auth_method(method: s.AuthMethod | AuthMethodEnvVar) -> TypedAuthMethod:
    """``method`` with its kind's type: an ``env_var`` method becomes `AuthMethodEnvVar`."""
    if isinstance(method, s.UnknownAuthMethod) and method.type == "env_var":
        raw = method.model_dump(by_alias=True)
        if not raw.get("vars") and isinstance(raw.get("varName"), str):
            raw["vars"] = [{"name": raw["varName"]}]
        try:
            return AuthMethodEnvVar.model_validate(raw)
        except ValueError:  # no id or name: keep it unknown
            return method
    return method


def auth_method_kind(method: TypedAuthMethod) -> AuthKind:
    """``agent``, ``terminal``, ``env_var`` or ``unknown`` (a type no flow exists for)."""
    if isinstance(method, s.AuthMethodTerminal):
        return "terminal"
    if isinstance(method, AuthMethodEnvVar):
        return "env_var"
    if isinstance(method, s.AuthMethodAgent):
        return "agent"
    return "unknown"


def find_auth_method(methods: Sequence[TypedAuthMethod], method_id: str) -> TypedAuthMethod:
    """The advertised method ``method_id``, else `AuthMethodNotOffered`."""
    for method in methods:
        if _method_id(method) == method_id:
            return method
    raise AuthMethodNotOffered(method_id, methods)


async def env_var_values(
    method: AuthMethodEnvVar,
    given: Mapping[str, str],
    *,
    inherit_env: bool,
    ask_env: AskEnv | None,
) -> tuple[dict[str, str], bool]:
    """The variables of ``method`` and whether any was not in the agent's environment yet.

    A value comes from ``given`` (the agent's ``env``), then this process's environment (when
    the agent inherits it), then ``ask_env``; a required variable with none is `LoginFailed`.
    """
    values: dict[str, str] = {}
    missing = False
    for var in method.vars:
        value = given.get(var.name)
        if value is None and inherit_env:
            value = os.environ.get(var.name)
        if value is not None:
            continue  # the agent already has it
        asked = await ask_env(method, var) if ask_env is not None else None
        if asked:
            values[var.name] = asked
            missing = True
        elif not var.optional:
            raise LoginFailed(
                f"login method {method.id!r} needs the environment variable {var.name}: "
                "set it, or run where you can be asked for it"
            )
    return values, missing


async def run_terminal_login(
    argv: Sequence[str], env: Mapping[str, str], cwd: str | None = None
) -> int:
    """The default `TerminalLogin`: run ``argv`` on this process's terminal (stdin, stdout and
    stderr inherited) and wait for its exit status."""
    process = await anyio.open_process(
        list(argv), stdin=None, stdout=None, stderr=None, env=dict(env), cwd=cwd
    )
    async with process:
        try:
            return await process.wait()
        except BaseException:
            with anyio.CancelScope(shield=True):
                process.kill()
                await process.wait()
            raise
