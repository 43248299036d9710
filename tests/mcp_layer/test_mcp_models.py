"""The MCP data layer against the official 2025-11-25 JSON schema.

What is proven here:

1. Every model of `mcp_layer.types` has a representative instance below, and every field
   of every model is set (not ``None``) in at least one of them (`test_every_field_is_covered`).
2. Each instance, written the way rpcweave writes the wire
   (``pydantic_core.to_json(obj, by_alias=True, exclude_none=True)``), validates against
   its schema definition, parses back into an equal model and is written identically.
3. Every method in the four descriptor tables, as a whole JSON-RPC request, notification
   and result message, validates against the schema's message definitions
   (``CallToolRequest``, ``ClientRequest``, ``JSONRPCRequest``, ``ServerResult``, ...),
   and the tables list exactly the methods of the schema's four unions.
4. Lenient in: unknown members survive a round trip, snake_case and camelCase are both
   accepted, unknown content types are kept, and what older revisions' peers send parses.
5. Bad params become `InvalidParams` naming the field.

The schema lives outside the repository; tests/_specs.py finds it (``$RPCWEAVE_SPECS`` or
``../shared/specs``). Tests that need it are skipped and counted when it is absent, and
fail under CI.

Tests the private unit `mcp_layer._methods` on purpose: the method tables are checked
against the schema's request and notification unions.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import _specs
import mcp2026_cases
import pydantic
import pydantic_core
import pytest

from jsonrpc_core import (
    STANDARD_ERRORS,
    InternalError,
    InvalidParams,
    MethodNotFound,
    Notification,
    NotificationType,
    Request,
    RequestType,
    Response,
    ServerError,
    encode,
)
from mcp_layer import MCP_ERRORS, ResourceNotFound, URLElicitationRequired
from mcp_layer import _methods as M
from mcp_layer import types as T

REPO = Path(__file__).resolve().parents[2]
SCHEMA = "mcp/2025-11-25/schema.json"


# --- schema access -------------------------------------------------------------------------


@functools.cache
def _defs() -> dict[str, Any]:
    return dict(json.loads(_specs.read(SCHEMA))["$defs"])


@functools.cache
def _validator(name: str) -> Any:
    from jsonschema import Draft202012Validator

    schema = {"$ref": f"#/$defs/{name}", "$defs": _defs()}
    return Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)


@pytest.fixture
def conform() -> Any:
    """``conform(name, value)`` asserts that ``value`` validates against ``$defs/name``."""
    _specs.need(SCHEMA)

    def check(name: str, value: Any) -> None:
        errors = sorted(_validator(name).iter_errors(value), key=lambda e: list(e.path))
        if errors:
            lines = [f"  at {list(e.path)}: {e.message[:300]}" for e in errors[:5]]
            pytest.fail(f"not a valid {name}:\n" + "\n".join(lines))

    return check


def wire(obj: Any) -> Any:
    """``obj`` as rpcweave writes it, decoded back to plain JSON values."""
    return json.loads(pydantic_core.to_json(obj, by_alias=True, exclude_none=True))


# --- representative instances ----------------------------------------------------------------

META = {"example.com/trace": "abc123"}
REQ_META = {"progressToken": "tok-1", "example.com/trace": "abc123"}
NOW = "2025-11-25T10:30:00Z"
LATER = "2025-11-25T10:40:00Z"

ANN = T.Annotations(audience=["user", "assistant"], priority=0.5, last_modified=NOW)
ICON = T.Icon(src="https://example.com/icon.png", mime_type="image/png", sizes=["48x48"])
DARK_ICON = T.Icon(src="data:image/svg+xml;base64,PHN2Zz4=", sizes=["any"], theme="dark")
TEXT = T.TextContent(text="Hello", annotations=ANN, meta=META)
IMAGE = T.ImageContent(data="iVBORw0KGgo=", mime_type="image/png", annotations=ANN, meta=META)
AUDIO = T.AudioContent(data="UklGRiQAAABXQVZF", mime_type="audio/wav", annotations=ANN, meta=META)
RESOURCE_FIELDS: dict[str, Any] = {
    "uri": "file:///project/README.md",
    "name": "readme",
    "title": "Project README",
    "description": "The project's README file",
    "mime_type": "text/markdown",
    "annotations": ANN,
    "size": 1024,
    "icons": [ICON, DARK_ICON],
    "meta": META,
}
RESOURCE = T.Resource(**RESOURCE_FIELDS)
LINK = T.ResourceLink(**RESOURCE_FIELDS)
TEXT_CONTENTS = T.TextResourceContents(
    uri="file:///project/a.txt", mime_type="text/plain", text="abc", meta=META
)
BLOB_CONTENTS = T.BlobResourceContents(
    uri="file:///project/a.bin", mime_type="application/octet-stream", blob="AAEC", meta=META
)
EMBEDDED = T.EmbeddedResource(resource=TEXT_CONTENTS, annotations=ANN, meta=META)
EMBEDDED_BLOB = T.EmbeddedResource(resource=BLOB_CONTENTS)
TEMPLATE = T.ResourceTemplate(
    uri_template="file:///project/{path}",
    name="project-files",
    title="Project files",
    description="Any file of the project",
    mime_type="text/plain",
    annotations=ANN,
    icons=[ICON],
    meta=META,
)
INPUT_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
    "additionalProperties": False,
}
OUTPUT_SCHEMA = {"type": "object", "properties": {"celsius": {"type": "number"}}}
TOOL_ANNOTATIONS = T.ToolAnnotations(
    title="Weather",
    read_only_hint=True,
    destructive_hint=False,
    idempotent_hint=True,
    open_world_hint=True,
)
TOOL = T.Tool(
    name="get_weather",
    title="Weather",
    description="Current weather of a city",
    input_schema=INPUT_SCHEMA,
    output_schema=OUTPUT_SCHEMA,
    annotations=TOOL_ANNOTATIONS,
    execution=T.ToolExecution(task_support="optional"),
    icons=[ICON],
    meta=META,
)
TASK_META = T.TaskMetadata(ttl=60000)
TASK_FIELDS: dict[str, Any] = {
    "task_id": "786512e2-9e0d-44bd-8f29-789f320fe840",
    "status": "working",
    "status_message": "The operation is now in progress.",
    "created_at": NOW,
    "last_updated_at": LATER,
    "ttl": 60000,
    "poll_interval": 5000,
}
TASK = T.Task(**TASK_FIELDS)
UNLIMITED_TASK = T.Task(task_id="t-2", status="completed", created_at=NOW, last_updated_at=LATER)
CALL_RESULT = T.CallToolResult(
    content=[TEXT, IMAGE, AUDIO, LINK, EMBEDDED, EMBEDDED_BLOB],
    structured_content={"celsius": 21.5, "note": None},
    is_error=False,
    meta=META,
)
TOOL_USE = T.ToolUseContent(id="call_1", name="get_weather", input={"city": "Paris"}, meta=META)
TOOL_RESULT = T.ToolResultContent(
    tool_use_id="call_1",
    content=[T.TextContent(text="21.5 C")],
    structured_content={"celsius": 21.5},
    is_error=False,
    meta=META,
)
IMPLEMENTATION = T.Implementation(
    name="rpcweave-test",
    title="rpcweave test peer",
    version="1.2.3",
    description="A peer used by the tests",
    website_url="https://example.com",
    icons=[ICON],
)
URL_ELICITATION = T.ElicitRequestURLParams(
    message="Please provide your API key to continue.",
    elicitation_id="550e8400-e29b-41d4-a716-446655440000",
    url="https://mcp.example.com/ui/set_api_key",
    task=TASK_META,
    meta=REQ_META,
)
ENUM_OPTIONS = [
    T.EnumOption(const="#FF0000", title="Red"),
    T.EnumOption(const="#00FF00", title="Green"),
]
FIELD_SCHEMAS: dict[str, Any] = {
    "name": T.StringSchema(
        title="Name",
        description="Your name",
        min_length=1,
        max_length=50,
        pattern="^[A-Za-z ]+$",
        format="email",
        default="a@example.com",
    ),
    "age": T.NumberSchema(
        type="integer", title="Age", description="Years", minimum=0, maximum=150, default=30
    ),
    "score": T.NumberSchema(type="number", minimum=0.5, maximum=9.5, default=2.5),
    "ok": T.BooleanSchema(title="OK?", description="Agree", default=True),
    "color": T.UntitledSingleSelectEnumSchema(
        title="Color", description="Pick one", enum=["Red", "Green"], default="Red"
    ),
    "hex": T.TitledSingleSelectEnumSchema(
        title="Hex", description="Pick one", one_of=ENUM_OPTIONS, default="#FF0000"
    ),
    "colors": T.UntitledMultiSelectEnumSchema(
        title="Colors",
        description="Pick some",
        items=T.UntitledMultiSelectItems(enum=["Red", "Green"]),
        min_items=1,
        max_items=2,
        default=["Red"],
    ),
    "hexes": T.TitledMultiSelectEnumSchema(
        title="Hexes",
        description="Pick some",
        items=T.TitledMultiSelectItems(any_of=ENUM_OPTIONS),
        min_items=1,
        max_items=2,
        default=["#FF0000"],
    ),
    "legacy": T.LegacyTitledEnumSchema(
        title="Legacy",
        description="2025-06-18 style",
        enum=["a", "b"],
        enum_names=["A", "B"],
        default="a",
    ),
}
FORM_ELICITATION = T.ElicitRequestFormParams(
    message="Please provide your contact information",
    requested_schema=T.ElicitRequestedSchema(
        schema_="https://json-schema.org/draft/2020-12/schema",
        properties=FIELD_SCHEMAS,
        required=["name"],
    ),
    task=TASK_META,
    meta=REQ_META,
)
CLIENT_CAPS = T.ClientCapabilities(
    experimental={"example.com/feature": {"level": 2}},
    roots=T.RootsCapability(list_changed=True),
    sampling=T.SamplingCapability(context={}, tools={}),
    elicitation=T.ElicitationCapability(form={}, url={}),
    tasks=T.ClientTasksCapability(
        list={},
        cancel={},
        requests=T.ClientTaskRequestsCapability(
            sampling=T.TaskSamplingCapability(create_message={}),
            elicitation=T.TaskElicitationCapability(create={}),
        ),
    ),
)
SERVER_CAPS = T.ServerCapabilities(
    experimental={"example.com/feature": {}},
    logging={},
    completions={},
    prompts=T.PromptsCapability(list_changed=True),
    resources=T.ResourcesCapability(subscribe=True, list_changed=True),
    tools=T.ToolsCapability(list_changed=True),
    tasks=T.ServerTasksCapability(
        list={},
        cancel={},
        requests=T.ServerTaskRequestsCapability(tools=T.TaskToolsCapability(call={})),
    ),
)
PROMPT_ARGUMENT = T.PromptArgument(name="code", title="Code", description="Code", required=True)
PROMPT = T.Prompt(
    name="code_review",
    title="Request Code Review",
    description="Asks the LLM to review code",
    arguments=[PROMPT_ARGUMENT],
    icons=[ICON],
    meta=META,
)
MODEL_PREFERENCES = T.ModelPreferences(
    hints=[T.ModelHint(name="claude-3-sonnet"), T.ModelHint(name="claude")],
    cost_priority=0.3,
    speed_priority=0.8,
    intelligence_priority=0.5,
)
SAMPLING_REQUEST = T.CreateMessageRequestParams(
    messages=[
        T.SamplingMessage(role="user", content=TEXT, meta=META),
        T.SamplingMessage(role="assistant", content=[TOOL_USE]),
        T.SamplingMessage(role="user", content=[TOOL_RESULT]),
        T.SamplingMessage(role="user", content=[IMAGE, AUDIO]),
    ],
    model_preferences=MODEL_PREFERENCES,
    system_prompt="You are a helpful assistant.",
    include_context="thisServer",
    temperature=0.7,
    max_tokens=1000,
    stop_sequences=["\n\nHuman:"],
    metadata={"provider": {"top_k": 5}},
    tools=[TOOL],
    tool_choice=T.ToolChoice(mode="auto"),
    task=TASK_META,
    meta=REQ_META,
)
INITIALIZE_PARAMS = T.InitializeRequestParams(
    protocol_version=T.LATEST_PROTOCOL_VERSION,
    capabilities=CLIENT_CAPS,
    client_info=IMPLEMENTATION,
    meta=REQ_META,
)
INITIALIZE_RESULT = T.InitializeResult(
    protocol_version=T.LATEST_PROTOCOL_VERSION,
    capabilities=SERVER_CAPS,
    server_info=IMPLEMENTATION,
    instructions="Call get_weather for weather questions.",
    meta=META,
)
SAMPLING_RESULT = T.CreateMessageResult(
    role="assistant",
    content=[TOOL_USE, T.TextContent(text="Checking the weather.")],
    model="claude-3-sonnet-20240307",
    stop_reason="toolUse",
    meta=META,
)

# (schema definition, instance); the definition is the instance's own, not a message's.
CASES: list[tuple[str, T.MCPModel]] = [
    ("Annotations", ANN),
    ("Icon", ICON),
    ("Icon", DARK_ICON),
    ("BaseMetadata", T.BaseMetadata(name="n", title="N")),
    ("TextContent", TEXT),
    ("TextContent", T.TextContent(text="")),
    ("ImageContent", IMAGE),
    ("AudioContent", AUDIO),
    ("ResourceLink", LINK),
    ("ResourceLink", T.ResourceLink(uri="https://example.com/x", name="x")),
    ("EmbeddedResource", EMBEDDED),
    ("EmbeddedResource", EMBEDDED_BLOB),
    ("Resource", RESOURCE),
    ("ResourceTemplate", TEMPLATE),
    ("ResourceContents", T.ResourceContents(uri="file:///x", mime_type="text/plain", meta=META)),
    ("TextResourceContents", TEXT_CONTENTS),
    ("BlobResourceContents", BLOB_CONTENTS),
    (
        "ListResourcesResult",
        T.ListResourcesResult(resources=[RESOURCE], next_cursor="c2", meta=META),
    ),
    (
        "ListResourceTemplatesResult",
        T.ListResourceTemplatesResult(resource_templates=[TEMPLATE], next_cursor="c2", meta=META),
    ),
    ("ResourceRequestParams", T.ResourceRequestParams(uri="file:///x", meta=REQ_META)),
    ("ReadResourceRequestParams", T.ReadResourceRequestParams(uri="file:///x", meta=REQ_META)),
    (
        "ReadResourceResult",
        T.ReadResourceResult(contents=[TEXT_CONTENTS, BLOB_CONTENTS], meta=META),
    ),
    ("SubscribeRequestParams", T.SubscribeRequestParams(uri="file:///x", meta=REQ_META)),
    ("UnsubscribeRequestParams", T.UnsubscribeRequestParams(uri="file:///x", meta=REQ_META)),
    (
        "ResourceUpdatedNotificationParams",
        T.ResourceUpdatedNotificationParams(uri="file:///x", meta=META),
    ),
    ("ToolAnnotations", TOOL_ANNOTATIONS),
    ("ToolExecution", T.ToolExecution(task_support="required")),
    ("Tool", TOOL),
    ("Tool", T.Tool(name="noop", input_schema={"type": "object"})),
    ("ListToolsResult", T.ListToolsResult(tools=[TOOL], next_cursor="c2", meta=META)),
    (
        "CallToolRequestParams",
        T.CallToolRequestParams(
            name="get_weather", arguments={"city": "Paris"}, task=TASK_META, meta=REQ_META
        ),
    ),
    ("CallToolResult", CALL_RESULT),
    ("CallToolResult", T.CallToolResult(content=[], is_error=True)),
    ("PromptArgument", PROMPT_ARGUMENT),
    ("Prompt", PROMPT),
    ("ListPromptsResult", T.ListPromptsResult(prompts=[PROMPT], next_cursor="c2", meta=META)),
    (
        "GetPromptRequestParams",
        T.GetPromptRequestParams(name="code_review", arguments={"code": "x = 1"}, meta=REQ_META),
    ),
    ("PromptMessage", T.PromptMessage(role="user", content=EMBEDDED)),
    (
        "GetPromptResult",
        T.GetPromptResult(
            description="A code review",
            messages=[
                T.PromptMessage(role="user", content=TEXT),
                T.PromptMessage(role="assistant", content=LINK),
            ],
            meta=META,
        ),
    ),
    ("PromptReference", T.PromptReference(name="code_review", title="Code review")),
    ("ResourceTemplateReference", T.ResourceTemplateReference(uri="file:///{path}")),
    (
        "CompleteRequestParams",
        T.CompleteRequestParams(
            ref=T.ResourceTemplateReference(uri="file:///{path}"),
            argument=T.CompletionArgument(name="path", value="src/"),
            context=T.CompletionContext(arguments={"root": "/"}),
            meta=REQ_META,
        ),
    ),
    (
        "CompleteRequestParams",
        T.CompleteRequestParams(
            ref=T.PromptReference(name="code_review"),
            argument=T.CompletionArgument(name="language", value="py"),
        ),
    ),
    (
        "CompleteResult",
        T.CompleteResult(
            completion=T.Completion(values=["python", "pytorch"], total=10, has_more=True),
            meta=META,
        ),
    ),
    ("SetLevelRequestParams", T.SetLevelRequestParams(level="warning", meta=REQ_META)),
    (
        "LoggingMessageNotificationParams",
        T.LoggingMessageNotificationParams(
            level="error", logger="database", data={"error": "Connection failed"}, meta=META
        ),
    ),
    (
        "LoggingMessageNotificationParams",
        T.LoggingMessageNotificationParams(level="info", data=None),
    ),
    ("ToolUseContent", TOOL_USE),
    ("ToolResultContent", TOOL_RESULT),
    ("SamplingMessage", SAMPLING_REQUEST.messages[0]),
    ("SamplingMessage", SAMPLING_REQUEST.messages[1]),
    ("ModelHint", T.ModelHint(name="claude")),
    ("ModelPreferences", MODEL_PREFERENCES),
    ("ToolChoice", T.ToolChoice(mode="required")),
    ("CreateMessageRequestParams", SAMPLING_REQUEST),
    ("CreateMessageResult", SAMPLING_RESULT),
    (
        "CreateMessageResult",
        T.CreateMessageResult(role="assistant", content=TEXT, model="m", stop_reason="endTurn"),
    ),
    ("StringSchema", FIELD_SCHEMAS["name"]),
    ("NumberSchema", FIELD_SCHEMAS["age"]),
    ("NumberSchema", FIELD_SCHEMAS["score"]),
    ("BooleanSchema", FIELD_SCHEMAS["ok"]),
    ("UntitledSingleSelectEnumSchema", FIELD_SCHEMAS["color"]),
    ("TitledSingleSelectEnumSchema", FIELD_SCHEMAS["hex"]),
    ("UntitledMultiSelectEnumSchema", FIELD_SCHEMAS["colors"]),
    ("TitledMultiSelectEnumSchema", FIELD_SCHEMAS["hexes"]),
    ("LegacyTitledEnumSchema", FIELD_SCHEMAS["legacy"]),
    *(("PrimitiveSchemaDefinition", s) for s in FIELD_SCHEMAS.values()),
    ("ElicitRequestFormParams", FORM_ELICITATION),
    ("ElicitRequestParams", FORM_ELICITATION),
    ("ElicitRequestURLParams", URL_ELICITATION),
    ("ElicitRequestParams", URL_ELICITATION),
    (
        "ElicitResult",
        T.ElicitResult(
            action="accept",
            content={"name": "Octocat", "age": 30, "ok": True, "colors": ["Red"]},
            meta=META,
        ),
    ),
    ("ElicitResult", T.ElicitResult(action="decline")),
    ("Root", T.Root(uri="file:///home/user/project", name="My project", meta=META)),
    (
        "ListRootsResult",
        T.ListRootsResult(roots=[T.Root(uri="file:///home/user/project")], meta=META),
    ),
    (
        "ProgressNotificationParams",
        T.ProgressNotificationParams(
            progress_token="tok-1", progress=50, total=100, message="Halfway", meta=META
        ),
    ),
    ("ProgressNotificationParams", T.ProgressNotificationParams(progress_token=7, progress=0.5)),
    (
        "CancelledNotificationParams",
        T.CancelledNotificationParams(request_id=123, reason="User requested", meta=META),
    ),
    ("ClientCapabilities", CLIENT_CAPS),
    ("ServerCapabilities", SERVER_CAPS),
    ("ClientCapabilities", T.ClientCapabilities()),
    ("Implementation", IMPLEMENTATION),
    ("InitializeRequestParams", INITIALIZE_PARAMS),
    ("InitializeResult", INITIALIZE_RESULT),
    ("TaskMetadata", TASK_META),
    ("RelatedTaskMetadata", T.RelatedTaskMetadata(task_id="t-1")),
    ("Task", TASK),
    ("Task", UNLIMITED_TASK),
    (
        "TaskAugmentedRequestParams",
        T.TaskAugmentedRequestParams(task=TASK_META, meta=REQ_META),
    ),
    ("CreateTaskResult", T.CreateTaskResult(task=TASK, meta=META)),
    ("GetTaskResult", T.GetTaskResult(**TASK_FIELDS, meta=META)),
    (
        "GetTaskPayloadResult",
        T.GetTaskPayloadResult(
            content=[{"type": "text", "text": "done"}],
            meta={T.RELATED_TASK_META_KEY: {"taskId": "t-1"}},
        ),
    ),
    (
        "ListTasksResult",
        T.ListTasksResult(tasks=[TASK, UNLIMITED_TASK], next_cursor="c2", meta=META),
    ),
    ("CancelTaskResult", T.CancelTaskResult(**{**TASK_FIELDS, "status": "cancelled"}, meta=META)),
    ("TaskStatusNotificationParams", T.TaskStatusNotificationParams(**TASK_FIELDS, meta=META)),
    ("RequestParams", T.RequestParams(meta=REQ_META)),
    ("PaginatedRequestParams", T.PaginatedRequestParams(cursor="c1", meta=REQ_META)),
    ("NotificationParams", T.NotificationParams(meta=META)),
    ("Result", T.Result(meta=META)),
    ("EmptyResult", T.EmptyResult()),
    ("PaginatedResult", T.PaginatedResult(next_cursor="c2", meta=META)),
]

# One full params object per method, and one result per request method.
PARAMS: dict[str, T.MCPModel] = {
    "initialize": INITIALIZE_PARAMS,
    "ping": T.RequestParams(meta=REQ_META),
    "tools/list": T.PaginatedRequestParams(cursor="c1"),
    "tools/call": T.CallToolRequestParams(name="get_weather", arguments={"city": "Paris"}),
    "resources/list": T.PaginatedRequestParams(cursor="c1"),
    "resources/templates/list": T.PaginatedRequestParams(),
    "resources/read": T.ReadResourceRequestParams(uri="file:///x"),
    "resources/subscribe": T.SubscribeRequestParams(uri="file:///x"),
    "resources/unsubscribe": T.UnsubscribeRequestParams(uri="file:///x"),
    "prompts/list": T.PaginatedRequestParams(),
    "prompts/get": T.GetPromptRequestParams(name="code_review", arguments={"code": "x"}),
    "completion/complete": T.CompleteRequestParams(
        ref=T.PromptReference(name="p"), argument=T.CompletionArgument(name="a", value="v")
    ),
    "logging/setLevel": T.SetLevelRequestParams(level="debug"),
    "tasks/get": T.GetTaskRequestParams(task_id="t-1", meta=META),
    "tasks/result": T.GetTaskPayloadRequestParams(task_id="t-1", meta=META),
    "tasks/list": T.PaginatedRequestParams(cursor="c1"),
    "tasks/cancel": T.CancelTaskRequestParams(task_id="t-1", meta=META),
    "sampling/createMessage": SAMPLING_REQUEST,
    "elicitation/create": FORM_ELICITATION,
    "roots/list": T.RequestParams(),
    "notifications/initialized": T.NotificationParams(meta=META),
    "notifications/cancelled": T.CancelledNotificationParams(request_id="r-1", reason="gone"),
    "notifications/progress": T.ProgressNotificationParams(progress_token=1, progress=3, total=4),
    "notifications/roots/list_changed": T.NotificationParams(),
    "notifications/tasks/status": T.TaskStatusNotificationParams(**TASK_FIELDS),
    "notifications/message": T.LoggingMessageNotificationParams(level="info", data="started"),
    "notifications/resources/updated": T.ResourceUpdatedNotificationParams(uri="file:///x"),
    "notifications/resources/list_changed": T.NotificationParams(),
    "notifications/tools/list_changed": T.NotificationParams(),
    "notifications/prompts/list_changed": T.NotificationParams(),
    "notifications/elicitation/complete": T.ElicitationCompleteNotificationParams(
        elicitation_id="550e8400-e29b-41d4-a716-446655440000", meta=META
    ),
}

RESULTS: dict[str, T.MCPModel] = {
    "initialize": INITIALIZE_RESULT,
    "ping": T.EmptyResult(),
    "tools/list": T.ListToolsResult(tools=[TOOL], next_cursor="c2"),
    "tools/call": CALL_RESULT,
    "resources/list": T.ListResourcesResult(resources=[RESOURCE]),
    "resources/templates/list": T.ListResourceTemplatesResult(resource_templates=[TEMPLATE]),
    "resources/read": T.ReadResourceResult(contents=[TEXT_CONTENTS]),
    "resources/subscribe": T.EmptyResult(),
    "resources/unsubscribe": T.EmptyResult(meta=META),
    "prompts/list": T.ListPromptsResult(prompts=[PROMPT]),
    "prompts/get": T.GetPromptResult(messages=[T.PromptMessage(role="user", content=TEXT)]),
    "completion/complete": T.CompleteResult(completion=T.Completion(values=["a"])),
    "logging/setLevel": T.EmptyResult(),
    "tasks/get": T.GetTaskResult(**TASK_FIELDS),
    "tasks/result": T.GetTaskPayloadResult(
        content=[{"type": "text", "text": "done"}],
        meta={T.RELATED_TASK_META_KEY: {"taskId": "t-1"}},
    ),
    "tasks/list": T.ListTasksResult(tasks=[TASK]),
    "tasks/cancel": T.CancelTaskResult(**{**TASK_FIELDS, "status": "cancelled"}),
    "sampling/createMessage": SAMPLING_RESULT,
    "elicitation/create": T.ElicitResult(action="accept", content={"name": "Octocat"}),
    "roots/list": T.ListRootsResult(roots=[T.Root(uri="file:///r")]),
}

# Instances that must not validate against a schema definition (see the tests that use them).
UNKNOWN_BLOCK = T.UnknownContent.model_validate({"type": "video", "url": "https://x/v.mp4"})


def _case_id(case: tuple[str, T.MCPModel]) -> str:
    return f"{case[0]}:{type(case[1]).__name__}"


# --- 1. coverage ------------------------------------------------------------------------------


def _exported_models() -> set[type[pydantic.BaseModel]]:
    return {
        obj
        for name in vars(T)["__all__"]
        if isinstance(obj := getattr(T, name), type) and issubclass(obj, T.MCPModel)
    }


def _collect_set_fields(value: Any, seen: set[tuple[type, str]]) -> None:
    if isinstance(value, pydantic.BaseModel):
        for name in type(value).model_fields:
            field_value = getattr(value, name)
            if field_value is not None:
                seen.add((type(value), name))
                _collect_set_fields(field_value, seen)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _collect_set_fields(item, seen)
    elif isinstance(value, dict):
        for item in value.values():
            _collect_set_fields(item, seen)


def test_every_field_is_covered() -> None:
    """Every exported model appears, with every one of its fields set somewhere."""
    seen: set[tuple[type, str]] = set()
    everything: list[Any] = [m for _, m in CASES] + list(PARAMS.values())
    everything += [
        *RESULTS.values(),
        UNKNOWN_BLOCK,
        T.URLElicitationRequiredErrorData(elicitations=[URL_ELICITATION]),
        # 2026-07-28 (validated against its own schema in test_mcp_2026_models.py).
        *(instance for _, instance in mcp2026_cases.CASES),
    ]
    _collect_set_fields(everything, seen)
    seen_types = {cls for cls, _ in seen} | {type(m) for m in everything}
    missing_models = sorted(c.__name__ for c in _exported_models() - seen_types - {T.MCPModel})
    assert not missing_models, f"models without an instance: {missing_models}"
    missing_fields = sorted(
        f"{cls.__name__}.{name}"
        for cls in _exported_models()
        for name in cls.model_fields
        if (cls, name) not in seen and not mcp2026_cases.exempt(cls, name)
    )
    assert not missing_fields, f"fields never set in any instance: {missing_fields}"


def test_model_count() -> None:
    """A tripwire for the report: the number of public models and descriptors."""
    assert len(_exported_models()) >= 100
    tables = [M.CLIENT_REQUESTS, M.SERVER_REQUESTS, M.CLIENT_NOTIFICATIONS, M.SERVER_NOTIFICATIONS]
    distinct = {id(d) for table in tables for d in table.values()}
    assert len(distinct) == 31


# --- 2. each instance against its definition ---------------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_instance_validates_and_round_trips(case: tuple[str, T.MCPModel], conform: Any) -> None:
    name, model = case
    data = pydantic_core.to_json(model, by_alias=True, exclude_none=True)
    conform(name, json.loads(data))
    again = type(model).model_validate_json(data)
    assert again == model
    assert pydantic_core.to_json(again, by_alias=True, exclude_none=True) == data


def test_wire_names_are_camel_case_and_none_is_left_out() -> None:
    out = wire(T.CallToolResult(content=[], structured_content={"k": None}, is_error=True))
    assert out == {"content": [], "structuredContent": {"k": None}, "isError": True}
    out = wire(T.ReadResourceRequestParams(uri="file:///x", meta={"progressToken": 1}))
    assert out == {"uri": "file:///x", "_meta": {"progressToken": 1}}
    # model_dump defaults to aliases too (serialize_by_alias).
    assert "mimeType" in T.ImageContent(data="", mime_type="image/png").model_dump()


def test_required_nullable_and_any_members_are_always_written(conform: Any) -> None:
    assert wire(UNLIMITED_TASK)["ttl"] is None
    assert wire(T.CreateTaskResult(task=UNLIMITED_TASK))["task"]["ttl"] is None
    assert T.Task.model_validate({k: v for k, v in wire(TASK).items() if k != "ttl"}).ttl is None
    assert wire(T.LoggingMessageNotificationParams(level="debug", data=None)) == {
        "level": "debug",
        "data": None,
    }
    conform(
        "GetTaskResult",
        wire(T.GetTaskResult(task_id="t", status="failed", created_at=NOW, last_updated_at=NOW)),
    )


# --- 3. whole messages, per descriptor ----------------------------------------------------------


@functools.cache
def _message_defs() -> dict[str, str]:
    """Method name -> the schema definition of its request or notification message."""
    out = {}
    for name, definition in _defs().items():
        method = definition.get("properties", {}).get("method", {}).get("const")
        if method is not None:
            out[method] = name
    return out


def _union_methods(union: str) -> set[str]:
    refs = [item["$ref"].rsplit("/", 1)[-1] for item in _defs()[union]["anyOf"]]
    return {_defs()[ref]["properties"]["method"]["const"] for ref in refs}


@pytest.mark.parametrize(
    ("table", "union"),
    [
        (M.CLIENT_REQUESTS, "ClientRequest"),
        (M.SERVER_REQUESTS, "ServerRequest"),
        (M.CLIENT_NOTIFICATIONS, "ClientNotification"),
        (M.SERVER_NOTIFICATIONS, "ServerNotification"),
    ],
)
def test_tables_list_exactly_the_schema_methods(table: Any, union: str, conform: Any) -> None:
    assert set(table) == _union_methods(union)
    constants = {id(getattr(M, name)) for name in vars(M)["__all__"]}
    for method, descriptor in table.items():
        assert descriptor.method == method
        assert id(descriptor) in constants, f"{method} has no module constant"


def _directional(table_name: str) -> list[tuple[str, Any]]:
    table = getattr(M, table_name)
    return [(table_name, descriptor) for descriptor in table.values()]


REQUEST_CASES = _directional("CLIENT_REQUESTS") + _directional("SERVER_REQUESTS")
NOTIFICATION_CASES = _directional("CLIENT_NOTIFICATIONS") + _directional("SERVER_NOTIFICATIONS")


@pytest.mark.parametrize(
    ("table", "descriptor"), REQUEST_CASES, ids=[f"{t}:{d.method}" for t, d in REQUEST_CASES]
)
def test_request_and_result_messages_validate(
    table: str, descriptor: RequestType[Any, Any], conform: Any
) -> None:
    client_side = table == "CLIENT_REQUESTS"
    params = PARAMS[descriptor.method]
    request = json.loads(encode(Request(7, descriptor.method, params)))
    conform("JSONRPCRequest", request)
    conform(_message_defs()[descriptor.method], request)
    conform("ClientRequest" if client_side else "ServerRequest", request)
    assert descriptor.validate_params(request["params"]) == params

    result = RESULTS[descriptor.method]
    response = json.loads(encode(Response(7, result)))
    conform("JSONRPCResultResponse", response)
    conform("ServerResult" if client_side else "ClientResult", response["result"])
    conform(type(result).__name__, response["result"])
    assert descriptor.validate_result(response["result"]) == result


@pytest.mark.parametrize(
    ("table", "descriptor"),
    NOTIFICATION_CASES,
    ids=[f"{t}:{d.method}" for t, d in NOTIFICATION_CASES],
)
def test_notification_messages_validate(
    table: str, descriptor: NotificationType[Any], conform: Any
) -> None:
    params = PARAMS[descriptor.method]
    message = json.loads(encode(Notification(descriptor.method, params)))
    conform("JSONRPCNotification", message)
    conform(_message_defs()[descriptor.method], message)
    conform(
        "ClientNotification" if table == "CLIENT_NOTIFICATIONS" else "ServerNotification", message
    )
    assert descriptor.validate_params(message["params"]) == params


@pytest.mark.parametrize(
    "descriptor",
    [
        M.PING,
        M.TOOLS_LIST,
        M.RESOURCES_LIST,
        M.RESOURCES_TEMPLATES_LIST,
        M.PROMPTS_LIST,
        M.TASKS_LIST,
        M.ROOTS_LIST,
    ],
    ids=lambda d: d.method,
)
def test_optional_params_may_be_missing_or_empty(
    descriptor: RequestType[Any, Any], conform: Any
) -> None:
    assert descriptor.validate_params(None) == descriptor.params_type()
    assert descriptor.validate_params({}) == descriptor.params_type()
    conform(_message_defs()[descriptor.method], json.loads(encode(Request(1, descriptor.method))))


@pytest.mark.parametrize(
    "descriptor",
    [
        M.NOTIFICATIONS_INITIALIZED,
        M.NOTIFICATIONS_ROOTS_LIST_CHANGED,
        M.NOTIFICATIONS_TOOLS_LIST_CHANGED,
        M.NOTIFICATIONS_PROMPTS_LIST_CHANGED,
        M.NOTIFICATIONS_RESOURCES_LIST_CHANGED,
    ],
    ids=lambda d: d.method,
)
def test_list_changed_notifications_need_no_params(
    descriptor: NotificationType[Any], conform: Any
) -> None:
    assert descriptor.validate_params(None) == T.NotificationParams()
    conform(_message_defs()[descriptor.method], json.loads(encode(Notification(descriptor.method))))


@pytest.mark.parametrize(
    ("descriptor", "params"),
    [
        (M.TOOLS_CALL_TASK, T.CallToolRequestParams(name="slow", task=TASK_META)),
        (M.SAMPLING_CREATE_MESSAGE_TASK, SAMPLING_REQUEST),
        (M.ELICITATION_CREATE_TASK, URL_ELICITATION),
    ],
    ids=lambda v: getattr(v, "method", "params"),
)
def test_task_augmented_variants(
    descriptor: RequestType[Any, Any], params: T.MCPModel, conform: Any
) -> None:
    assert M.TASK_AUGMENTED_REQUESTS[descriptor.method] is descriptor
    request = json.loads(encode(Request("a", descriptor.method, params)))
    conform(_message_defs()[descriptor.method], request)
    response = json.loads(encode(Response("a", T.CreateTaskResult(task=TASK))))
    conform("CreateTaskResult", response["result"])
    assert descriptor.validate_result(response["result"]) == T.CreateTaskResult(task=TASK)


# --- 4. lenient in ------------------------------------------------------------------------------


def test_unknown_members_survive_a_round_trip() -> None:
    sent = {
        "name": "t",
        "inputSchema": {"type": "object"},
        "x-vendor": {"rank": 3},
        "annotations": {"readOnlyHint": True, "futureHint": "yes"},
        "futureList": [1, 2],
    }
    tool = T.Tool.model_validate(sent)
    assert tool.model_extra == {"x-vendor": {"rank": 3}, "futureList": [1, 2]}
    assert wire(tool) == sent

    result = {
        "content": [{"type": "text", "text": "x", "futureMember": True}],
        "futureTop": "kept",
    }
    assert wire(M.TOOLS_CALL.validate_result(result)) == result
    caps = {"tools": {"listChanged": True, "futureFlag": 1}, "futureCapability": {}}
    assert wire(T.ServerCapabilities.model_validate(caps)) == caps
    params = {"name": "t", "arguments": {}, "futureParam": [None]}
    assert wire(M.TOOLS_CALL.validate_params(params)) == params


def test_unknown_member_with_null_value_is_left_out() -> None:
    """The one documented loss: exclude_none also drops unknown members that are null."""
    tool = T.Tool.model_validate({"name": "t", "inputSchema": {"type": "object"}, "x": None})
    assert tool.model_extra == {"x": None}
    assert "x" not in wire(tool)


def test_snake_case_and_camel_case_are_both_accepted() -> None:
    by_name = T.CallToolResult(content=[], structured_content={"a": 1}, is_error=True)
    by_alias = T.CallToolResult.model_validate(
        {"content": [], "structuredContent": {"a": 1}, "isError": True}
    )
    from_snake_dict = T.CallToolResult.model_validate(
        {"content": [], "structured_content": {"a": 1}, "is_error": True}
    )
    assert by_name == by_alias == from_snake_dict
    assert by_name.is_error is True
    params = T.InitializeRequestParams(
        protocol_version="2025-11-25",
        capabilities=T.ClientCapabilities(roots=T.RootsCapability(list_changed=True)),
        client_info=T.Implementation(name="c", version="1", website_url="https://c.example"),
    )
    assert wire(params) == {
        "protocolVersion": "2025-11-25",
        "capabilities": {"roots": {"listChanged": True}},
        "clientInfo": {"name": "c", "version": "1", "websiteUrl": "https://c.example"},
    }


def test_unknown_content_type_is_kept_not_rejected(conform: Any) -> None:
    """A newer peer's block type becomes UnknownContent and is written back verbatim."""
    block = {"type": "video", "url": "https://x/v.mp4", "_meta": {"k": 1}, "durationMs": 9}
    result = M.TOOLS_CALL.validate_result({"content": [{"type": "text", "text": "a"}, block]})
    assert isinstance(result.content[0], T.TextContent)
    unknown = result.content[1]
    assert isinstance(unknown, T.UnknownContent)
    assert unknown.type == "video"
    assert unknown.model_extra == {"url": "https://x/v.mp4", "_meta": {"k": 1}, "durationMs": 9}
    assert wire(result)["content"][1] == block
    # Passed through as received: it is not one of *this* revision's content blocks.
    with pytest.raises(pytest.fail.Exception):
        conform("ContentBlock", block)
    # The same fallback in sampling messages; tool_use is not a ContentBlock of a tool result.
    message = T.SamplingMessage.model_validate({"role": "user", "content": block})
    assert isinstance(message.content, T.UnknownContent)
    nested = T.CallToolResult.model_validate({"content": [wire(TOOL_USE)]})
    assert isinstance(nested.content[0], T.UnknownContent)


