"""What an apiextensions.k8s.io/v1 CRD's structural schema does to a custom resource on write:
unknown fields are pruned, non-nullable nulls dropped, `default`s applied, then the object is
validated (`structural`).

Not covered: embedded resources' metadata rules, CEL rules (`x-kubernetes-validations`).
"""

from __future__ import annotations

from typing import Any

from reconcile.cluster.memory import structural
from reconcile.cluster.memory import validation as v
from reconcile.cluster.memory.util import clone

Schema = dict[str, Any]
_ROOT_FIELDS = ("apiVersion", "kind", "metadata")


def apply_schema(schema: Schema | None, obj: dict[str, Any], minor: int) -> list[v.FieldError]:
    """Prune and default `obj` in place; return what it breaks of the schema, as the API server
    of release 1.`minor` words it."""
    if schema is None:
        return []
    _prune(obj, schema, keep_object_meta=True)
    _default(obj, schema, root=True)
    return structural.schema_errors(schema, obj, minor) + structural.list_type_errors(schema, obj)


def _sub_schema(schema: Schema, key: str) -> Schema | None:
    properties = schema.get("properties")
    if isinstance(properties, dict) and isinstance(properties.get(key), dict):
        found: Schema = properties[key]
        return found
    additional = schema.get("additionalProperties")
    return additional if isinstance(additional, dict) else None


def _prune(value: Any, schema: Schema, *, keep_object_meta: bool = False) -> None:
    if isinstance(value, dict):
        if schema.get("x-kubernetes-int-or-string") is True:
            return
        preserve = (
            schema.get("x-kubernetes-preserve-unknown-fields") is True
            or schema.get("additionalProperties") is True
        )
        keep_meta = keep_object_meta or schema.get("x-kubernetes-embedded-resource") is True
        for key in list(value):
            if keep_meta and key in _ROOT_FIELDS:
                continue
            sub = _sub_schema(schema, key)
            if sub is None:
                if not preserve:
                    del value[key]
            elif value[key] is None and sub.get("nullable") is not True:
                del value[key]
            else:
                _prune(value[key], sub)
    elif isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, dict):
            for item in value:
                _prune(item, items)


def _default(value: Any, schema: Schema, *, root: bool = False) -> None:
    if isinstance(value, dict):
        properties = schema.get("properties")
        properties = properties if isinstance(properties, dict) else {}
        for key, sub in properties.items():
            if not isinstance(sub, dict) or (root and key in _ROOT_FIELDS):
                continue
            if key not in value and "default" in sub:
                value[key] = clone(sub["default"])
            if key in value:
                _default(value[key], sub)
        additional = schema.get("additionalProperties")
        if isinstance(additional, dict):
            for key, item in value.items():
                if key not in properties:
                    _default(item, additional)
    elif isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, dict):
            for item in value:
                _default(item, items)
