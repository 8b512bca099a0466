"""A CRD schema as the types its CEL rules see, with the sizes kube-apiserver estimates for them
(k8s.io/apiserver/pkg/cel/common/schemas.go SchemaDeclType, types.go): how many elements a list,
map or string can hold (`max_elements`: maxItems, maxProperties, maxLength times 4, or what the
3 MiB request limit leaves for the smallest element), and the smallest JSON a value of the type
takes (`min_size`). And how many times a node can occur in one object (apiextensions'
CELSchemaContext.MaxCardinality), which multiplies a rule's estimated cost."""

from __future__ import annotations

from dataclasses import field
from typing import Any, TypeGuard

from reconcile.cluster.memory.cel.cost import MAX_REQUEST_BYTES, MAX_UINT64, multiply
from reconcile.cluster.memory.cel.values import Schema, additional, escape, items, properties
from reconcile.records import dataclass

MIN_STRING = 2  # ""
MIN_BOOL = 4  # true
MIN_NUMBER = 1  # 0
MIN_DURATION = 3
MAX_DURATION = 32
DATE = 12
MIN_DATETIME = 21
MAX_DATETIME = 32


@dataclass
class Decl:
    """A DeclType: `kind` is CEL's (object, list, map, string, bytes, int, uint, double, bool,
    duration, timestamp, dyn, null, type, optional, or a Kubernetes type's name)."""

    kind: str
    max_elements: int = 0
    min_size: int = 1
    fields: dict[str, Decl] = field(default_factory=dict)
    elem: Decl | None = None
    key: Decl | None = None

    @property
    def is_scalar(self) -> bool:
        """cel-go's isScalar: of a size known when compiling (strings and lists are not)."""
        if self.kind == "optional" and self.elem is not None:
            return self.elem.is_scalar
        return self.kind in ("bool", "double", "duration", "int", "timestamp", "uint")


# the shared simple types of apiserver's cel package (their max_elements is 0)
STRING = Decl("string", min_size=MIN_STRING)
INT = Decl("int", min_size=MIN_NUMBER)
DOUBLE = Decl("double", min_size=MIN_NUMBER)
BOOL = Decl("bool", min_size=MIN_BOOL)
DYN = Decl("dyn", min_size=1)


def decl_type(schema: Any, resource_root: bool) -> Decl | None:
    """SchemaDeclType: None for a schema CEL cannot see (no type, or items it cannot see)."""
    if not isinstance(schema, dict):
        return None
    if schema.get("x-kubernetes-int-or-string") is True:
        dyn = Decl("dyn", min_size=1)
        limit = schema.get("maxLength")
        dyn.max_elements = _length_bound(limit) if isinstance(limit, int) else _per_request(schema)
        return dyn
    if resource_root:
        schema = with_type_and_object_meta(schema)
    kind = schema.get("type")
    if kind == "array":
        item_schema = items(schema)
        if item_schema is None:
            return None
        item = decl_type(item_schema, item_schema.get("x-kubernetes-embedded-resource") is True)
        if item is None:
            return None
        limit = schema.get("maxItems")
        count = max(limit, 0) if _is_int(limit) else (MAX_REQUEST_BYTES - 2) // (item.min_size + 1)
        return Decl("list", max_elements=count, min_size=2, elem=item)
    if kind == "object":
        return _object(schema)
    if kind == "string":
        return _string(schema)
    return {"boolean": BOOL, "number": DOUBLE, "integer": INT}.get(str(kind))


def _object(schema: Schema) -> Decl | None:
    extra = additional(schema)
    if extra is not None:
        value = decl_type(extra, extra.get("x-kubernetes-embedded-resource") is True)
        if value is None:
            return None
        limit = schema.get("maxProperties")
        count = max(limit, 0) if _is_int(limit) else (MAX_REQUEST_BYTES - 2) // (value.min_size + 6)
        return Decl("map", max_elements=count, min_size=2, elem=value, key=STRING)
    required = schema.get("required")
    required_names = set(required) if isinstance(required, list) else set()
    fields: dict[str, Decl] = {}
    min_size = 2
    for name, sub in properties(schema).items():
        declared = decl_type(sub, sub.get("x-kubernetes-embedded-resource") is True)
        if declared is None:
            continue
        escaped = escape(name)
        if escaped is not None:
            fields[escaped] = declared
        if name in required_names and "default" not in sub:
            min_size += len(name.encode()) + declared.min_size + 4
    return Decl("object", min_size=min_size, fields=fields)