@pytest.mark.parametrize(
    ("payload", "where"),
    [
        ({"content": [{"text": "no type"}]}, "content.0"),
        ({"content": [{"type": 3, "text": "x"}]}, "content.0"),
        ({"content": [{"type": "text"}]}, "content.0.text.text"),
        ({"content": [{"type": "image", "data": "AA=="}]}, "content.0.image.mimeType"),
    ],
)
def test_malformed_known_blocks_are_rejected(payload: dict[str, Any], where: str) -> None:
    with pytest.raises(pydantic.ValidationError) as info:
        T.CallToolResult.model_validate(payload)
    locs = [".".join(str(p) for p in e["loc"]) for e in info.value.errors()]
    assert where in locs


OLD_PEERS: list[tuple[str, Any, dict[str, Any]]] = [
    (
        "2024-11-05 initialize",
        M.INITIALIZE,
        {
            "protocolVersion": "2024-11-05",
            "capabilities": {"roots": {"listChanged": True}, "sampling": {}},
            "clientInfo": {"name": "old-client", "version": "0.1"},
        },
    ),
    (
        "2024-11-05 initialize result",
        T.InitializeResult,
        {
            "protocolVersion": "2024-11-05",
            "capabilities": {
                "logging": {},
                "prompts": {"listChanged": True},
                "resources": {"subscribe": True, "listChanged": True},
                "tools": {"listChanged": True},
            },
            "serverInfo": {"name": "old-server", "version": "0.1"},
        },
    ),
    (
        "2024-11-05 tool result with embedded resource",
        T.CallToolResult,
        {
            "content": [
                {"type": "image", "data": "AA==", "mimeType": "image/png"},
                {"type": "resource", "resource": {"uri": "file:///a", "text": "t"}},
            ],
            "isError": False,
        },
    ),
    (
        "2024-11-05 completion of a resource reference",
        M.COMPLETION_COMPLETE,
        {
            "ref": {"type": "ref/resource", "uri": "file:///{path}"},
            "argument": {"name": "path", "value": "s"},
        },
    ),
    ("2024-11-05 cancellation", M.NOTIFICATIONS_CANCELLED, {"requestId": 3, "reason": "timeout"}),
    (
        "2024-11-05 sampling request",
        M.SAMPLING_CREATE_MESSAGE,
        {
            "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
            "maxTokens": 100,
            "includeContext": "thisServer",
            "modelPreferences": {"hints": [{"name": "claude"}], "costPriority": 1},
        },
    ),
    (
        "2024-11-05 sampling result",
        T.CreateMessageResult,
        {
            "role": "assistant",
            "content": {"type": "text", "text": "x"},
            "model": "m",
            "stopReason": "endTurn",
        },
    ),
    (
        "2025-03-26 progress with message",
        M.NOTIFICATIONS_PROGRESS,
        {"progressToken": "p", "progress": 1, "total": 2, "message": "half"},
    ),
    (
        "2025-03-26 tool with annotations",
        T.Tool,
        {"name": "rm", "inputSchema": {"type": "object"}, "annotations": {"destructiveHint": True}},
    ),
    (
        "2025-06-18 structured tool result with resource link",
        T.CallToolResult,
        {
            "content": [{"type": "resource_link", "uri": "file:///a", "name": "a"}],
            "structuredContent": {"n": 1},
        },
    ),
    (
        "2025-06-18 elicitation result with a float",
        M.ELICITATION_CREATE.result_type,
        {"action": "accept", "content": {"age": 30.5, "name": "x", "ok": False}},
    ),
    (
        "2025-06-18 client capabilities",
        T.ClientCapabilities,
        {"elicitation": {}, "sampling": {}, "roots": {"listChanged": False}},
    ),
]


