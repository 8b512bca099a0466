"""What an apiextensions.k8s.io/v1 CRD's structural schema does to a custom resource on write:
unknown fields are pruned, non-nullable nulls dropped, `default`s applied, and the common
constraints validated (type, required, enum, lengths, bounds, pattern, item counts).

Not covered: `format`, `multipleOf`, `uniqueItems`, `allOf`/`anyOf`/`oneOf`/`not`, list-type
and map-type checks, embedded resources' metadata rules.
"""

from __future__ import annotations

import re
from typing import Any

from reconcile.cluster.memory import validation as v
from reconcile.cluster.memory.util import clone

Schema = dict[str, Any]
_ROOT_FIELDS = ("apiVersion", "kind", "metadata")


def apply_schema(schema: Schema | None, obj: dict[str, Any]) -> list[v.FieldError]:
    """Prune and default `obj` in place; return what it breaks of the schema."""
    if schema is None:
        return []
    _prune(obj, schema, keep_object_meta=True)
    _default(obj, schema, root=True)
    errors: list[v.FieldError] = []
    _validate_object(obj, schema, "", errors, root=True)
    return errors


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


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _has_type(value: Any, wanted: str) -> bool:
    actual = _type_name(value)
    if wanted == "number":
        return actual in ("integer", "number")
    if wanted == "integer" and isinstance(value, float):
        return value.is_integer()
    return actual == wanted


def _validate(value: Any, schema: Schema, path: str, errors: list[v.FieldError]) -> None:
    if value is None and schema.get("nullable") is True:
        return
    if schema.get("x-kubernetes-int-or-string") is True:
        if not isinstance(value, int | str) or isinstance(value, bool):
            errors.append(
                v.invalid_value(
                    path,
                    _type_name(value),
                    f'{path} in body must be of type integer or string: "{_type_name(value)}"',
                )
            )
        return
    wanted = schema.get("type")
    if isinstance(wanted, str) and wanted and not _has_type(value, wanted):
        actual = _type_name(value)
        errors.append(
            v.invalid_value(path, actual, f'{path} in body must be of type {wanted}: "{actual}"')
        )
        return
    enum = schema.get("enum")
    if isinstance(enum, list) and value not in enum:
        errors.append(v.unsupported(path, value, [str(e) for e in enum]))
    if isinstance(value, str):
        _validate_string(value, schema, path, errors)
    elif isinstance(value, int | float) and not isinstance(value, bool):
        _validate_number(value, schema, path, errors)
    elif isinstance(value, list):
        _validate_array(value, schema, path, errors)
    elif isinstance(value, dict):
        _validate_object(value, schema, path, errors)


def _validate_string(value: str, schema: Schema, path: str, errors: list[v.FieldError]) -> None:
    max_length, min_length = schema.get("maxLength"), schema.get("minLength")
    if isinstance(max_length, int) and len(value) > max_length:
        detail = f"{path} in body should be at most {max_length} chars long"
        errors.append(v.invalid_value(path, value, detail))
    if isinstance(min_length, int) and len(value) < min_length:
        detail = f"{path} in body should be at least {min_length} chars long"
        errors.append(v.invalid_value(path, value, detail))
    pattern = schema.get("pattern")
    if isinstance(pattern, str):
        try:
            matched = re.search(pattern, value) is not None
        except re.error:
            matched = True  # a pattern Python cannot read is not held against the object
        if not matched:
            detail = f"{path} in body should match '{pattern}'"
            errors.append(v.invalid_value(path, value, detail))


def _validate_number(value: float, schema: Schema, path: str, errors: list[v.FieldError]) -> None:
    minimum, maximum = schema.get("minimum"), schema.get("maximum")
    if isinstance(minimum, int | float):
        if schema.get("exclusiveMinimum") is True and value <= minimum:
            detail = f"{path} in body should be greater than {minimum}"
            errors.append(v.invalid_value(path, value, detail))
        elif value < minimum:
            detail = f"{path} in body should be greater than or equal to {minimum}"
            errors.append(v.invalid_value(path, value, detail))
    if isinstance(maximum, int | float):
        if schema.get("exclusiveMaximum") is True and value >= maximum:
            detail = f"{path} in body should be less than {maximum}"
            errors.append(v.invalid_value(path, value, detail))
        elif value > maximum:
            detail = f"{path} in body should be less than or equal to {maximum}"
            errors.append(v.invalid_value(path, value, detail))


def _validate_array(
    value: list[Any], schema: Schema, path: str, errors: list[v.FieldError]
) -> None:
    max_items, min_items = schema.get("maxItems"), schema.get("minItems")
    if isinstance(max_items, int) and len(value) > max_items:
        detail = f"{path} in body should have at most {max_items} items"
        errors.append(v.invalid_value(path, len(value), detail))
    if isinstance(min_items, int) and len(value) < min_items:
        detail = f"{path} in body should have at least {min_items} items"
        errors.append(v.invalid_value(path, len(value), detail))
    items = schema.get("items")
    if isinstance(items, dict):
        for i, item in enumerate(value):
            _validate(item, items, f"{path}[{i}]", errors)


def _validate_object(
    value: dict[str, Any],
    schema: Schema,
    path: str,
    errors: list[v.FieldError],
    *,
    root: bool = False,
) -> None:
    prefix = f"{path}." if path else ""
    required = schema.get("required")
    if isinstance(required, list):
        for key in required:
            if root and key in _ROOT_FIELDS:
                continue
            if key not in value:
                errors.append(v.required(f"{prefix}{key}"))
    for key, item in value.items():
        if root and key in _ROOT_FIELDS:
            continue
        sub = _sub_schema(schema, str(key))
        if sub is not None:
            _validate(item, sub, f"{prefix}{key}", errors)
