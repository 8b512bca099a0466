"""A parent's status as a controller writes it: the hook's (or the aggregated) status with
`observedGeneration`, the one field reconcile adds itself."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from reconcile.objects.jsondata import json_equal
from reconcile.objects.meta import Obj, metadata

OBSERVED_GENERATION = "observedGeneration"


def status_to_write(
    wanted: Mapping[str, Any],
    parent: Obj,
    *,
    stamp: bool = True,
    schema: Mapping[str, Any] | None = None,
) -> dict[str, Any] | None:
    """`wanted` as the parent's `schema` keeps it (`pruned_status`), stamped with the parent's
    generation (unless `stamp` is False: the run saw the parent's schema drop it), or None when
    the parent's status needs no write. A status equal to `wanted` but without any
    `observedGeneration` is not rewritten just to add it: the parent's schema drops the field
    (a CRD whose status schema does not list it), and writing it again would change nothing,
    pass after pass."""
    wanted, _ = pruned_status(wanted, schema)
    stamped = dict(wanted)
    if stamp:
        stamped[OBSERVED_GENERATION] = metadata(parent).get("generation", 0)
    current = parent.get("status")
    if json_equal(stamped, current):
        return None
    if (
        isinstance(current, dict)
        and current
        and OBSERVED_GENERATION not in current
        and json_equal(dict(wanted), current)
    ):
        return None
    return stamped


def drops_observed_generation(sent: Obj | None, returned: Obj | None) -> bool:
    """Whether a status write's answer lost the `observedGeneration` it sent."""
    if sent is None or returned is None:
        return False
    sent_status, returned_status = sent.get("status"), returned.get("status")
    return (
        isinstance(sent_status, dict)
        and OBSERVED_GENERATION in sent_status
        and not (isinstance(returned_status, dict) and OBSERVED_GENERATION in returned_status)
    )


def schema_keeps(schema: Mapping[str, Any] | None, path: tuple[str, ...]) -> bool:
    """Whether an object of this OpenAPI v3 schema (a CRD version's) keeps a field at `path`
    when the API server prunes it (`_child_schema`'s rules). No schema: kept."""
    node: Mapping[str, Any] | None = schema
    for step in path:
        if not isinstance(node, Mapping):
            return True
        node = _child_schema(node, step)
        if node is _DROP:
            return False
    return True


def pruned_status(
    wanted: Mapping[str, Any], schema: Mapping[str, Any] | None
) -> tuple[dict[str, Any], list[str]]:
    """`wanted` (a status) as the API server keeps it under the parent's `schema` (its CRD
    version's `openAPIV3Schema`), and the paths of the fields it would drop
    (`status.active.terminatingReplicas`; `[*]` for any item of a list). What the schema has no
    place for is pruned, as kube-apiserver prunes a structural schema's unknown fields;
    `x-kubernetes-preserve-unknown-fields` and `additionalProperties` keep them. No schema:
    everything is kept."""
    dropped: list[str] = []
    node = _child_schema(schema, "status") if isinstance(schema, Mapping) else None
    if node is _DROP:
        return {}, ["status"] if wanted else []
    kept = _pruned(dict(wanted), node, "status", dropped)
    # a field dropped from several items of a list is one path
    return (kept if isinstance(kept, dict) else dict(wanted)), list(dict.fromkeys(dropped))


def _child_schema(node: Mapping[str, Any], key: str) -> Mapping[str, Any] | None:
    """The schema of field `key` of an object of schema `node`: None when anything goes
    (preserved, or no schema), `_DROP` when the field is pruned."""
    properties = node.get("properties")
    if isinstance(properties, Mapping) and key in properties:
        child = properties[key]
        return child if isinstance(child, Mapping) else None
    if node.get("x-kubernetes-preserve-unknown-fields") is True:
        return None
    extra = node.get("additionalProperties")
    if isinstance(extra, Mapping):
        return extra
    if extra is True:
        return None
    if node.get("x-kubernetes-embedded-resource") is True and key in _EMBEDDED_KEPT:
        return None
    if not isinstance(properties, Mapping) and node.get("type") != "object":
        return None  # no structure given here (int-or-string, an empty schema): kept
    return _DROP


_DROP: Mapping[str, Any] = {"x-reconcile-dropped": True}
_EMBEDDED_KEPT = frozenset({"apiVersion", "kind", "metadata"})


def _pruned(value: Any, node: Mapping[str, Any] | None, path: str, dropped: list[str]) -> Any:
    if node is None:
        return value
    if isinstance(value, dict):
        kept: dict[str, Any] = {}
        for key, item in value.items():
            child = _child_schema(node, key)
            if child is _DROP:
                dropped.append(f"{path}.{key}")
                continue
            kept[key] = _pruned(item, child, f"{path}.{key}", dropped)
        return kept
    if isinstance(value, list):
        items = node.get("items")
        items = items if isinstance(items, Mapping) else None
        return [_pruned(item, items, f"{path}[*]", dropped) for item in value]
    return value
