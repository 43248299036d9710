"""UNSTABLE parts of the Agent Client Protocol schema (schema.unstable.json): opt-in.

Everything here may change or disappear in any release of the protocol. The module holds
only what schema.json lacks: the types of the unstable methods (``session/fork``,
``providers/*``, ``nes/*``, ``document/*``, ``mcp/*``), the unstable session update variants,
and ``Unstable*`` subclasses that type the unstable fields of stable objects. Stable types
are in `acp_layer.schema`; the unstable fields of stable objects also survive there as extra
fields, so a stable peer forwards them unchanged.
"""

from __future__ import annotations

from ._schema import _unstable, _unstable_nes
from ._schema._unstable import *  # noqa: F403
from ._schema._unstable_nes import *  # noqa: F403

__all__: list[str] = []
__all__ += _unstable.__all__
__all__ += _unstable_nes.__all__
