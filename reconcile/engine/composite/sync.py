"""One CompositeController parent's sync, pure: its selector, its claims over the candidate
children, the hook's request, and the plan from the hook's answer (finalizer, ownership
changes, deletes, creates, updates, status, the finalizer's removal once finalized)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from reconcile.engine import owned
from reconcile.engine.actions import Action, ActionKind
from reconcile.engine.children import (
    QUIET,
    Blocked,
    ChildrenDiff,
    Occupant,
    OwnedType,
    diff_children,
    problem,
    wait,
)
from reconcile.engine.finalizers import Finalizer, Mode
from reconcile.engine.flow import Context, Lookup, Plan
from reconcile.engine.keys import rekeyed, relative_key
from reconcile.engine.ownership import ClaimResult, claim, without_owner
from reconcile.engine.responses import PlanError, SyncResponse
from reconcile.engine.status import status_action
from reconcile.objects.meta import (
    Obj,
    controller_ref,
    identity,
    is_deleting,
    name_of,
    namespace_of,
    uid_of,
)
from reconcile.objects.selectors import LabelSelector, SelectorError, label_selector_from_spec
from reconcile.specs.composite import ChildRule, CompositeController

CONTROLLER_UID_LABEL = "controller-uid"

# A child rule resolved through discovery.
ChildType = OwnedType[ChildRule]
# One parent and what its sync is planned with.
ParentContext = Context[CompositeController, ChildRule]


def finalizer(controller: CompositeController) -> Finalizer:
    """The controller's finalizer: wanted when it has a finalize hook."""
    return Finalizer(controller.finalizer, enabled=controller.hooks.finalize is not None)


def mode_for(controller: CompositeController, parent: Obj) -> Mode:
    """What this pass does with a parent (Metacontroller's finalizer rules)."""
    return finalizer(controller).mode(parent, controller.parent.label_selector.matches(parent))


def parent_selector(ctx: ParentContext) -> LabelSelector:
    if ctx.controller.generate_selector:
        return LabelSelector.from_labels({CONTROLLER_UID_LABEL: uid_of(ctx.parent)})
    spec = ctx.parent.get("spec")
    raw = spec.get("selector") if isinstance(spec, dict) else None
    if not isinstance(raw, dict):
        raise PlanError(
            ctx.parent,
            [
                "spec.selector: is required (a label selector), unless the controller sets "
                "generateSelector: true"
            ],
        )
    try:
        selector = label_selector_from_spec(raw, "spec.selector")
    except SelectorError as exc:
        raise PlanError(ctx.parent, [str(exc)]) from exc
    if selector.empty:
        # An empty selector would claim every object of every child type in the namespace.
        raise PlanError(ctx.parent, ["spec.selector: must not be empty"])
    return selector


def claim_children(
    ctx: ParentContext, selector: LabelSelector, candidates: Mapping[str, list[Obj]]
) -> dict[str, ClaimResult]:
    """Per child type key: the candidates (same namespace, or all for a cluster-scoped parent)
    sorted into owned / adopted / released / foreign."""
    return {
        t.key: claim(
            ctx.parent,
            selector,
            candidates.get(t.key, []),
            lambda obj: relative_key(ctx.namespaced, obj),
        )
        for t in ctx.owned
    }


def sync_request(
    ctx: ParentContext,
    claims: Mapping[str, ClaimResult],
    related: Mapping[str, Mapping[str, Obj]],
    finalizing: bool,
    *,
    uniform: bool = False,
) -> dict[str, Any]:
    """`uniform`: children and related objects keyed `namespace/name` (hook version v2)."""
    return {
        "controller": ctx.controller.raw,
        "parent": ctx.parent,
        "children": {t.key: rekeyed(claims[t.key].observed, uniform) for t in ctx.owned},
        "related": {k: rekeyed(v, uniform) for k, v in related.items()},
        "finalizing": finalizing,
    }


# -- planning ------------------------------------------------------------------------------


