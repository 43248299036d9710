"""An ACP agent that needs a login, written with the official Python SDK (PyPI
``agent-client-protocol``).

It advertises one method of each kind and refuses ``session/new`` (or, with
``FIXTURE_GATE=prompt``, the prompt) with -32000 until logged in:

    agent-login     (agent)     ``authenticate("agent-login")`` logs this process in
    env-key         (env_var)   ``authenticate("env-key")`` succeeds when the process was
                                started with FIXTURE_API_KEY
    terminal-login  (terminal)  only when the client advertises ``auth.terminal``: running this
                                script with ``--login`` (and FIXTURE_LOGIN=1) asks for a token on
                                the terminal and writes it to $HOME/.fixture-auth/token, which
                                logs every later process in

Each start is logged to $HOME/agent.log (``start key=yes|no``). Prompts: ``whoami`` says how
it is logged in; ``fail`` answers -32603 with ``data`` ``{"message", "details"}``; anything
else is echoed.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import acp
from acp import RequestError, schema

HOME = Path(os.environ.get("HOME", "."))
TOKEN = HOME / ".fixture-auth" / "token"


def login() -> int:
    """The terminal login: ask for a token on the terminal, store it."""
    if os.environ.get("FIXTURE_LOGIN") != "1":
        print("not started as a login (FIXTURE_LOGIN unset)", flush=True)
        return 3
    sys.stdout.write("fixture login: type your token: ")
    sys.stdout.flush()
    token = sys.stdin.readline().strip()
    if not token:
        print("no token: login failed", flush=True)
        return 1
    TOKEN.parent.mkdir(parents=True, exist_ok=True)
    TOKEN.write_text(token)
    print("fixture login: logged in", flush=True)
    return 0


class AuthAgent:
    def __init__(self) -> None:
        self.conn: Any = None
        self.logged_in: str | None = None
        self.sessions = 0

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    def how(self) -> str | None:
        if self.logged_in is not None:
            return self.logged_in
        if TOKEN.exists():
            return f"terminal-login (token {TOKEN.read_text()})"
        return None

    async def initialize(
        self, protocol_version: int, client_capabilities=None, client_info=None, **kw: Any
    ):
        methods: list[Any] = [
            schema.AuthMethodAgent(id="agent-login", name="Agent login", description="d1"),
            schema.EnvVarAuthMethod(
                type="env_var",
                id="env-key",
                name="Fixture API key",
                description="Use a key from FIXTURE_API_KEY",
                vars=[schema.AuthEnvVar(name="FIXTURE_API_KEY", label="API key")],
                link="http://127.0.0.1:9/keys",
            ),
        ]
        auth = getattr(client_capabilities, "auth", None)
        if auth is not None and auth.terminal:
            methods.append(
                schema.TerminalAuthMethod(
                    type="terminal",
                    id="terminal-login",
                    name="Terminal login",
                    description="Log in on the terminal",
                    args=["--login"],
                    env={"FIXTURE_LOGIN": "1"},
                )
            )
        return schema.InitializeResponse(
            protocol_version=acp.PROTOCOL_VERSION,
            auth_methods=methods,
            agent_info=schema.Implementation(name="py-sdk-auth-agent", version="1"),
        )

    async def authenticate(self, method_id: str, **kw: Any):
        if method_id == "agent-login":
            self.logged_in = "agent-login"
        elif method_id == "env-key":
            key = os.environ.get("FIXTURE_API_KEY")
            if not key:
                raise RequestError.auth_required({"message": "FIXTURE_API_KEY is not set"})
            self.logged_in = f"env-key (key {key})"
        else:
            raise RequestError.invalid_params({"message": f"cannot authenticate {method_id}"})
        return schema.AuthenticateResponse()

    def check(self) -> None:
        if self.how() is None:
            raise RequestError.auth_required()

    async def new_session(self, cwd: str, mcp_servers=None, additional_directories=None, **kw: Any):
        if os.environ.get("FIXTURE_GATE") != "prompt":
            self.check()
        self.sessions += 1
        return schema.NewSessionResponse(session_id=f"sess_auth_{self.sessions}")

    async def prompt(self, session_id: str, prompt: list[Any], **kw: Any):
        self.check()
        text = "".join(getattr(block, "text", "") for block in prompt)
        if text == "fail":
            raise RequestError.internal_error(
                {"message": "the backend said no: quota exhausted", "details": "retry in 60 s"}
            )
        said = f"logged in with {self.how()}" if text == "whoami" else text
        await self.conn.session_update(session_id, acp.update_agent_message_text(said))
        return schema.PromptResponse(stop_reason="end_turn")

    async def cancel(self, session_id: str, **kw: Any) -> None:
        pass


if __name__ == "__main__":
    if "--login" in sys.argv[1:]:
        sys.exit(login())
    with (HOME / "agent.log").open("a") as log:
        log.write(f"start key={'yes' if os.environ.get('FIXTURE_API_KEY') else 'no'}\n")
    asyncio.run(acp.run_agent(AuthAgent()))  # type: ignore[arg-type]
