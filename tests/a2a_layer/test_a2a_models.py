"""A2A data layer: models against the official 1.0 schema and proto, 0.3 conversions
against the 0.3 schema, the error table against the spec, and the method tables.

Tests the private units `a2a_layer._errors`, `_http_binding`, `_methods` and the compat03
converters on purpose: the error table, the HTTP binding and the 0.3 conversions are
checked against the spec itself.
"""

from __future__ import annotations

import base64
import json
import re
from datetime import datetime, timedelta, timezone
from typing import Any

import _specs
import jsonschema
import pydantic
import pydantic_core
import pytest
import referencing
import referencing.jsonschema

from a2a_layer import A2A_ERRORS, A2AError, TaskNotFound
from a2a_layer import _compat03 as c03
from a2a_layer import types as t
from a2a_layer._errors import (
    A2A_ERROR_DOMAIN,
    ERROR_INFO_TYPE,
    ERROR_TABLE,
    a2a_error_from_object,
    bad_request_detail,
    error_data,
    error_from_http,
    error_info,
    error_row,
    http_error_body,
    http_status_for,
)
from a2a_layer._http_binding import http_request_for, params_from_http
from a2a_layer._methods import (
    HTTP_ROUTE_ALIASES_V10,
    HTTP_ROUTES_V10,
    LIST_TASKS,
    METHODS_V03_TO_V10,
    METHODS_V10,
    METHODS_V10_TO_V03,
    SEND_MESSAGE,
    match_http_route,
)
from jsonrpc_core import (
    InternalError,
    InvalidParams,
    InvalidRequest,
    JsonRpcError,
    MethodNotFound,
    ParseError,
    ServerError,
    error_class_for_code,
    error_from_object,
)


def _spec(name: str) -> str:
    """The text of an A2A spec file (``v1.0/a2a.proto``, ...), found by tests/_specs.py."""
    return _specs.read(f"a2a/{name}")


def wire(obj: Any) -> Any:
    """What rpcweave puts on the wire, decoded again."""
    return json.loads(pydantic_core.to_json(obj, by_alias=True, exclude_none=True))


# -- schemas -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def v10_schema() -> Any:
    """``validate(name, instance)`` against the 1.0 schema definition of proto message ``name``."""
    defs = json.loads(_spec("v1.0/a2a.schema.json"))["definitions"]
    resources = []
    for key, schema in defs.items():
        name = key.replace(" ", "")
        package = "google.protobuf" if name in ("Struct", "Timestamp", "Value") else "lf.a2a.v1"
        resource = referencing.Resource.from_contents(
            schema, default_specification=referencing.jsonschema.DRAFT202012
        )
        resources.append((f"{package}.{name}.jsonschema.json", resource))
    registry = referencing.Registry().with_resources(resources)
    by_name = {key.replace(" ", ""): schema for key, schema in defs.items()}

    def validate(name: str, instance: Any) -> None:
        validator = jsonschema.Draft202012Validator(by_name[name], registry=registry)
        validator.validate(instance)

    validate.names = set(by_name)  # type: ignore[attr-defined]
    return validate


@pytest.fixture(scope="module")
def v03_schema() -> Any:
    """``validate(name, instance)`` against a 0.3 ``a2a.json`` definition."""
    doc = json.loads(_spec("v0.3/a2a.json"))

    def validate(name: str, instance: Any) -> None:
        schema = {"$ref": f"#/definitions/{name}", "definitions": doc["definitions"]}
        jsonschema.Draft7Validator(schema).validate(instance)

    return validate


@pytest.fixture(scope="module")
def proto() -> str:
    return _spec("v1.0/a2a.proto")


def proto_messages(text: str) -> dict[str, list[str]]:
    """Proto message name -> its field names (oneof members included)."""
    out: dict[str, list[str]] = {}
    for m in re.finditer(r"^message (\w+) \{(.*?)^\}", text, re.S | re.M):
        body = re.sub(r"//[^\n]*", "", m.group(2))
        fields = re.findall(
            r"^\s*(?:optional |repeated )?(?:map<[^>]+>|[\w.]+) (\w+) = \d+", body, re.M
        )
        out[m.group(1)] = fields
    return out


def lower_camel(name: str) -> str:
    """protoc's json_name: drop each underscore and upper-case the letter after it."""
    return re.sub(r"_([a-z0-9])", lambda m: m.group(1).upper(), name)


# -- one rich instance of every model ------------------------------------------------------

NOW = datetime(2025, 10, 28, 10, 30, 0, 123000, tzinfo=timezone.utc)


def make_message(**kw: Any) -> t.Message:
    base: dict[str, Any] = {
        "message_id": "msg-1",
        "context_id": "ctx-1",
        "task_id": "task-1",
        "role": t.Role.USER,
        "parts": [
            t.Part(text="hello", metadata={"lang": "en"}),
            t.Part(raw=bytes(range(256)), filename="blob.bin", media_type="application/x"),
            t.Part(url="https://example.com/a.png", media_type="image/png"),
            t.Part(data={"k": [1, 2, {"x": None}]}, media_type="application/json"),
        ],
        "metadata": {"m": 1},
        "extensions": ["https://ext.example/v1"],
        "reference_task_ids": ["task-0"],
    }
    base.update(kw)
    return t.Message(**base)


def make_artifact() -> t.Artifact:
    return t.Artifact(
        artifact_id="art-1",
        name="report",
        description="the report",
        parts=[t.Part(text="# Report")],
        metadata={"a": True},
        extensions=["https://ext.example/v1"],
    )


def make_task() -> t.Task:
    return t.Task(
        id="task-1",
        context_id="ctx-1",
        status=t.TaskStatus(
            state=t.TaskState.WORKING,
            message=make_message(role=t.Role.AGENT, message_id="msg-2"),
            timestamp=NOW,
        ),
        artifacts=[make_artifact()],
        history=[make_message()],
        metadata={"n": 1.5},
    )


def make_push_config() -> t.TaskPushNotificationConfig:
    return t.TaskPushNotificationConfig(
        tenant="tenant-a",
        id="cfg-1",
        task_id="task-1",
        url="https://client.example/hook",
        token="tok",
        authentication=t.AuthenticationInfo(scheme="Bearer", credentials="secret"),
    )


def make_schemes() -> dict[str, t.SecurityScheme]:
    S = t.SecurityScheme
    return {
        "key": S(
            api_key_security_scheme=t.APIKeySecurityScheme(
                description="api key", location="header", name="X-Key"
            )
        ),
        "bearer": S(
            http_auth_security_scheme=t.HTTPAuthSecurityScheme(
                description="jwt", scheme="Bearer", bearer_format="JWT"
            )
        ),
        "oauth": S(
            oauth2_security_scheme=t.OAuth2SecurityScheme(
                description="oauth",
                flows=t.OAuthFlows(
                    authorization_code=t.AuthorizationCodeOAuthFlow(
                        authorization_url="https://auth/authorize",
                        token_url="https://auth/token",
                        refresh_url="https://auth/refresh",
                        scopes={"read": "Read"},
                        pkce_required=True,
                    )
                ),
                oauth2_metadata_url="https://auth/.well-known/oauth-authorization-server",
            )
        ),
        "cc": S(
            oauth2_security_scheme=t.OAuth2SecurityScheme(
                flows=t.OAuthFlows(
                    client_credentials=t.ClientCredentialsOAuthFlow(
                        token_url="https://auth/token",
                        refresh_url="https://auth/refresh",
                        scopes={"w": "Write"},
                    )
                )
            )
        ),
        "oidc": S(
            open_id_connect_security_scheme=t.OpenIdConnectSecurityScheme(
                description="oidc", open_id_connect_url="https://accounts/.well-known/openid"
            )
        ),
        "mtls": S(mtls_security_scheme=t.MutualTlsSecurityScheme(description="mtls")),
    }


