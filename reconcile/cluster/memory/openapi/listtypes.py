"""The `x-kubernetes-list-type` invariants apiextensions-apiserver checks after the schema
(pkg/apiserver/schema/listtype): no repeated item in a `set`, no repeated key in a `map`."""

from __future__ import annotations

import json
from typing import Any

from reconcile.cluster.memory.validation import fielderrors
from reconcile.cluster.memory.validation.fielderrors import FieldWording

Schema = dict[str, Any]
# The release the callers that name none get the wording of: the test control plane's
OLDEST_WORDING = 20


def list_type_errors(
    schema: Schema, value: Any, path: str = "", *, minor: int = OLDEST_WORDING
) -> list[fielderrors.FieldError]:
    """Duplicates in `set` and `map` lists (by their `x-kubernetes-list-map-keys`), worded as
    the API server of release 1.`minor` words them."""
    return _errors(schema, value, path, FieldWording(minor))


def _errors(
    schema: Schema, value: Any, path: str, words: FieldWording
) -> list[fielderrors.FieldError]:
    errors: list[fielderrors.FieldError] = []
    if isinstance(value, dict):
        properties = schema.get("properties")
        properties = properties if isinstance(properties, dict) else {}
        additional = schema.get("additionalProperties")
        for key, item in value.items():
            sub = properties.get(key, additional)
            if isinstance(sub, dict):
                errors += _errors(sub, item, f"{path}.{key}" if path else key, words)
    elif isinstance(value, list):
        list_type = schema.get("x-kubernetes-list-type")
        if list_type == "set":
            errors += [words.duplicate(f"{path}[{i}]", value[i]) for i in _repeated(value)]
        elif list_type == "map":
            errors += _map_list_errors(schema, value, path, words)
        items = schema.get("items")
        if isinstance(items, dict):
            for i, item in enumerate(value):
                errors += _errors(items, item, f"{path}[{i}]", words)
    return errors


def _repeated(items: list[Any]) -> list[int]:
    """The index of each value's second occurrence."""
    counts: dict[str, int] = {}
    found = []
    for i, item in enumerate(items):
        key = json.dumps(item, sort_keys=True) + type(item).__name__
        counts[key] = counts.get(key, 0) + 1
        if counts[key] == 2:
            found.append(i)
    return found


def _map_list_errors(
    schema: Schema, items: list[Any], path: str, words: FieldWording
) -> list[fielderrors.FieldError]:
    for i, item in enumerate(items):
        if item is not None and not isinstance(item, dict):
            return [
                words.invalid(
                    f"{path}[{i}]", item, "must be an object for an array of list-type map"
                )
            ]
    if len(items) <= 1:
        return []
    key_fields = [k for k in schema.get("x-kubernetes-list-map-keys") or [] if isinstance(k, str)]
    keys = [{k: item[k] for k in key_fields if k in item} if item else {} for item in items]
    return [words.duplicate(f"{path}[{i}]", keys[i]) for i in _repeated(keys)]
