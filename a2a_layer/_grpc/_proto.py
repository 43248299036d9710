"""The proto packages of the gRPC binding, loaded once (see ``_messages``)."""

from __future__ import annotations

from ._descriptor_v03 import SERIALIZED as _V03
from ._descriptor_v1 import SERIALIZED as _V1
from ._messages import ProtoPackage

__all__ = ["V03", "V03_SERVICE", "V1", "V1_SERVICE"]

V1_SERVICE = "lf.a2a.v1.A2AService"
V1 = ProtoPackage(_V1, V1_SERVICE)
"""A2A 1.0: package ``lf.a2a.v1`` (a2a.proto of the specification)."""

V03_SERVICE = "a2a.v1.A2AService"
V03 = ProtoPackage(_V03, V03_SERVICE, version="0.3")
"""A2A 0.3: package ``a2a.v1`` (specification/grpc/a2a.proto of A2A v0.3.0)."""
