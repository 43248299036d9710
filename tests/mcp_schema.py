"""Validate MCP messages on the wire against the official 2025-11-25 JSON schema (or, with
``revision="2026-07-28"``, the 2026-07-28 one).

`WireChecker` keeps the list of schema violations seen in one test. It looks at
messages from four kinds of taps:

- ``checker.wrap(stream, role=...)``: a `jsonrpc_core.WireTap` around any `MessageStream`
  (a `ClientSession`'s stream, or a server connection);
- ``tap_server(server, checker)``: every connection an `MCPServer` serves (memory, stdio,
  Streamable HTTP, HTTP+SSE), tapped on the server side;
- ``SchemaCheckingASGI(app, checker)``: the bytes on the HTTP wire, both directions, for any
  ASGI app (ours or the official SDK's), including HTTP error bodies;
- ``checker.check_jsonl(path, role=...)``: the JSON Lines a tapped subprocess recorded.

Each message is checked against the JSON-RPC envelope definition (``JSONRPCRequest``,
``JSONRPCNotification``, ``JSONRPCResultResponse``, ``JSONRPCErrorResponse``) and, for
requests and notifications, against the definition of its method found in the schema's
``ClientRequest``/``ServerRequest``/``ClientNotification``/``ServerNotification`` unions.
A result is checked against the result definition of the request it answers (``XRequest``
-> ``XResult``, else ``EmptyResult``; ``CreateTaskResult`` when the request carried
``task``), which is why each tap tracks the requests it has seen by id.

Roles: a checker is told which sides are ours (``ours={"client", "server"}``). What our
side emits must validate (``checker.errors``); what the other side emits is checked too
and kept apart (``checker.peer_errors``) to document interop differences.

One deliberate allowance: an error response with ``"id": null``. JSON-RPC 2.0 requires
that form when the request id is unknown (a parse error, an HTTP 400); the MCP schema
types the member as ``id?: RequestId`` (omit, never null). Both rpcweave and the official
SDK send ``null``; such messages are counted in ``checker.null_id_errors`` and the rest of
the message is still validated.

2026-07-28: an answer is checked against ``InputRequiredResult`` when its ``resultType``
says so; the tasks extension (``tasks/*``, ``notifications/tasks``, a ``resultType`` of
``"task"``) is not in the core schema and is counted in ``checker.extension_messages``
instead of validated.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Literal

import _specs

from jsonrpc_core import MessageStream, TappedStream, TapRecord, WireTap
from jsonrpc_core.http import SSEDecoder

MODERN = "2026-07-28"


def schema_name(revision: str = "2025-11-25") -> str:
    """The spec file of a revision's schema (found by tests/_specs.py)."""
    return f"mcp/{revision}/schema.json"


requires_schema = _specs.requires(schema_name())
"""The test needs the MCP 2025-11-25 schema: skipped (counted, and failing under CI) where
no copy is found; `load_schema` asks for other revisions the same way."""

Role = Literal["client", "server"]
_OTHER: dict[Role, Role] = {"client": "server", "server": "client"}


class MCPSchema:
    """One revision's schema with one compiled validator per definition."""

    def __init__(self, path: Path, revision: str = "2025-11-25") -> None:
        import referencing
        import referencing.jsonschema

        self.revision = revision
        self.uri = f"urn:mcp:schema:{revision}"
        self.document: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        self.definitions: dict[str, Any] = self.document["$defs"]
        resource = referencing.Resource.from_contents(
            self.document, default_specification=referencing.jsonschema.DRAFT202012
        )
        self._registry: Any = referencing.Registry().with_resource(self.uri, resource)
        self._validators: dict[str, Any] = {}
        self.requests: dict[Role, dict[str, str]] = {
            "client": self._methods("ClientRequest"),
            "server": self._methods("ServerRequest"),
        }
        self.notifications: dict[Role, dict[str, str]] = {
            "client": self._methods("ClientNotification"),
            "server": self._methods("ServerNotification"),
        }
        self.results: dict[Role, set[str]] = {
            "client": self._members("ClientResult"),
            "server": self._members("ServerResult"),
        }

    def _members(self, union: str) -> set[str]:
        definition = self.definitions.get(union)
        if definition is None:
            return set()  # 2026-07-28 has no server requests
        if "anyOf" in definition:
            return {ref["$ref"].rsplit("/", 1)[-1] for ref in definition["anyOf"]}
        if "$ref" in definition:
            return {definition["$ref"].rsplit("/", 1)[-1]}
        return {union}  # a union of one, inlined (2026-07-28 ClientNotification)

    def _methods(self, union: str) -> dict[str, str]:
        """Method name -> definition name, for the members of a request/notification union."""
        table: dict[str, str] = {}
        for name in self._members(union):
            method = self.definitions[name]["properties"]["method"]["const"]
            table[method] = name
        return table

    def result_for(self, request_definition: str, params: Any, result: Any = None) -> str:
        """The definition of the result that answers ``request_definition``."""
        if self.revision == MODERN:
            if isinstance(result, dict) and result.get("resultType") == "input_required":
                return "InputRequiredResult"
        elif isinstance(params, dict) and "task" in params:
            return "CreateTaskResult"
        candidate = request_definition.removesuffix("Request") + "Result"
        return candidate if candidate in self.definitions else "EmptyResult"

    def validator(self, definition: str) -> Any:
        """A Draft 2020-12 validator for ``#/$defs/<definition>``."""
        found = self._validators.get(definition)
        if found is None:
            from jsonschema import Draft202012Validator

            if definition not in self.definitions:
                raise KeyError(f"no definition {definition!r} in the MCP schema")
            found = Draft202012Validator(
                {"$ref": f"{self.uri}#/$defs/{definition}"}, registry=self._registry
            )
            self._validators[definition] = found
        return found

    def problems(self, definition: str, instance: Any) -> list[str]:
        """Readable violations of ``definition`` by ``instance`` (empty when valid)."""
        errors = sorted(self.validator(definition).iter_errors(instance), key=lambda e: e.path)
        return [_describe(definition, error) for error in errors[:5]]


