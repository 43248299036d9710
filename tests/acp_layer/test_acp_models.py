"""acp_layer's data layer against ACP's official JSON schema (protocolVersion 1).

Strict out: a representative instance of every request, response, notification and session
update model is dumped the way rpcweave sends it, validated against schema.json, parsed back
and compared. Lenient in: every ``x-deserialize-*`` hint in the schema is exercised on the
model of its type, plus unknown variants, unknown fields and ``_meta``.

Tests the private unit `acp_layer._methods` on purpose: the method tables are checked
against the spec's method lists.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import _specs
import jsonschema
import pydantic
import pydantic_core
import pytest
from pydantic.alias_generators import to_camel

from acp_layer import ACP_ERRORS, AuthRequired, ResourceNotFound
from acp_layer import _methods as m
from acp_layer import schema as s
from acp_layer import schema_unstable as u
from jsonrpc_core import InvalidParams, RequestCancelled, ServerError, error_class_for_code

pytestmark = _specs.requires("acp/v1/schema.json", "acp/v1/schema.unstable.json")


@cache
def load(name: str) -> dict[str, Any]:
    """An ACP v1 spec file (``schema.json``, ``meta.json``, ...), found by tests/_specs.py."""
    doc: dict[str, Any] = json.loads(_specs.read(f"acp/v1/{name}"))
    return doc


def defs(unstable: bool = False) -> dict[str, Any]:
    defs: dict[str, Any] = load("schema.unstable.json" if unstable else "schema.json")["$defs"]
    return defs


@cache
def validator(def_name: str, unstable: bool = False) -> Any:
    """A validator for one definition, of the draft the document declares (2020-12)."""
    root = {"$ref": f"#/$defs/{def_name}", "$defs": defs(unstable)}
    return jsonschema.validators.validator_for(load("schema.json"))(root)


@cache
def adapter(tp: Any) -> pydantic.TypeAdapter[Any]:
    return pydantic.TypeAdapter(tp)


def wire(obj: Any) -> Any:
    """The JSON value rpcweave puts on the wire for ``obj``."""
    return json.loads(pydantic_core.to_json(obj, by_alias=True, exclude_none=True))


def assert_schema_valid(def_name: str, value: Any, unstable: bool = False) -> None:
    errors = sorted(validator(def_name, unstable).iter_errors(value), key=str)
    assert not errors, f"{def_name}: " + "; ".join(
        f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in errors[:5]
    )


# --- representative instances ----------------------------------------------------------------

TEXT = s.TextContent(
    text="Hello", annotations=s.Annotations(audience=["user"], priority=0.5, last_modified="x")
)
IMAGE = s.ImageContent(data="aGk=", mime_type="image/png", uri="file:///a.png")
AUDIO = s.AudioContent(data="aGk=", mime_type="audio/wav")
LINK = s.ResourceLink(
    uri="file:///a.py",
    name="a.py",
    title="A",
    description="d",
    mime_type="text/x-python",
    size=12,
)
EMBEDDED_TEXT = s.EmbeddedResource(
    resource=s.TextResourceContents(uri="file:///a.py", text="print(1)", mime_type="text/x-python")
)
EMBEDDED_BLOB = s.EmbeddedResource(resource=s.BlobResourceContents(uri="file:///b", blob="AA=="))
META = {"traceparent": "00-80e1afed08e019fc1110464cfa66635c-7a085853722dc6d2-01", "x": None}

CLIENT_CAPS = s.ClientCapabilities(
    fs=s.FileSystemCapabilities(read_text_file=True, write_text_file=True),
    terminal=True,
    session=s.ClientSessionCapabilities(
        config_options=s.SessionConfigOptionsCapabilities(
            boolean=s.BooleanConfigOptionCapabilities()
        )
    ),
    auth=s.AuthCapabilities(terminal=True),
    elicitation=s.ElicitationCapabilities(
        form=s.ElicitationFormCapabilities(), url=s.ElicitationUrlCapabilities()
    ),
)
AGENT_CAPS = s.AgentCapabilities(
    load_session=True,
    prompt_capabilities=s.PromptCapabilities(image=True, audio=True, embedded_context=True),
    mcp_capabilities=s.McpCapabilities(http=True, sse=True),
    session_capabilities=s.SessionCapabilities(
        list=s.SessionListCapabilities(),
        delete=s.SessionDeleteCapabilities(),
        additional_directories=s.SessionAdditionalDirectoriesCapabilities(),
        resume=s.SessionResumeCapabilities(),
        close=s.SessionCloseCapabilities(),
    ),
    auth=s.AgentAuthCapabilities(logout=s.LogoutCapabilities()),
)
MCP_SERVERS: list[s.McpServer] = [
    s.McpServerStdio(
        name="fs", command="/bin/mcp", args=["-v"], env=[s.EnvVariable(name="A", value="1")]
    ),
    s.McpServerHttp(name="web", url="https://x", headers=[s.HttpHeader(name="H", value="v")]),
    s.McpServerSse(name="sse", url="https://y", headers=[]),
]
MODES = s.SessionModeState(
    current_mode_id="ask",
    available_modes=[s.SessionMode(id="ask", name="Ask", description="asks first")],
)
CONFIG_OPTIONS: list[s.SessionConfigOption] = [
    s.SessionConfigSelect(
        id="model",
        name="Model",
        description="which model",
        category="model",
        current_value="fast",
        options=[s.SessionConfigSelectOption(value="fast", name="Fast", description="f")],
    ),
    s.SessionConfigSelect(
        id="effort",
        name="Effort",
        current_value="low",
        options=[
            s.SessionConfigSelectGroup(
                group="g", name="G", options=[s.SessionConfigSelectOption(value="low", name="L")]
            )
        ],
    ),
    s.SessionConfigBoolean(id="web", name="Web search", category="_custom", current_value=True),
]
TOOL_CONTENT: list[s.ToolCallContent] = [
    s.Content(content=TEXT),
    s.Diff(path="/a.py", old_text="a", new_text="b"),
    s.Diff(path="/new.py", new_text="b"),
    s.Terminal(terminal_id="term_1"),
]
TOOL_UPDATE = s.ToolCallUpdate(
    tool_call_id="call_1",
    title="Edit a.py",
    kind="edit",
    status="pending",
    content=TOOL_CONTENT,
    locations=[s.ToolCallLocation(path="/a.py", line=3)],
    raw_input={"path": "/a.py"},
    raw_output={"ok": True},
)
FORM_SCHEMA = s.ElicitationSchema(
    title="Strategy",
    description="d",
    required=["strategy"],
    properties={
        "strategy": s.StringPropertySchema(enum=["a", "b"], default="a", title="S"),
        "titled": s.StringPropertySchema(
            one_of=[s.EnumOption(const="a", title="A", description="first")]
        ),
        "email": s.StringPropertySchema(
            format="email", min_length=3, max_length=64, pattern=".+@.+"
        ),
        "n": s.NumberPropertySchema(minimum=0.5, maximum=2.5, default=1.0),
        "i": s.IntegerPropertySchema(minimum=1, maximum=9, default=3, description="int"),
        "b": s.BooleanPropertySchema(default=True),
        "tags": s.MultiSelectPropertySchema(
            items=s.StringMultiSelectItems(enum=["x", "y"]), min_items=1, max_items=2, default=["x"]
        ),
        "titled_tags": s.MultiSelectPropertySchema(
            items=s.TitledMultiSelectItems(any_of=[s.EnumOption(const="x", title="X")])
        ),
    },
)

# (schema.json definition, instance); optional fields are set in at least one instance.
SAMPLES: list[tuple[str, Any]] = [
    ("InitializeRequest", s.InitializeRequest(protocol_version=s.PROTOCOL_VERSION)),
    (
        "InitializeRequest",
        s.InitializeRequest(
            protocol_version=1,
            client_capabilities=CLIENT_CAPS,
            client_info=s.Implementation(name="zed", title="Zed", version="1.0"),
            meta=META,
        ),
    ),
    ("InitializeResponse", s.InitializeResponse(protocol_version=1)),
    (
        "InitializeResponse",
        s.InitializeResponse(
            protocol_version=1,
            agent_capabilities=AGENT_CAPS,
            auth_methods=[
                s.AuthMethodAgent(id="agent-login", name="Log in", description="d"),
                s.AuthMethodTerminal(
                    id="tty", name="Terminal", args=["--login"], env={"ACP_INTERACTIVE_LOGIN": "1"}
                ),
            ],
            agent_info=s.Implementation(name="agent", version="0.1"),
        ),
    ),
    ("AuthenticateRequest", s.AuthenticateRequest(method_id="agent-login")),
    ("AuthenticateResponse", s.AuthenticateResponse()),
    ("LogoutRequest", s.LogoutRequest()),
    ("LogoutResponse", s.LogoutResponse()),
    ("NewSessionRequest", s.NewSessionRequest(cwd="/w", mcp_servers=[])),
    (
        "NewSessionRequest",
        s.NewSessionRequest(cwd="/w", mcp_servers=MCP_SERVERS, additional_directories=["/lib"]),
    ),
    ("NewSessionResponse", s.NewSessionResponse(session_id="sess_1")),
    (
        "NewSessionResponse",
        s.NewSessionResponse(session_id="sess_1", modes=MODES, config_options=CONFIG_OPTIONS),
    ),
    (
        "LoadSessionRequest",
        s.LoadSessionRequest(
            session_id="sess_1", cwd="/w", mcp_servers=MCP_SERVERS, additional_directories=["/l"]
        ),
    ),
    ("LoadSessionResponse", s.LoadSessionResponse()),
    ("LoadSessionResponse", s.LoadSessionResponse(modes=MODES, config_options=CONFIG_OPTIONS)),
    ("ListSessionsRequest", s.ListSessionsRequest()),
    ("ListSessionsRequest", s.ListSessionsRequest(cwd="/w", cursor="c1")),
    ("ListSessionsResponse", s.ListSessionsResponse(sessions=[])),
    (
        "ListSessionsResponse",
        s.ListSessionsResponse(
            sessions=[
                s.SessionInfo(
                    session_id="sess_1",
                    cwd="/w",
                    additional_directories=["/l"],
                    title="T",
                    updated_at="2025-01-01T00:00:00Z",
                )
            ],
            next_cursor="c2",
        ),
    ),
    ("DeleteSessionRequest", s.DeleteSessionRequest(session_id="sess_1")),
    ("DeleteSessionResponse", s.DeleteSessionResponse()),
    ("ResumeSessionRequest", s.ResumeSessionRequest(session_id="sess_1", cwd="/w")),
    (
        "ResumeSessionRequest",
        s.ResumeSessionRequest(
            session_id="sess_1", cwd="/w", mcp_servers=MCP_SERVERS, additional_directories=["/l"]
        ),
    ),
    ("ResumeSessionResponse", s.ResumeSessionResponse(modes=MODES, config_options=CONFIG_OPTIONS)),
    ("CloseSessionRequest", s.CloseSessionRequest(session_id="sess_1")),
    ("CloseSessionResponse", s.CloseSessionResponse()),
    ("SetSessionModeRequest", s.SetSessionModeRequest(session_id="sess_1", mode_id="code")),
    ("SetSessionModeResponse", s.SetSessionModeResponse()),
    (
        "SetSessionConfigOptionRequest",
        s.SetSessionConfigOptionRequest(session_id="sess_1", config_id="model", value="fast"),
    ),
    (
        "SetSessionConfigOptionRequest",
        s.SetSessionConfigOptionRequest(session_id="sess_1", config_id="web", value=True),
    ),
    (
        "SetSessionConfigOptionResponse",
        s.SetSessionConfigOptionResponse(config_options=CONFIG_OPTIONS),
    ),
    (
        "PromptRequest",
        s.PromptRequest(
            session_id="sess_1",
            prompt=[TEXT, IMAGE, AUDIO, LINK, EMBEDDED_TEXT, EMBEDDED_BLOB],
            meta=META,
        ),
    ),
    ("PromptResponse", s.PromptResponse(stop_reason="end_turn")),
    ("PromptResponse", s.PromptResponse(stop_reason="cancelled")),
    ("CancelNotification", s.CancelNotification(session_id="sess_1")),
    ("CancelRequestNotification", s.CancelRequestNotification(request_id=7)),
    ("CancelRequestNotification", s.CancelRequestNotification(request_id="req-7")),
    (
        "RequestPermissionRequest",
        s.RequestPermissionRequest(
            session_id="sess_1",
            tool_call=TOOL_UPDATE,
            options=[
                s.PermissionOption(option_id="ok", name="Allow", kind="allow_once"),
                s.PermissionOption(option_id="ok!", name="Always", kind="allow_always"),
                s.PermissionOption(option_id="no", name="Reject", kind="reject_once"),
                s.PermissionOption(option_id="no!", name="Never", kind="reject_always"),
            ],
        ),
    ),
    (
        "RequestPermissionResponse",
        s.RequestPermissionResponse(outcome=s.SelectedPermissionOutcome(option_id="ok")),
    ),
    (
        "RequestPermissionResponse",
        s.RequestPermissionResponse(outcome=s.CancelledPermissionOutcome()),
    ),
    ("ReadTextFileRequest", s.ReadTextFileRequest(session_id="sess_1", path="/a.py")),
    (
        "ReadTextFileRequest",
        s.ReadTextFileRequest(session_id="sess_1", path="/a.py", line=10, limit=50),
    ),
    ("ReadTextFileResponse", s.ReadTextFileResponse(content="print(1)\n")),
    (
        "WriteTextFileRequest",
        s.WriteTextFileRequest(session_id="sess_1", path="/a.py", content="x"),
    ),
    ("WriteTextFileResponse", s.WriteTextFileResponse()),
    ("CreateTerminalRequest", s.CreateTerminalRequest(session_id="sess_1", command="ls")),
    (
        "CreateTerminalRequest",
        s.CreateTerminalRequest(
            session_id="sess_1",
            command="npm",
            args=["test"],
            env=[s.EnvVariable(name="CI", value="1")],
            cwd="/w",
            output_byte_limit=1 << 20,
        ),
    ),
    ("CreateTerminalResponse", s.CreateTerminalResponse(terminal_id="term_1")),
    ("TerminalOutputRequest", s.TerminalOutputRequest(session_id="sess_1", terminal_id="t")),
    ("TerminalOutputResponse", s.TerminalOutputResponse(output="ok", truncated=False)),
    (
        "TerminalOutputResponse",
        s.TerminalOutputResponse(
            output="ok",
            truncated=True,
            exit_status=s.TerminalExitStatus(exit_code=0, signal="SIGTERM"),
        ),
    ),
    ("ReleaseTerminalRequest", s.ReleaseTerminalRequest(session_id="sess_1", terminal_id="t")),
    ("ReleaseTerminalResponse", s.ReleaseTerminalResponse()),
    (
        "WaitForTerminalExitRequest",
        s.WaitForTerminalExitRequest(session_id="sess_1", terminal_id="t"),
    ),
    ("WaitForTerminalExitResponse", s.WaitForTerminalExitResponse(exit_code=1)),
    ("WaitForTerminalExitResponse", s.WaitForTerminalExitResponse(signal="SIGKILL")),
    ("KillTerminalRequest", s.KillTerminalRequest(session_id="sess_1", terminal_id="t")),
    ("KillTerminalResponse", s.KillTerminalResponse()),
    (
        "CreateElicitationRequest",
        s.FormElicitationRequest(
            session_id="sess_1",
            tool_call_id="call_1",
            message="How?",
            requested_schema=FORM_SCHEMA,
        ),
    ),
    (
        "CreateElicitationRequest",
        s.UrlElicitationRequest(
            request_id=12, elicitation_id="e1", url="https://a/b", message="Authorize"
        ),
    ),
    (
        "CreateElicitationResponse",
        s.ElicitationAcceptAction(
            content={"strategy": "a", "n": 1.5, "i": 3, "b": True, "tags": ["x", "y"]}
        ),
    ),
    ("CreateElicitationResponse", s.ElicitationAcceptAction()),
    ("CreateElicitationResponse", s.ElicitationDeclineAction()),
    ("CreateElicitationResponse", s.ElicitationCancelAction(meta={"k": 1})),
    ("CompleteElicitationNotification", s.CompleteElicitationNotification(elicitation_id="e1")),
    ("Error", s.Error(code=s.ErrorCode.AUTH_REQUIRED, message="log in", data={"m": ["x"]})),
    ("Error", s.Error(code=-31999, message="other")),
]

UPDATES: list[s.SessionUpdate] = [
    s.UserMessageChunk(content=TEXT),
    s.AgentMessageChunk(content=LINK, message_id="msg_1"),
    s.AgentThoughtChunk(content=s.TextContent(text="hmm")),
    s.ToolCall(tool_call_id="call_1", title="Read"),
    s.ToolCall(
        tool_call_id="call_2",
        title="Edit",
        kind="edit",
        status="in_progress",
        content=TOOL_CONTENT,
        locations=[s.ToolCallLocation(path="/a.py")],
        raw_input={"a": [1, None]},
        raw_output="done",
    ),
    s.ToolCallProgress(tool_call_id="call_2", status="completed"),
    s.ToolCallProgress(**TOOL_UPDATE.model_dump()),
    s.Plan(
        entries=[
            s.PlanEntry(content="a", priority="high", status="pending"),
            s.PlanEntry(content="b", priority="medium", status="in_progress"),
            s.PlanEntry(content="c", priority="low", status="completed"),
        ]
    ),
    s.AvailableCommandsUpdate(
        available_commands=[
            s.AvailableCommand(name="web", description="search"),
            s.AvailableCommand(
                name="plan", description="p", input=s.UnstructuredCommandInput(hint="what")
            ),
        ]
    ),
    s.CurrentModeUpdate(current_mode_id="code"),
    s.ConfigOptionUpdate(config_options=CONFIG_OPTIONS),
    s.SessionInfoUpdate(title="New title", updated_at="2025-01-01T00:00:00Z"),
    s.SessionInfoUpdate(title=s.CLEAR),
    s.SessionInfoUpdate(),
    s.UsageUpdate(used=1000, size=200000),
    s.UsageUpdate(used=1000, size=200000, cost=s.Cost(amount=0.25, currency="USD")),
]

for _update in UPDATES:
    SAMPLES.append(("SessionNotification", s.SessionNotification(session_id="s", update=_update)))
    SAMPLES.append(("SessionUpdate", _update))
for _block in (TEXT, IMAGE, AUDIO, LINK, EMBEDDED_TEXT, EMBEDDED_BLOB):
    SAMPLES.append(("ContentBlock", _block))
for _server in MCP_SERVERS:
    SAMPLES.append(("McpServer", _server))

# The Python type to parse a definition with when it is a union, not a class.
UNIONS: dict[str, Any] = {
    "SessionUpdate": s.SessionUpdate,
    "ContentBlock": s.ContentBlock,
    "McpServer": s.McpServer,
    "CreateElicitationRequest": s.CreateElicitationRequest,
    "CreateElicitationResponse": s.CreateElicitationResponse,
}


def _sample_id(sample: tuple[str, Any]) -> str:
    return f"{sample[0]}-{type(sample[1]).__name__}"


@pytest.mark.parametrize("def_name,obj", SAMPLES, ids=[_sample_id(x) for x in SAMPLES])
def test_sample_is_schema_valid_and_round_trips(def_name: str, obj: Any) -> None:
    value = wire(obj)
    assert_schema_valid(def_name, value)
    back = adapter(UNIONS.get(def_name, type(obj))).validate_json(json.dumps(value))
    assert type(back) is type(obj)
    assert back == obj
    assert wire(back) == value


def test_samples_cover_every_method_type_and_update_variant() -> None:
    with_method = {n for n, d in defs().items() if "x-method" in d}
    covered = {name for name, _ in SAMPLES}
    assert with_method - covered == set()
    tags = {v["properties"]["sessionUpdate"]["const"] for v in defs()["SessionUpdate"]["oneOf"]}
    assert {wire(x)["sessionUpdate"] for x in UPDATES} == tags


def test_every_stable_definition_has_a_model() -> None:
    # Envelopes and extension payloads are jsonrpc_core's; the elicitation modes and scopes
    # are flattened into FormElicitationRequest / UrlElicitationRequest.
    elsewhere = {
        "AgentNotification",
        "AgentRequest",
        "AgentResponse",
        "ClientNotification",
        "ClientRequest",
        "ClientResponse",
        "ExtNotification",
        "ExtRequest",
        "ExtResponse",
        "ElicitationFormMode",
        "ElicitationUrlMode",
        "ElicitationSessionScope",
        "ElicitationRequestScope",
    }
    assert sorted(n for n in defs() if n not in elsewhere and not hasattr(s, n)) == []
    unstable_only = set(defs(unstable=True)) - set(defs())
    assert sorted(n for n in unstable_only if not hasattr(u, n)) == []
    assert not set(u.__all__) & set(s.__all__)


def test_wire_names_are_camel_case_aliases() -> None:
    # Every schema property name must be reachable from a snake_case attribute.
    for d in defs().values():
        for prop in d.get("properties", {}):
            if prop != "_meta":
                assert to_camel(pydantic.alias_generators.to_snake(prop)) == prop


def test_every_public_class_has_a_docstring() -> None:
    for module in (s, u):
        for name in module.__all__:
            obj = getattr(module, name)
            if isinstance(obj, type) and obj.__module__.startswith("acp_layer"):
                assert obj.__doc__ and obj.__doc__.strip(), name


# --- x-deserialize hints, exercised from the schema itself ----------------------------------


def minimal(node: dict[str, Any], all_defs: dict[str, Any]) -> Any:
    """A minimal value valid for a schema node (first branch of every union)."""
    if "$ref" in node:
        return minimal(all_defs[node["$ref"].rsplit("/", 1)[1]], all_defs)
    if "const" in node:
        return node["const"]
    if "enum" in node:
        return node["enum"][0]
    types = node.get("type")
    if isinstance(types, list):
        types = next((t for t in types if t != "null"), "null")
    parts = [*node.get("allOf", []), *[node[k][0] for k in ("anyOf", "oneOf") if k in node]]
    if types == "object" or "properties" in node or (parts and types is None):
        out: dict[str, Any] = {}
        for part in parts:
            value = minimal(part, all_defs)
            if not isinstance(value, dict):
                return value
            out.update(value)
        for prop in node.get("required", []):
            if prop not in out:
                out[prop] = minimal(node["properties"][prop], all_defs)
        return out
    return {"string": "x", "integer": 1, "number": 1.5, "boolean": False, "array": []}.get(
        str(types)
    )


INVALID_CANDIDATES = [12345, "zz-not-valid", {"zz": 1}, [{"zz": 1}], -1.5]

# Definitions flattened into another type: (python type, definition whose instance hosts it).
FLATTENED = {
    "ElicitationSessionScope": (s.CreateElicitationRequest, "CreateElicitationRequest"),
    "ElicitationFormMode": (s.CreateElicitationRequest, "CreateElicitationRequest"),
}
# Unstable runs type stable definitions that gained unstable fields with these.
UNSTABLE_TYPES = {
    "AgentCapabilities": u.UnstableAgentCapabilities,
    "ClientCapabilities": u.UnstableClientCapabilities,
    "ClientSessionCapabilities": u.UnstableClientSessionCapabilities,
    "McpCapabilities": u.UnstableMcpCapabilities,
    "SessionCapabilities": u.UnstableSessionCapabilities,
    "InitializeResponse": u.UnstableInitializeResponse,
    "PromptResponse": u.UnstablePromptResponse,
    "ToolCall": u.UnstableToolCall,
    "ToolCallUpdate": u.UnstableToolCallUpdate,
}


def hinted_properties(unstable: bool) -> list[tuple[str, str, bool]]:
    """(definition, property, skips invalid items) for every default-on-error hint."""
    if not _specs.available("acp/v1/schema.json", "acp/v1/schema.unstable.json"):
        return []  # the module's tests are skipped or fail then (pytestmark)
    all_defs = defs(unstable)
    stable = defs()
    out = []
    for name, d in sorted(all_defs.items()):
        for prop, p in d.get("properties", {}).items():
            if not p.get("x-deserialize-default-on-error"):
                continue
            if unstable and name in stable and prop in stable[name].get("properties", {}):
                continue  # covered by the stable run
            out.append((name, prop, bool(p.get("x-deserialize-skip-invalid-items"))))
    return out


def python_type(def_name: str, unstable: bool) -> tuple[Any, str]:
    if def_name in FLATTENED:
        return FLATTENED[def_name]
    if unstable and def_name in UNSTABLE_TYPES:
        return UNSTABLE_TYPES[def_name], def_name
    return getattr(u if unstable and hasattr(u, def_name) else s, def_name), def_name


def field_of(obj: pydantic.BaseModel, prop: str) -> tuple[str, pydantic.fields.FieldInfo]:
    for name, info in type(obj).model_fields.items():
        if (info.alias or to_camel(name)) == prop:
            return name, info
    raise AssertionError(f"{type(obj).__name__} has no field for {prop!r}")


HINTS = [(False, *h) for h in hinted_properties(False)] + [
    (True, *h) for h in hinted_properties(True)
]


def test_hint_inventory() -> None:
    # The numbers the module docstring of acp_layer/_schema/_lenient.py quotes.
    text = _specs.read("acp/v1/schema.json")
    assert text.count('"x-deserialize-default-on-error"') == 249
    assert text.count('"x-deserialize-skip-invalid-items"') == 27
    hints = {k for k in text.split('"') if k.startswith("x-deserialize")}
    assert hints == {"x-deserialize-default-on-error", "x-deserialize-skip-invalid-items"}
    assert len([h for h in HINTS if not h[0]]) == 249


# Without the schema there is nothing to parametrize: one placeholder case stands for the
# lot, so that the module's mark reports it (an empty parameter set would skip unseen).
HINT_CASES = [
    pytest.param(*h, id=f"{'unstable-' if h[0] else ''}{h[1]}.{h[2]}") for h in HINTS
] or [pytest.param(False, "", "", False, id="no-schema")]


@pytest.mark.parametrize("unstable,def_name,prop,skips", HINT_CASES)
def test_default_on_error_hint(unstable: bool, def_name: str, prop: str, skips: bool) -> None:
    all_defs = defs(unstable)
    tp, host = python_type(def_name, unstable)
    base = minimal(all_defs[host], all_defs)
    assert_schema_valid(host, base, unstable)

    def parse(value: Any) -> Any:  # from bytes, as a peer's message arrives
        return adapter(tp).validate_json(json.dumps(value))

    prop_schema = {**all_defs[def_name]["properties"][prop], "$defs": all_defs}
    bad = [
        c
        for c in INVALID_CANDIDATES
        if not jsonschema.Draft202012Validator(prop_schema).is_valid(c)
    ]
    if not bad:  # an any-typed property (rawInput, data): every value is kept as is
        obj = parse({**base, prop: {"zz": [1, None]}})
        assert getattr(obj, field_of(obj, prop)[0]) == {"zz": [1, None]}
    for value in bad:
        obj = parse({**base, prop: value})  # must not raise
        name, info = field_of(obj, prop)
        if skips and isinstance(value, list):
            expected: Any = []  # a list whose every item is invalid: all skipped
        elif info.is_required():
            expected = []  # required arrays fall back to empty
        else:
            expected = info.get_default(call_default_factory=True)
        assert getattr(obj, name) == expected, value
        assert prop not in (obj.model_extra or {})
    if skips:
        item = minimal(prop_schema["items"], all_defs)
        obj = parse({**base, prop: [item, 12345, item]})
        name, _ = field_of(obj, prop)
        assert len(getattr(obj, name)) == 2


# --- leniency beyond the hints, and specific behaviours ----------------------------------------


def test_unknown_session_update_variant_is_kept_not_fatal() -> None:
    raw = {
        "sessionId": "s",
        "update": {
            "sessionUpdate": "plan_update",
            "plan": {"type": "markdown", "planId": "p", "content": "x"},
        },
    }
    note = s.SessionNotification.model_validate_json(json.dumps(raw))
    assert isinstance(note.update, s.UnknownSessionUpdate)
    assert note.update.session_update == "plan_update"
    assert wire(note) == raw
    # The unstable union knows it.
    typed = u.UnstableSessionNotification.model_validate(raw)
    assert isinstance(typed.update, u.PlanUpdate)
    assert isinstance(typed.update.plan, u.PlanMarkdown)


def test_known_session_update_with_bad_required_field_is_an_error() -> None:
    with pytest.raises(pydantic.ValidationError, match="content"):
        s.SessionNotification.model_validate(
            {"sessionId": "s", "update": {"sessionUpdate": "agent_message_chunk"}}
        )
    with pytest.raises(pydantic.ValidationError, match="sessionUpdate"):
        s.SessionNotification.model_validate({"sessionId": "s", "update": {"content": {}}})


def test_bad_optional_fields_fall_back_to_defaults() -> None:
    call = adapter(s.SessionUpdate).validate_python(
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "c",
            "title": "t",
            "kind": "teleport",
            "status": 3,
            "content": [{"type": "diff", "path": "/a", "newText": "x"}, {"type": "hologram"}],
            "locations": "nowhere",
            "_meta": ["not", "an", "object"],
        }
    )
    assert isinstance(call, s.ToolCall)
    assert (call.kind, call.status, call.locations, call.meta) == (None, None, [], None)
    assert call.content == [s.Diff(path="/a", new_text="x")]
    init = s.InitializeRequest.model_validate(
        {"protocolVersion": 1, "clientCapabilities": {"fs": "yes", "terminal": "maybe"}}
    )
    assert init.client_capabilities.fs == s.FileSystemCapabilities()
    assert init.client_capabilities.terminal is False


def test_required_array_with_hint_defaults_only_when_invalid() -> None:
    assert s.Plan.model_validate({"entries": "oops"}).entries == []
    with pytest.raises(pydantic.ValidationError, match="entries"):
        s.Plan.model_validate({})
    plan = s.Plan.model_validate(
        {
            "entries": [
                {"content": "a", "priority": "urgent", "status": "pending"},
                {"content": "b", "priority": "low", "status": "pending"},
            ]
        }
    )
    assert [e.content for e in plan.entries] == ["b"]


def test_unknown_fields_are_preserved_at_every_level() -> None:
    raw = {
        "sessionId": "s",
        "prompt": [{"type": "text", "text": "hi", "futureField": {"a": 1}}],
        "_meta": {"zed.dev/debug": True},
        "newTopLevel": [1, 2],
    }
    req = s.PromptRequest.model_validate_json(json.dumps(raw))
    assert req.model_extra == {"newTopLevel": [1, 2]}
    assert wire(req) == raw
    # Unstable fields of stable types survive a stable peer.
    resp = s.PromptResponse.model_validate({"stopReason": "end_turn", "usage": {"totalTokens": 1}})
    assert wire(resp)["usage"] == {"totalTokens": 1}


def test_meta_round_trip_and_trace_context() -> None:
    meta = {"traceparent": "00-abc-def-01", "tracestate": "k=v", "custom": {"x": None}, "n": 1}
    req = s.CancelNotification.model_validate({"sessionId": "s", "_meta": meta})
    assert req.meta == meta
    assert wire(req) == {"sessionId": "s", "_meta": meta}
    assert s.trace_context(req.meta) == {"traceparent": "00-abc-def-01", "tracestate": "k=v"}
    assert s.trace_context(None) == {}
    merged = s.with_trace_context({"a": 1}, {"traceparent": "tp", "other": "ignored"})
    assert merged == {"a": 1, "traceparent": "tp"}
    assert s.TRACE_CONTEXT_KEYS == ("traceparent", "tracestate", "baggage")
    assert s.CancelNotification(session_id="s", meta=merged).meta == merged


def test_session_info_update_null_means_clear() -> None:
    raw = {"sessionUpdate": "session_info_update", "title": None}
    upd = adapter(s.SessionUpdate).validate_python(raw)
    assert isinstance(upd, s.SessionInfoUpdate)
    assert upd.title is s.CLEAR and upd.updated_at is None
    assert wire(upd) == raw
    assert wire(s.SessionInfoUpdate(title="t")) == {**raw, "title": "t"}


def test_open_unions_keep_unknown_variants() -> None:
    raw_req = {"mode": "_zed/picker", "message": "pick", "sessionId": "s", "choices": [1]}
    req = adapter(s.CreateElicitationRequest).validate_python(raw_req)
    assert isinstance(req, s.UnknownElicitationRequest) and wire(req) == raw_req
    with pytest.raises(pydantic.ValidationError, match="sessionId or a requestId"):
        adapter(s.CreateElicitationRequest).validate_python(
            {"mode": "url", "message": "m", "elicitationId": "e", "url": "https://a"}
        )
    raw_resp = {"action": "_later"}
    resp = adapter(s.CreateElicitationResponse).validate_python(raw_resp)
    assert isinstance(resp, s.UnknownElicitationAction) and wire(resp) == raw_resp
    prop = adapter(s.ElicitationPropertySchema).validate_python({"type": "color", "x": 1})
    assert isinstance(prop, s.UnknownPropertySchema)
    items = adapter(s.MultiSelectItems).validate_python({"anyOf": [{"const": "a", "title": "A"}]})
    assert isinstance(items, s.TitledMultiSelectItems)
    auth = adapter(s.AuthMethod).validate_python({"type": "env_var", "id": "k", "name": "Key"})
    assert isinstance(auth, s.UnknownAuthMethod)
    agent = adapter(s.AuthMethod).validate_python({"id": "a", "name": "A"})
    assert isinstance(agent, s.AuthMethodAgent)
    acp = adapter(s.McpServer).validate_python({"type": "acp", "name": "n", "serverId": "x"})
    assert isinstance(acp, s.UnknownMcpServer)
    assert isinstance(adapter(u.UnstableMcpServer).validate_python(wire(acp)), u.McpServerAcp)


def test_closed_unions_reject_unknown_variants() -> None:
    with pytest.raises(pydantic.ValidationError, match="'type' must be one of"):
        adapter(s.ContentBlock).validate_python({"type": "video"})
    with pytest.raises(pydantic.ValidationError):
        s.RequestPermissionResponse.model_validate({"outcome": {"outcome": "maybe"}})


def test_set_config_option_value_kinds() -> None:
    req = s.SetSessionConfigOptionRequest(session_id="s", config_id="c", value=True)
    assert wire(req) == {"sessionId": "s", "configId": "c", "value": True, "type": "boolean"}
    future = s.SetSessionConfigOptionRequest.model_validate(
        {"sessionId": "s", "configId": "c", "type": "_slider", "value": "7"}
    )
    assert future.value == "7"
    with pytest.raises(pydantic.ValidationError, match="boolean"):
        s.SetSessionConfigOptionRequest.model_validate(
            {"sessionId": "s", "configId": "c", "type": "boolean", "value": "on"}
        )


def test_empty_results_accept_null() -> None:
    assert m.FS_WRITE_TEXT_FILE.validate_result(None) == s.WriteTextFileResponse()
    assert m.SESSION_LOAD.validate_result(None) == s.LoadSessionResponse()
    with pytest.raises(pydantic.ValidationError):
        m.SESSION_PROMPT.validate_result(None)


# --- method descriptors --------------------------------------------------------------------


def test_method_tables_match_meta_json() -> None:
    meta = load("meta.json")
    protocol = set(meta["protocolMethods"].values())
    assert set(m.AGENT_METHODS) == set(meta["agentMethods"].values()) | protocol
    assert set(m.CLIENT_METHODS) == set(meta["clientMethods"].values()) | protocol
    assert set(m.PROTOCOL_METHODS) == protocol
    unstable = load("meta.unstable.json")
    assert set(m.UNSTABLE_AGENT_METHODS) == set(unstable["agentMethods"].values()) - set(
        meta["agentMethods"].values()
    )
    assert set(m.UNSTABLE_CLIENT_METHODS) == set(unstable["clientMethods"].values()) - set(
        meta["clientMethods"].values()
    )


def test_descriptor_types_match_schema_x_method() -> None:
    # Every params/result model of a descriptor is the schema type declaring that method.
    for unstable, tables in (
        (False, (m.AGENT_METHODS, m.CLIENT_METHODS)),
        (True, (m.UNSTABLE_AGENT_METHODS, m.UNSTABLE_CLIENT_METHODS)),
    ):
        by_method: dict[str, set[str]] = {}
        for name, d in defs(unstable).items():
            if "x-method" in d:
                by_method.setdefault(d["x-method"], set()).add(name)
        for table in tables:
            for method, desc in table.items():
                for tp in (desc.params_type, desc.result_type):
                    if isinstance(tp, type):
                        assert tp.__name__ in by_method[method], (method, tp)


def test_descriptor_param_validation_names_the_field() -> None:
    with pytest.raises(InvalidParams) as info:
        m.SESSION_PROMPT.validate_params({"sessionId": "s", "prompt": [{"type": "text"}]})
    assert "params.prompt.0" in info.value.message and "text" in info.value.message
    with pytest.raises(InvalidParams, match=r"params\.sessionId"):
        m.SESSION_CANCEL.validate_params({})
    with pytest.raises(InvalidParams, match=r"params\.update"):
        m.SESSION_UPDATE.validate_params({"sessionId": "s", "update": {"sessionUpdate": 5}})
    params = m.SESSION_PROMPT.validate_params(wire(s.PromptRequest(session_id="s", prompt=[TEXT])))
    assert params == s.PromptRequest(session_id="s", prompt=[TEXT])
    assert m.LOGOUT.validate_params(None) == s.LogoutRequest()
    form = m.ELICITATION_CREATE.validate_params(wire(SAMPLES_BY_TYPE["FormElicitationRequest"]))
    assert isinstance(form, s.FormElicitationRequest)


SAMPLES_BY_TYPE = {type(obj).__name__: obj for _, obj in SAMPLES}


# --- errors --------------------------------------------------------------------------------


def test_error_codes_match_schema() -> None:
    codes = {b["const"] for b in defs()["ErrorCode"]["anyOf"] if "const" in b}
    assert {int(c) for c in s.ErrorCode} == codes
    for code in codes:
        cls = ACP_ERRORS.class_for(code)
        assert cls is not ServerError and cls.code == code


def test_error_classes() -> None:
    assert issubclass(AuthRequired, ServerError) and AuthRequired.code == -32000
    assert ResourceNotFound.code == -32002
    # ACP's codes stay out of jsonrpc_core's process-wide table (A2A uses -32002).
    assert error_class_for_code(-32000) is ServerError
    assert error_class_for_code(-32002) is not ResourceNotFound
    err = ACP_ERRORS.from_object({"code": -32000, "message": "log in", "data": {"m": "a"}})
    assert isinstance(err, AuthRequired) and err.data == {"m": "a"}
    assert err.to_object() == {"code": -32000, "message": "log in", "data": {"m": "a"}}
    assert not ACP_ERRORS.from_object({"code": -32000, "message": "x"}).has_data
    assert isinstance(ACP_ERRORS.from_object({"code": -32800, "message": "c"}), RequestCancelled)
    assert type(ACP_ERRORS.from_object({"code": -31000, "message": "o"})) is ServerError
    assert type(ACP_ERRORS.refine(ServerError("missing", code=-32002))) is ResourceNotFound


# --- unstable ----------------------------------------------------------------------------------

UNSTABLE_SAMPLES: list[tuple[str, Any]] = [
    (
        "ForkSessionRequest",
        u.ForkSessionRequest(
            session_id="s",
            cwd="/w",
            mcp_servers=[u.McpServerAcp(name="n", server_id="x"), *MCP_SERVERS],
        ),
    ),
    ("ForkSessionResponse", u.ForkSessionResponse(session_id="s2", modes=MODES)),
    (
        "ListProvidersResponse",
        u.ListProvidersResponse(
            providers=[
                u.ProviderInfo(
                    provider_id="main",
                    supported=["anthropic", "_custom"],
                    required=True,
                    current=u.ProviderCurrentConfig(api_type="anthropic", base_url="https://a"),
                )
            ]
        ),
    ),
    (
        "SetProviderRequest",
        u.SetProviderRequest(
            provider_id="main", api_type="openai", base_url="https://o", headers={"A": "b"}
        ),
    ),
    ("MessageMcpRequest", u.MessageMcpRequest(connection_id="c", method="tools/list")),
    (
        "SuggestNesRequest",
        u.SuggestNesRequest(
            session_id="s",
            uri="file:///a",
            version=3,
            position=u.Position(line=1, character=2),
            trigger_kind="manual",
            context=u.NesSuggestContext(
                diagnostics=[
                    u.NesDiagnostic(
                        uri="file:///a",
                        range=u.Range(
                            start=u.Position(line=0, character=0),
                            end=u.Position(line=0, character=1),
                        ),
                        severity="error",
                        message="m",
                    )
                ]
            ),
        ),
    ),
    (
        "SuggestNesResponse",
        u.SuggestNesResponse(
            suggestions=[
                u.NesSearchAndReplaceSuggestion(
                    id="n1", uri="file:///a", search="a", replace="b", is_regex=False
                ),
                u.NesJumpSuggestion(
                    id="n2", uri="file:///a", position=u.Position(line=0, character=0)
                ),
            ]
        ),
    ),
    (
        "UnstableInitializeResponse",
        u.UnstableInitializeResponse(
            protocol_version=1,
            agent_capabilities=u.UnstableAgentCapabilities(
                mcp_capabilities=u.UnstableMcpCapabilities(acp=True),
                session_capabilities=u.UnstableSessionCapabilities(
                    fork=u.SessionForkCapabilities()
                ),
                position_encoding="utf-8",
            ),
        ),
    ),
    (
        "UnstablePromptResponse",
        u.UnstablePromptResponse(
            stop_reason="end_turn", usage=u.Usage(total_tokens=3, input_tokens=2, output_tokens=1)
        ),
    ),
]
UNSTABLE_UPDATES = [
    u.PlanUpdate(plan=u.PlanItems(plan_id="p", entries=[])),
    u.PlanRemoved(plan_id="p"),
    u.Notice(severity="warning", title="Heads up", description="d"),
    u.CompactionUpdate(compaction_id="c", status="completed", summary=[TEXT]),
    u.CompactionUpdate(compaction_id="c", status="failed", error="boom", summary=s.CLEAR),
    u.CompactionSummaryChunk(compaction_id="c", content=TEXT),
    u.UnstableToolCall(tool_call_id="t", title="T", name="read_file"),
]


@pytest.mark.parametrize(
    "def_name,obj",
    UNSTABLE_SAMPLES + [("SessionUpdate", x) for x in UNSTABLE_UPDATES],
    ids=lambda x: x if isinstance(x, str) else type(x).__name__,
)
def test_unstable_sample_is_schema_valid_and_round_trips(def_name: str, obj: Any) -> None:
    schema_name = def_name.removeprefix("Unstable")
    value = wire(obj)
    assert_schema_valid(schema_name, value, unstable=True)
    tp = u.UnstableSessionUpdate if def_name == "SessionUpdate" else type(obj)
    assert adapter(tp).validate_python(value) == obj  # type: ignore[arg-type]