@pytest.mark.parametrize(("label", "target", "payload"), OLD_PEERS, ids=[c[0] for c in OLD_PEERS])
def test_older_revisions_are_accepted_verbatim(
    label: str, target: Any, payload: dict[str, Any]
) -> None:
    if isinstance(target, (RequestType, NotificationType)):
        model = target.validate_params(payload)
    else:
        model = target.model_validate(payload)
    assert wire(model) == payload


def test_2025_06_18_elicitation_without_mode_is_form_mode(conform: Any) -> None:
    payload = {
        "message": "Your name?",
        "requestedSchema": {
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "plan": {"type": "string", "enum": ["a", "b"], "enumNames": ["A", "B"]},
            },
            "required": ["name"],
        },
    }
    params = M.ELICITATION_CREATE.validate_params(payload)
    assert isinstance(params, T.ElicitRequestFormParams)
    assert isinstance(params.requested_schema.properties["plan"], T.LegacyTitledEnumSchema)
    assert wire(params) == {"mode": "form", **payload}
    conform("ElicitRequestFormParams", wire(params))


def test_sampling_content_single_or_list() -> None:
    single = T.SamplingMessage.model_validate(
        {"role": "user", "content": {"type": "text", "text": "a"}}
    )
    many = T.SamplingMessage.model_validate(
        {"role": "user", "content": [{"type": "tool_result", "toolUseId": "1", "content": []}]}
    )
    assert single.blocks == [T.TextContent(text="a")]
    assert isinstance(many.blocks[0], T.ToolResultContent)
    assert SAMPLING_RESULT.blocks == SAMPLING_RESULT.content