def _describe(definition: str, error: Any) -> str:
    # For anyOf failures, the most specific sub-error says more than "is not valid".
    best = error
    if error.context:
        from jsonschema.exceptions import best_match

        best = best_match(error.context) or error
    where = "/".join(str(p) for p in best.absolute_path) or "(root)"
    return f"{definition} at {where}: {best.message[:300]}"


@cache
def load_schema(revision: str = "2025-11-25") -> MCPSchema:
    """A revision's schema, loaded once per test process."""
    return MCPSchema(_specs.need(schema_name(revision)), revision)


def _is_extension(message: Any) -> bool:
    """A message of the tasks extension (2026-07-28), which the core schema leaves out."""
    if not isinstance(message, dict):
        return False
    method = message.get("method")
    if isinstance(method, str):
        return method.startswith(("tasks/", "notifications/tasks"))
    result = message.get("result")
    return isinstance(result, dict) and result.get("resultType") == "task"


@dataclass
class Endpoint:
    """One side of one conversation: what it was asked, so its answers can be checked."""

    role: Role
    # Requests received from the other side, by id: (request definition, params).
    asked: dict[Any, tuple[str, Any]] = field(default_factory=dict)


class WireChecker:
    """Collects schema violations of the messages it is shown (see the module docs)."""

    def __init__(
        self, ours: Iterable[Role] = ("client", "server"), *, revision: str = "2025-11-25"
    ) -> None:
        self.schema = load_schema(revision)
        self.revision = revision
        self.extension_messages = 0
        self.ours = set(ours)
        self.errors: list[str] = []
        self.peer_errors: list[str] = []
        self.checked: Counter[str] = Counter()
        self.null_id_errors = 0
        self.messages: list[tuple[Role, Any]] = []

    # -- checking ----------------------------------------------------------------------

    def emitted(self, sender: Endpoint, receiver: Endpoint, message: Any) -> None:
        """Check ``message`` sent by ``sender``; note requests in ``receiver``."""
        if isinstance(message, list):
            problems = [f"a batch was sent ({len(message)} messages); MCP 2025-11-25 has none"]
            self._report(sender.role, message, problems)
            for item in message:
                self.emitted(sender, receiver, item)
            return
        self.messages.append((sender.role, message))
        problems = self._problems(sender, receiver, message)
        self._report(sender.role, message, problems)

    def _report(self, role: Role, message: Any, problems: list[str]) -> None:
        if not problems:
            return
        text = json.dumps(message)[:600]
        target = self.errors if role in self.ours else self.peer_errors
        target.extend(f"{role} sent {text}\n    {problem}" for problem in problems)

    def _problems(self, sender: Endpoint, receiver: Endpoint, message: Any) -> list[str]:
        schema = self.schema
        if not isinstance(message, dict):
            return [f"not a JSON object: {message!r}"]
        if self.revision == MODERN and _is_extension(message):
            self.extension_messages += 1
            if "method" in message and "id" in message:
                receiver.asked[message["id"]] = ("(extension)", message.get("params"))
            elif "result" in message:
                sender.asked.pop(message.get("id"), None)
            return []
        if "method" in message:
            method = message["method"]
            is_request = "id" in message
            envelope = "JSONRPCRequest" if is_request else "JSONRPCNotification"
            table = (schema.requests if is_request else schema.notifications)[sender.role]
            problems = schema.problems(envelope, message)
            definition = table.get(method)
            if definition is None:
                kind = "request" if is_request else "notification"
                union = ("Client" if sender.role == "client" else "Server") + (
                    "Request" if is_request else "Notification"
                )
                return [*problems, f"{method!r} is not a {sender.role} {kind} (not in {union})"]
            self.checked[definition] += 1
            if is_request:
                receiver.asked[message["id"]] = (definition, message.get("params"))
            return problems + schema.problems(definition, message)
        if "error" in message:
            instance = message
            if message.get("id", 0) is None:
                self.null_id_errors += 1
                instance = {k: v for k, v in message.items() if k != "id"}
            else:
                sender.asked.pop(message.get("id"), None)
            self.checked["JSONRPCErrorResponse"] += 1
            return schema.problems("JSONRPCErrorResponse", instance)
        if "result" in message:
            problems = schema.problems("JSONRPCResultResponse", message)
            asked = sender.asked.pop(message.get("id"), None)
            if asked is None:
                return [*problems, f"a result for id {message.get('id')!r}, which was never asked"]
            request_definition, params = asked
            if request_definition == "(extension)":
                self.extension_messages += 1
                return problems
            result_definition = schema.result_for(request_definition, params, message["result"])
            self.checked[result_definition] += 1
            # Both unions admit the bare ``Result``; these two are named nowhere else.
            if result_definition not in schema.results[sender.role] | {
                "EmptyResult",
                "CreateTaskResult",
                "Result",
            }:
                problems.append(f"{result_definition} is not a {sender.role} result")
            return problems + schema.problems(result_definition, message["result"])
        return [f"neither request, notification nor response: {message!r}"]

    # -- taps --------------------------------------------------------------------------

    def conversation(self) -> tuple[Endpoint, Endpoint]:
        """A fresh (client, server) pair of endpoints for one connection."""
        return Endpoint("client"), Endpoint("server")

    def track(self, sender: Endpoint, receiver: Endpoint, message: Any) -> None:
        """Note what ``message`` asks or answers, without checking it (the other tap does)."""
        for item in message if isinstance(message, list) else [message]:
            if not isinstance(item, dict):
                continue
            if "method" in item and "id" in item:
                definition = self.schema.requests[sender.role].get(item["method"])
                if definition is not None:
                    receiver.asked[item["id"]] = (definition, item.get("params"))
            elif "result" in item or "error" in item:
                sender.asked.pop(item.get("id"), None)

    def sink(self, role: Role, *, check_received: bool = False) -> Callable[[TapRecord], None]:
        """A `WireTap` sink for a stream whose local end plays ``role``.

        What the local end sends is checked; what it receives is checked only with
        ``check_received`` (when no tap sits on the sender's side), else just tracked.
        """
        client, server = self.conversation()
        local, remote = (client, server) if role == "client" else (server, client)

        def record(tap: TapRecord) -> None:
            message = tap.message
            if isinstance(message, dict) and "invalid" in message:
                return  # the transport could not parse it; nothing to validate
            if tap.direction == "send":
                self.emitted(local, remote, message)
            elif check_received:
                self.emitted(remote, local, message)
            else:
                self.track(remote, local, message)

        return record

    def wrap(
        self,
        stream: MessageStream,
        *,
        role: Role,
        check_received: bool = False,
        transport: str = "test",
    ) -> TappedStream:
        """``stream`` with every message it carries checked; its local end plays ``role``."""
        return WireTap(self.sink(role, check_received=check_received)).wrap(
            stream, local=role, remote=_OTHER[role], transport=transport
        )

    def check_jsonl(self, path: Path, *, role: Role, check_received: bool = False) -> int:
        """Check the records a `jsonrpc_core.JsonLinesSink` wrote; returns how many."""
        record = self.sink(role, check_received=check_received)
        count = 0
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            data = json.loads(line)
            direction = "send" if data["from"] == role else "receive"
            record(TapRecord(data["time"], direction, "jsonl", role, "", data["message"]))  # type: ignore[arg-type]
            count += 1
        return count

    # -- verdict -----------------------------------------------------------------------

    def assert_clean(self, *, min_messages: int = 1) -> None:
        """Fail if any message from our side violated the schema (or none was seen)."""
        assert not self.errors, f"messages violating the MCP {self.revision} schema:\n" + "\n".join(
            self.errors
        )
        assert len(self.messages) >= min_messages, (
            f"only {len(self.messages)} messages were checked; is the tap in place?"
        )

    def sent_by(self, role: Role, method: str | None = None) -> list[dict[str, Any]]:
        """Messages ``role`` sent (requests/notifications of ``method`` if given)."""
        return [
            m
            for sender, m in self.messages
            if sender == role
            and isinstance(m, dict)
            and (method is None or m.get("method") == method)
        ]


