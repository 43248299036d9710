"""The A2A floor: a raw ASGI app (standard library + uvicorn) answering like the agents.

``SendMessage`` (JSON-RPC, A2A 1.0) is answered with the completed task, one artifact and
the user's message as history, as ``application/json``. ``SendStreamingMessage`` with
text N is answered as ``text/event-stream``: the submitted task, N artifact-update chunks
(one artifact, the rest appended, the last marked ``lastChunk``), then the completed status,
each event sent as its own body chunk. The JSON has the shapes the SDK servers send.
Nothing else: no card, no validation, no task store, no errors beyond a bare 404.

Run: python bench/servers/a2a_floor_server.py  (prints ``LISTENING <port>``)
"""

from __future__ import annotations

import datetime
import json
import uuid
from typing import Any

from _uvicorn import lifespan, read_body
from a2a_uvicorn import serve_app

_dumps = json.JSONEncoder(separators=(",", ":")).encode


def _now() -> str:
    return (
        datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds")[:-6] + "Z"
    )


async def app(scope: Any, receive: Any, send: Any) -> None:
    kind = scope["type"]
    if kind == "lifespan":
        await lifespan(receive, send)
        return
    if kind != "http":
        return
    if scope["method"] != "POST" or scope["path"] != "/":
        await send({"type": "http.response.start", "status": 404, "headers": []})
        await send({"type": "http.response.body", "body": b""})
        return
    request = json.loads(await read_body(receive))
    request_id = request["id"]
    message = request["params"]["message"]
    text = message["parts"][0].get("text", "")
    chunks = int(text) if text.isdigit() else 1
    task_id, context_id, artifact_id = (str(uuid.uuid4()) for _ in range(3))
    history = [{**message, "contextId": context_id, "taskId": task_id}]

    def reply(result: dict[str, Any]) -> bytes:
        return _dumps({"jsonrpc": "2.0", "id": request_id, "result": result}).encode()

    if request["method"] == "SendMessage":
        task = {
            "id": task_id,
            "contextId": context_id,
            "status": {"state": "TASK_STATE_COMPLETED", "timestamp": _now()},
            "artifacts": [
                {
                    "artifactId": artifact_id,
                    "name": "result",
                    "parts": [{"text": f"chunk {i}"} for i in range(chunks)],
                }
            ],
            "history": history,
        }
        body = reply({"task": task})
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})
        return
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-store")],
        }
    )

    async def event(result: dict[str, Any]) -> None:
        data = b"data: " + reply(result) + b"\n\n"
        await send({"type": "http.response.body", "body": data, "more_body": True})

    submitted = {"state": "TASK_STATE_SUBMITTED", "timestamp": _now()}
    await event(
        {"task": {"id": task_id, "contextId": context_id, "status": submitted, "history": history}}
    )
    for i in range(chunks):
        artifact: dict[str, Any] = {"artifactId": artifact_id, "parts": [{"text": f"chunk {i}"}]}
        if i == 0:
            artifact["name"] = "result"
        update = {
            "taskId": task_id,
            "contextId": context_id,
            "artifact": artifact,
            "append": i > 0,
            "lastChunk": chunks > 1 and i == chunks - 1,
        }
        await event({"artifactUpdate": update})
    completed = {"state": "TASK_STATE_COMPLETED", "timestamp": _now()}
    await event({"statusUpdate": {"taskId": task_id, "contextId": context_id, "status": completed}})
    await send({"type": "http.response.body", "body": b""})


if __name__ == "__main__":
    serve_app(lambda base_url: app)
