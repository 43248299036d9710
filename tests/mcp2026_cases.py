"""Representative 2026-07-28 instances of `mcp_layer.types`, every new field set.

``CASES`` pairs each instance with the 2026-07-28 schema definition it must validate
against (``None``: the tasks extension, not in the core schema, checked by shape).
test_mcp_models.py counts them in its field coverage; test_mcp_2026_models.py validates
them.
"""

from __future__ import annotations

from typing import Any

from mcp_layer import types as T

VERSION = "2026-07-28"
NOW = "2026-07-28T10:30:00Z"
LATER = "2026-07-28T10:40:00Z"
SERVER_INFO = {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}}
ENVELOPE: dict[str, Any] = {
    "io.modelcontextprotocol/protocolVersion": VERSION,
    "io.modelcontextprotocol/clientInfo": {"name": "c", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.example/x": {}}},
    "io.modelcontextprotocol/logLevel": "info",
}
TEXT = T.TextContent(text="Hello")
TOOL = T.Tool(name="t", input_schema={"type": "object"})
ELICIT_REQUEST = {
    "method": "elicitation/create",
    "params": {
        "mode": "form",
        "message": "Name?",
        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
    },
}
FILTER = T.SubscriptionFilter(
    tools_list_changed=True,
    prompts_list_changed=True,
    resources_list_changed=True,
    resource_subscriptions=["file:///a"],
    task_ids=["task-1"],
)
CORE_FILTER = FILTER.model_copy(update={"task_ids": None})
TASK_FIELDS: dict[str, Any] = {
    "task_id": "task-1",
    "status": "working",
    "status_message": "on it",
    "created_at": NOW,
    "last_updated_at": LATER,
    "ttl_ms": 60_000,
    "poll_interval_ms": 500,
}

CASES: list[tuple[str | None, T.MCPModel]] = [
    (
        "DiscoverResult",
        T.DiscoverResult(
            result_type="complete",
            supported_versions=[VERSION],
            capabilities=T.ServerCapabilities(
                tools=T.ToolsCapability(list_changed=True),
                extensions={"io.modelcontextprotocol/tasks": {}},
            ),
            instructions="Use it well.",
            ttl_ms=3_600_000,
            cache_scope="public",
            meta=SERVER_INFO,
        ),
    ),
    (
        "InputRequiredResult",
        T.InputRequiredResult(
            result_type="input_required",
            input_requests={"name": ELICIT_REQUEST, "roots": {"method": "roots/list"}},
            request_state="v1.opaque.mac",
            meta=SERVER_INFO,
        ),
    ),
    (
        "ListToolsResult",
        T.ListToolsResult(
            result_type="complete",
            tools=[TOOL],
            next_cursor="c2",
            ttl_ms=0,
            cache_scope="private",
            meta=SERVER_INFO,
        ),
    ),
    (
        "ReadResourceResult",
        T.ReadResourceResult(
            result_type="complete",
            contents=[T.TextResourceContents(uri="file:///a", text="a")],
            ttl_ms=1000,
            cache_scope="private",
        ),
    ),
    (
        "CallToolResult",
        T.CallToolResult(result_type="complete", content=[TEXT], meta=SERVER_INFO),
    ),
    ("ElicitResult", T.ElicitResult(result_type="complete", action="decline")),
    ("ClientCapabilities", T.ClientCapabilities(extensions={"io.modelcontextprotocol/tasks": {}})),
    ("SubscriptionFilter", CORE_FILTER),
    (
        "SubscriptionsListenRequestParams",
        T.SubscriptionsListenRequestParams(notifications=CORE_FILTER, meta=ENVELOPE),
    ),
    (
        "SubscriptionsAcknowledgedNotificationParams",
        T.SubscriptionsAcknowledgedNotificationParams(
            notifications=CORE_FILTER, meta={"io.modelcontextprotocol/subscriptionId": 7}
        ),
    ),
    (
        None,
        T.UnsupportedProtocolVersionErrorData(supported=[VERSION], requested="1900-01-01"),
    ),
    (
        None,
        T.MissingRequiredClientCapabilityErrorData(
            required_capabilities=T.ClientCapabilities(sampling=T.SamplingCapability())
        ),
    ),
    # The tasks extension (SEP-2663): no definitions in the core schema.
    (None, FILTER),
    (None, T.TaskV2(**TASK_FIELDS)),
    (None, T.CreateTaskResultV2(result_type="task", meta=SERVER_INFO, **TASK_FIELDS)),
    (
        None,
        T.DetailedTask(
            result_type="complete",
            input_requests={"confirm": ELICIT_REQUEST},
            result={"content": [{"type": "text", "text": "done"}]},
            error={"code": -32603, "message": "broke"},
            meta=SERVER_INFO,
            **TASK_FIELDS,
        ),
    ),
    (
        None,
        T.TaskStatusNotificationParamsV2(
            meta={"io.modelcontextprotocol/subscriptionId": 7},
            input_requests={"confirm": ELICIT_REQUEST},
            result={"content": []},
            error={"code": -32603, "message": "broke"},
            **TASK_FIELDS,
        ),
    ),
    (None, T.TaskIdParams(task_id="task-1", meta=ENVELOPE)),
    (
        None,
        T.UpdateTaskRequestParams(
            task_id="task-1",
            input_responses={"confirm": {"action": "accept", "content": {"ok": True}}},
            meta=ENVELOPE,
        ),
    ),
    (
        None,
        T.CacheableResult(result_type="complete", ttl_ms=5, cache_scope="public", meta=SERVER_INFO),
    ),
    (None, T.PaginatedResult(result_type="complete", ttl_ms=5, cache_scope="public")),
    ("Result", T.Result(result_type="complete", meta=SERVER_INFO)),
    ("Result", T.EmptyResult(result_type="complete")),
    (
        "CompleteResult",
        T.CompleteResult(result_type="complete", completion=T.Completion(values=["a"])),
    ),
    (
        "CreateMessageResult",
        T.CreateMessageResult(result_type="complete", role="assistant", content=TEXT, model="m"),
    ),
    (
        "GetPromptResult",
        T.GetPromptResult(
            result_type="complete", messages=[T.PromptMessage(role="user", content=TEXT)]
        ),
    ),
    (
        "ListPromptsResult",
        T.ListPromptsResult(result_type="complete", prompts=[], ttl_ms=10, cache_scope="public"),
    ),
    (
        "ListResourcesResult",
        T.ListResourcesResult(
            result_type="complete", resources=[], ttl_ms=10, cache_scope="public"
        ),
    ),
    (
        "ListResourceTemplatesResult",
        T.ListResourceTemplatesResult(
            result_type="complete", resource_templates=[], ttl_ms=10, cache_scope="public"
        ),
    ),
    (
        "ListRootsResult",
        T.ListRootsResult(result_type="complete", roots=[T.Root(uri="file:///r")]),
    ),
]

HANDSHAKE_ONLY_RESULTS = {
    "InitializeResult",
    "CreateTaskResult",
    "GetTaskResult",
    "GetTaskPayloadResult",
    "ListTasksResult",
    "CancelTaskResult",
}
"""Results of 2025-11-25 methods: the 2026-07-28 ``resultType`` and caching members never
apply to them."""


def exempt(model: type, field: str) -> bool:
    """Whether ``model.field`` is a 2026-07-28 member a model inherits without ever using
    it: the results of handshake-era methods (`HANDSHAKE_ONLY_RESULTS`), and
    ``resultType`` on the params of ``notifications/tasks``."""
    if field in ("result_type", "ttl_ms", "cache_scope"):
        if model.__name__ in HANDSHAKE_ONLY_RESULTS:
            return True
        return model is T.TaskStatusNotificationParamsV2 and field == "result_type"
    return False