def tap_server(server: Any, checker: WireChecker) -> Any:
    """Check every message of every connection ``server`` (an `MCPServer`) serves.

    ``MCPServer.serve`` is the one entry point for memory, stdio and HTTP connections
    (``asgi_app`` calls it per session), so wrapping it on the instance taps them all.
    Tapping the same server twice with one checker does nothing more.
    """
    if getattr(server, "_schema_checker", None) is checker:
        return server
    server._schema_checker = checker
    original = server.serve

    async def serve(stream: MessageStream, **options: Any) -> None:
        await original(checker.wrap(stream, role="server", transport="server"), **options)

    server.serve = serve
    return server


class SchemaCheckingASGI:
    """ASGI middleware: checks every JSON-RPC message crossing HTTP, both directions.

    Client messages are POST bodies; server messages are JSON response bodies and the
    ``message`` events of SSE responses (POST answers, the standalone GET stream, the
    legacy ``/sse`` stream). Conversations are keyed by ``Mcp-Session-Id`` (or the legacy
    ``session_id`` query parameter), so a response POSTed later is matched with the
    server request it answers.
    """

    def __init__(self, app: Any, checker: WireChecker) -> None:
        self.app = app
        self.checker = checker
        self._conversations: dict[str, tuple[Endpoint, Endpoint]] = {}
        self.http_errors: list[tuple[int, bytes]] = []

    def _pair(self, key: str) -> tuple[Endpoint, Endpoint]:
        pair = self._conversations.get(key)
        if pair is None:
            pair = self.checker.conversation()
            self._conversations[key] = pair
        return pair

    def _feed(self, key: str, sender: Role, body: bytes) -> None:
        try:
            message = json.loads(body)
        except ValueError:
            problem = f"{sender} sent a body that is not JSON: {body[:200]!r}"
            (
                self.checker.errors if sender in self.checker.ours else self.checker.peer_errors
            ).append(problem)
            return
        client, server = self._pair(key)
        if sender == "client":
            self.checker.emitted(client, server, message)
        else:
            self.checker.emitted(server, client, message)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        query = scope.get("query_string", b"").decode("latin-1")
        legacy_id = next(
            (p.split("=", 1)[1] for p in query.split("&") if p.startswith("session_id=")), None
        )
        state: dict[str, Any] = {"key": headers.get("mcp-session-id") or legacy_id or ""}
        body = bytearray()
        is_post = scope["method"] == "POST"

        async def checked_receive() -> Any:
            message = await receive()
            if is_post and message["type"] == "http.request":
                body.extend(message.get("body", b""))
                if not message.get("more_body", False) and body:
                    if headers.get("content-type", "").startswith("application/json"):
                        self._feed(state["key"], "client", bytes(body))
            return message

        response: dict[str, Any] = {"sse": None, "json": None}

        async def checked_send(message: Any) -> None:
            if message["type"] == "http.response.start":
                response_headers = {
                    k.decode("latin-1").lower(): v.decode("latin-1")
                    for k, v in message.get("headers", [])
                }
                response["status"] = message["status"]
                content_type = response_headers.get("content-type", "")
                if response_headers.get("mcp-session-id") and not state["key"]:
                    # The initialize answer opens the session: carry what was asked over.
                    new_key = response_headers["mcp-session-id"]
                    self._conversations[new_key] = self._pair(state["key"])
                    self._conversations.pop(state["key"], None)
                    state["key"] = new_key
                if content_type.startswith("text/event-stream"):
                    response["sse"] = SSEDecoder()
                elif content_type.startswith("application/json"):
                    response["json"] = bytearray()
            elif message["type"] == "http.response.body":
                chunk = message.get("body", b"")
                decoder = response["sse"]
                if decoder is not None:
                    for event in decoder.feed(chunk):
                        if event.event == "endpoint":
                            _, _, session_id = event.data.partition("session_id=")
                            if session_id:
                                self._conversations[session_id] = self._pair(state["key"])
                                state["key"] = session_id
                        elif event.event in (None, "message") and event.data:
                            self._feed(state["key"], "server", event.data.encode())
                elif response["json"] is not None:
                    response["json"].extend(chunk)
                    if not message.get("more_body", False) and response["json"]:
                        data = bytes(response["json"])
                        if response.get("status", 200) >= 400:
                            self.http_errors.append((response["status"], data))
                        self._feed(state["key"], "server", data)
            await send(message)

        await self.app(scope, checked_receive, checked_send)