def make_card() -> t.AgentCard:
    return t.AgentCard(
        name="Recipe Agent",
        description="Helps with recipes.",
        supported_interfaces=[
            t.AgentInterface(
                url="https://agent.example/a2a",
                protocol_binding=t.ProtocolBinding.JSONRPC,
                protocol_version="1.0",
                tenant="t1",
            ),
            t.AgentInterface(
                url="https://agent.example/a2a",
                protocol_binding=t.ProtocolBinding.JSONRPC,
                protocol_version="0.3",
            ),
            t.AgentInterface(
                url="https://agent.example/rest",
                protocol_binding=t.ProtocolBinding.HTTP_JSON,
                protocol_version="0.3",
            ),
        ],
        provider=t.AgentProvider(url="https://example.com", organization="Example"),
        version="1.2.0",
        documentation_url="https://example.com/docs",
        capabilities=t.AgentCapabilities(
            streaming=True,
            push_notifications=True,
            extensions=[
                t.AgentExtension(
                    uri="https://ext.example/v1", description="ext", required=True, params={"p": 1}
                )
            ],
            extended_agent_card=True,
        ),
        security_schemes=make_schemes(),
        security_requirements=[
            t.SecurityRequirement.of(oauth=["read"]),
            t.SecurityRequirement.of(key=[], mtls=[]),
        ],
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain", "application/json"],
        skills=[
            t.AgentSkill(
                id="s1",
                name="Find recipe",
                description="Finds recipes",
                tags=["cooking"],
                examples=["pasta?"],
                input_modes=["text/plain"],
                output_modes=["application/json"],
                security_requirements=[t.SecurityRequirement.of(oauth=["read"])],
            )
        ],
        signatures=[
            t.AgentCardSignature(
                protected="eyJhbGciOiJFUzI1NiJ9", signature="c2ln", header={"kid": "k1"}
            )
        ],
        icon_url="https://example.com/icon.png",
    )


def instances() -> dict[str, Any]:
    """One instance of every model, by its name in the schema."""
    task = make_task()
    return {**_task_instances(task), **_card_instances(), **_request_instances(task)}


def _task_instances(task: t.Task) -> dict[str, Any]:
    """Tasks, messages, artifacts and their stream events."""
    status_update = t.TaskStatusUpdateEvent(
        task_id="task-1",
        context_id="ctx-1",
        status=t.TaskStatus(state=t.TaskState.COMPLETED, timestamp=NOW),
        metadata={"u": 1},
    )
    artifact_update = t.TaskArtifactUpdateEvent(
        task_id="task-1",
        context_id="ctx-1",
        artifact=make_artifact(),
        append=True,
        last_chunk=True,
        metadata={"u": 2},
    )
    return {
        "Part": t.Part(raw=b"\x00\xff", filename="f", media_type="x/y", metadata={"a": 1}),
        "Message": make_message(),
        "Artifact": make_artifact(),
        "TaskStatus": task.status,
        "Task": task,
        "TaskStatusUpdateEvent": status_update,
        "TaskArtifactUpdateEvent": artifact_update,
        "StreamResponse": t.StreamResponse(artifact_update=artifact_update),
        "SendMessageResponse": t.SendMessageResponse(task=task),
        "AuthenticationInfo": t.AuthenticationInfo(scheme="Basic", credentials="dXNlcjpwdw=="),
        "TaskPushNotificationConfig": make_push_config(),
    }


def _card_instances() -> dict[str, Any]:
    """The agent card and its security schemes and OAuth flows."""
    flows = {
        "ImplicitOAuthFlow": t.ImplicitOAuthFlow(
            authorization_url="https://a", refresh_url="https://r", scopes={"s": "S"}
        ),
        "PasswordOAuthFlow": t.PasswordOAuthFlow(
            token_url="https://t", refresh_url="https://r", scopes={"s": "S"}
        ),
        "DeviceCodeOAuthFlow": t.DeviceCodeOAuthFlow(
            device_authorization_url="https://d",
            token_url="https://t",
            refresh_url="https://r",
            scopes={"s": "S"},
        ),
    }
    schemes = make_schemes()
    return {
        "AgentInterface": make_card().supported_interfaces[0],
        "AgentProvider": t.AgentProvider(url="https://x", organization="X"),
        "AgentExtension": make_card().capabilities.extensions[0],  # type: ignore[index]
        "AgentCapabilities": make_card().capabilities,
        "AgentSkill": make_card().skills[0],
        "AgentCardSignature": make_card().signatures[0],  # type: ignore[index]
        "AgentCard": make_card(),
        "StringList": t.StringList(values=["a", "b"]),
        "SecurityRequirement": t.SecurityRequirement.of(oauth=["read", "write"]),
        "SecurityScheme": schemes["oauth"],
        "APIKeySecurityScheme": schemes["key"].api_key_security_scheme,
        "HTTPAuthSecurityScheme": schemes["bearer"].http_auth_security_scheme,
        "OAuth2SecurityScheme": schemes["oauth"].oauth2_security_scheme,
        "OpenIdConnectSecurityScheme": schemes["oidc"].open_id_connect_security_scheme,
        "MutualTlsSecurityScheme": schemes["mtls"].mtls_security_scheme,
        "OAuthFlows": t.OAuthFlows(device_code=flows["DeviceCodeOAuthFlow"]),
        "AuthorizationCodeOAuthFlow": schemes[  # type: ignore[union-attr]
            "oauth"
        ].oauth2_security_scheme.flows.authorization_code,
        "ClientCredentialsOAuthFlow": schemes["cc"].oauth2_security_scheme.flows.client_credentials,  # type: ignore[union-attr]
        **flows,
    }


def _request_instances(task: t.Task) -> dict[str, Any]:
    """The requests and responses of the methods."""
    return {
        "SendMessageConfiguration": t.SendMessageConfiguration(
            accepted_output_modes=["text/plain"],
            task_push_notification_config=make_push_config(),
            history_length=5,
            return_immediately=True,
        ),
        "SendMessageRequest": t.SendMessageRequest(
            tenant="t1",
            message=make_message(),
            configuration=t.SendMessageConfiguration(history_length=0),
            metadata={"r": 1},
        ),
        "GetTaskRequest": t.GetTaskRequest(tenant="t1", id="task-1", history_length=10),
        "ListTasksRequest": t.ListTasksRequest(
            tenant="t1",
            context_id="ctx-1",
            status=t.TaskState.WORKING,
            page_size=50,
            page_token="cursor",
            history_length=3,
            status_timestamp_after=NOW,
            include_artifacts=True,
        ),
        "ListTasksResponse": t.ListTasksResponse(
            tasks=[task], next_page_token="next", page_size=50, total_size=120
        ),
        "CancelTaskRequest": t.CancelTaskRequest(tenant="t1", id="task-1", metadata={"why": "x"}),
        "SubscribeToTaskRequest": t.SubscribeToTaskRequest(tenant="t1", id="task-1"),
        "GetTaskPushNotificationConfigRequest": t.GetTaskPushNotificationConfigRequest(
            tenant="t1", task_id="task-1", id="cfg-1"
        ),
        "DeleteTaskPushNotificationConfigRequest": t.DeleteTaskPushNotificationConfigRequest(
            tenant="t1", task_id="task-1", id="cfg-1"
        ),
        "ListTaskPushNotificationConfigsRequest": t.ListTaskPushNotificationConfigsRequest(
            tenant="t1", task_id="task-1", page_size=10, page_token="p"
        ),
        "ListTaskPushNotificationConfigsResponse": t.ListTaskPushNotificationConfigsResponse(
            configs=[make_push_config()], next_page_token="n"
        ),
        "GetExtendedAgentCardRequest": t.GetExtendedAgentCardRequest(tenant="t1"),
    }


