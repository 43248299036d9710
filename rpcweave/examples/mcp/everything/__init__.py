"""The fixtures of the everything server (``../everything_server.py``), one module per
kind, each a ``declare_*(server)`` function that adds its group to an `MCPServer`.

- `_fixtures`: the payloads and schemas the conformance suite checks, and small helpers;
- `_content`: tools answering with each kind of content (text, image, audio, resources,
  structured output, a raw JSON Schema 2020-12 input schema, a tool error);
- `_interactive`: logging, progress and a dropped SSE stream during a call, sampling,
  and the tools that send list-changed and resource-updated notifications;
- `_elicitation`: elicitation (form and URL modes) and roots, asked during a call;
- `_input_required`: the 2026-07-28 fixtures (multi round-trip requests, capabilities per
  request, ``x-mcp-header``, logging);
- `_tasks`: the tasks extension's fixtures (``io.modelcontextprotocol/tasks``);
- `_resources`: resources, prompts and completions.
"""

from ._content import WeatherReport, declare_content_tools
from ._elicitation import declare_elicitation_tools
from ._fixtures import (
    JSON_SCHEMA_2020_12_INPUT_SCHEMA,
    SEP1034_DEFAULTS_SCHEMA,
    SEP1330_ENUMS_SCHEMA,
    TEST_AUDIO_BASE64,
    TEST_IMAGE_BASE64,
)
from ._input_required import declare_era_2026_tools, declare_input_required_tools
from ._interactive import declare_interactive_tools, declare_notification_tools
from ._resources import declare_completions, declare_prompts, declare_resources
from ._tasks import declare_task_tools

__all__ = [
    "JSON_SCHEMA_2020_12_INPUT_SCHEMA",
    "SEP1034_DEFAULTS_SCHEMA",
    "SEP1330_ENUMS_SCHEMA",
    "TEST_AUDIO_BASE64",
    "TEST_IMAGE_BASE64",
    "WeatherReport",
    "declare_completions",
    "declare_content_tools",
    "declare_elicitation_tools",
    "declare_era_2026_tools",
    "declare_input_required_tools",
    "declare_interactive_tools",
    "declare_notification_tools",
    "declare_prompts",
    "declare_resources",
    "declare_task_tools",
]