def test_helpers() -> None:
    assert T.RequestParams(meta={"progressToken": 5}).progress_token == 5
    assert T.RequestParams(meta={"progressToken": True}).progress_token is None
    assert T.RequestParams().progress_token is None
    assert T.ElicitationCapability().supports_form
    assert not T.ElicitationCapability().supports_url
    assert not T.ElicitationCapability(url={}).supports_form
    assert T.ElicitationCapability(form={}, url={}).supports_url
    assert TASK.is_terminal is False and UNLIMITED_TASK.is_terminal is True
    assert T.LOGGING_LEVELS.index("error") > T.LOGGING_LEVELS.index("warning")
    assert T.SUPPORTED_PROTOCOL_VERSIONS[0] == T.LATEST_PROTOCOL_VERSION == "2025-11-25"
    assert T.SUPPORTED_PROTOCOL_VERSIONS == ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
    assert T.ResourceReference is T.ResourceTemplateReference


# --- 5. errors --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("descriptor", "params", "field"),
    [
        (M.TOOLS_CALL, {"name": 1}, "params.name"),
        (M.TOOLS_CALL, {"arguments": {}}, "params.name"),
        (M.TOOLS_CALL, {"name": "t", "arguments": [1]}, "params.arguments"),
        (M.RESOURCES_READ, {}, "params.uri"),
        (M.LOGGING_SET_LEVEL, {"level": "verbose"}, "params.level"),
        (
            M.INITIALIZE,
            {"protocolVersion": "x", "capabilities": {}, "clientInfo": {"name": "c"}},
            "params.clientInfo.version",
        ),
        (M.SAMPLING_CREATE_MESSAGE, {"messages": [], "maxTokens": "many"}, "params.maxTokens"),
        (M.NOTIFICATIONS_PROGRESS, {"progressToken": "t"}, "params.progress"),
        (M.NOTIFICATIONS_PROGRESS, {"progressToken": 1.5, "progress": 1}, "params.progressToken"),
        (M.ELICITATION_CREATE, {"mode": "url", "message": "m", "url": "u"}, "elicitationId"),
        (M.ELICITATION_CREATE, {"mode": "phone", "message": "m"}, "'mode' must be"),
        (
            M.ELICITATION_CREATE,
            {"message": "m", "requestedSchema": {"properties": {"a": {"type": "object"}}}},
            "params.form.requestedSchema.properties.a",
        ),
        (
            M.COMPLETION_COMPLETE,
            {"ref": {"type": "ref/tool"}, "argument": {"name": "a", "value": ""}},
            "params.ref",
        ),
        (M.TASKS_GET, {"taskId": 5}, "params.taskId"),
        (M.PING, [1, 2], "params: Input should be"),
    ],
)
def test_bad_params_raise_invalid_params_naming_the_field(
    descriptor: Any, params: Any, field: str
) -> None:
    with pytest.raises(InvalidParams) as info:
        descriptor.validate_params(params)
    assert info.value.code == -32602
    assert field in info.value.message


