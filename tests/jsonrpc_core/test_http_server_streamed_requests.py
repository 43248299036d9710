"""Generic `jsonrpc_core` behaviours the A2A layer relies on (tested here, on the core
alone): an error ends a streamed request's SSE response; in ``"auto"`` response mode a
streamed request that fails before its first result is answered with a plain JSON error
(and one that has a result is a stream, even of one result); a streamed request whose
reader disconnected (and cannot resume) stops its handler; and the ``response_headers``
hook adds headers to the endpoint's answers."""

from __future__ import annotations

import gc
import warnings
from collections.abc import AsyncIterator
from typing import Any, Literal

import anyio
import httpx
import pytest
from _http_fixtures import peer_app

from jsonrpc_core import (
    InvalidParams,
    JsonRpcHTTPApp,
    MethodRegistry,
    RequestContext,
)
from jsonrpc_core.http import HTTPRequestInfo
from jsonrpc_core.testing import StreamingASGITransport

pytestmark = pytest.mark.anyio


STOPPED: list[str] = []
STOPPED_EVENT: list[anyio.Event] = []


def app(**options: Any) -> JsonRpcHTTPApp:
    registry = MethodRegistry()

    async def forever(params: Any, ctx: RequestContext) -> AsyncIterator[int]:
        async def numbers() -> AsyncIterator[int]:
            try:
                n = 0
                while True:
                    yield n
                    n += 1
                    await anyio.sleep(0.01)  # paced on purpose: endless, not a flood
            finally:
                STOPPED.append("forever")
                for event in STOPPED_EVENT:
                    event.set()

        return numbers()

    registry.on("forever", forever)

    async def fails_first(params: Any, ctx: RequestContext) -> AsyncIterator[int]:
        raise InvalidParams("Invalid params: no")

    async def counts(params: Any, ctx: RequestContext) -> AsyncIterator[int]:
        async def numbers() -> AsyncIterator[int]:
            for n in range(3):
                yield n

        return numbers()

    async def fails_on_first_next(params: Any, ctx: RequestContext) -> AsyncIterator[int]:
        async def numbers() -> AsyncIterator[int]:
            raise InvalidParams("Invalid params: not this time")
            yield 0  # pragma: no cover - makes this a generator

        return numbers()

    async def one(params: Any, ctx: RequestContext) -> AsyncIterator[int]:
        async def numbers() -> AsyncIterator[int]:
            yield 41

        return numbers()

    registry.on("fails_first", fails_first)
    registry.on("fails_on_first_next", fails_on_first_next)
    registry.on("one", one)
    registry.on("counts", counts)
    registry.on("plain", lambda params, ctx: "ok")

    return peer_app(
        registry,
        path="/",
        sessions=None,
        event_name=None,
        streaming_methods=frozenset(
            {"fails_first", "fails_on_first_next", "one", "counts", "forever"}
        ),
        **options,
    )


async def post(server: JsonRpcHTTPApp, method: str) -> httpx.Response:
    async with server.running():
        transport = StreamingASGITransport(server)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
            with anyio.fail_after(5):
                return await http.post(
                    "/",
                    json={"jsonrpc": "2.0", "id": 7, "method": method},
                    headers={"accept": "application/json, text/event-stream"},
                )


async def test_an_error_before_the_first_result_ends_the_stream() -> None:
    response = await post(app(), "fails_first")
    assert response.headers["content-type"].startswith("text/event-stream")
    assert '"code":-32602' in response.text and '"id":7' in response.text


async def test_streamed_results_still_end_normally() -> None:
    response = await post(app(), "counts")
    assert response.text.count('"result"') == 3


def auto(request: Any, info: HTTPRequestInfo) -> Literal["auto"]:
    return "auto"


@pytest.mark.parametrize("method", ["fails_first", "fails_on_first_next"])
async def test_auto_mode_answers_a_stream_failing_before_its_first_result_as_json(
    method: str,
) -> None:
    response = await post(app(response_mode=auto), method)
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert body["id"] == 7 and body["error"]["code"] == -32602


@pytest.mark.parametrize(("method", "results"), [("one", 1), ("counts", 3)])
async def test_auto_mode_streams_a_request_that_has_a_result(method: str, results: int) -> None:
    response = await post(app(response_mode=auto), method)
    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.text.count('"result"') == results


@pytest.mark.parametrize(("mode", "method"), [(auto, "plain"), (auto, "counts"), (None, "plain")])
async def test_an_answered_post_leaves_no_memory_stream_unclosed(mode: Any, method: str) -> None:
    # An unclosed anyio memory stream warns when it is collected: once per request if
    # the answer's queue is left open (the JSON answer of "auto" mode never reads it).
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        response = await post(app(response_mode=mode), method)
        gc.collect()
    assert response.status_code == 200
    unclosed = [w for w in caught if "Unclosed <MemoryObject" in str(w.message)]
    assert unclosed == []


async def test_response_headers_hook_applies_to_json_and_sse_answers() -> None:
    def extra(info: HTTPRequestInfo) -> dict[str, str]:
        return {"X-Echo": info.headers.get("accept", "")[:16]}

    for method in ("plain", "counts"):
        response = await post(app(response_headers=extra), method)
        assert response.headers["x-echo"] == "application/json"


async def test_a_stream_whose_reader_left_stops_its_handler() -> None:
    STOPPED.clear()
    STOPPED_EVENT[:] = [anyio.Event()]
    server = app()
    async with server.running():
        transport = StreamingASGITransport(server)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
            request = {"jsonrpc": "2.0", "id": 1, "method": "forever"}
            headers = {"accept": "application/json, text/event-stream"}
            async with http.stream("POST", "/", json=request, headers=headers) as response:
                async for chunk in response.aiter_text():
                    if '"result"' in chunk:
                        break
            with anyio.fail_after(5):
                await STOPPED_EVENT[0].wait()
    assert STOPPED == ["forever"]
