"""Pydantic models of the stable Agent Client Protocol schema, protocolVersion 1.

One model per schema type, named as in schema.json. Python attributes are snake_case, the
wire is camelCase, ``_meta`` is ``meta``::

    from acp_layer import schema

    note = schema.SessionNotification(
        session_id="sess_1",
        update=schema.AgentMessageChunk(content=schema.TextContent(text="Hello")),
    )
    pydantic_core.to_json(note, by_alias=True, exclude_none=True)
    # {"sessionId":"sess_1","update":{"content":{"type":"text","text":"Hello"},
    #  "sessionUpdate":"agent_message_chunk"}}

Lenient in, strict out: the schema's ``x-deserialize-default-on-error`` and
``x-deserialize-skip-invalid-items`` hints are honoured (a bad optional value from a peer
falls back to its default, a bad array item is dropped), unknown fields are kept, and open
unions keep unknown variants as ``Unknown*`` models (e.g. `UnknownSessionUpdate`); see
``acp_layer/_schema/_lenient.py`` for the full rules. Unions whose members differ by a tag
(`ContentBlock`, `SessionUpdate`, `McpServer`, ...) are type aliases: validate them with a
``pydantic.TypeAdapter`` or as a field of a model.

Where one schema type is a session update variant and also used elsewhere, the variant is a
subclass carrying the ``sessionUpdate`` tag: `ContentChunk` -> `UserMessageChunk`,
`AgentMessageChunk`, `AgentThoughtChunk`; `ToolCallUpdate` -> `ToolCallProgress`.
Types flattened into others on the wire are classes of their own here:
``CreateElicitationRequest`` = `FormElicitationRequest` | `UrlElicitationRequest` | ...
(the scope fields ``ElicitationSessionScope``/``ElicitationRequestScope`` are flattened into
them) and `SessionConfigOption` = `SessionConfigSelect` | `SessionConfigBoolean`.
Unstable types live in ``acp_layer.schema_unstable``.
"""

from __future__ import annotations

from ._schema import (
    _base,
    _capabilities,
    _config,
    _content,
    _elicitation,
    _elicitation_schema,
    _fs,
    _initialize,
    _mcp,
    _permission,
    _prompt,
    _protocol,
    _session,
    _terminal,
    _tool_calls,
    _updates,
)
from ._schema._base import *  # noqa: F403
from ._schema._capabilities import *  # noqa: F403
from ._schema._config import *  # noqa: F403
from ._schema._content import *  # noqa: F403
from ._schema._elicitation import *  # noqa: F403
from ._schema._elicitation_schema import *  # noqa: F403
from ._schema._fs import *  # noqa: F403
from ._schema._initialize import *  # noqa: F403
from ._schema._lenient import CLEAR, ClearType
from ._schema._mcp import *  # noqa: F403
from ._schema._permission import *  # noqa: F403
from ._schema._prompt import *  # noqa: F403
from ._schema._protocol import *  # noqa: F403
from ._schema._session import *  # noqa: F403
from ._schema._terminal import *  # noqa: F403
from ._schema._tool_calls import *  # noqa: F403
from ._schema._updates import *  # noqa: F403

__all__ = ["CLEAR", "ClearType"]
__all__ += _base.__all__
__all__ += _capabilities.__all__
__all__ += _config.__all__
__all__ += _content.__all__
__all__ += _elicitation.__all__
__all__ += _elicitation_schema.__all__
__all__ += _fs.__all__
__all__ += _initialize.__all__
__all__ += _mcp.__all__
__all__ += _permission.__all__
__all__ += _prompt.__all__
__all__ += _protocol.__all__
__all__ += _session.__all__
__all__ += _terminal.__all__
__all__ += _tool_calls.__all__
__all__ += _updates.__all__