def test_bad_result_raises_validation_error() -> None:
    with pytest.raises(pydantic.ValidationError):
        M.TOOLS_LIST.validate_result({"tools": [{"name": "no input schema"}]})


def test_url_elicitation_required_error(conform: Any) -> None:
    error = URLElicitationRequired.for_elicitations(
        [URL_ELICITATION], "This request requires more information."
    )
    assert error.code == -32042
    message = {"jsonrpc": "2.0", "id": 2, "error": error.to_object()}
    conform("URLElicitationRequiredError", message)
    conform("JSONRPCErrorResponse", message)
    received = MCP_ERRORS.from_object(json.loads(json.dumps(message["error"])))
    assert isinstance(received, URLElicitationRequired)
    assert received.elicitations == [URL_ELICITATION]
    assert URLElicitationRequired("no data").elicitations == []
    assert URLElicitationRequired("bad", {"elicitations": [{"mode": "url"}]}).elicitations == []


def test_resource_not_found_error(conform: Any) -> None:
    error = ResourceNotFound.for_uri("file:///nonexistent.txt")
    assert error.to_object() == {
        "code": -32002,
        "message": "Resource not found",
        "data": {"uri": "file:///nonexistent.txt"},
    }
    conform("JSONRPCErrorResponse", {"jsonrpc": "2.0", "id": 5, "error": error.to_object()})
    received = MCP_ERRORS.from_object(error.to_object())
    assert isinstance(received, ResourceNotFound)
    assert received.uri == "file:///nonexistent.txt"
    assert received == error
    assert ResourceNotFound().uri is None
    assert not MCP_ERRORS.from_object({"code": -32002, "message": "gone"}).has_data


