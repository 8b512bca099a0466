"""CompositeController decisions for one parent: pure functions from observed state and hook
responses to a list of actions. The runner does the I/O around them."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from reconcile.engine.actions import Action, ActionKind
from reconcile.engine.children import (
    QUIET,
    Blocked,
    ChildrenDiff,
    Dropped,
    Occupant,
    OwnedType,
    diff_children,
    manages_children,
    problem,
    wait,
)
from reconcile.engine.keys import rekeyed, relative_key
from reconcile.engine.limits import child_size_problem, status_size_problem
from reconcile.engine.ownership import ClaimResult, claim, owner_reference, without_owner
from reconcile.engine.responses import ParentError, SyncResponse
from reconcile.engine.status import status_to_write
from reconcile.engine.writes import CLIENT_SIDE, ApplyStrategy
from reconcile.objects.jsondata import json_copy
from reconcile.objects.meta import (
    Obj,
    controller_ref,
    identity,
    is_deleting,
    labels_of,
    metadata,
    name_of,
    namespace_of,
    uid_of,
)
from reconcile.objects.resource import ResourceInfo
from reconcile.objects.selectors import LabelSelector, SelectorError, label_selector_from_spec
from reconcile.specs.composite import ChildRule, CompositeController

CONTROLLER_UID_LABEL = "controller-uid"


class PlanError(ParentError):
    """The parent cannot be synced; `problems` says why. Nothing is changed for it."""

    def __init__(self, parent: Obj, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.parent = parent
        self.problems = problems


# A child rule resolved through discovery.
ChildType = OwnedType[ChildRule]


@dataclass(frozen=True)
class Context:
    controller: CompositeController
    parent: Obj
    parent_resource: ResourceInfo
    child_types: tuple[ChildType, ...]
    strategy: ApplyStrategy = CLIENT_SIDE
    # False once the run saw the parent's schema drop status.observedGeneration
    stamp_generation: bool = True
    # the parent's CRD schema: what of the hook's status the server keeps (None: all of it)
    status_schema: Mapping[str, Any] | None = None

    @property
    def namespaced(self) -> bool:
        return self.parent_resource.namespaced

    def child_type(self, key: str) -> ChildType | None:
        return next((t for t in self.child_types if t.key == key), None)


class Mode(StrEnum):
    SYNC = "sync"  # call the sync hook
    FINALIZE = "finalize"  # call the finalize hook
    REMOVE_FINALIZER = "remove-finalizer"  # only take our finalizer off
    SKIP = "skip"  # nothing to do (being deleted without our finalizer)


def has_finalizer(controller: CompositeController, parent: Obj) -> bool:
    return controller.finalizer in (metadata(parent).get("finalizers") or [])


def mode_for(controller: CompositeController, parent: Obj) -> Mode:
    """What this pass does with a parent (Metacontroller's finalizer rules)."""
    ours = has_finalizer(controller, parent)
    matches = controller.parent.label_selector.matches(parent)
    if controller.hooks.finalize is not None and ours and (is_deleting(parent) or not matches):
        return Mode.FINALIZE
    if is_deleting(parent) or not matches:
        return Mode.REMOVE_FINALIZER if ours else Mode.SKIP
    return Mode.SYNC


def parent_selector(ctx: Context) -> LabelSelector:
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
    ctx: Context, selector: LabelSelector, candidates: Mapping[str, list[Obj]]
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
        for t in ctx.child_types
    }


def sync_request(
    ctx: Context,
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
        "children": {t.key: rekeyed(claims[t.key].observed, uniform) for t in ctx.child_types},
        "related": {k: rekeyed(v, uniform) for k, v in related.items()},
        "finalizing": finalizing,
    }


def customize_request(ctx: Context) -> dict[str, Any]:
    return {"controller": ctx.controller.raw, "parent": ctx.parent}


# -- planning ------------------------------------------------------------------------------


