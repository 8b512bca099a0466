"""What an apiextensions.k8s.io/v1 CRD's structural schema does to a custom resource on write:
unknown fields are pruned, non-nullable nulls dropped, `default`s applied, then the object is
validated (`openapi.validator`, embedded resources' `apiVersion`, `kind` and `metadata` included),
then its CEL rules (`x-kubernetes-validations`, `cel`) are run unless the schema's errors block
them, as the server's `hasBlockingErr` decides.
"""

from __future__ import annotations

import re
from typing import Any

from reconcile.cluster.memory import cel
from reconcile.cluster.memory.openapi import listtypes, validator
from reconcile.cluster.memory.validation import fielderrors
from reconcile.objects.jsondata import normalized_copy

Schema = dict[str, Any]
_ROOT_FIELDS = ("apiVersion", "kind", "metadata")


# The schema errors after which the server does not run the rules: required, enum (from
# 1.30), too long / too many, and type errors (kube-openapi's InvalidTypeCode, formats too)
_ENUM_BLOCKS_SINCE = 30
_BLOCKING_DETAIL = re.compile(
    r" in body must be of type | in body should be at most \d+ chars long$"
    r"| in body should have at most \d+ (items|properties)$"
)


def apply_schema(
    schema: Schema | None,
    obj: dict[str, Any],
    minor: int,
    *,
    old: dict[str, Any] | None = None,
    prune: bool = True,
) -> list[fielderrors.FieldError]:
    """Prune and default `obj` in place; return what it breaks of the schema and its rules, as
    the API server of release 1.`minor` words it. `old`: the stored object an update replaces
    (transition rules compare with it). `prune`: False for a CRD made as v1beta1 with
    `preserveUnknownFields: true`, whose objects keep every field (and have no defaults)."""
    if schema is None:
        return []
    if prune:
        _prune(obj, schema, keep_object_meta=True)
        _default(obj, schema, root=True)
    errors = validator.schema_errors(schema, obj, minor)
    errors += listtypes.list_type_errors(schema, obj, minor=minor)
    if minor < cel.CEL_SINCE or not cel.has_rules(schema):
        return errors
    if any(_blocks_rules(e, minor) for e in errors):
        return [*errors, cel.not_checked(minor)]
    return errors + cel.rule_errors(schema, obj, old, minor)


def _blocks_rules(error: fielderrors.FieldError, minor: int) -> bool:
    if error.reason in ("FieldValueRequired", "FieldValueTooLong", "FieldValueTooMany"):
        return True
    if error.reason == "FieldValueTypeInvalid":  # from 1.24; before, the detail tells it
        return True
    if error.type == "Unsupported value":
        return minor >= _ENUM_BLOCKS_SINCE
    return bool(_BLOCKING_DETAIL.search(error.detail))


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
                value[key] = normalized_copy(sub["default"])
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