def test_mcp_codes_stay_in_mcp_error_table() -> None:
    """-32002 means "task not cancelable" in A2A: MCP's codes never enter the shared table."""
    assert MCP_ERRORS.class_for(-32002) is ResourceNotFound
    assert MCP_ERRORS.class_for(-32042) is URLElicitationRequired
    assert MCP_ERRORS.class_for(-32601) is MethodNotFound
    assert STANDARD_ERRORS.class_for(-32042) is ServerError
    assert STANDARD_ERRORS.class_for(-32002) is not ResourceNotFound
    refined = MCP_ERRORS.refine(ServerError("gone", {"uri": "file:///x"}, code=-32002))
    assert isinstance(refined, ResourceNotFound)
    assert refined.uri == "file:///x"
    assert isinstance(MCP_ERRORS.from_object({"code": -32603, "message": "x"}), InternalError)


# --- import cost ------------------------------------------------------------------------------


def test_importing_the_layer_is_light() -> None:
    """``import mcp_layer`` loads no transport it may not use: jsonschema (raw tool schemas
    only), httpx (HTTP clients only) and uvicorn (HTTP serving only) load on first use."""
    code = (
        "import sys, mcp_layer; "
        "bad = [m for m in ('jsonschema', 'httpx', 'uvicorn') if m in sys.modules]; "
        "print(bad)"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"
