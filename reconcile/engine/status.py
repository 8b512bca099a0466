"""A parent's status as a controller writes it: the hook's (or the aggregated) status with
`observedGeneration`, the one field reconcile adds itself; and the write itself, the same for
every kind (`status_action`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from reconcile.engine.actions import Action, ActionKind
from reconcile.engine.limits import status_size_problem
from reconcile.engine.responses import PlanError
from reconcile.engine.semantic import is_builtin
from reconcile.objects.jsondata import json_copy, json_equal
from reconcile.objects.meta import Obj, metadata
from reconcile.objects.resource import ResourceInfo
from reconcile.schemas.pruning import DROP, child_schema, drops_under, kept, pruned

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
    pass after pass. A built-in kind's status fields the hook does not set stay as they are."""
    wanted, _ = pruned_status(wanted, schema)
    stamped = dict(wanted)
    if stamp:
        stamped[OBSERVED_GENERATION] = metadata(parent).get("generation", 0)
    current = parent.get("status")
    if isinstance(current, dict) and is_builtin(str(parent.get("apiVersion") or "")):
        # A built-in kind's status belongs to its own controllers and the server (a
        # Namespace's phase, a Deployment's replicas): what the hook leaves out stays.
        stamped = {**current, **stamped}
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


def status_action(
    resource: ResourceInfo,
    parent: Obj,
    wanted: Mapping[str, Any],
    reason: str,
    *,
    stamp: bool = True,
    schema: Mapping[str, Any] | None = None,
    base: Obj | None = None,
) -> Action | None:
    """The parent's status write (`status_to_write`), through the status subresource; None when
    the parent has that status already. `base`: the parent as an earlier write of the same plan
    leaves it (a DecoratorController's target update). PlanError when the parent with that
    status would be over the API server's limit on a request."""
    new_status = status_to_write(wanted, parent, stamp=stamp, schema=schema)
    if new_status is None:
        return None
    after = json_copy(base if base is not None else parent)
    after["status"] = new_status
    too_big = status_size_problem(after)
    if too_big:
        raise PlanError(parent, [too_big])
    return Action(ActionKind.STATUS, resource, parent, after, reason)


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
    """Whether an object of this schema (a CRD version's, a built-in kind's) keeps a field at
    `path` when the API server prunes it. No schema: kept."""
    return kept(schema, path)


def pruned_status(
    wanted: Mapping[str, Any], schema: Mapping[str, Any] | None
) -> tuple[dict[str, Any], list[str]]:
    """`wanted` (a status) as the API server keeps it under the parent's `schema`, and the
    paths of the fields it would drop (`status.active.terminatingReplicas`; `[*]` for any item
    of a list). What the schema has no place for is pruned, as kube-apiserver prunes a
    structural schema's unknown fields and its decoder a built-in kind's;
    `x-kubernetes-preserve-unknown-fields` and `additionalProperties` keep them. No schema:
    everything is kept."""
    if not isinstance(schema, Mapping):
        return dict(wanted), []
    node = child_schema(schema, "status")
    if node is DROP:
        return {}, ["status"] if wanted else []
    plain = dict(wanted)
    if not drops_under(plain, node):  # the usual case: nothing to prune or to name
        return plain, []
    dropped: list[str] = []
    result = pruned(plain, node, "status", dropped)
    # a field dropped from several items of a list is one path
    return (result if isinstance(result, dict) else dict(wanted)), list(dict.fromkeys(dropped))
