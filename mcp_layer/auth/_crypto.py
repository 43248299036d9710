"""The optional cryptography: JWT/JWS through PyJWT (``pip install 'rpcweave[auth]'``).

Only what signs or verifies a JWT needs it (`JWTVerifier`, ``private_key_jwt``);
everything else in `mcp_layer.auth` works without it.
"""

from __future__ import annotations

import importlib.util

__all__ = ["require_pyjwt"]

_MESSAGE = (
    "{what} needs PyJWT with its cryptography backend; install them with "
    "pip install 'rpcweave[auth]' (or: pip install 'pyjwt[crypto]')"
)


def require_pyjwt(what: str) -> None:
    """Raise a clear `ImportError` unless PyJWT and ``cryptography`` can be imported."""
    for module in ("jwt", "cryptography"):
        if importlib.util.find_spec(module) is None:
            raise ImportError(_MESSAGE.format(what=what), name=module)
