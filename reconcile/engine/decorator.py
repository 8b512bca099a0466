"""DecoratorController decisions, pure: which objects are a decorator's targets and attachments,
its hook's request, the response read, and the actions that apply it to one target.

A target's labels and annotations are merged (a `null` value deletes the key, keys not mentioned
stay), its status replaced when the hook returns one; attachments are the target's children that
carry the decorator's annotation, applied with the children's three-way apply and deleted when
no longer desired. Nothing else the target controls is ever touched, and nothing is adopted.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from reconcile.engine.actions import Action, ActionKind
from reconcile.engine.children import (
    ChildrenDiff,
    Dropped,
    OwnedType,
    diff_children,
    manages_children,
)
from reconcile.engine.keys import object_key, rekeyed, request_key
from reconcile.engine.ownership import owner_reference
from reconcile.engine.responses import ResponseError, object_list, seconds_field, unknown_fields
from reconcile.engine.status import schema_keeps, status_to_write
from reconcile.engine.writes import CLIENT_SIDE, ApplyStrategy
from reconcile.objects.jsondata import json_equal
from reconcile.objects.meta import (
    Obj,
    annotations_of,
    controller_ref,
    identity,
    is_deleting,
    metadata,
    namespace_of,
    uid_of,
)
from reconcile.objects.names import map_problems
from reconcile.objects.resource import ResourceInfo
from reconcile.specs.controller import OwnedRule
from reconcile.specs.decorator import DECORATOR_ANNOTATION, DecoratorController

# An attachment rule resolved through discovery.
AttachmentType = OwnedType[OwnedRule]


@dataclass
class DecoratorResponse:
    labels: dict[str, str | None] = field(default_factory=dict)
    annotations: dict[str, str | None] = field(default_factory=dict)
    status: dict[str, Any] | None = None
    attachments: list[Obj] = field(default_factory=list)
    resync_after: float | None = None
    finalized: bool = False


def is_attachment(controller: DecoratorController, target: Obj, obj: Obj) -> bool:
    """Controlled by the target and marked as this decorator's."""
    ref = controller_ref(obj)
    return (
        ref is not None
        and ref.get("uid") == uid_of(target)
        and annotations_of(obj).get(DECORATOR_ANNOTATION) == controller.name
    )


def finalizing(controller: DecoratorController, target: Obj, matches: bool) -> bool:
    """The finalize hook's turn: the target is being deleted, or it no longer matches the
    selectors while it still carries the decorator's finalizer (it opted out)."""
    if controller.hooks.finalize is None:
        return False
    has_finalizer = controller.finalizer in (metadata(target).get("finalizers") or [])
    return (is_deleting(target) and has_finalizer) or (not matches and has_finalizer)


def sync_request(
    controller: DecoratorController,
    target: Obj,
    target_namespaced: bool,
    attachments: dict[str, list[Obj]],
    related: dict[str, dict[str, Obj]],
    *,
    finalizing: bool,
    uniform: bool = False,
) -> dict[str, Any]:
    """`related` is keyed already (as the customize hook's objects are); `uniform`: every map
    keyed `namespace/name` (hook version v2)."""
    return {
        "controller": controller.raw,
        "object": target,
        "attachments": {
            key: {request_key(target_namespaced, obj, uniform): obj for obj in objs}
            for key, objs in attachments.items()
        },
        "related": {key: rekeyed(objs, uniform) for key, objs in related.items()},
        "finalizing": finalizing,
    }


DECORATOR_FIELDS = (
    "labels",
    "annotations",
    "status",
    "attachments",
    "resyncAfterSeconds",
    "finalized",
)


