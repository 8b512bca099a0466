"""A parent's status as a controller writes it: the hook's (or the aggregated) status with
`observedGeneration`, the one field reconcile adds itself."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from reconcile.objects.jsondata import json_equal
from reconcile.objects.meta import Obj, metadata

OBSERVED_GENERATION = "observedGeneration"


def status_to_write(
    wanted: Mapping[str, Any], parent: Obj, *, stamp: bool = True
) -> dict[str, Any] | None:
    """`wanted` stamped with the parent's generation (unless `stamp` is False: the run saw
    the parent's schema drop it), or None when the parent's status needs no write. A status
    equal to `wanted` but without any `observedGeneration` is not rewritten just to add it:
    the parent's schema drops the field (a CRD whose status schema does not list it), and
    writing it again would change nothing, pass after pass."""
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
    when the API server prunes it: listed, under `x-kubernetes-preserve-unknown-fields`, or
    under `additionalProperties`. No schema: kept."""
    node: Any = schema
    for step in path:
        if not isinstance(node, Mapping):
            return True
        properties = node.get("properties")
        if isinstance(properties, Mapping) and step in properties:
            node = properties[step]
            continue
        if node.get("x-kubernetes-preserve-unknown-fields") is True:
            return True
        extra = node.get("additionalProperties")
        if extra is True or isinstance(extra, Mapping):
            node = extra if isinstance(extra, Mapping) else None
            continue
        return not isinstance(properties, Mapping) and node.get("type") != "object"
    return True
