"""The client's ``session/update`` entry, served as the Peer serves it (the registered
descriptor validates, then the handler runs): the same params and errors as the model's
own validation, on the first update (the model's build is deferred) and on the ones
after it, for which the descriptor keeps the model's own validator.

Tests the private unit `acp_layer._client_server.ClientServer` on purpose: its registered
``session/update`` descriptor is the unit under test.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any, cast

import pydantic
import pydantic_core
import pytest
from test_acp_models import UPDATES

from acp_layer import Client
from acp_layer import schema as s
from acp_layer._client_server import ClientServer
from jsonrpc_core import InvalidParams, format_validation_error

REPO = Path(__file__).resolve().parents[2]


class _Client(Client):
    def __init__(self) -> None:
        self.seen: list[s.SessionNotification] = []

    async def session_update(self, params: s.SessionNotification) -> None:
        self.seen.append(params)


class _Conn:
    def __init__(self) -> None:
        self.client = _Client()
        self.sessions: dict[str, Any] = {"s": object()}
        self.settled: list[str] = []

    async def _settle_setup(self, session_id: str) -> None:
        self.settled.append(session_id)


def _wire(obj: Any) -> Any:
    return json.loads(pydantic_core.to_json(obj, by_alias=True, exclude_none=True))


def _entry(conn: _Conn) -> Any:
    """A fresh registry's ``session/update`` entry (its descriptor and handler)."""
    return ClientServer(cast(Any, conn)).registry(unstable=False).notifications["session/update"]


def _serve(conn: _Conn, entry: Any, raw: Any) -> s.SessionNotification:
    outcome = entry.handler(entry.descriptor.validate_params(raw), None)
    with pytest.raises(StopIteration):
        outcome.send(None)
    return conn.client.seen.pop()


UNKNOWN_AND_LENIENT: list[dict[str, Any]] = [
    {"sessionUpdate": "plan_update", "plan": {"type": "markdown", "content": "x"}},
    {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "a"}, "x": 1},
    {"session_update": "agent_thought_chunk", "content": {"type": "text", "text": "b"}},
    {
        "sessionUpdate": "tool_call",
        "toolCallId": "c",
        "title": "t",
        "kind": "teleport",
        "content": [{"type": "diff", "path": "/a", "newText": "x"}, {"type": "hologram"}],
        "locations": "nowhere",
        "_meta": ["not", "an", "object"],
    },
    {"sessionUpdate": "plan", "entries": "oops"},
    {"sessionUpdate": "session_info_update", "title": None, "updatedAt": 5},
    {"sessionUpdate": "usage_update", "used": 1, "size": 2, "cost": {"amount": "x"}},
]

RAWS = [
    {"sessionId": "s", "update": update}
    for update in [*(_wire(u) for u in UPDATES), *UNKNOWN_AND_LENIENT]
] + [{"sessionId": "s", "update": _wire(UPDATES[0]), "_meta": {"k": 1}, "extra": [1]}]

BAD = [
    None,
    {},
    {"sessionId": "s"},
    {"sessionId": 5, "update": _wire(UPDATES[0])},
    {"sessionId": "s", "update": {"sessionUpdate": "agent_message_chunk"}},
    {"sessionId": "s", "update": {"content": {"type": "text", "text": "a"}}},
    {"sessionId": "s", "update": {"sessionUpdate": 7}},
    {"sessionId": "s", "update": {"sessionUpdate": "agent_message_chunk", "content": {}}},
    {"sessionId": "s", "update": {"sessionUpdate": "current_mode_update"}},
    {"sessionId": "s", "update": {"sessionUpdate": "usage_update", "used": -1, "size": 1}},
    {"sessionId": "s", "update": "agent_message_chunk"},
    ["s"],
]


def test_every_update_variant_is_covered() -> None:
    tags = {raw["update"].get("sessionUpdate") for raw in RAWS}
    assert {type(u).__name__ for u in UPDATES} >= {
        "UserMessageChunk",
        "AgentMessageChunk",
        "AgentThoughtChunk",
        "ToolCall",
        "ToolCallProgress",
        "Plan",
        "AvailableCommandsUpdate",
        "CurrentModeUpdate",
        "ConfigOptionUpdate",
        "SessionInfoUpdate",
        "UsageUpdate",
    }
    assert "plan_update" in tags


@pytest.mark.parametrize("rounds", [1, 3])
def test_params_equal_the_models_own_validation(rounds: int) -> None:
    # rounds=1: each raw is served by a fresh handler (its first update); 3: by one handler.
    conn = _Conn()
    entry = _entry(conn)
    for _ in range(rounds):
        for raw in RAWS:
            if rounds == 1:
                entry = _entry(conn)
            got = _serve(conn, entry, raw)
            want = s.SessionNotification.model_validate(raw)
            assert type(got) is type(want) is s.SessionNotification
            assert type(got.update) is type(want.update)
            assert got == want
            assert got.model_dump() == want.model_dump()
            assert _wire(got) == _wire(want)
            assert got.model_fields_set == want.model_fields_set


@pytest.mark.parametrize("raw", BAD, ids=[str(i) for i in range(len(BAD))])
def test_errors_equal_the_models_own_errors(raw: Any) -> None:
    with pytest.raises(pydantic.ValidationError) as model_error:
        s.SessionNotification.model_validate({} if raw is None else raw)
    expected = format_validation_error(model_error.value)
    conn = _Conn()
    entry = _entry(conn)
    for _ in range(2):
        with pytest.raises(InvalidParams) as got:
            _serve(conn, entry, raw)
        assert got.value.message == expected
        # A good update after it is served (the entry keeps working either way).
        assert _serve(conn, entry, RAWS[0]).session_id == "s"


def test_unknown_session_waits_for_setup() -> None:
    conn = _Conn()
    raw = {"sessionId": "other", "update": _wire(UPDATES[0])}
    got = _serve(conn, _entry(conn), raw)
    assert conn.settled == ["other"]
    assert got == s.SessionNotification.model_validate(raw)


def test_model_is_built_on_the_first_update_not_before() -> None:
    # In a fresh interpreter: setting the registry up must not build the model (~40 ms);
    # the first update builds it, and the descriptor keeps the model's own validator
    # (not a TypeAdapter around the deferred model).
    code = textwrap.dedent(
        """
        from acp_layer import Client as BaseClient
        from acp_layer import schema as s
        from acp_layer._client_server import ClientServer

        class Client(BaseClient):
            async def session_update(self, params):
                seen.append(params)

        class Conn:
            client = Client()
            sessions = {"s": None}

        seen = []
        conn = Conn()
        entry = ClientServer(conn).registry(unstable=False).notifications["session/update"]
        assert not s.SessionNotification.__pydantic_complete__
        raw = {"sessionId": "s", "update": {"sessionUpdate": "agent_message_chunk",
               "content": {"type": "text", "text": "hi"}}}
        for _ in range(3):
            entry.handler(entry.descriptor.validate_params(raw), None).close()
        assert s.SessionNotification.__pydantic_complete__
        kept = entry.descriptor._params_validate
        assert kept == s.SessionNotification.__pydantic_validator__.validate_python, kept
        print("ok")
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