def parse_response(data: Any, hook: str, *, strict: bool = False) -> DecoratorResponse:
    if not isinstance(data, dict):
        raise ResponseError(hook, ["the response must be a JSON object"])
    problems: list[str] = unknown_fields(data, DECORATOR_FIELDS) if strict else []
    response = DecoratorResponse()
    for key in ("labels", "annotations"):
        value = data.get(key)
        if value is None:
            continue
        if not isinstance(value, dict) or not all(
            isinstance(v, str) or v is None for v in value.values()
        ):
            problems.append(f"{key}: must be a map of strings (null deletes a key)")
            continue
        # refused here, not by the API server: a dry run must not pass what the run fails
        found = map_problems(value, key, labels=key == "labels")
        if found:
            problems += found
            continue
        setattr(response, key, {str(k): v for k, v in value.items()})
    status = data.get("status")
    if status is not None and not isinstance(status, dict):
        problems.append(f"status: must be an object or null, not {type(status).__name__}")
    else:
        response.status = status
    # null or absent: none; anything but a list (false, "", {}) is refused, never read as
    # "no attachments" (which would delete them all)
    response.attachments = object_list(data.get("attachments"), "attachments", problems)
    finalized = data.get("finalized")
    if finalized is not None and not isinstance(finalized, bool):
        problems.append(f"finalized: must be true or false, not {finalized!r}")
    response.finalized = bool(finalized)
    response.resync_after = seconds_field(data, "resyncAfterSeconds", problems)
    if problems:
        raise ResponseError(hook, problems)
    return response


@dataclass
class TargetPlan:
    actions: list[Action] = field(default_factory=list)
    waits: list[str] = field(default_factory=list)
    dropped: list[Dropped] = field(default_factory=list)  # fields the server would not keep


def plan_target(
    controller: DecoratorController,
    target_resource: ResourceInfo,
    target: Obj,
    types: list[AttachmentType],
    observed: dict[str, list[Obj]],
    response: DecoratorResponse,
    *,
    finalizing: bool,
    strategy: ApplyStrategy = CLIENT_SIDE,
    status_schema: Mapping[str, Any] | None = None,
) -> TargetPlan:
    """The writes for one target, in order: the target's own update (labels, annotations,
    finalizer, and its status when it has no status subresource), attachment deletes, creates
    and updates, the status, and the finalizer's removal after `finalized: true`. Raises
    ResponseError for attachments it cannot accept (then nothing is written)."""
    plan = TargetPlan()
    desired = _desired_attachments(controller, target_resource, target, types, response)
    if isinstance(desired, list):
        raise ResponseError("finalize" if finalizing else "sync", desired)
    target_after = _target_update(
        controller, target, target_resource, response, finalizing, status_schema
    )
    if target_after is not None:
        plan.actions.append(
            Action(
                ActionKind.UPDATE,
                target_resource,
                target,
                target_after,
                _what_changes(target, target_after),
            )
        )
    attachments = ChildrenDiff()
    manage = manages_children(target, controller.finalizer, controller.hooks.finalize is not None)
    for kind in types if manage else ():
        diff_children(
            kind,
            {object_key(obj): obj for obj in observed.get(kind.key, [])},
            desired.get(kind.key, {}),
            attachments,
            strategy=strategy,
            stale_reason="no longer desired",
        )
    plan.actions += attachments.actions
    plan.waits += attachments.waits
    plan.dropped += attachments.dropped
    if response.status is not None and target_resource.has_status:
        # as the target's kind keeps it: no observedGeneration (Metacontroller's decorator adds
        # none), and a built-in kind's own status fields kept as they are
        wanted_status = status_to_write(
            copy.deepcopy(response.status), target, stamp=False, schema=status_schema
        )
        if wanted_status is not None:
            after = copy.deepcopy(target_after or target)
            after["status"] = wanted_status
            plan.actions.append(
                Action(ActionKind.STATUS, target_resource, target, after, "status from the hook")
            )
    if finalizing and response.finalized:
        remaining = [
            f for f in metadata(target).get("finalizers") or [] if f != controller.finalizer
        ]
        after = copy.deepcopy(target_after or target)
        metadata(after)["finalizers"] = remaining
        plan.actions.append(
            Action(ActionKind.REMOVE_FINALIZER, target_resource, target, after, "finalized")
        )
    return plan