def _string(schema: Schema) -> Decl:
    declared_format = schema.get("format")
    limit = schema.get("maxLength")
    if declared_format == "byte":
        count = max(limit, 0) if _is_int(limit) else _per_request(schema)
        return Decl("bytes", max_elements=count, min_size=MIN_STRING)
    if declared_format == "duration":
        return Decl("duration", max_elements=MAX_DURATION, min_size=MIN_DURATION)
    if declared_format == "date":
        return Decl("timestamp", max_elements=DATE, min_size=DATE)
    if declared_format == "date-time":
        return Decl("timestamp", max_elements=MAX_DATETIME, min_size=MIN_DATETIME)
    if _is_int(limit):
        count = _length_bound(limit)
    elif schema.get("enum"):
        count = max((len(e.encode()) for e in schema["enum"] if isinstance(e, str)), default=0)
    else:
        count = _per_request(schema)
    return Decl("string", max_elements=count, min_size=MIN_STRING)


def _per_request(_schema: Schema) -> int:
    return MAX_REQUEST_BYTES - 2


def _length_bound(limit: int) -> int:
    """maxLength counts characters; a character takes up to 4 bytes."""
    return max(limit, 0) * 4


def _is_int(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def with_type_and_object_meta(schema: Schema) -> Schema:
    """A resource's root: apiVersion, kind, metadata.name and metadata.generateName are always
    there for its rules, whatever the schema says (WithTypeAndObjectMeta)."""
    declared = properties(schema)
    meta = declared.get("metadata") or {}
    meta_fields = properties(meta)

    def typed(value: Any, kind: str) -> bool:
        return isinstance(value, dict) and value.get("type") == kind

    if (
        typed(declared.get("kind"), "string")
        and typed(declared.get("apiVersion"), "string")
        and typed(meta, "object")
        and typed(meta_fields.get("name"), "string")
        and typed(meta_fields.get("generateName"), "string")
    ):
        return schema
    string = {"type": "string"}
    meta_schema = {
        "type": "object",
        "properties": {
            "name": _capped(meta_fields.get("name"), NAME_MAX_LENGTH),
            # the generated suffix takes at least a character
            "generateName": _capped(meta_fields.get("generateName"), NAME_MAX_LENGTH - 1),
        },
    }
    props = {**(schema.get("properties") or {}), "kind": string, "apiVersion": string}
    props["metadata"] = meta_schema
    return {**schema, "properties": props}


NAME_MAX_LENGTH = 253  # a DNS-1123 subdomain's


def _capped(existing: Any, limit: int) -> Schema:
    """A string no longer than `limit`, or than the schema's own maxLength if shorter."""
    own = existing.get("maxLength") if isinstance(existing, dict) else None
    if _is_int(own) and own < limit:
        limit = own
    return {"type": "string", "maxLength": limit}


def min_cardinality_bound(declared: Decl) -> int:
    """maxCardinality: how many values of this type one request could hold, at the least size
    each (used where the schema above does not bound it)."""
    return MAX_REQUEST_BYTES // (declared.min_size + 1)


def child_cardinality(parent: Schema, cardinality: int | None) -> int | None:
    """How many times a child of `parent` can occur (None: unbounded), from the parent's own
    count: times maxItems or maxProperties, unbounded without them (extractMaxElements)."""
    if cardinality is None:
        return None
    kind = parent.get("type")
    if kind == "object" and "additionalProperties" in parent:
        limit = parent.get("maxProperties")
        return multiply(cardinality, max(limit, 0)) if _is_int(limit) else None
    if kind == "array":
        limit = parent.get("maxItems")
        return multiply(cardinality, max(limit, 0)) if _is_int(limit) else None
    return cardinality


def times_cardinality(cost: int, cardinality: int) -> int:
    """multiplyWithOverflowGuard."""
    if cost == 0:
        return 0
    return MAX_UINT64 if cost * cardinality > MAX_UINT64 else cost * cardinality
