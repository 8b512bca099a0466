"""A custom resource's JSON as the CEL values its schema makes of it (apiextensions-apiserver's
`UnstructuredToVal`): `integer` as int, `number` as double even when written `1`, the `byte`,
`duration`, `date` and `date-time` string formats as bytes, duration and timestamp,
int-or-string as written, objects with only the properties their schema declares (escaped as
CEL names), `additionalProperties` as maps, and a resource root (the custom resource, an
embedded resource) with `apiVersion`, `kind` and only `metadata.name`/`generateName`."""

from __future__ import annotations

import base64
import binascii
import datetime
import re
from typing import Any

from celpy import celtypes

from reconcile.cluster.memory.cel.walk import Schema, additional, items, properties

__all__ = ["Schema", "additional", "items", "properties", "to_cel"]

# cel.Escape: CEL's reserved words are escaped as __word__, and `__`, `.`, `-`, `/` spelled out
_RESERVED = frozenset(
    [
        "true",
        "false",
        "null",
        "in",
        "as",
        "break",
        "const",
        "continue",
        "else",
        "for",
        "function",
        "if",
        "import",
        "let",
        "loop",
        "package",
        "namespace",
        "return",
        "var",
        "void",
        "while",
    ]
)
_ESCAPABLE = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_./-]*$")
_RESOURCE_META = ("name", "generateName")
_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h|d|w)")
_DURATION_UNITS = {
    "ns": 1e-9,
    "us": 1e-6,
    "µs": 1e-6,
    "ms": 1e-3,
    "s": 1.0,
    "m": 60.0,
    "h": 3600.0,
    "d": 86400.0,
    "w": 604800.0,
}


def escape(name: str) -> str | None:
    """The CEL field name of a property, or None when CEL cannot name it."""
    if name in _RESERVED:
        return f"__{name}__"
    if not _ESCAPABLE.match(name):
        return None
    return (
        name.replace("__", "__underscores__")
        .replace(".", "__dot__")
        .replace("-", "__dash__")
        .replace("/", "__slash__")
    )


def schema_type(schema: Schema) -> str:
    declared = schema.get("type")
    return declared if isinstance(declared, str) else ""


def is_dynamic(schema: Schema) -> bool:
    """Typed `dyn` by the server: int-or-string, and schemas that give no type."""
    return schema.get("x-kubernetes-int-or-string") is True or not schema_type(schema)


def resource_fields(schema: Schema) -> dict[str, Schema]:
    """The properties CEL sees on a resource root: its own, plus apiVersion, kind and a
    metadata with name and generateName only."""
    fields = dict(properties(schema))
    fields["apiVersion"] = {"type": "string"}
    fields["kind"] = {"type": "string"}
    fields["metadata"] = {
        "type": "object",
        "properties": {key: {"type": "string"} for key in _RESOURCE_META},
    }
    return fields


def to_cel(value: Any, schema: Schema, *, resource_root: bool = False) -> Any:
    """`value` (decoded JSON) as a CEL value typed by `schema`."""
    if value is None:
        return None
    if is_dynamic(schema) and not resource_root:
        return _untyped(value)
    kind = schema_type(schema) or "object"
    if kind == "object" and isinstance(value, dict):
        return _object(value, schema, resource_root)
    if kind == "array" and isinstance(value, list):
        item_schema = items(schema) or {}
        return celtypes.ListType([to_cel(item, item_schema) for item in value])
    if kind == "string" and isinstance(value, str):
        return _string(value, str(schema.get("format") or ""))
    if kind == "integer" and isinstance(value, int) and not isinstance(value, bool):
        return celtypes.IntType(value)
    if kind == "number" and isinstance(value, int | float) and not isinstance(value, bool):
        return celtypes.DoubleType(float(value))
    if kind == "boolean" and isinstance(value, bool):
        return celtypes.BoolType(value)
    return _untyped(value)


def _object(value: dict[str, Any], schema: Schema, resource_root: bool) -> celtypes.MapType:
    fields = resource_fields(schema) if resource_root else properties(schema)
    result = celtypes.MapType()
    if fields:
        for key, sub in fields.items():
            name = escape(key)
            if name is None or key not in value:
                continue
            if resource_root and key == "metadata" and isinstance(value[key], dict):
                meta = {k: v for k, v in value[key].items() if k in _RESOURCE_META}
                result[celtypes.StringType(name)] = to_cel(meta, sub)
            else:
                result[celtypes.StringType(name)] = to_cel(value[key], sub)
        return result
    extra = additional(schema)
    if extra is not None:
        for key, item in value.items():
            result[celtypes.StringType(key)] = to_cel(item, extra)
    return result


def _string(value: str, declared_format: str) -> Any:
    if declared_format == "byte":
        try:
            return celtypes.BytesType(base64.b64decode(value, validate=True))
        except (binascii.Error, ValueError):
            return celtypes.StringType(value)
    if declared_format == "duration":
        parsed = parse_duration(value)
        return parsed if parsed is not None else celtypes.StringType(value)
    if declared_format in ("date", "date-time"):
        parsed_time = parse_timestamp(value, date_only=declared_format == "date")
        return parsed_time if parsed_time is not None else celtypes.StringType(value)
    return celtypes.StringType(value)


def parse_duration(text: str) -> celtypes.DurationType | None:
    """Go's duration syntax (`1h2m3s4ms`), with the `d` and `w` the schema format accepts."""
    body = text[1:] if text[:1] in "+-" else text
    if body == "0":
        return celtypes.DurationType(datetime.timedelta())
    parts = _DURATION_PART.findall(body)
    if not body or "".join(n + u for n, u in parts) != body:
        return None
    seconds = sum(float(number) * _DURATION_UNITS[unit] for number, unit in parts)
    signed = -seconds if text.startswith("-") else seconds
    return celtypes.DurationType(datetime.timedelta(seconds=signed))


def parse_timestamp(text: str, *, date_only: bool = False) -> celtypes.TimestampType | None:
    try:
        if date_only:
            day = datetime.date.fromisoformat(text)
            moment = datetime.datetime(day.year, day.month, day.day, tzinfo=datetime.UTC)
        else:
            moment = datetime.datetime.fromisoformat(text.replace("z", "Z"))
            if moment.tzinfo is None:
                return None
    except ValueError:
        return None
    return celtypes.TimestampType(moment)


def _untyped(value: Any) -> Any:
    """JSON as CEL sees data its schema does not type (int-or-string, no `type`)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return celtypes.BoolType(value)
    if isinstance(value, int):
        return celtypes.IntType(value)
    if isinstance(value, float):
        return celtypes.DoubleType(value)
    if isinstance(value, str):
        return celtypes.StringType(value)
    if isinstance(value, list):
        return celtypes.ListType([_untyped(item) for item in value])
    if isinstance(value, dict):
        return celtypes.MapType({celtypes.StringType(k): _untyped(v) for k, v in value.items()})
    return value