INSTANCES = instances()


def test_every_model_has_an_instance() -> None:
    models = {
        name
        for name in t.__all__
        if isinstance(getattr(t, name), type)
        and issubclass(getattr(t, name), t.A2AModel)
        and getattr(t, name) is not t.A2AModel
    }
    assert models - {"Empty"} == set(INSTANCES)
    for name, obj in INSTANCES.items():
        assert type(obj).__name__ == name


def test_every_proto_message_is_modelled(proto: str) -> None:
    modelled = set(INSTANCES) | {"Empty"}
    assert set(proto_messages(proto)) <= modelled


@pytest.mark.parametrize("name", sorted(INSTANCES))
def test_field_names_are_the_proto_json_names(name: str, proto: str) -> None:
    fields = proto_messages(proto)[name]
    model = type(INSTANCES[name])
    aliases = {f.alias or n for n, f in model.model_fields.items()}
    assert aliases == {lower_camel(f) for f in fields}


@pytest.mark.parametrize("name", sorted(INSTANCES))
def test_dump_validates_against_schema_and_round_trips(name: str, v10_schema: Any) -> None:
    obj = INSTANCES[name]
    data = wire(obj)
    v10_schema(name, data)
    cls = type(obj)
    assert cls.model_validate(data) == obj
    assert cls.model_validate_json(pydantic_core.to_json(obj, by_alias=True)) == obj


def test_every_optional_field_is_set_somewhere() -> None:
    seen: dict[type, set[str]] = {}

    def walk(obj: Any) -> None:
        if isinstance(obj, pydantic.BaseModel):
            seen.setdefault(type(obj), set()).update(
                n for n in type(obj).model_fields if getattr(obj, n) is not None
            )
            for n in type(obj).model_fields:
                walk(getattr(obj, n))
        elif isinstance(obj, (list, tuple)):
            for item in obj:
                walk(item)
        elif isinstance(obj, dict):
            for item in obj.values():
                walk(item)

    for obj in INSTANCES.values():
        walk(obj)
    part_fields = set(t.Part.model_fields)
    for cls, names in seen.items():
        missing = set(cls.model_fields) - names  # type: ignore[attr-defined]
        if cls is t.Part:  # the oneof members are spread over several parts
            assert missing <= part_fields - {"metadata", "filename", "media_type"}
            continue
        if cls in (t.StreamResponse, t.SendMessageResponse, t.SecurityScheme, t.OAuthFlows):
            continue  # oneofs: one member per instance by design
        assert not missing, f"{cls.__name__}: never set {sorted(missing)}"


def test_none_never_reaches_the_wire_and_camel_case_is_used() -> None:
    data = wire(t.Task(id="x", status=t.TaskStatus(state="working")))
    assert data == {"id": "x", "status": {"state": "TASK_STATE_WORKING"}}
    # by_alias is the default for dumps too
    assert "contextId" in t.Task(id="x", context_id="c", status={"state": 1}).model_dump()


def test_spec_examples_parse() -> None:
    # spec 6.1 / 11.4 / 9.4 request and response bodies
    req = t.SendMessageRequest.model_validate(
        {
            "message": {"messageId": "uuid", "role": "ROLE_USER", "parts": [{"text": "Hello"}]},
            "configuration": {"acceptedOutputModes": ["text/plain"]},
        }
    )
    assert req.message.parts[0].kind == "text"
    resp = t.SendMessageResponse.model_validate(
        {"task": {"id": "task-uuid", "contextId": "c", "status": {"state": "TASK_STATE_COMPLETED"}}}
    )
    assert isinstance(resp.payload, t.Task)
    assert resp.payload.status.state.is_terminal
    lst = t.ListTasksResponse.model_validate(
        {"tasks": [], "totalSize": 5, "pageSize": 10, "nextPageToken": ""}
    )
    assert lst.total_size == 5
    # a ProtoJSON writer omits empty/default members
    assert t.ListTasksResponse.model_validate({}) == t.ListTasksResponse()
    assert wire(t.ListTasksResponse()) == {
        "tasks": [],
        "nextPageToken": "",
        "pageSize": 0,
        "totalSize": 0,
    }


# -- Part ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "obj",
    [
        {},
        {"mediaType": "text/plain"},
        {"text": "a", "url": "https://x"},
        {"text": "a", "data": {"k": 1}},
        {"raw": "AAE=", "url": "https://x"},
        {"text": None, "data": {}, "url": "u"},
    ],
)
def test_part_needs_exactly_one_content_member(obj: dict[str, Any]) -> None:
    with pytest.raises(pydantic.ValidationError, match="exactly one of text, raw, url, data"):
        t.Part.model_validate(obj)


def test_part_members_and_kind() -> None:
    assert t.Part(text="a").kind == "text"
    assert t.Part(raw=b"a").kind == "raw"
    assert t.Part(url="u").kind == "url"
    assert t.Part(data=[1]).kind == "data"
    with pytest.raises(pydantic.ValidationError):
        t.Part()


def test_part_data_may_be_json_null() -> None:
    part = t.Part.model_validate({"data": None})
    assert part.kind == "data"
    assert wire(part) == {"data": None}
    assert wire(t.Part(data=None, media_type="application/json")) == {
        "data": None,
        "mediaType": "application/json",
    }
    # next to another member, "data": null means unset (ProtoJSON null)
    assert t.Part.model_validate({"text": "a", "data": None}).kind == "text"
    assert t.Part(text="a").model_dump()["text"] == "a"
    assert "data" not in t.Part(text="a").model_dump()
    for value in ([1, "a"], "s", 3.5, True, {"a": {"b": None}}):
        assert t.Part.model_validate(wire(t.Part(data=value))).data == value


def test_raw_base64_round_trip() -> None:
    payload = bytes(range(256)) * 3
    part = t.Part(raw=payload)
    data = wire(part)
    assert data == {"raw": base64.b64encode(payload).decode()}
    assert t.Part.model_validate(data).raw == payload
    assert t.Part.model_validate_json(json.dumps(data)).raw == payload
    # URL-safe alphabet and missing padding are read too (ProtoJSON)
    urlsafe = base64.urlsafe_b64encode(payload).decode().rstrip("=")
    assert t.Part.model_validate({"raw": urlsafe}).raw == payload
    assert t.Part.model_validate({"raw": ""}).raw == b""
    with pytest.raises(pydantic.ValidationError, match="base64"):
        t.Part.model_validate({"raw": "not base64!"})


# -- enums, scalars, timestamps ------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("TASK_STATE_WORKING", t.TaskState.WORKING),
        ("working", t.TaskState.WORKING),
        ("WORKING", t.TaskState.WORKING),
        ("task_state_working", t.TaskState.WORKING),
        (2, t.TaskState.WORKING),
        ("submitted", t.TaskState.SUBMITTED),
        ("completed", t.TaskState.COMPLETED),
        ("canceled", t.TaskState.CANCELED),
        ("failed", t.TaskState.FAILED),
        ("rejected", t.TaskState.REJECTED),
        ("input-required", t.TaskState.INPUT_REQUIRED),
        ("auth-required", t.TaskState.AUTH_REQUIRED),
        ("unknown", t.TaskState.UNSPECIFIED),
        (0, t.TaskState.UNSPECIFIED),
    ],
)
def test_task_state_leniency(given: Any, expected: t.TaskState, v10_schema: Any) -> None:
    status = t.TaskStatus.model_validate({"state": given})
    assert status.state is expected
    assert wire(status) == {"state": expected.value}
    v10_schema("TaskStatus", wire(status))


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("user", t.Role.USER),
        ("agent", t.Role.AGENT),
        ("ROLE_AGENT", t.Role.AGENT),
        (1, t.Role.USER),
    ],
)
def test_role_leniency(given: Any, expected: t.Role) -> None:
    msg = t.Message.model_validate({"messageId": "m", "role": given, "parts": [{"text": "x"}]})
    assert msg.role is expected
    assert wire(msg)["role"] == expected.value


