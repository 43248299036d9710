"""Conversion between A2A 0.3 wire objects and the 1.0 models.

A server speaks 0.3 to clients that send no ``A2A-Version`` (spec 3.6.2) on the same
endpoint: `params_from_v03` turns a 0.3 call into a 1.0 descriptor and params model, and
`result_to_v03` turns the 1.0 result (or each streamed event) back into 0.3 JSON. A
client talking to a 0.3 server uses `params_to_v03` and `result_from_v03`. The per-object
functions (``message_from_v03``, ``task_to_v03``, ...) are public too.

Rules:

1. ``*_from_v03`` rewrite the 0.3 JSON into 1.0 JSON and validate once; malformed input
   is passed through so that validation names the offending field.
2. ``*_to_v03`` take validated models and write 0.3 JSON without ``None`` members.
3. What 0.3 cannot say is dropped: ``tenant``, ``mediaType``/``filename`` of text and data
   parts, the device code OAuth flow and ``pkceRequired``; what 1.0 cannot say likewise
   (``stateTransitionHistory``, all but one OAuth flow of a scheme).
4. A non-object data part travels as ``{"value": ...}`` with metadata
   ``data_part_compat: true`` (the a2a-sdk convention), and is unwrapped on the way in.
"""

from ._bridge import params_from_v03, params_to_v03, result_from_v03, result_to_v03
from ._card import card_from_any, card_from_v03, card_to_v03
from ._events import (
    event_from_v03,
    event_to_v03,
    push_config_from_v03,
    push_config_to_v03,
    send_params_from_v03,
    send_params_to_v03,
    send_result_from_v03,
    send_result_to_v03,
)
from ._objects import (
    artifact_from_v03,
    artifact_to_v03,
    message_from_v03,
    message_to_v03,
    part_from_v03,
    part_to_v03,
    role_to_v03,
    state_from_v03,
    state_to_v03,
    status_from_v03,
    status_to_v03,
    task_from_v03,
    task_to_v03,
)

__all__ = [
    "artifact_from_v03",
    "artifact_to_v03",
    "card_from_any",
    "card_from_v03",
    "card_to_v03",
    "event_from_v03",
    "event_to_v03",
    "message_from_v03",
    "message_to_v03",
    "params_from_v03",
    "params_to_v03",
    "part_from_v03",
    "part_to_v03",
    "push_config_from_v03",
    "push_config_to_v03",
    "result_from_v03",
    "result_to_v03",
    "role_to_v03",
    "send_params_from_v03",
    "send_params_to_v03",
    "send_result_from_v03",
    "send_result_to_v03",
    "state_from_v03",
    "state_to_v03",
    "status_from_v03",
    "status_to_v03",
    "task_from_v03",
    "task_to_v03",
]