def desired_children(
    ctx: Context, selector: LabelSelector, response: SyncResponse
) -> tuple[dict[str, dict[str, Obj]], list[str]]:
    """The hook's children validated and completed, and every problem found."""
    problems: list[str] = []
    desired: dict[str, dict[str, Obj]] = {t.key: {} for t in ctx.child_types}
    parent_ns = namespace_of(ctx.parent)
    for i, raw in enumerate(response.children):
        where = f"children[{i}] ({raw.get('kind')} {metadata(raw).get('name')})"
        key = f"{raw['kind']}.{raw['apiVersion']}"
        child_type = ctx.child_type(key)
        if child_type is None:
            known = ", ".join(t.key for t in ctx.child_types) or "none"
            problems.append(
                f"{where}: {key} is not one of the controller's childResources ({known})"
            )
            continue
        # Copied where it is changed below (the top level and metadata); the rest is shared
        # with the response, which nothing changes (apply and prepare_desired copy).
        meta = dict(raw["metadata"])
        obj = {**raw, "metadata": meta}
        if child_type.resource.namespaced:
            ns = meta.get("namespace") or parent_ns
            if not ns:
                problems.append(
                    f"{where}: metadata.namespace is required under a cluster-scoped parent"
                )
                continue
            if ctx.namespaced and ns != parent_ns:
                problems.append(
                    f"{where}: metadata.namespace {ns!r} is not the parent's namespace "
                    f"{parent_ns!r}"
                )
                continue
            meta["namespace"] = ns
        else:
            meta.pop("namespace", None)
        if ctx.controller.generate_selector:
            meta["labels"] = {**labels_of(obj), CONTROLLER_UID_LABEL: uid_of(ctx.parent)}
        if not selector.matches(obj):
            problems.append(
                f"{where}: metadata.labels {labels_of(obj)} do not match the parent's selector "
                f"({selector.render()})"
            )
            continue
        refs = [r for r in meta.get("ownerReferences") or [] if r.get("uid") != uid_of(ctx.parent)]
        if any(r.get("controller") is True for r in refs):
            problems.append(f"{where}: metadata.ownerReferences names another controller")
            continue
        meta["ownerReferences"] = [*refs, owner_reference(ctx.parent)]
        too_big = child_size_problem(obj, annotated=not ctx.strategy.server_side)
        if too_big:
            problems.append(f"{where}: {too_big}")
            continue
        relative = relative_key(ctx.namespaced, obj)
        if relative in desired[key]:
            problems.append(f"{where}: {key} {relative!r} is listed twice")
            continue
        desired[key][relative] = obj
    return desired, problems


def _finalizer_patch(parent: Obj, finalizer: str, add: bool) -> Obj:
    after = json_copy(parent)
    current = [f for f in metadata(after).get("finalizers") or [] if f != finalizer]
    after["metadata"]["finalizers"] = [*current, finalizer] if add else current
    if not after["metadata"]["finalizers"]:
        del after["metadata"]["finalizers"]
    return after


def finalizer_actions(ctx: Context, mode: Mode) -> list[Action]:
    """Before the hook's actions: add ours when a finalize hook exists, drop it otherwise."""
    controller, parent = ctx.controller, ctx.parent
    ours = has_finalizer(controller, parent)
    if mode is Mode.SYNC and controller.hooks.finalize is not None and not ours:
        return [
            Action(
                ActionKind.ADD_FINALIZER,
                ctx.parent_resource,
                parent,
                _finalizer_patch(parent, controller.finalizer, add=True),
                "the controller has a finalize hook",
            )
        ]
    if (
        mode in (Mode.SYNC, Mode.REMOVE_FINALIZER)
        and ours
        and (controller.hooks.finalize is None or mode is Mode.REMOVE_FINALIZER)
    ):
        return [
            Action(
                ActionKind.REMOVE_FINALIZER,
                ctx.parent_resource,
                parent,
                _finalizer_patch(parent, controller.finalizer, add=False),
                "no finalize hook applies to this parent",
            )
        ]
    return []


@dataclass
class Plan:
    """The actions for one parent in execution order, and what it is waiting for (work that a
    later pass can do once the cluster moves on, e.g. a child still being deleted)."""

    actions: list[Action] = field(default_factory=list)
    waits: list[str] = field(default_factory=list)
    dropped: list[Dropped] = field(default_factory=list)  # fields the server would not keep


# Finds an existing object by (child type key, namespace, name): the runner's in-memory index
# of the pass's snapshot, for names the hook wants that this parent does not hold.
Lookup = Callable[[str, str, str], Obj | None]


def _occupant(
    ctx: Context, child_type: ChildType, claims: ClaimResult, lookup: Lookup | None
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
    ctx: Context,
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


def status_action(ctx: Context, status: dict[str, Any] | None) -> Action | None:
    new_status = status_to_write(
        status or {}, ctx.parent, stamp=ctx.stamp_generation, schema=ctx.status_schema
    )
    if new_status is None:
        return None
    after = json_copy(ctx.parent)
    after["status"] = new_status
    too_big = status_size_problem(after)
    if too_big:
        raise PlanError(ctx.parent, [too_big])
    return Action(ActionKind.STATUS, ctx.parent_resource, ctx.parent, after, "status from the hook")


def plan_parent(
    ctx: Context,
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
    controller = ctx.controller
    manage = manages_children(
        ctx.parent, controller.finalizer, controller.hooks.finalize is not None
    )
    for child_type in ctx.child_types if manage else ():
        _child_actions(
            ctx, child_type, claims[child_type.key], desired[child_type.key], children, lookup
        )
    if children.problems:
        raise PlanError(ctx.parent, children.problems)
    actions = finalizer_actions(ctx, mode) + children.actions
    status = status_action(ctx, response.status)
    if status is not None:
        actions.append(status)
    if mode is Mode.FINALIZE and response.finalized:
        actions.append(
            Action(
                ActionKind.REMOVE_FINALIZER,
                ctx.parent_resource,
                ctx.parent,
                _finalizer_patch(ctx.parent, ctx.controller.finalizer, add=False),
                "the finalize hook answered finalized: true",
            )
        )
    return Plan(actions=actions, waits=children.waits, dropped=children.dropped)
