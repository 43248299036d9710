"""The objects of the Model Context Protocol, revision 2025-11-25, as pydantic models.

Every model accepts both snake_case (Python) and camelCase (wire) names, keeps members
it does not know, and is written camelCase with ``None`` members left out::

    result = CallToolResult(content=[TextContent(text="42")], is_error=False)
    pydantic_core.to_json(result, by_alias=True, exclude_none=True)
    # b'{"content":[{"type":"text","text":"42"}],"isError":false}'

Messages from 2025-06-18, 2025-03-26 and 2024-11-05 peers validate too: newer members
are optional, and shapes that changed (sampling content, elicitation enums) accept
both forms. See `mcp_layer._types._base` for the rules every model keeps.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from jsonrpc_core import install_lazy_exports

from ._types._base import CacheableResult as CacheableResult
from ._types._base import CacheScope as CacheScope
from ._types._base import Cursor as Cursor
from ._types._base import EmptyResult as EmptyResult
from ._types._base import MCPModel as MCPModel
from ._types._base import NotificationParams as NotificationParams
from ._types._base import PaginatedRequestParams as PaginatedRequestParams
from ._types._base import PaginatedResult as PaginatedResult
from ._types._base import ProgressToken as ProgressToken
from ._types._base import RequestId as RequestId
from ._types._base import RequestParams as RequestParams
from ._types._base import Result as Result
from ._types._base import Role as Role
from ._types._capabilities import ClientCapabilities as ClientCapabilities
from ._types._capabilities import ClientTaskRequestsCapability as ClientTaskRequestsCapability
from ._types._capabilities import ClientTasksCapability as ClientTasksCapability
from ._types._capabilities import ElicitationCapability as ElicitationCapability
from ._types._capabilities import PromptsCapability as PromptsCapability
from ._types._capabilities import ResourcesCapability as ResourcesCapability
from ._types._capabilities import RootsCapability as RootsCapability
from ._types._capabilities import SamplingCapability as SamplingCapability
from ._types._capabilities import ServerCapabilities as ServerCapabilities
from ._types._capabilities import ServerTaskRequestsCapability as ServerTaskRequestsCapability
from ._types._capabilities import ServerTasksCapability as ServerTasksCapability
from ._types._capabilities import TaskElicitationCapability as TaskElicitationCapability
from ._types._capabilities import TaskSamplingCapability as TaskSamplingCapability
from ._types._capabilities import TaskToolsCapability as TaskToolsCapability
from ._types._capabilities import ToolsCapability as ToolsCapability
from ._types._common import Annotations as Annotations
from ._types._common import BaseMetadata as BaseMetadata
from ._types._common import Icon as Icon
from ._types._completion import CompleteRequestParams as CompleteRequestParams
from ._types._completion import CompleteResult as CompleteResult
from ._types._completion import Completion as Completion
from ._types._completion import CompletionArgument as CompletionArgument
from ._types._completion import CompletionContext as CompletionContext
from ._types._completion import CompletionReference as CompletionReference
from ._types._completion import PromptReference as PromptReference
from ._types._completion import ResourceReference as ResourceReference
from ._types._completion import ResourceTemplateReference as ResourceTemplateReference
from ._types._content import UNKNOWN_CONTENT_TAG as UNKNOWN_CONTENT_TAG
from ._types._content import AudioContent as AudioContent
from ._types._content import ContentBlock as ContentBlock
from ._types._content import EmbeddedResource as EmbeddedResource
from ._types._content import ImageContent as ImageContent
from ._types._content import ResourceLink as ResourceLink
from ._types._content import TextContent as TextContent
from ._types._content import UnknownContent as UnknownContent
from ._types._content import content_discriminator as content_discriminator
from ._types._lifecycle import LATEST_PROTOCOL_VERSION as LATEST_PROTOCOL_VERSION
from ._types._lifecycle import SUPPORTED_PROTOCOL_VERSIONS as SUPPORTED_PROTOCOL_VERSIONS
from ._types._lifecycle import Implementation as Implementation
from ._types._lifecycle import InitializeRequestParams as InitializeRequestParams
from ._types._lifecycle import InitializeResult as InitializeResult
from ._types._logging import LOGGING_LEVELS as LOGGING_LEVELS
from ._types._logging import LoggingLevel as LoggingLevel
from ._types._logging import LoggingMessageNotificationParams as LoggingMessageNotificationParams
from ._types._logging import SetLevelRequestParams as SetLevelRequestParams
from ._types._modern import CLIENT_CAPABILITIES_META_KEY as CLIENT_CAPABILITIES_META_KEY
from ._types._modern import CLIENT_INFO_META_KEY as CLIENT_INFO_META_KEY
from ._types._modern import LATEST_MODERN_VERSION as LATEST_MODERN_VERSION
from ._types._modern import LOG_LEVEL_META_KEY as LOG_LEVEL_META_KEY
from ._types._modern import MODERN_PROTOCOL_VERSIONS as MODERN_PROTOCOL_VERSIONS
from ._types._modern import PROTOCOL_VERSION_META_KEY as PROTOCOL_VERSION_META_KEY
from ._types._modern import SERVER_INFO_META_KEY as SERVER_INFO_META_KEY
from ._types._modern import SUBSCRIPTION_ID_META_KEY as SUBSCRIPTION_ID_META_KEY
from ._types._modern import TASKS_EXTENSION as TASKS_EXTENSION
from ._types._modern import DiscoverResult as DiscoverResult
from ._types._modern import InputRequiredResult as InputRequiredResult
from ._types._modern import (
    MissingRequiredClientCapabilityErrorData as MissingRequiredClientCapabilityErrorData,
)
from ._types._modern import SubscriptionFilter as SubscriptionFilter
from ._types._modern import (
    SubscriptionsAcknowledgedNotificationParams as SubscriptionsAcknowledgedNotificationParams,
)
from ._types._modern import SubscriptionsListenRequestParams as SubscriptionsListenRequestParams
from ._types._modern import (
    UnsupportedProtocolVersionErrorData as UnsupportedProtocolVersionErrorData,
)
from ._types._prompts import GetPromptRequestParams as GetPromptRequestParams
from ._types._prompts import GetPromptResult as GetPromptResult
from ._types._prompts import ListPromptsResult as ListPromptsResult
from ._types._prompts import Prompt as Prompt
from ._types._prompts import PromptArgument as PromptArgument
from ._types._prompts import PromptMessage as PromptMessage
from ._types._resources import BlobResourceContents as BlobResourceContents
from ._types._resources import ListResourcesResult as ListResourcesResult
from ._types._resources import ListResourceTemplatesResult as ListResourceTemplatesResult
from ._types._resources import ReadResourceRequestParams as ReadResourceRequestParams
from ._types._resources import ReadResourceResult as ReadResourceResult
from ._types._resources import Resource as Resource
from ._types._resources import ResourceContents as ResourceContents
from ._types._resources import ResourceContentsBlock as ResourceContentsBlock
from ._types._resources import ResourceRequestParams as ResourceRequestParams
from ._types._resources import ResourceTemplate as ResourceTemplate
from ._types._resources import (
    ResourceUpdatedNotificationParams as ResourceUpdatedNotificationParams,
)
from ._types._resources import SubscribeRequestParams as SubscribeRequestParams
from ._types._resources import TextResourceContents as TextResourceContents
from ._types._resources import UnsubscribeRequestParams as UnsubscribeRequestParams
from ._types._task_params import TaskAugmentedRequestParams as TaskAugmentedRequestParams
from ._types._task_params import TaskMetadata as TaskMetadata
from ._types._tools import CallToolRequestParams as CallToolRequestParams
from ._types._tools import CallToolResult as CallToolResult
from ._types._tools import ListToolsResult as ListToolsResult
from ._types._tools import Tool as Tool
from ._types._tools import ToolAnnotations as ToolAnnotations
from ._types._tools import ToolExecution as ToolExecution
from ._types._utilities import CancelledNotificationParams as CancelledNotificationParams
from ._types._utilities import ProgressNotificationParams as ProgressNotificationParams

# The models of what a basic server never receives nor sends (elicitation, sampling,
# roots, tasks) load on first use (PEP 562): ~0.5 MiB less for a process that never
# needs them.

if TYPE_CHECKING or not install_lazy_exports(globals()):
    from ._types._elicitation import BooleanSchema as BooleanSchema
    from ._types._elicitation import ElicitAction as ElicitAction
    from ._types._elicitation import (
        ElicitationCompleteNotificationParams as ElicitationCompleteNotificationParams,
    )
    from ._types._elicitation import ElicitRequestedSchema as ElicitRequestedSchema
    from ._types._elicitation import ElicitRequestFormParams as ElicitRequestFormParams
    from ._types._elicitation import ElicitRequestParams as ElicitRequestParams
    from ._types._elicitation import ElicitRequestURLParams as ElicitRequestURLParams
    from ._types._elicitation import ElicitResult as ElicitResult
    from ._types._elicitation import ElicitValue as ElicitValue
    from ._types._elicitation import EnumOption as EnumOption
    from ._types._elicitation import LegacyTitledEnumSchema as LegacyTitledEnumSchema
    from ._types._elicitation import NumberSchema as NumberSchema
    from ._types._elicitation import PrimitiveSchemaDefinition as PrimitiveSchemaDefinition
    from ._types._elicitation import StringSchema as StringSchema
    from ._types._elicitation import TitledMultiSelectEnumSchema as TitledMultiSelectEnumSchema
    from ._types._elicitation import TitledMultiSelectItems as TitledMultiSelectItems
    from ._types._elicitation import TitledSingleSelectEnumSchema as TitledSingleSelectEnumSchema
    from ._types._elicitation import UntitledMultiSelectEnumSchema as UntitledMultiSelectEnumSchema
    from ._types._elicitation import UntitledMultiSelectItems as UntitledMultiSelectItems
    from ._types._elicitation import (
        UntitledSingleSelectEnumSchema as UntitledSingleSelectEnumSchema,
    )
    from ._types._elicitation import (
        URLElicitationRequiredErrorData as URLElicitationRequiredErrorData,
    )
    from ._types._roots import ListRootsResult as ListRootsResult
    from ._types._roots import Root as Root
    from ._types._sampling import CreateMessageRequestParams as CreateMessageRequestParams
    from ._types._sampling import CreateMessageResult as CreateMessageResult
    from ._types._sampling import IncludeContext as IncludeContext
    from ._types._sampling import ModelHint as ModelHint
    from ._types._sampling import ModelPreferences as ModelPreferences
    from ._types._sampling import SamplingContent as SamplingContent
    from ._types._sampling import SamplingMessage as SamplingMessage
    from ._types._sampling import SamplingMessageContentBlock as SamplingMessageContentBlock
    from ._types._sampling import StopReason as StopReason
    from ._types._sampling import ToolChoice as ToolChoice
    from ._types._sampling import ToolResultContent as ToolResultContent
    from ._types._sampling import ToolUseContent as ToolUseContent
    from ._types._tasks import (
        MODEL_IMMEDIATE_RESPONSE_META_KEY as MODEL_IMMEDIATE_RESPONSE_META_KEY,
    )
    from ._types._tasks import RELATED_TASK_META_KEY as RELATED_TASK_META_KEY
    from ._types._tasks import CancelTaskRequestParams as CancelTaskRequestParams
    from ._types._tasks import CancelTaskResult as CancelTaskResult
    from ._types._tasks import CreateTaskResult as CreateTaskResult
    from ._types._tasks import GetTaskPayloadRequestParams as GetTaskPayloadRequestParams
    from ._types._tasks import GetTaskPayloadResult as GetTaskPayloadResult
    from ._types._tasks import GetTaskRequestParams as GetTaskRequestParams
    from ._types._tasks import GetTaskResult as GetTaskResult
    from ._types._tasks import ListTasksResult as ListTasksResult
    from ._types._tasks import RelatedTaskMetadata as RelatedTaskMetadata
    from ._types._tasks import Task as Task
    from ._types._tasks import TaskStatus as TaskStatus
    from ._types._tasks import TaskStatusNotificationParams as TaskStatusNotificationParams
    from ._types._tasks_ext import CreateTaskResultV2 as CreateTaskResultV2
    from ._types._tasks_ext import DetailedTask as DetailedTask
    from ._types._tasks_ext import TaskIdParams as TaskIdParams
    from ._types._tasks_ext import TaskStatusNotificationParamsV2 as TaskStatusNotificationParamsV2
    from ._types._tasks_ext import TaskStatusV2 as TaskStatusV2
    from ._types._tasks_ext import TaskV2 as TaskV2
    from ._types._tasks_ext import UpdateTaskRequestParams as UpdateTaskRequestParams
