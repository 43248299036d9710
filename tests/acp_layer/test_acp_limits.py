"""Over-limit messages in both directions: each gets a clear error, the connection lives on.

A request over the receiver's ``max_message_size`` is answered with -32600 (see
test_acp_client.py). An over-limit *response* must fail only the pending call it answers:
before the fix in ``jsonrpc_core/_bytestream.py`` the receiver treated it like a request,
sent an error for *its own* request id back to the other side (where it was dropped, or
worse, failed an unrelated call with the same id) and the call hung for ever.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
import pytest
from acp_fixtures.wire import DEMO_AGENT, requires_acp_schema

from acp_layer import LocalClient, spawn_agent
from acp_layer import schema as s
from jsonrpc_core import (
    FdReceiveStream,
    FdSendStream,
    InvalidMessage,
    NdjsonStream,
    StreamEnd,
    TransportError,
)

pytestmark = [
    pytest.mark.anyio,
    requires_acp_schema,
]


async def test_oversized_response_fails_only_the_call_it_answers(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("x" * (20 * 1024 * 1024))
    client = LocalClient(max_file_bytes=64 * 1024 * 1024)
    with anyio.fail_after(60):
        async with spawn_agent([sys.executable, str(DEMO_AGENT)], client) as conn:
            sid = (await conn.new_session(str(tmp_path))).session_id
            assert (await conn.prompt(sid, "/read big.txt")).stop_reason == "end_turn"
            assert (await conn.prompt(sid, "alive")).stop_reason == "end_turn"
    failed = [u for u in client.updates[sid] if isinstance(u, s.ToolCallProgress)][-1]
    assert failed.status == "failed" and failed.content is not None
    text = failed.content[0].content.text  # type: ignore[union-attr]
    assert "exceeds the 16777216-byte size limit" in text
    last = client.updates[sid][-1]
    assert isinstance(last, s.AgentMessageChunk) and last.content == s.TextContent(text="alive")


async def test_ndjson_stream_tells_oversized_responses_from_requests() -> None:
    read_fd, write_fd = os.pipe()
    sink_read, sink_write = os.pipe()
    stream = NdjsonStream(
        FdReceiveStream(read_fd, close_fd=True),
        FdSendStream(sink_write, close_fd=True),
        max_message_size=100,
    )
    writer = FdSendStream(write_fd, close_fd=True)
    big = "y" * 200
    lines = [
        f'{{"jsonrpc":"2.0","id":7,"result":{{"content":"{big}"}}}}',
        f'{{"jsonrpc":"2.0","id":8,"method":"m","params":{{"result":"{big}"}}}}',
        f'{{"jsonrpc":"2.0","id":"e","error":{{"code":1,"message":"{big}"}}}}',
        '{"jsonrpc":"2.0","id":9,"result":{}}',
    ]
    try:
        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                tg.start_soon(writer.send, ("\n".join(lines) + "\n").encode())
                response = (await stream.receive()).payload
                request = (await stream.receive()).payload
                error = (await stream.receive()).payload
                fine = (await stream.receive()).payload
    finally:
        await writer.aclose()
        await stream.aclose()
        os.close(sink_read)
    assert isinstance(response, StreamEnd) and response.id == 7
    assert isinstance(response.error, TransportError)
    assert "response to request 7 exceeds the 100-byte size limit" in str(response.error)
    assert isinstance(request, InvalidMessage) and request.id == 8 and request.respond
    assert isinstance(error, StreamEnd) and error.id == "e"
    assert getattr(fine, "id", None) == 9
