"""Logging in to ACP agents through the client API (`spawn_agent(auth=...)`, `AuthRequired`),
against agents written with the official SDKs: the Python one
(tests/acp_fixtures/py_sdk_auth_agent.py: agent, env_var and terminal methods) and the
TypeScript one (tests/acp_fixtures/node_auth_agent.mjs: agent and terminal methods, logout).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

import anyio
import pytest
from acp_fixtures.wire import FIXTURES, SchemaCheck, requires_acp_schema
from test_acp_interop_node import node  # noqa: F401  (the fixture)

from acp_layer import (
    AuthEnvVar,
    AuthMethodEnvVar,
    AuthMethodNotOffered,
    AuthRequired,
    CapabilityError,
    LocalClient,
    LoginFailed,
    auth_method_kind,
    spawn_agent,
)
from acp_layer import schema as s

pytestmark = requires_acp_schema

PY_AGENT = [sys.executable, str(FIXTURES / "py_sdk_auth_agent.py")]
NODE_AGENT = FIXTURES / "node_auth_agent.mjs"


def said(client: LocalClient, session_id: str) -> list[str]:
    return [
        u.content.text
        for u in client.updates[session_id]
        if isinstance(u, s.AgentMessageChunk) and isinstance(u.content, s.TextContent)
    ]


def home(tmp_path: Path) -> dict[str, str]:
    return {"HOME": str(tmp_path)}


async def whoami(conn: object, client: LocalClient, cwd: Path) -> str:
    sid = (await conn.new_session(str(cwd))).session_id  # type: ignore[attr-defined]
    response = await conn.prompt(sid, "whoami")  # type: ignore[attr-defined]
    assert response.stop_reason == "end_turn"
    return said(client, sid)[-1]


@pytest.mark.anyio
async def test_auth_required_carries_the_methods_typed_by_kind(tmp_path: Path) -> None:
    client = LocalClient()
    check = SchemaCheck()
    with anyio.fail_after(30):
        async with spawn_agent(PY_AGENT, client, env=home(tmp_path), tap=check.tap()) as conn:
            with pytest.raises(AuthRequired) as raised:
                await conn.new_session(str(tmp_path))
    methods = raised.value.auth_methods
    assert [(m.id, auth_method_kind(m)) for m in methods] == [
        ("agent-login", "agent"),
        ("env-key", "env_var"),
    ]  # no terminal method: this client cannot run one (auth.terminal not advertised)
    env_method = methods[1]
    assert isinstance(env_method, AuthMethodEnvVar)
    assert env_method.vars == [AuthEnvVar(name="FIXTURE_API_KEY", label="API key")]
    assert env_method.link == "http://127.0.0.1:9/keys"
    assert raised.value.code == -32000
    check.assert_valid()


@pytest.mark.anyio
async def test_auth_required_from_a_prompt_carries_the_methods(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = LocalClient()
    with anyio.fail_after(30):
        async with spawn_agent(
            PY_AGENT, client, env={**home(tmp_path), "FIXTURE_GATE": "prompt"}
        ) as conn:
            sid = (await conn.new_session(str(tmp_path))).session_id
            with pytest.raises(AuthRequired) as raised:
                await conn.prompt(sid, "hello")
    assert [m.id for m in raised.value.auth_methods] == ["agent-login", "env-key"]


@pytest.mark.anyio
async def test_agent_method_authenticates(tmp_path: Path) -> None:
    client = LocalClient()
    with anyio.fail_after(30):
        async with spawn_agent(PY_AGENT, client, env=home(tmp_path), auth="agent-login") as conn:
            assert await whoami(conn, client, tmp_path) == "logged in with agent-login"
    assert (tmp_path / "agent.log").read_text() == "start key=no\n"  # no restart


@pytest.mark.anyio
async def test_env_var_method_restarts_the_agent_with_the_asked_value(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("FIXTURE_API_KEY", raising=False)
    asked: list[tuple[str, str]] = []

    async def ask_env(method: AuthMethodEnvVar, var: AuthEnvVar) -> str | None:
        asked.append((method.id, var.name))
        return "k-123"

    client = LocalClient()
    with anyio.fail_after(30):
        async with spawn_agent(
            PY_AGENT, client, env=home(tmp_path), auth="env-key", ask_env=ask_env
        ) as conn:
            assert await whoami(conn, client, tmp_path) == "logged in with env-key (key k-123)"
    assert asked == [("env-key", "FIXTURE_API_KEY")]
    assert (tmp_path / "agent.log").read_text() == "start key=no\nstart key=yes\n"


@pytest.mark.anyio
async def test_env_var_method_uses_the_environment_without_a_restart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FIXTURE_API_KEY", "from-env")

    async def never(method: AuthMethodEnvVar, var: AuthEnvVar) -> str | None:
        raise AssertionError("asked although the variable is set")

    client = LocalClient()
    with anyio.fail_after(30):
        async with spawn_agent(
            PY_AGENT, client, env=home(tmp_path), auth="env-key", ask_env=never
        ) as conn:
            assert await whoami(conn, client, tmp_path) == "logged in with env-key (key from-env)"
    assert (tmp_path / "agent.log").read_text() == "start key=yes\n"


@pytest.mark.anyio
async def test_env_var_method_without_a_value_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("FIXTURE_API_KEY", raising=False)
    with anyio.fail_after(30), pytest.raises(LoginFailed, match="FIXTURE_API_KEY"):
        async with spawn_agent(PY_AGENT, LocalClient(), env=home(tmp_path), auth="env-key"):
            pass


@pytest.mark.anyio
async def test_an_unknown_method_id_lists_the_offered_ones(tmp_path: Path) -> None:
    with anyio.fail_after(30), pytest.raises(AuthMethodNotOffered) as raised:
        async with spawn_agent(PY_AGENT, LocalClient(), env=home(tmp_path), auth="nope"):
            pass
    assert "agent-login, env-key" in str(raised.value)
    assert [m.id for m in raised.value.offered] == ["agent-login", "env-key"]  # type: ignore[union-attr]


class Login:
    """A `TerminalLogin` for tests: runs the login with ``answer`` typed on its stdin."""

    def __init__(self, answer: bytes) -> None:
        self.answer = answer
        self.runs: list[tuple[list[str], dict[str, str]]] = []

    async def __call__(self, argv: Sequence[str], env: Mapping[str, str], cwd: str | None) -> int:
        self.runs.append((list(argv), dict(env)))
        done = await anyio.run_process(list(argv), input=self.answer, env=dict(env), check=False)
        return done.returncode


@pytest.mark.anyio
async def test_terminal_method_runs_the_login_then_reconnects(tmp_path: Path) -> None:
    login = Login(b"tok-42\n")
    client = LocalClient()
    check = SchemaCheck()
    with anyio.fail_after(30):
        async with spawn_agent(
            PY_AGENT,
            client,
            env=home(tmp_path),
            auth="terminal-login",
            terminal_login=login,
            tap=check.tap(),
        ) as conn:
            assert "terminal-login" in [m.id for m in conn.auth_methods]  # type: ignore[union-attr]
            shown = await whoami(conn, client, tmp_path)
    assert shown == "logged in with terminal-login (token tok-42)"
    [(argv, env)] = login.runs
    assert argv == [*PY_AGENT, "--login"]
    assert env["FIXTURE_LOGIN"] == "1" and env["HOME"] == str(tmp_path)
    assert (tmp_path / "agent.log").read_text() == "start key=no\nstart key=no\n"
    check.assert_valid()


@pytest.mark.anyio
async def test_a_failed_terminal_login_is_login_failed(tmp_path: Path) -> None:
    with anyio.fail_after(30), pytest.raises(LoginFailed, match="exit status 1"):
        async with spawn_agent(
            PY_AGENT,
            LocalClient(),
            env=home(tmp_path),
            auth="terminal-login",
            terminal_login=Login(b"\n"),
        ):
            pass
    assert not (tmp_path / ".fixture-auth").exists()


@pytest.mark.anyio
async def test_a_terminal_method_is_never_sent_to_authenticate(tmp_path: Path) -> None:
    with anyio.fail_after(30):
        async with spawn_agent(
            PY_AGENT, LocalClient(), env=home(tmp_path), terminal_login=Login(b"")
        ) as conn:
            with pytest.raises(CapabilityError, match="terminal login"):
                await conn.authenticate("terminal-login")


# -- the TypeScript SDK's agent: agent and terminal methods, logout ----------------------------


@pytest.mark.anyio
async def test_node_agent_login_and_logout(node: str, tmp_path: Path) -> None:  # noqa: F811
    client = LocalClient()
    check = SchemaCheck()
    command = [node, str(NODE_AGENT)]
    with anyio.fail_after(30):
        async with spawn_agent(command, client, env=home(tmp_path), tap=check.tap()) as conn:
            assert conn.agent_capabilities.auth.logout is not None
            with pytest.raises(AuthRequired) as raised:
                await conn.new_session(str(tmp_path))
            assert [m.id for m in raised.value.auth_methods] == ["node-login"]
            await conn.authenticate("node-login")
            assert await whoami(conn, client, tmp_path) == "logged in with node-login"
            await conn.logout()
            with pytest.raises(AuthRequired):
                await conn.new_session(str(tmp_path))
    check.assert_valid()


@pytest.mark.anyio
async def test_node_agent_terminal_login(node: str, tmp_path: Path) -> None:  # noqa: F811
    login = Login(b"node-token\n")
    client = LocalClient()
    command = [node, str(NODE_AGENT)]
    with anyio.fail_after(30):
        async with spawn_agent(
            command, client, env=home(tmp_path), auth="node-terminal", terminal_login=login
        ) as conn:
            assert await whoami(conn, client, tmp_path) == "logged in with node-terminal"
    assert login.runs[0][0] == [*command, "--login"]


def test_env_var_methods_are_typed_from_their_raw_form() -> None:
    from pydantic import TypeAdapter

    from acp_layer import typed_auth_method

    raw = TypeAdapter(s.AuthMethod).validate_python(
        {"type": "env_var", "id": "k", "name": "Key", "vars": [{"name": "A", "secret": False}]}
    )
    typed = typed_auth_method(raw)
    assert isinstance(typed, AuthMethodEnvVar) and auth_method_kind(typed) == "env_var"
    assert typed.vars == [AuthEnvVar(name="A", secret=False)]
    legacy = typed_auth_method(
        TypeAdapter(s.AuthMethod).validate_python(
            {"type": "env_var", "id": "k", "name": "Key", "varName": "OPENAI_API_KEY"}
        )
    )
    assert isinstance(legacy, AuthMethodEnvVar)
    assert [v.name for v in legacy.vars] == ["OPENAI_API_KEY"]
    odd = typed_auth_method(TypeAdapter(s.AuthMethod).validate_python({"type": "sso", "id": "x"}))
    assert isinstance(odd, s.UnknownAuthMethod) and auth_method_kind(odd) == "unknown"