def completion(ctx: ParentContext, selector: LabelSelector) -> owned.Completion:
    """How the hook's children are completed: every one must match the parent's selector
    (with `generateSelector`, after getting the `controller-uid` label)."""
    labels = {CONTROLLER_UID_LABEL: uid_of(ctx.parent)} if ctx.controller.generate_selector else {}
    return owned.Completion(
        "children", "childResources", labels=labels, selector=selector, relative_keys=True
    )


def desired_children(
    ctx: ParentContext, selector: LabelSelector, response: SyncResponse
) -> tuple[owned.Desired, list[str]]:
    """The hook's children validated and completed, and every problem found."""
    return owned.desired_objects(ctx, completion(ctx, selector), response.children)


def _occupant(
    ctx: ParentContext, child_type: ChildType, claims: ClaimResult, lookup: Lookup | None
) -> Occupant:
    """What stands in the way of creating a child: an object of the same name the parent does
    not hold (another controller's, or an orphan its selector does not match)."""

    def occupant(obj: Obj) -> Blocked | None:
        parent = ctx.parent
        found = claims.foreign.get(relative_key(ctx.namespaced, obj))
        if found is None and lookup is not None:
            found = lookup(child_type.key, namespace_of(obj), name_of(obj))
        if found is None:
            return None
        ref = controller_ref(found)
        if is_deleting(found):
            return wait(f"{identity(found)} is being deleted before it is created")
        if is_deleting(parent) and (ref is None or ref.get("uid") == uid_of(parent)):
            return QUIET  # a parent being deleted neither adopts nor creates; it only tears down
        if ref is not None:
            return problem(
                f"{identity(obj)} exists and is controlled by {ref.get('kind')} "
                f"{ref.get('name')} (uid {ref.get('uid')})"
            )
        return problem(
            f"{identity(obj)} exists, has no controller and does not match the parent's "
            "selector, so it cannot be adopted"
        )

    return occupant


def _child_actions(
    ctx: ParentContext,
    child_type: ChildType,
    claims: ClaimResult,
    desired: Mapping[str, Obj],
    into: ChildrenDiff,
    lookup: Lookup | None,
) -> None:
    """Ownership changes, deletes, creates and updates for one child type, added to `into`."""
    for obj in claims.released:
        into.ownership.append(
            Action(
                ActionKind.RELEASE,
                child_type.resource,
                obj,
                without_owner(ctx.parent, obj),
                "no longer matches the selector",
            )
        )
    diff_children(
        child_type,
        claims.observed,
        desired,
        into,
        strategy=ctx.strategy,
        stale_reason="not in the hook's desired children",
        occupant=_occupant(ctx, child_type, claims, lookup),
        adopted=claims.adopted,
    )


def plan_parent(
    ctx: ParentContext,
    mode: Mode,
    selector: LabelSelector,
    claims: Mapping[str, ClaimResult],
    response: SyncResponse,
    lookup: Lookup | None = None,
) -> Plan:
    """Every action for one parent, in execution order: finalizer, ownership changes, deletes,
    creates, updates, status, then the finalizer's removal once finalized."""
    desired, problems = desired_children(ctx, selector, response)
    children = ChildrenDiff(problems=problems)
    ours = finalizer(ctx.controller)
    for child_type in ctx.owned if ours.manages_children(ctx.parent) else ():
        _child_actions(
            ctx, child_type, claims[child_type.key], desired[child_type.key], children, lookup
        )
    if children.problems:
        raise PlanError(ctx.parent, children.problems)
    actions = ours.sync(ctx.parent_resource, ctx.parent, mode) + children.actions
    # the hook's status (none: an empty one) with observedGeneration, when it differs
    status = status_action(
        ctx.parent_resource,
        ctx.parent,
        response.status or {},
        "status from the hook",
        stamp=ctx.stamp_generation,
        schema=ctx.status_schema,
    )
    if status is not None:
        actions.append(status)
    actions += ours.release(ctx.parent_resource, ctx.parent, mode, response.finalized, None)
    return Plan(actions=actions, waits=children.waits, dropped=children.dropped)
