"""What a protocol layer builds its OpenTelemetry conventions on (``rpcweave[otel]``).

A layer subclasses `TelemetryConventions` to say how its methods are named and what
their params carry (`field`, `text_field`, `as_json` read them safely) and hands an
instance to each `Peer` and `HTTPCaller` it makes; `instrument` gives the hook for a
path that is not a `Peer` (an HTTP binding of its own). Nothing here imports
``opentelemetry``: see `jsonrpc_core._telemetry` for the rules the hook keeps.
"""

from typing import TYPE_CHECKING

from jsonrpc_core import install_lazy_exports

if TYPE_CHECKING or not install_lazy_exports(globals()):
    from ._telemetry import Attributes as Attributes
    from ._telemetry import AttributeValue as AttributeValue
    from ._telemetry import TelemetryConventions as TelemetryConventions
    from ._telemetry import TelemetryHook as TelemetryHook
    from ._telemetry import as_json as as_json
    from ._telemetry import field as field
    from ._telemetry import instrument as instrument
    from ._telemetry import text_field as text_field
