"""The writes for one DecoratorController target, pure.

A target's labels and annotations are merged (a `null` value deletes the key, keys not mentioned
stay), its status replaced when the hook returns one; attachments are the target's children that
carry the decorator's annotation, completed and checked as every kind's owned objects are
(`engine/owned.py`), applied with the children's three-way apply and deleted when no longer
desired. Nothing else the target controls is ever touched, and nothing is adopted.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping

from reconcile.engine import owned
from reconcile.engine.actions import Action, ActionKind
from reconcile.engine.children import ChildrenDiff, diff_children
from reconcile.engine.decorator.response import DecoratorResponse
from reconcile.engine.finalizers import Finalizer, Mode
from reconcile.engine.flow import Context, Plan
from reconcile.engine.keys import object_key
from reconcile.engine.responses import PlanError
from reconcile.engine.status import schema_keeps, status_action, status_to_write
from reconcile.objects.jsondata import json_equal
from reconcile.objects.meta import Obj, metadata
from reconcile.specs.controller import OwnedRule
from reconcile.specs.decorator import DECORATOR_ANNOTATION, DecoratorController

# One target and what its sync is planned with (no observedGeneration: Metacontroller's
# decorator adds none).
TargetContext = Context[DecoratorController, OwnedRule]


def finalizer(controller: DecoratorController) -> Finalizer:
    """The decorator's finalizer: wanted when it has a finalize hook. A target being deleted
    without it is still synced (its attachments are left to the garbage collector)."""
    enabled = controller.hooks.finalize is not None
    return Finalizer(controller.finalizer, enabled=enabled, sync_deleting=True)


def completion(controller: DecoratorController) -> owned.Completion:
    """Attachments carry the decorator's mark: without it, the target's object is not ours."""
    return owned.Completion(
        "attachments", "attachments", annotations={DECORATOR_ANNOTATION: controller.name}
    )


def plan_target(
    ctx: TargetContext,
    observed: Mapping[str, list[Obj]],
    response: DecoratorResponse,
    mode: Mode,
) -> Plan:
    """The writes for one target, in order: the target's own update (labels, annotations,
    finalizer, and its status when it has no status subresource), attachment deletes, creates
    and updates, the status, and the finalizer's removal after `finalized: true`. PlanError for
    attachments it cannot accept (then nothing is written)."""
    controller, target, resource = ctx.controller, ctx.parent, ctx.parent_resource
    ours = finalizer(controller)
    desired, problems = owned.desired_objects(ctx, completion(controller), response.attachments)
    if problems:
        raise PlanError(target, problems)
    plan = Plan()
    target_after = _target_update(ctx, response, ours.wanted(target, mode))
    if target_after is not None:
        why = _what_changes(target, target_after)
        plan.actions.append(Action(ActionKind.UPDATE, resource, target, target_after, why))
    attachments = ChildrenDiff()
    for kind in ctx.owned if ours.manages_children(target) else ():
        diff_children(
            kind,
            {object_key(obj): obj for obj in observed.get(kind.key, [])},
            desired.get(kind.key, {}),
            attachments,
            strategy=ctx.strategy,
            stale_reason="no longer desired",
        )
    plan.actions += attachments.actions
    plan.waits += attachments.waits
    plan.dropped += attachments.dropped
    if response.status is not None and resource.has_status:
        status = status_action(
            resource,
            target,
            response.status,
            "status from the hook",
            stamp=False,
            schema=ctx.status_schema,
            base=target_after,
        )
        if status is not None:
            plan.actions.append(status)
    plan.actions += ours.release(resource, target, mode, response.finalized, target_after)
    return plan


def _target_update(
    ctx: TargetContext, response: DecoratorResponse, finalizer_wanted: bool | None
) -> Obj | None:
    """The target with the hook's labels and annotations merged (and the finalizer added or
    taken off, and the status when the resource has no status subresource); None when nothing
    changes."""
    target = ctx.parent
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
    if finalizer_wanted is not None:
        after = finalizer(ctx.controller).applied(after, finalizer_wanted)
    if response.status is not None and not ctx.parent_resource.has_status:
        wanted = status_to_write(
            copy.deepcopy(response.status), target, stamp=False, schema=ctx.status_schema
        )
        if wanted is not None and schema_keeps(ctx.status_schema, ("status",)):
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