@pytest.mark.parametrize("bad", ["TASK_STATE_RUNNING", "running", 99, True, None, 2.5])
def test_unknown_enum_values_are_rejected(bad: Any) -> None:
    with pytest.raises(pydantic.ValidationError):
        t.TaskStatus.model_validate({"state": bad})


def test_state_helpers() -> None:
    assert {s for s in t.TaskState if s.is_terminal} == t.TERMINAL_STATES
    assert {s for s in t.TaskState if s.is_interrupted} == t.INTERRUPTED_STATES
    assert not t.TaskState.WORKING.is_terminal


def test_unknown_fields_are_ignored() -> None:
    task = t.Task.model_validate(
        {
            "id": "x",
            "kind": "task",
            "futureField": {"a": 1},
            "status": {"state": "TASK_STATE_SUBMITTED", "extra": 1},
            "history": [
                {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "a", "z": 1}], "q": 2}
            ],
        }
    )
    assert wire(task) == {
        "id": "x",
        "status": {"state": "TASK_STATE_SUBMITTED"},
        "history": [{"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "a"}]}],
    }


def test_int32_reads_strings_and_writes_numbers() -> None:
    req = t.GetTaskRequest.model_validate({"id": "x", "historyLength": "7"})
    assert req.history_length == 7
    assert wire(req) == {"id": "x", "historyLength": 7}
    resp = t.ListTasksResponse.model_validate({"pageSize": "10", "totalSize": "2147483647"})
    assert wire(resp)["totalSize"] == 2**31 - 1
    with pytest.raises(pydantic.ValidationError):
        t.ListTasksResponse.model_validate({"totalSize": 2**31})
    with pytest.raises(pydantic.ValidationError, match="historyLength"):
        t.GetTaskRequest.model_validate({"id": "x", "historyLength": -5})


def test_timestamps_are_rfc3339_utc() -> None:
    status = t.TaskStatus.model_validate(
        {"state": "working", "timestamp": "2025-10-28T12:30:00.5+02:00"}
    )
    assert status.timestamp == datetime(2025, 10, 28, 10, 30, 0, 500000, tzinfo=timezone.utc)
    assert wire(status)["timestamp"] == "2025-10-28T10:30:00.500Z"
    fine = t.TaskStatus(state="working", timestamp=NOW + timedelta(microseconds=7))
    assert wire(fine)["timestamp"] == "2025-10-28T10:30:00.123007Z"
    naive = t.TaskStatus(state="working", timestamp=datetime(2025, 1, 1))
    assert wire(naive)["timestamp"] == "2025-01-01T00:00:00.000Z"
    nanos = t.TaskStatus.model_validate(
        {"state": "working", "timestamp": "2025-01-01T00:00:00.123456789Z"}
    )
    assert nanos.timestamp is not None and nanos.timestamp.microsecond == 123456


def test_required_fields_are_enforced() -> None:
    with pytest.raises(pydantic.ValidationError, match="messageId"):
        t.Message.model_validate({"role": "ROLE_USER", "parts": [{"text": "a"}]})
    with pytest.raises(pydantic.ValidationError, match="parts"):
        t.Message.model_validate({"messageId": "m", "role": "ROLE_USER", "parts": []})
    with pytest.raises(pydantic.ValidationError, match="status"):
        t.Task.model_validate({"id": "x"})
    with pytest.raises(pydantic.ValidationError, match="url"):
        t.TaskPushNotificationConfig.model_validate({"taskId": "x"})


@pytest.mark.parametrize(
    ("cls", "obj"),
    [
        (t.StreamResponse, {}),
        (t.StreamResponse, {"task": wire(make_task()), "message": wire(make_message())}),
        (t.SendMessageResponse, {}),
        (t.SecurityScheme, {}),
        (t.OAuthFlows, {}),
        (
            t.OAuthFlows,
            {
                "clientCredentials": {"tokenUrl": "t", "scopes": {}},
                "password": {"tokenUrl": "t"},
            },
        ),
    ],
)
def test_oneofs_need_exactly_one_member(cls: type[t.A2AModel], obj: Any) -> None:
    with pytest.raises(pydantic.ValidationError, match="exactly one of"):
        cls.model_validate(obj)


def test_oneof_wrap_and_payload() -> None:
    task, msg = make_task(), make_message()
    assert t.StreamResponse.wrap(task).payload is task
    assert t.StreamResponse.wrap(msg).message is msg
    ev = INSTANCES["TaskStatusUpdateEvent"]
    assert t.StreamResponse.wrap(ev).status_update is ev
    assert t.SendMessageResponse.wrap(msg).payload is msg
    scheme = t.MutualTlsSecurityScheme()
    assert t.SecurityScheme.wrap(scheme).scheme is scheme
    assert INSTANCES["OAuthFlows"].flow is not None
    with pytest.raises(TypeError):
        t.StreamResponse.wrap("nope")  # type: ignore[arg-type]


def test_empty_is_an_empty_object() -> None:
    assert wire(t.Empty()) == {}
    assert t.Empty.model_validate(None) == t.Empty()
    assert t.Empty.model_validate({"x": 1}) == t.Empty()


# -- 0.3 conversions -----------------------------------------------------------------------

V03_MESSAGE: dict[str, Any] = {
    "kind": "message",
    "messageId": "msg-1",
    "contextId": "ctx-1",
    "taskId": "task-1",
    "role": "user",
    "parts": [
        {"kind": "text", "text": "hi", "metadata": {"a": 1}},
        {"kind": "file", "file": {"bytes": "aGVsbG8=", "mimeType": "text/plain", "name": "a.txt"}},
        {"kind": "file", "file": {"uri": "https://x/y.png", "mimeType": "image/png"}},
        {"kind": "data", "data": {"k": [1, 2]}},
    ],
    "metadata": {"m": True},
    "extensions": ["https://ext"],
    "referenceTaskIds": ["task-0"],
}

V03_TASK: dict[str, Any] = {
    "kind": "task",
    "id": "task-1",
    "contextId": "ctx-1",
    "status": {
        "state": "input-required",
        "message": {**V03_MESSAGE, "role": "agent", "messageId": "msg-2"},
        "timestamp": "2025-10-28T10:30:00.123Z",
    },
    "artifacts": [
        {
            "artifactId": "art-1",
            "name": "n",
            "description": "d",
            "parts": [{"kind": "text", "text": "out"}],
            "metadata": {"x": 1},
            "extensions": ["https://ext"],
        }
    ],
    "history": [V03_MESSAGE],
    "metadata": {"t": 1},
}

V03_STATUS_EVENT: dict[str, Any] = {
    "kind": "status-update",
    "taskId": "task-1",
    "contextId": "ctx-1",
    "status": {"state": "completed", "timestamp": "2025-10-28T10:30:00.000Z"},
    "final": True,
    "metadata": {"e": 1},
}

V03_ARTIFACT_EVENT: dict[str, Any] = {
    "kind": "artifact-update",
    "taskId": "task-1",
    "contextId": "ctx-1",
    "artifact": {"artifactId": "art-1", "parts": [{"kind": "text", "text": "chunk"}]},
    "append": True,
    "lastChunk": False,
}

V03_PUSH: dict[str, Any] = {
    "taskId": "task-1",
    "pushNotificationConfig": {
        "id": "cfg-1",
        "url": "https://client/hook",
        "token": "tok",
        "authentication": {"schemes": ["Bearer"], "credentials": "secret"},
    },
}

V03_CARD: dict[str, Any] = {
    "name": "Agent",
    "description": "An agent",
    "url": "https://agent/a2a",
    "preferredTransport": "JSONRPC",
    "additionalInterfaces": [
        {"url": "https://agent/a2a", "transport": "JSONRPC"},
        {"url": "https://agent/rest", "transport": "HTTP+JSON"},
    ],
    "protocolVersion": "0.3.0",
    "provider": {"organization": "Org", "url": "https://org"},
    "version": "1.0.0",
    "documentationUrl": "https://docs",
    "iconUrl": "https://icon",
    "capabilities": {
        "streaming": True,
        "pushNotifications": False,
        "stateTransitionHistory": True,
        "extensions": [{"uri": "https://ext", "description": "d", "required": False}],
    },
    "supportsAuthenticatedExtendedCard": True,
    "securitySchemes": {
        "key": {"type": "apiKey", "in": "header", "name": "X-Key", "description": "k"},
        "bearer": {"type": "http", "scheme": "Bearer", "bearerFormat": "JWT"},
        "oauth": {
            "type": "oauth2",
            "flows": {
                "authorizationCode": {
                    "authorizationUrl": "https://a",
                    "tokenUrl": "https://t",
                    "scopes": {"read": "Read"},
                }
            },
            "oauth2MetadataUrl": "https://meta",
        },
        "oidc": {"type": "openIdConnect", "openIdConnectUrl": "https://oidc"},
        "mtls": {"type": "mutualTLS"},
    },
    "security": [{"oauth": ["read"]}, {"key": [], "mtls": []}],
    "defaultInputModes": ["text/plain"],
    "defaultOutputModes": ["text/plain"],
    "skills": [
        {
            "id": "s",
            "name": "S",
            "description": "d",
            "tags": ["t"],
            "examples": ["e"],
            "inputModes": ["text/plain"],
            "outputModes": ["text/plain"],
            "security": [{"oauth": ["read"]}],
        }
    ],
    "signatures": [{"protected": "eyJ9", "signature": "c2ln"}],
}


def test_v03_samples_are_valid_v03(v03_schema: Any) -> None:
    v03_schema("Message", V03_MESSAGE)
    v03_schema("Task", V03_TASK)
    v03_schema("TaskStatusUpdateEvent", V03_STATUS_EVENT)
    v03_schema("TaskArtifactUpdateEvent", V03_ARTIFACT_EVENT)
    v03_schema("TaskPushNotificationConfig", V03_PUSH)
    v03_schema("AgentCard", V03_CARD)


@pytest.mark.parametrize(
    ("v03", "from_v03", "to_v03", "v03_name", "v10_name"),
    [
        (V03_MESSAGE, c03.message_from_v03, c03.message_to_v03, "Message", "Message"),
        (V03_TASK, c03.task_from_v03, c03.task_to_v03, "Task", "Task"),
        (
            V03_STATUS_EVENT,
            c03.event_from_v03,
            c03.event_to_v03,
            "TaskStatusUpdateEvent",
            "StreamResponse",
        ),
        (
            V03_ARTIFACT_EVENT,
            c03.event_from_v03,
            c03.event_to_v03,
            "TaskArtifactUpdateEvent",
            "StreamResponse",
        ),
        (
            V03_PUSH,
            c03.push_config_from_v03,
            c03.push_config_to_v03,
            "TaskPushNotificationConfig",
            "TaskPushNotificationConfig",
        ),
    ],
)
def test_v03_round_trip(
    v03: dict[str, Any],
    from_v03: Any,
    to_v03: Any,
    v03_name: str,
    v10_name: str,
    v03_schema: Any,
    v10_schema: Any,
) -> None:
    model = from_v03(v03)
    v10_schema(v10_name, wire(model))
    back = to_v03(model)
    v03_schema(v03_name, back)
    assert back == v03


def test_v03_task_states_and_roles() -> None:
    task = c03.task_from_v03(V03_TASK)
    assert task.status.state is t.TaskState.INPUT_REQUIRED
    assert task.status.message is not None and task.status.message.role is t.Role.AGENT
    assert task.history is not None and task.history[0].parts[1].raw == b"hello"
    for state in t.TaskState:
        assert c03.state_from_v03(c03.state_to_v03(state)) is state


@pytest.mark.parametrize("name", ["Message", "Task", "TaskPushNotificationConfig"])
def test_v10_to_v03_and_back(name: str, v03_schema: Any) -> None:
    obj = INSTANCES[name]
    to = {"Message": c03.message_to_v03, "Task": c03.task_to_v03}.get(name, c03.push_config_to_v03)
    back_fn = {"Message": c03.message_from_v03, "Task": c03.task_from_v03}.get(
        name, c03.push_config_from_v03
    )
    v03 = to(obj)  # type: ignore[operator]
    v03_schema(name, v03)
    back = back_fn(v03)
    if name == "TaskPushNotificationConfig":
        assert back == obj.model_copy(update={"tenant": None})  # 0.3 has no tenant
    else:
        # text/data parts lose mediaType/filename in 0.3; everything else survives
        assert wire(back) == _strip_part_extras(wire(obj))


def _strip_part_extras(obj: Any) -> Any:
    if isinstance(obj, dict):
        if "text" in obj or "data" in obj:
            obj = {k: v for k, v in obj.items() if k not in ("mediaType", "filename")}
        return {k: _strip_part_extras(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_strip_part_extras(v) for v in obj]
    return obj


def test_v03_non_object_data_part_is_wrapped(v03_schema: Any) -> None:
    part = t.Part(data=[1, 2, 3])
    v03 = c03.part_to_v03(part)
    v03_schema("DataPart", v03)
    assert v03["data"] == {"value": [1, 2, 3]}
    assert c03.part_from_v03(v03) == part
    assert c03.part_to_v03(t.Part(data={"a": 1})) == {"kind": "data", "data": {"a": 1}}


def test_v03_part_without_kind_and_a2_1_spelling() -> None:
    assert c03.part_from_v03({"text": "x"}).text == "x"
    part = c03.part_from_v03({"kind": "file", "file": {"fileWithBytes": "AA==", "name": "n"}})
    assert part.raw == b"\x00" and part.filename == "n"
    with pytest.raises(ValueError, match="kind"):
        c03.part_from_v03({"kind": "video"})


@pytest.mark.parametrize("final", [True, False, None])
def test_event_to_v03_final(final: bool | None, v03_schema: Any) -> None:
    working = t.StreamResponse(
        status_update=t.TaskStatusUpdateEvent(
            task_id="t", context_id="c", status=t.TaskStatus(state="working")
        )
    )
    out = c03.event_to_v03(working, final)
    v03_schema("TaskStatusUpdateEvent", out)
    assert out["final"] is (final or False)
    assert out["status"]["state"] == "working"
    done = working.model_copy(
        update={
            "status_update": working.status_update.model_copy(  # type: ignore[union-attr]
                update={"status": t.TaskStatus(state="input-required")}
            )
        }
    )
    assert c03.event_to_v03(done)["final"] is True
    for event in (make_task(), make_message()):
        wrapped = t.StreamResponse.wrap(event)
        v03 = c03.event_to_v03(wrapped)
        v03_schema("Task" if isinstance(event, t.Task) else "Message", v03)
        assert wire(c03.event_from_v03(v03)) == _strip_part_extras(wire(wrapped))


def test_send_params_v03(v03_schema: Any, v10_schema: Any) -> None:
    params = {
        "message": V03_MESSAGE,
        "configuration": {
            "acceptedOutputModes": ["text/plain"],
            "historyLength": 2,
            "blocking": False,
            "pushNotificationConfig": V03_PUSH["pushNotificationConfig"],
        },
        "metadata": {"p": 1},
    }
    v03_schema("MessageSendParams", params)
    req = c03.send_params_from_v03(params)
    v10_schema("SendMessageRequest", wire(req))
    assert req.configuration is not None
    assert req.configuration.return_immediately is True
    assert req.configuration.task_push_notification_config is not None
    assert req.configuration.task_push_notification_config.authentication == t.AuthenticationInfo(
        scheme="Bearer", credentials="secret"
    )
    back = c03.send_params_to_v03(req)
    v03_schema("MessageSendParams", back)
    assert back == params
    # blocking unset: 1.0 default (wait)
    plain = c03.send_params_from_v03({"message": V03_MESSAGE, "configuration": {}})
    assert plain.configuration is not None and plain.configuration.return_immediately is False


def test_card_v03_round_trip(v03_schema: Any, v10_schema: Any) -> None:
    card = c03.card_from_v03(V03_CARD)
    v10_schema("AgentCard", wire(card))
    assert [(i.url, i.protocol_binding, i.protocol_version) for i in card.supported_interfaces] == [
        ("https://agent/a2a", "JSONRPC", "0.3"),
        ("https://agent/rest", "HTTP+JSON", "0.3"),
    ]
    assert card.capabilities.extended_agent_card is True
    assert card.security_requirements == [
        t.SecurityRequirement.of(oauth=["read"]),
        t.SecurityRequirement.of(key=[], mtls=[]),
    ]
    assert card.security_schemes is not None
    assert card.security_schemes["key"].scheme == t.APIKeySecurityScheme(
        location="header", name="X-Key", description="k"
    )
    back = c03.card_to_v03(card)
    v03_schema("AgentCard", back)
    expected = {**V03_CARD, "capabilities": dict(V03_CARD["capabilities"])}
    del expected["capabilities"]["stateTransitionHistory"]  # not in 1.0
    expected["skills"] = [{**V03_CARD["skills"][0]}]
    assert back == expected


def test_card_v10_to_v03(v03_schema: Any) -> None:
    card = make_card()
    v03 = c03.card_to_v03(card)
    v03_schema("AgentCard", v03)
    # the 0.3 interfaces are advertised; the 1.0 one is not
    assert v03["url"] == "https://agent.example/a2a"
    assert v03["preferredTransport"] == "JSONRPC"
    assert v03["additionalInterfaces"] == [
        {"url": "https://agent.example/a2a", "transport": "JSONRPC"},
        {"url": "https://agent.example/rest", "transport": "HTTP+JSON"},
    ]
    assert v03["protocolVersion"] == "0.3.0"
    assert v03["supportsAuthenticatedExtendedCard"] is True
    assert v03["securitySchemes"]["oauth"]["type"] == "oauth2"
    assert v03["securitySchemes"]["mtls"] == {"type": "mutualTLS", "description": "mtls"}
    again = c03.card_from_v03(v03)
    # 0.3 has no pkceRequired; everything else about the schemes survives
    oauth = card.security_schemes["oauth"].oauth2_security_scheme  # type: ignore[index]
    assert oauth is not None and oauth.flows.authorization_code is not None
    oauth.flows.authorization_code.pkce_required = False
    assert again.security_schemes == card.security_schemes
    assert again.skills == card.skills
    # device-code-only OAuth has no 0.3 form: the flow is left out, the result still valid
    dev = card.model_copy(
        update={
            "security_schemes": {
                "d": t.SecurityScheme(
                    oauth2_security_scheme=INSTANCES["OAuth2SecurityScheme"].model_copy(
                        update={"flows": INSTANCES["OAuthFlows"]}
                    )
                )
            }
        }
    )
    v03_schema("AgentCard", c03.card_to_v03(dev))


def test_card_from_any() -> None:
    assert c03.card_from_any(V03_CARD) == c03.card_from_v03(V03_CARD)
    card = make_card()
    assert c03.card_from_any(wire(card)) == card
    legacy = {**wire(card), "supportsExtendedAgentCard": True}
    legacy["capabilities"] = {"streaming": True}
    assert c03.card_from_any(legacy).capabilities.extended_agent_card is True


# 0.3 JSON-RPC: every method through params_from_v03 / result_to_v03, validated against the
# 0.3 request and success-response schemas.
V03_CALLS: list[tuple[str, str, str, Any, str]] = [
    # (0.3 method, 0.3 request schema, 0.3 success schema, params, 1.0 result instance)
    (
        "message/send",
        "SendMessageRequest",
        "SendMessageSuccessResponse",
        {"message": V03_MESSAGE},
        "SendMessageResponse",
    ),
    (
        "message/stream",
        "SendStreamingMessageRequest",
        "SendStreamingMessageSuccessResponse",
        {"message": V03_MESSAGE, "configuration": {"blocking": True}},
        "StreamResponse",
    ),
    (
        "tasks/get",
        "GetTaskRequest",
        "GetTaskSuccessResponse",
        {"id": "task-1", "historyLength": 3},
        "Task",
    ),
    (
        "tasks/cancel",
        "CancelTaskRequest",
        "CancelTaskSuccessResponse",
        {"id": "task-1", "metadata": {"x": 1}},
        "Task",
    ),
    (
        "tasks/resubscribe",
        "TaskResubscriptionRequest",
        "SendStreamingMessageSuccessResponse",
        {"id": "task-1"},
        "StreamResponse",
    ),
    (
        "tasks/pushNotificationConfig/set",
        "SetTaskPushNotificationConfigRequest",
        "SetTaskPushNotificationConfigSuccessResponse",
        V03_PUSH,
        "TaskPushNotificationConfig",
    ),
    (
        "tasks/pushNotificationConfig/get",
        "GetTaskPushNotificationConfigRequest",
        "GetTaskPushNotificationConfigSuccessResponse",
        {"id": "task-1", "pushNotificationConfigId": "cfg-1"},
        "TaskPushNotificationConfig",
    ),
    (
        "tasks/pushNotificationConfig/list",
        "ListTaskPushNotificationConfigRequest",
        "ListTaskPushNotificationConfigSuccessResponse",
        {"id": "task-1"},
        "ListTaskPushNotificationConfigsResponse",
    ),
    (
        "tasks/pushNotificationConfig/delete",
        "DeleteTaskPushNotificationConfigRequest",
        "DeleteTaskPushNotificationConfigSuccessResponse",
        {"id": "task-1", "pushNotificationConfigId": "cfg-1"},
        "Empty",
    ),
    (
        "agent/getAuthenticatedExtendedCard",
        "GetAuthenticatedExtendedCardRequest",
        "GetAuthenticatedExtendedCardSuccessResponse",
        None,
        "AgentCard",
    ),
]


@pytest.mark.parametrize(("method", "req_schema", "ok_schema", "params", "result"), V03_CALLS)
def test_v03_methods_both_ways(
    method: str, req_schema: str, ok_schema: str, params: Any, result: str, v03_schema: Any
) -> None:
    request: dict[str, Any] = {"jsonrpc": "2.0", "id": 1, "method": method}
    if params is not None:
        request["params"] = params
    v03_schema(req_schema, request)

    # server side: 0.3 call -> 1.0 descriptor + params, 1.0 result -> 0.3 result
    descriptor, model = c03.params_from_v03(method, params)
    assert descriptor.method == METHODS_V03_TO_V10[method]
    assert isinstance(model, descriptor.params_type)
    value = t.Empty() if result == "Empty" else INSTANCES[result]
    assert isinstance(value, descriptor.result_type)
    out = c03.result_to_v03(descriptor.method, value)
    v03_schema(ok_schema, {"jsonrpc": "2.0", "id": 1, "result": out})

    # client side: 1.0 params -> 0.3 call, 0.3 result -> 1.0 result
    name, sent = c03.params_to_v03(descriptor.method, model)
    assert name == METHODS_V10_TO_V03[descriptor.method]
    call: dict[str, Any] = {"jsonrpc": "2.0", "id": 1, "method": name}
    if sent is not None:
        call["params"] = sent
    v03_schema(req_schema, call)
    assert c03.params_from_v03(name, sent)[1] == model
    received = c03.result_from_v03(descriptor.method, out)
    assert isinstance(received, descriptor.result_type)


def test_v03_get_push_config_without_config_id() -> None:
    _, req = c03.params_from_v03("tasks/pushNotificationConfig/get", {"id": "task-1"})
    assert req == t.GetTaskPushNotificationConfigRequest(task_id="task-1", id="task-1")


def test_v03_bad_calls() -> None:
    with pytest.raises(MethodNotFound):
        c03.params_from_v03("tasks/list", {})
    with pytest.raises(InvalidParams, match=r"params\.message\.messageId"):
        c03.params_from_v03("message/send", {"message": {**V03_MESSAGE, "messageId": None}})
    with pytest.raises(InvalidParams, match="kind"):
        c03.params_from_v03(
            "message/send", {"message": {**V03_MESSAGE, "parts": [{"kind": "video"}]}}
        )
    with pytest.raises(InvalidParams, match=r"params\.message"):
        c03.params_from_v03("message/send", {"message": "text"})
    with pytest.raises(InvalidParams, match="blocking"):
        c03.params_from_v03(
            "message/send", {"message": V03_MESSAGE, "configuration": {"blocking": "no"}}
        )
    with pytest.raises(MethodNotFound):
        c03.params_to_v03("ListTasks", t.ListTasksRequest())


# -- errors --------------------------------------------------------------------------------


def spec_error_table() -> dict[str, tuple[int, str, int]]:
    """Spec 5.4: error name -> (JSON-RPC code, gRPC status, HTTP status)."""
    text = _spec("v1.0/specification.md")
    section = text.split("### 5.4. Error Code Mappings", 1)[1].split("###", 1)[0]
    rows = re.findall(r"\| `(\w+)`\s*\| `(-\d+)`\s*\| `(\w+)`\s*\| `(\d+)[^`]*`", section)
    return {name: (int(code), grpc, int(http)) for name, code, grpc, http in rows}


def test_error_table_matches_spec() -> None:
    spec = spec_error_table()
    assert len(spec) == 9
    rows = {row.spec_name: row for row in ERROR_TABLE}
    for name, (code, grpc, http) in spec.items():
        row = rows[name]
        assert (row.code, row.grpc_status, row.http_status) == (code, grpc, http)
        # reason: UPPER_SNAKE_CASE of the name without "Error" (spec 10.6, 11.6)
        snake = re.sub(r"(?<!^)(?=[A-Z])", "_", name.removesuffix("Error")).upper()
        assert row.reason == snake
        assert row.cls.code == code
        assert issubclass(row.cls, A2AError) and row.cls.reason == row.reason
        assert A2A_ERRORS.class_for(code) is row.cls
        # nothing leaks into the table other protocols share
        assert error_class_for_code(code) is ServerError


def test_error_table_is_complete_and_consistent() -> None:
    codes = [row.code for row in ERROR_TABLE]
    assert len(codes) == len(set(codes))
    assert len({row.reason for row in ERROR_TABLE}) == len(ERROR_TABLE)
    assert set(codes) == {-32700, -32600, -32601, -32602, -32603} | set(range(-32009, -32000))
    for cls in (ParseError, InvalidRequest, MethodNotFound, InvalidParams, InternalError):
        assert error_row(cls).cls is cls
    for row in ERROR_TABLE:
        assert row.grpc_status in {
            "NOT_FOUND",
            "FAILED_PRECONDITION",
            "INVALID_ARGUMENT",
            "INTERNAL",
        }
        assert 400 <= row.http_status < 600
        assert error_row(row.code) is row and http_status_for(row.cls) == row.http_status
        assert row.cls().message  # a default message
    assert http_status_for(-32050) == 500  # implementation-defined server error
    assert http_status_for(InvalidParams()) == 400


def test_error_data_form() -> None:
    err = TaskNotFound("Task not found", metadata={"taskId": "nonexistent-task-id"})
    expected = {
        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
        "reason": "TASK_NOT_FOUND",
        "domain": "a2a-protocol.org",
        "metadata": {"taskId": "nonexistent-task-id"},
    }
    assert err.data == [expected]
    assert err.to_object() == {"code": -32001, "message": "Task not found", "data": [expected]}
    assert error_data(InvalidParams("bad"), field=3) == [
        {
            "@type": ERROR_INFO_TYPE,
            "reason": "INVALID_PARAMS",
            "domain": A2A_ERROR_DOMAIN,
            "metadata": {"field": "3"},
        }
    ]
    assert "metadata" not in error_data(TaskNotFound())[0]
    assert bad_request_detail([("message.parts", "At least one part is required")]) == {
        "@type": "type.googleapis.com/google.rpc.BadRequest",
        "fieldViolations": [
            {"field": "message.parts", "description": "At least one part is required"}
        ],
    }


def test_error_objects_round_trip() -> None:
    for row in ERROR_TABLE:
        err = row.cls("boom")
        obj = json.loads(json.dumps(err.to_object()))
        back = a2a_error_from_object(obj)
        assert type(back) is row.cls and back == err
    received = a2a_error_from_object({"code": -32001, "message": "gone"})
    assert isinstance(received, TaskNotFound) and not received.has_data
    # a peer refining a generic error with the A2A table gets the same
    refined = A2A_ERRORS.refine(error_from_object({"code": -32002, "message": "m", "data": [1]}))
    assert type(refined).__name__ == "TaskNotCancelable" and refined.data == [1]
    assert type(a2a_error_from_object({"code": -32077, "message": "x"})).__name__ == "ServerError"


def test_http_error_body_round_trip() -> None:
    err = TaskNotFound("The specified task ID does not exist", metadata={"taskId": "task-123"})
    body = http_error_body(err)
    assert body == {
        "error": {
            "code": 404,
            "status": "NOT_FOUND",
            "message": "The specified task ID does not exist",
            "details": err.data,
        }
    }
    back = error_from_http(404, body)
    assert isinstance(back, TaskNotFound) and back.message == err.message
    assert error_info(back) == error_info(err)
    plain = http_error_body(InvalidParams("bad"))
    assert plain["error"]["code"] == 400 and plain["error"]["status"] == "INVALID_ARGUMENT"
    assert isinstance(error_from_http(400, plain), InvalidParams)
    # a2a-sdk's reason for the internal error, and bodies without ErrorInfo
    sdk = {
        "error": {
            "message": "x",
            "details": [{"@type": ERROR_INFO_TYPE, "reason": "INTERNAL_ERROR"}],
        }
    }
    assert isinstance(error_from_http(500, sdk), InternalError)
    assert isinstance(error_from_http(503, "oops"), InternalError)
    assert isinstance(error_from_http(400, {"detail": "x"}), InvalidRequest)


def test_a2a_errors_are_json_rpc_errors() -> None:
    for row in ERROR_TABLE:
        assert issubclass(row.cls, JsonRpcError)


# -- methods -------------------------------------------------------------------------------


def test_descriptors_match_the_proto_service(proto: str) -> None:
    rpcs = re.findall(r"rpc (\w+)\((\w+)\) returns \((stream )?([\w.]+)\)", proto)
    assert {name for name, *_ in rpcs} == set(METHODS_V10)
    for name, params, _stream, result in rpcs:
        d = METHODS_V10[name]
        assert d.method == name
        assert d.params_type.__name__ == params
        assert d.result_type.__name__ == result.rsplit(".", 1)[-1]


def test_v03_names_map_to_v10() -> None:
    assert set(METHODS_V10_TO_V03) == set(METHODS_V10) - {"ListTasks"}
    for v03, v10 in METHODS_V03_TO_V10.items():
        assert v10 in METHODS_V10
        if v03 != "agent/authenticatedExtendedCard":
            assert METHODS_V10_TO_V03[v10] == v03


@pytest.mark.parametrize(
    ("descriptor", "params", "field"),
    [
        (SEND_MESSAGE, {}, "params.message"),
        (
            SEND_MESSAGE,
            {"message": {"messageId": "m", "role": "ROLE_USER", "parts": []}},
            "params.message.parts",
        ),
        (
            SEND_MESSAGE,
            {"message": {"messageId": "m", "role": "ROLE_X", "parts": [{"text": "a"}]}},
            "params.message.role",
        ),
        (
            SEND_MESSAGE,
            {"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{}]}},
            "params.message.parts.0",
        ),
        (LIST_TASKS, {"pageSize": 150}, "params.pageSize"),
        (LIST_TASKS, {"status": "TASK_STATE_RUNNING"}, "params.status"),
        (METHODS_V10["GetTask"], {"historyLength": 1}, "params.id"),
        (METHODS_V10["CreateTaskPushNotificationConfig"], {"taskId": "t"}, "params.url"),
    ],
)
def test_params_validation_names_the_field(descriptor: Any, params: Any, field: str) -> None:
    with pytest.raises(InvalidParams) as info:
        descriptor.validate_params(params)
    assert f"{field}:" in info.value.message


def test_params_validation_accepts_good_params() -> None:
    req = SEND_MESSAGE.validate_params(wire(INSTANCES["SendMessageRequest"]))
    assert req == INSTANCES["SendMessageRequest"]
    assert (
        METHODS_V10["GetExtendedAgentCard"].validate_params(None) == t.GetExtendedAgentCardRequest()
    )
    assert METHODS_V10["DeleteTaskPushNotificationConfig"].validate_result(None) == t.Empty()


# -- HTTP+JSON routes ----------------------------------------------------------------------


def proto_routes(proto: str) -> set[tuple[str, str, str]]:
    out = set()
    for m in re.finditer(r"rpc (\w+)\(.*?\n  \}", proto, re.S):
        for verb, path in re.findall(r"(post|get|delete|put|patch): \"([^\"]+)\"", m.group(0)):
            out.add((verb.upper(), re.sub(r"=\*\}", "}", path), m.group(1)))
    return out


def test_http_routes_are_the_proto_annotations(proto: str) -> None:
    ours = {(r.http_method, r.path, r.method) for r in HTTP_ROUTES_V10}
    assert ours == proto_routes(proto)
    assert len(ours) == len(HTTP_ROUTES_V10) == 22
    for route in HTTP_ROUTES_V10:
        assert route.body == (route.http_method == "POST")


@pytest.mark.parametrize(
    ("verb", "path", "method", "found"),
    [
        ("POST", "/message:send", "SendMessage", {}),
        ("POST", "/t1/message:stream", "SendStreamingMessage", {"tenant": "t1"}),
        ("GET", "/tasks/abc", "GetTask", {"id": "abc"}),
        ("GET", "/tasks", "ListTasks", {}),
        ("GET", "/t1/tasks", "ListTasks", {"tenant": "t1"}),
        ("POST", "/tasks/abc:cancel", "CancelTask", {"id": "abc"}),
        ("GET", "/tasks/abc:subscribe", "SubscribeToTask", {"id": "abc"}),
        ("POST", "/tasks/abc:subscribe", "SubscribeToTask", {"id": "abc"}),
        (
            "POST",
            "/tasks/abc/pushNotificationConfigs",
            "CreateTaskPushNotificationConfig",
            {"task_id": "abc"},
        ),
        (
            "GET",
            "/t/tasks/abc/pushNotificationConfigs/c1",
            "GetTaskPushNotificationConfig",
            {"tenant": "t", "task_id": "abc", "id": "c1"},
        ),
        (
            "GET",
            "/tasks/abc/pushNotificationConfigs",
            "ListTaskPushNotificationConfigs",
            {"task_id": "abc"},
        ),
        (
            "DELETE",
            "/tasks/abc/pushNotificationConfigs/c1",
            "DeleteTaskPushNotificationConfig",
            {"task_id": "abc", "id": "c1"},
        ),
        ("GET", "/extendedAgentCard", "GetExtendedAgentCard", {}),
    ],
)
def test_match_http_route(verb: str, path: str, method: str, found: dict[str, str]) -> None:
    match = match_http_route(verb, path)
    assert match is not None
    route, params = match
    assert (route.method, params) == (method, found)


def test_unmatched_routes() -> None:
    assert match_http_route("DELETE", "/tasks/abc") is None
    assert match_http_route("GET", "/nope/at/all/here") is None
    assert match_http_route("POST", "/tasks/abc:subscribe", aliases=False) is None
    assert all(r.method == "SubscribeToTask" for r in HTTP_ROUTE_ALIASES_V10)


@pytest.mark.parametrize("method", sorted(METHODS_V10))
def test_http_request_round_trip(method: str) -> None:
    descriptor = METHODS_V10[method]
    name = descriptor.params_type.__name__
    params = INSTANCES[name]
    spec = http_request_for(method, params)
    match = match_http_route(spec.http_method, spec.path)
    assert match is not None and match[0].method == method
    query = {k: [v] for k, v in spec.query.items()}
    raw = params_from_http(match[0], match[1], query, spec.body)
    assert descriptor.validate_params(raw) == params
    untenanted = params.model_copy(update={"tenant": None})
    assert "tenant" not in http_request_for(method, untenanted).path


def test_http_request_shapes() -> None:
    spec = http_request_for("ListTasks", INSTANCES["ListTasksRequest"])
    assert (spec.http_method, spec.path, spec.body) == ("GET", "/t1/tasks", None)
    assert spec.query == {
        "contextId": "ctx-1",
        "status": "TASK_STATE_WORKING",
        "pageSize": "50",
        "pageToken": "cursor",
        "historyLength": "3",
        "statusTimestampAfter": "2025-10-28T10:30:00.123Z",
        "includeArtifacts": "true",
    }
    spec = http_request_for("GetTask", t.GetTaskRequest(id="a/b"))
    assert spec.path == "/tasks/a%2Fb"
    spec = http_request_for("CreateTaskPushNotificationConfig", make_push_config())
    assert spec.path == "/tenant-a/tasks/task-1/pushNotificationConfigs"
    assert spec.body is not None and "taskId" not in spec.body and "tenant" not in spec.body
    with pytest.raises(ValueError, match="no HTTP"):
        http_request_for("Nope", t.GetTaskRequest(id="x"))
    with pytest.raises(ValueError, match="taskId"):
        http_request_for(
            "ListTaskPushNotificationConfigs", t.ListTaskPushNotificationConfigsRequest(task_id="")
        )
