"""The agent card's caching headers: ``Last-Modified`` (stable for a given card) beside
``ETag`` and ``Cache-Control``, conditional requests (``If-None-Match`` first, then
``If-Modified-Since``) answered 304, and ``HEAD`` answered with the same headers and no
body on both well-known paths, in process and over a real socket (uvicorn).

Tests the private unit `a2a_layer._card.modified_since` on purpose: its whole-second and
missing-zone rules, which no single HTTP exchange pins down.
"""

from __future__ import annotations

from email.utils import formatdate, parsedate_to_datetime

import httpx
import pytest
from a2a_fixtures.harness import in_process, make_card

from a2a_layer import A2AServer, ExecutionContext, TaskUpdater
from a2a_layer._card import modified_since
from jsonrpc_core import running_server

pytestmark = pytest.mark.anyio

PATHS = ["/.well-known/agent-card.json", "/.well-known/agent.json"]


async def agent(context: ExecutionContext, updater: TaskUpdater) -> None:
    await updater.complete()


@pytest.mark.parametrize("path", PATHS)
async def test_the_card_has_a_stable_last_modified_and_answers_if_modified_since(
    path: str,
) -> None:
    async with in_process(A2AServer(make_card(), agent)) as http:
        first = await http.get(path)
        again = await http.get(path)
        last_modified = first.headers["last-modified"]
        unchanged = await http.get(path, headers={"if-modified-since": last_modified})
        earlier = formatdate(parsedate_to_datetime(last_modified).timestamp() - 60, usegmt=True)
        changed_since = await http.get(path, headers={"if-modified-since": earlier})
        garbage = await http.get(path, headers={"if-modified-since": "not a date"})
        # If-None-Match decides when both are sent (RFC 9110 13.1.3).
        other_tag = await http.get(
            path, headers={"if-none-match": '"other"', "if-modified-since": last_modified}
        )
        same_tag = await http.get(
            path, headers={"if-none-match": first.headers["etag"], "if-modified-since": earlier}
        )
    assert first.status_code == 200 and again.headers["last-modified"] == last_modified
    assert parsedate_to_datetime(last_modified).tzinfo is not None  # an HTTP-date, GMT
    assert unchanged.status_code == 304 and unchanged.content == b""
    assert unchanged.headers["last-modified"] == last_modified
    assert unchanged.headers["etag"] == first.headers["etag"]
    assert changed_since.status_code == 200 and changed_since.json() == first.json()
    assert garbage.status_code == 200
    assert other_tag.status_code == 200
    assert same_tag.status_code == 304


async def test_a_changed_card_is_modified_later() -> None:
    server = A2AServer(make_card(), agent)
    async with in_process(server) as http:
        first = await http.get(PATHS[0])
        server.card = server.card.model_copy(update={"description": "changed"})
        server._card_cache.clear()
        changed = await http.get(
            PATHS[0], headers={"if-modified-since": first.headers["last-modified"]}
        )
    # Within the same second too: a changed card is never "not modified" since the old one.
    assert changed.status_code == 200 and changed.json()["description"] == "changed"
    assert changed.headers["etag"] != first.headers["etag"]
    assert parsedate_to_datetime(changed.headers["last-modified"]) > parsedate_to_datetime(
        first.headers["last-modified"]
    )


def test_modified_since_compares_whole_seconds() -> None:
    stamp = 1_700_000_000.75
    assert modified_since(formatdate(stamp, usegmt=True), stamp) is False
    assert modified_since(formatdate(stamp - 1, usegmt=True), stamp) is True
    assert modified_since("Tue, 14 Nov 2023 22:13:20", stamp) is None  # no zone
    assert modified_since(None, stamp) is None


@pytest.mark.parametrize("path", PATHS)
async def test_head_on_the_card_has_the_headers_of_get_and_no_body(path: str) -> None:
    server = A2AServer(make_card(), agent)
    async with server.running():
        async with running_server(server.http, host="127.0.0.1", port=0) as url:
            async with httpx.AsyncClient(base_url=url) as http:
                got = await http.get(path)
                head = await http.head(path)
                conditional = await http.head(path, headers={"if-none-match": got.headers["etag"]})
    assert head.status_code == 200 and head.content == b""
    for name in ("content-type", "content-length", "etag", "last-modified", "cache-control"):
        assert head.headers[name] == got.headers[name], name
    assert int(head.headers["content-length"]) == len(got.content)
    assert conditional.status_code == 304 and conditional.content == b""
