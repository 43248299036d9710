"""Validators for the official A2A JSON schemas (1.0 and 0.3), found by tests/_specs.py."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import Any

import _specs

Validate = Callable[[str, Any], None]


@functools.lru_cache(maxsize=1)
def v10() -> Validate:
    """``validate(name, instance)`` against the 1.0 schema definition of a proto message."""
    import jsonschema
    import referencing
    import referencing.jsonschema

    defs = json.loads(_specs.read("a2a/v1.0/a2a.schema.json"))["definitions"]
    resources = []
    for key, schema in defs.items():
        name = key.replace(" ", "")
        package = "google.protobuf" if name in ("Struct", "Timestamp", "Value") else "lf.a2a.v1"
        resource = referencing.Resource.from_contents(
            schema, default_specification=referencing.jsonschema.DRAFT202012
        )
        resources.append((f"{package}.{name}.jsonschema.json", resource))
    registry = referencing.Registry().with_resources(resources)
    by_name = {key.replace(" ", ""): schema for key, schema in defs.items()}

    def validate(name: str, instance: Any) -> None:
        jsonschema.Draft202012Validator(by_name[name], registry=registry).validate(instance)

    return validate


@functools.lru_cache(maxsize=1)
def v03() -> Validate:
    """``validate(name, instance)`` against a 0.3 ``a2a.json`` definition."""
    import jsonschema

    doc = json.loads(_specs.read("a2a/v0.3/a2a.json"))

    def validate(name: str, instance: Any) -> None:
        schema = {"$ref": f"#/definitions/{name}", "definitions": doc["definitions"]}
        jsonschema.Draft7Validator(schema).validate(instance)

    return validate