def _desired_attachments(
    controller: DecoratorController,
    target_resource: ResourceInfo,
    target: Obj,
    types: list[AttachmentType],
    response: DecoratorResponse,
) -> dict[str, dict[str, Obj]] | list[str]:
    """The hook's attachments completed, by type key then object key; or the problems."""
    by_kind = {(t.resource.api_version, t.resource.kind): t for t in types}
    desired: dict[str, dict[str, Obj]] = {}
    problems = []
    for i, item in enumerate(response.attachments):
        kind = by_kind.get((str(item["apiVersion"]), str(item["kind"])))
        if kind is None:
            problems.append(
                f"attachments[{i}]: {item['kind']} ({item['apiVersion']}) is not one of the "
                "controller's attachments"
            )
            continue
        wanted = _as_attachment(controller, target, target_resource, kind, item)
        same_namespace = namespace_of(wanted) == namespace_of(target)
        if kind.resource.namespaced and target_resource.namespaced and not same_namespace:
            problems.append(
                f"attachments[{i}]: {identity(wanted)} is not in the target's namespace "
                f"{namespace_of(target)}"
            )
            continue
        of_kind = desired.setdefault(kind.key, {})
        if object_key(wanted) in of_kind:
            problems.append(f"attachments[{i}]: {identity(wanted)} is listed twice")
            continue
        of_kind[object_key(wanted)] = wanted
    return problems or desired


def _target_update(
    controller: DecoratorController,
    target: Obj,
    resource: ResourceInfo,
    response: DecoratorResponse,
    finalizing: bool,
    status_schema: Mapping[str, Any] | None = None,
) -> Obj | None:
    """The target with the hook's labels and annotations merged (and the finalizer added, and
    the status when the resource has no status subresource); None when nothing changes."""
    after = copy.deepcopy(target)
    meta = metadata(after)
    for key, changes in (("labels", response.labels), ("annotations", response.annotations)):
        current = dict(meta.get(key) or {})
        for name, value in changes.items():
            if value is None:
                current.pop(name, None)
            else:
                current[name] = value
        if current:
            meta[key] = current
        else:
            meta.pop(key, None)
    if controller.hooks.finalize is not None and not finalizing and not is_deleting(target):
        finalizers = list(meta.get("finalizers") or [])
        if controller.finalizer not in finalizers:
            meta["finalizers"] = [*finalizers, controller.finalizer]
    if response.status is not None and not resource.has_status:
        wanted = status_to_write(
            copy.deepcopy(response.status), target, stamp=False, schema=status_schema
        )
        if wanted is not None and schema_keeps(status_schema, ("status",)):
            after["status"] = wanted
    if json_equal(after, target):
        return None
    return after


def _what_changes(target: Obj, after: Obj) -> str:
    """What the target's update writes, for reports: "labels", "status", "labels and
    finalizer"..."""
    before_meta, after_meta = metadata(target), metadata(after)
    parts = [
        part
        for part, key in (
            ("labels", "labels"),
            ("annotations", "annotations"),
            ("finalizer", "finalizers"),
        )
        if not json_equal(before_meta.get(key) or None, after_meta.get(key) or None)
    ]
    if not json_equal(target.get("status"), after.get("status")):
        parts.append("status")
    if not parts:
        return "labels, annotations or finalizer"
    return parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} and {parts[-1]}"


def _as_attachment(
    controller: DecoratorController,
    target: Obj,
    target_resource: ResourceInfo,
    kind: AttachmentType,
    item: Obj,
) -> Obj:
    wanted = copy.deepcopy(item)
    meta = wanted.setdefault("metadata", {})
    if kind.resource.namespaced and target_resource.namespaced and not meta.get("namespace"):
        meta["namespace"] = namespace_of(target)
    meta["annotations"] = {**(meta.get("annotations") or {}), DECORATOR_ANNOTATION: controller.name}
    refs = [r for r in meta.get("ownerReferences") or [] if r.get("uid") != uid_of(target)]
    meta["ownerReferences"] = [*refs, owner_reference(target)]
    return wanted


__all__ = [
    "AttachmentType",
    "DecoratorResponse",
    "TargetPlan",
    "finalizing",
    "is_attachment",
    "parse_response",
    "plan_target",
    "sync_request",
]
