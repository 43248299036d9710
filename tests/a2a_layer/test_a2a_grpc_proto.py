"""rpcweave's own a2a_v1.proto keeps the wire contract of the specification's a2a.proto,
and the committed descriptor module is what the .proto compiles to.

Tests the private unit `a2a_layer._grpc._descriptor_v1` on purpose: the committed generated
module must be what the .proto compiles to.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from _specs import need
from grpc_tools import protoc

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import gen_a2a_grpc  # noqa: E402


def _spec_file() -> Any:
    """The specification's a2a.proto compiled (google/api protos from googleapis-common-protos)."""
    import tempfile

    import grpc_tools
    from google.api import annotations_pb2
    from google.protobuf import descriptor_pb2

    spec = need("a2a/v1.0/a2a.proto")  # skipped with its reason, or failed under CI
    googleapis = Path(annotations_pb2.__file__).parents[2]  # holds google/api/*.proto
    include = Path(grpc_tools.__file__).parent / "_proto"
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "set.pb"
        args = [
            f"-I{spec.parent}",
            f"-I{googleapis}",
            f"-I{include}",
            f"--descriptor_set_out={out}",
        ]
        assert protoc.main(["protoc", *args, spec.name]) == 0
        (file,) = descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes()).file
    return file


def _ours() -> Any:
    from google.protobuf import descriptor_pb2

    from a2a_layer._grpc._descriptor_v1 import SERIALIZED

    return descriptor_pb2.FileDescriptorProto.FromString(SERIALIZED)


def _shape(file: Any) -> dict[str, Any]:
    """Every message's fields (name, number, type, label, type name, oneof, proto3
    optional), every enum's values and every rpc's types: the wire contract."""
    shape: dict[str, Any] = {"package": file.package}

    def messages(prefix: str, items: Any) -> None:
        for message in items:
            name = f"{prefix}{message.name}"
            shape[name] = [
                (
                    f.name,
                    f.number,
                    f.type,
                    f.label,
                    f.type_name,
                    f.oneof_index if f.HasField("oneof_index") else None,
                    f.proto3_optional,
                    f.json_name,
                )
                for f in message.field
            ]
            shape[name + "/oneofs"] = [o.name for o in message.oneof_decl]
            messages(name + ".", message.nested_type)
            for enum in message.enum_type:
                shape[f"{name}.{enum.name}"] = [(v.name, v.number) for v in enum.value]

    messages("", file.message_type)
    for enum in file.enum_type:
        shape[enum.name] = [(v.name, v.number) for v in enum.value]
    for service in file.service:
        shape[service.name] = [
            (m.name, m.input_type, m.output_type, m.server_streaming, m.client_streaming)
            for m in service.method
        ]
    return shape


def test_our_proto_has_the_specifications_wire_contract() -> None:
    assert _shape(_ours()) == _shape(_spec_file())


@pytest.mark.parametrize("proto_name", sorted(gen_a2a_grpc.PROTOS))
def test_the_committed_descriptor_modules_match_the_protos(proto_name: str) -> None:
    proto = ROOT / "a2a_layer" / "_grpc" / proto_name
    expected = gen_a2a_grpc.render(proto.name, gen_a2a_grpc.compile_proto(proto))
    module = ROOT / "a2a_layer" / "_grpc" / gen_a2a_grpc.PROTOS[proto_name]
    assert module.read_text() == expected, "stale: run `make grpc-proto`"
